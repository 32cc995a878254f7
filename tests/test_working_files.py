"""Working files (`files=`): seeds scaled by specificity, and the file-overlap share in the graph score."""

from __future__ import annotations

import pytest

import neurongraph as ngr


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "w.db", embedder="hashing")
    e.add_nodes(
        [
            ngr.Node("file:a.c", "file", "a.c"),
            ngr.Node("file:b.c", "file", "b.c"),
            ngr.Node("file:common.h", "file", "common.h"),
            ngr.Node("both", "commit", "rework the parser", ""),
            ngr.Node("one", "commit", "rework the parser", ""),
            *[ngr.Node(f"n{k}", "commit", f"unrelated change {k}", "") for k in range(30)],
        ]
    )
    e.add_edges(
        [("both", "touches", "file:a.c"), ("both", "touches", "file:b.c"), ("one", "touches", "file:a.c")]
        + [(f"n{k}", "touches", "file:common.h") for k in range(30)]
    )
    yield e
    e.close()


def test_a_change_touching_more_of_the_working_files_ranks_first(eng):
    res = eng.search("rework the parser", files=["a.c", "b.c"], limit=5, recency_weight=0.0)
    order = [h.id for h in res.hits]
    assert order.index("both") < order.index("one")
    g = {h.id: h.scores["graph"] for h in res.hits}
    assert g["both"] > g["one"]
    off = eng.search("rework the parser", files=["a.c", "b.c"], limit=5, recency_weight=0.0, file_overlap_weight=0.0)
    go = {h.id: h.scores["graph"] for h in off.hits}
    assert g["both"] - go["both"] > g["one"] - go["one"] > 0


def test_a_file_every_change_touches_seeds_weakly(eng):
    spec = eng.search("rework the parser", files=["common.h"], limit=40, recency_weight=0.0)
    flat = eng.search(
        "rework the parser", files=["common.h"], limit=40, recency_weight=0.0, file_seed_specificity=False
    )
    s = {h.id: h.scores["graph"] for h in spec.hits}
    f = {h.id: h.scores["graph"] for h in flat.hits}
    assert s["n0"] < f["n0"]
