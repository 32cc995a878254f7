"""Relation queries: both directions agree, effective blockers, evidence chains, k-hop paths."""

from __future__ import annotations

import random

import pytest

from neurongraph.errors import InvalidArgument, UnknownNode
from neurongraph.model import Node
from neurongraph.schema import Hop
from schema_fixtures import make_engine


@pytest.fixture
def eng(tmp_path):
    e = make_engine(tmp_path / "q.db")
    yield e
    e.close()


@pytest.fixture
def tasks(eng):
    eng.load_schema(
        {
            "relations": {
                "blocked_by": {"inverse": "blocks"},
                "resolves_to": {},
                "evidence_of": {"inverse": "has_evidence"},
                "related_to": {"symmetric": True},
            }
        }
    )
    eng.add_nodes(
        [
            Node(i, t, i)
            for i, t in [
                ("t1", "task"),
                ("t2", "task"),
                ("t3", "task"),
                ("c1", "condition"),
                ("c2", "condition"),
                ("c3", "condition"),
                ("e1", "note"),
                ("e2", "note"),
                ("e3", "note"),
                ("e4", "note"),
                ("x", "entity"),
            ]
        ]
    )
    eng.add_edges(
        [
            ("t1", "blocked_by", "c1"),
            ("t1", "blocked_by", "t3"),
            ("t1", "blocked_by", "c3"),
            ("c1", "resolves_to", "c2"),
            ("c2", "resolves_to", "t2"),  # a chain of conditions
            ("c3", "resolves_to", "c3"),  # a self-loop must not hang
            ("e1", "evidence_of", "t1"),
            ("e2", "evidence_of", "t1"),
            ("e3", "evidence_of", "t1"),
            ("e2", "evidence_of", "x"),
            ("e4", "evidence_of", "x"),
            ("t2", "related_to", "t3"),
        ]
    )
    return eng


def test_from_x_to_y_equals_to_y_from_x(tmp_path):
    eng = make_engine(tmp_path / "r.db")
    rng = random.Random(3)
    ids = [f"n{i}" for i in range(40)]
    eng.add_nodes([Node(i, "node") for i in ids])
    rels = ["a", "b", "c"]
    eng.add_edges({(rng.choice(ids), rng.choice(rels), rng.choice(ids)) for _ in range(300)})
    for x in ids[:15]:
        for rel in rels + [None]:
            out = eng.neighbors(x, rel, "out")
            for y in {r["node"] for r in out}:
                fwd = sorted(r["eid"] for r in out if r["node"] == y)
                back = sorted(r["eid"] for r in eng.neighbors(y, rel, "in") if r["node"] == x)
                assert fwd == back and fwd
            paths = eng.find_paths(x, 1, rel, "out")["paths"]
            assert sorted(p["edges"][0]["eid"] for p in paths) == sorted(r["eid"] for r in out if r["node"] != x)
    eng.close()


def test_neighbors_directions_inverse_names_and_symmetric(tasks):
    out = tasks.neighbors("t1", "blocked_by", "out")
    assert sorted(r["node"] for r in out) == ["c1", "c3", "t3"] and all(r["direction"] == "out" for r in out)
    assert tasks.neighbors("t1", "blocked_by", "in") == []
    blocks = tasks.neighbors("c1", "blocks", "out")  # inverse name, read from the dst side
    assert [(r["node"], r["rel"], r["edge"]) for r in blocks] == [("t1", "blocks", ["t1", "blocked_by", "c1"])]
    assert [r["node"] for r in tasks.neighbors("t3", "related_to", "out")] == ["t2"]  # symmetric: both ways
    both = tasks.neighbors("t1")
    assert {r["node"] for r in both} == {"c1", "t3", "c3", "e1", "e2", "e3"}
    assert {r["direction"] for r in both if r["node"].startswith("e")} == {"in"}
    assert len(tasks.neighbors("t1", ["blocked_by", "has_evidence"], "out")) == 6
    assert tasks.neighbors("t1", "no_such_rel") == []
    assert len(tasks.neighbors("t1", limit=2)) == 2
    with pytest.raises(InvalidArgument):
        tasks.neighbors("t1", direction="sideways")
    with pytest.raises(UnknownNode):
        tasks.neighbors("nope")


def test_effective_blockers_with_and_without_resolves_to(tasks):
    got = {b["id"]: b for b in tasks.effective_blockers("t1")}
    assert set(got) == {"t2", "t3", "c3"}
    assert got["t2"]["via"] == ["t1", "c1", "c2", "t2"] and got["t2"]["resolved"] and got["t2"]["type"] == "task"
    assert got["t3"]["via"] == ["t1", "t3"] and not got["t3"]["resolved"]  # not a condition: as is
    assert got["c3"]["via"] == ["t1", "c3"] and not got["c3"]["resolved"]  # self-loop: stays
    assert tasks.effective_blockers("t2") == []
    tasks.add_edges([("c2", "resolves_to", "c1")])  # a cycle c1 -> c2 -> c1
    assert {b["id"] for b in tasks.effective_blockers("t1")} == {"t2", "t3", "c3"}


def test_evidence_chain_excludes_self_and_superseded_entries(tasks):
    chain = tasks.evidence_chain("e2")
    assert sorted((c["entity"], c["entry"]) for c in chain) == [("t1", "e1"), ("t1", "e3"), ("x", "e4")]
    assert all(c["entry"] != "e2" for c in chain)
    p = next(c["path"] for c in chain if c["entry"] == "e4")
    assert p["nodes"] == ["e2", "x", "e4"]
    assert [(e["src"], e["rel"], e["dst"], e["direction"]) for e in p["edges"]] == [
        ("e2", "evidence_of", "x", "out"),
        ("e4", "evidence_of", "x", "in"),
    ]
    tasks.revise_entry("e4", text="e4 corrected")  # e4 superseded: left out unless asked for
    assert ("x", "e4") not in {(c["entity"], c["entry"]) for c in tasks.evidence_chain("e2")}
    assert ("x", "e4") in {(c["entity"], c["entry"]) for c in tasks.evidence_chain("e2", include_superseded=True)}
    assert tasks.evidence_chain("e4") != []  # an old revision can still be asked about


def test_k_hop_paths_with_filters_and_end(tasks):
    res = tasks.find_paths("t1", 2, ["blocked_by", "resolves_to"], "out")
    assert [p["nodes"] for p in res["paths"]] == [["t1", "c1", "c2"]]  # t1 -> c3 -> c3 is not a simple path
    res = tasks.find_paths("t1", 3, ["blocked_by", "resolves_to"], "out", end="t2")
    assert [p["nodes"] for p in res["paths"]] == [["t1", "c1", "c2", "t2"]] and res["count"] == 1
    res = tasks.find_paths("t1", hops=[(["blocked_by"], "out"), Hop(("related_to",), "out")])
    assert [p["nodes"] for p in res["paths"]] == [["t1", "t3", "t2"]]
    both = tasks.find_paths("c2", 1, None, "both")["paths"]
    assert sorted(p["nodes"][1] for p in both) == ["c1", "t2"]
    res = tasks.find_paths("e1", 2, None, "both", max_paths=2)
    assert res["truncated"] and res["count"] <= 2
    with pytest.raises(InvalidArgument):
        tasks.find_paths("t1", 0)
    with pytest.raises(InvalidArgument):
        tasks.find_paths("t1", hops=[("blocked_by", "up")])


def test_paths_follow_new_edges_and_deletions(tasks):
    assert tasks.find_paths("t3", 1, "blocks", "out")["paths"][0]["nodes"] == ["t3", "t1"]
    tasks.unrelate("t1", "blocked_by", "t3")
    assert tasks.find_paths("t3", 1, "blocks", "out")["paths"] == []
    tasks.relate("t3", "blocks", "t1")
    assert tasks.find_paths("t1", 1, "blocked_by", "out", end="t3")["count"] == 1
