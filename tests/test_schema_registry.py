"""Relation registry: documents, strict/permissive combinations, inverse names, invariants at write time."""

from __future__ import annotations

import json

import pytest

from neurongraph.errors import NeuronGraphError, SchemaError
from neurongraph.model import Edge, Node
from neurongraph.schema import ImmutableEntry, InvalidSchema, InvariantViolation, RelationSchema, SchemaViolation
from schema_fixtures import SEED003_TOML, make_engine


@pytest.fixture
def eng(tmp_path):
    e = make_engine(tmp_path / "s.db")
    yield e
    e.close()


@pytest.fixture
def seeded(eng, tmp_path):
    f = tmp_path / "schema.toml"
    f.write_text(SEED003_TOML)
    eng.load_schema(f)
    eng.add_nodes(
        [
            Node("t1", "task", "Ship login"),
            Node("t2", "task", "Auth API"),
            Node("c1", "condition", "auth API done"),
            Node("n1", "note", "login notes"),
            Node("n2", "note", "auth notes"),
            Node("d1", "doc", "a doc"),
        ]
    )
    return eng


def test_schema_round_trips_through_toml_json_and_the_store(eng, tmp_path):
    s = RelationSchema.from_file(_write(tmp_path / "a.toml", SEED003_TOML))
    j = _write(tmp_path / "a.json", json.dumps(s.to_dict()))
    assert RelationSchema.from_file(j).to_dict() == s.to_dict()
    eng.load_schema(s)
    assert eng.relation_schema().to_dict() == s.to_dict()
    assert s.get("blocked_by").inverse == "blocks" and s.resolve("blocks") == ("blocked_by", True)
    assert not s.get("related_to").directed
    assert "supersedes" in s.relations and "source_of" in s.relations  # built-ins always registered


def _write(p, text):
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "doc, fragment",
    [
        ({"mode": "lenient"}, "mode must be one of"),
        ({"relations": {"a": {"colour": 1}}}, "unknown field"),
        ({"relations": {"a": {"inverse": "b"}, "b": {}}}, "is itself a relation"),
        ({"relations": {"a": {"inverse": "x"}, "b": {"inverse": "x"}}}, "used by both"),
        ({"relations": {"a": {"allow": [["x"]]}}}, "pair"),
        ({"relations": {"a": {"symmetric": True, "inverse": "b"}}}, "own inverse"),
        ({"relations": {"a": {"default_weight": -1}}}, "default_weight"),
        ({"invariants": [{"name": "i", "kind": "nope", "rel": "r", "field": "f"}]}, "kind must be"),
        ({"invariants": [{"name": "i", "kind": "edge_requires_state", "rel": "r", "field": "f"}]}, "exactly one"),
        (
            {"invariants": [{"name": "i", "kind": "state_requires_edges", "rel": "r", "field": "f", "in": ["x"]}]},
            "checks nothing",
        ),
        (
            {
                "invariants": [
                    {"name": "i", "kind": "state_requires_edges", "rel": "r", "field": "f; drop", "in": ["x"], "max": 0}
                ]
            },
            "field",
        ),
    ],
)
def test_malformed_schemas_are_rejected_with_a_reason(doc, fragment):
    with pytest.raises(InvalidSchema) as ei:
        RelationSchema.from_dict(doc)
    assert fragment in ei.value.message and ei.value.code == "invalid_schema"
    assert isinstance(ei.value, SchemaError) and isinstance(ei.value, NeuronGraphError)


def test_bad_file_is_invalid_schema(tmp_path):
    with pytest.raises(InvalidSchema, match="not a valid TOML"):
        RelationSchema.from_file(_write(tmp_path / "x.toml", "mode = "))


@pytest.mark.parametrize(
    "src, rel, dst, ok",
    [
        ("t1", "blocked_by", "t2", True),
        ("t1", "blocked_by", "c1", True),
        ("c1", "blocked_by", "t1", False),  # reversed
        ("t1", "blocked_by", "d1", False),  # wrong dst type
        ("n1", "evidence_of", "t1", True),  # wildcard dst
        ("n1", "evidence_of", "d1", True),
        ("t1", "evidence_of", "n1", False),
        ("c1", "related_to", "t1", True),  # symmetric: either way round
        ("t1", "related_to", "c1", True),
        ("t1", "related_to", "t2", False),
        ("t1", "mentions", "t2", False),  # unknown relation, strict mode
    ],
)
def test_strict_mode_combinations(seeded, src, rel, dst, ok):
    seeded.create_entity("t1", "task", state={"status": "blocked"})  # satisfies the blocked_by invariant
    before = seeded.store.stats()["edges"]
    if ok:
        seeded.add_edges([(src, rel, dst)])
        assert seeded.store.stats()["edges"] == before + 1
    else:
        with pytest.raises(SchemaViolation) as ei:
            seeded.add_edges([(src, rel, dst)])
        assert ei.value.code == "schema_violation" and seeded.store.stats()["edges"] == before
        if rel == "mentions":
            assert "not in the schema (strict mode)" in ei.value.message and "blocked_by" in ei.value.message
        else:
            assert f"allowed for {rel}:" in ei.value.message
            assert ei.value.details["edges"] == [[src, rel, dst]]


def test_error_names_the_allowed_combinations(seeded):
    with pytest.raises(SchemaViolation) as ei:
        seeded.add_edges([("c1", "blocked_by", "t1")])
    assert "(condition, blocked_by, task) is not allowed" in ei.value.message
    assert "(task -> task), (task -> condition)" in ei.value.message


def test_a_batch_with_one_bad_edge_writes_nothing(seeded):
    seeded.create_entity("t1", "task", state={"status": "blocked"})
    with pytest.raises(SchemaViolation):
        seeded.add_edges([("t1", "blocked_by", "t2"), ("n1", "evidence_of", "t1"), ("t1", "blocked_by", "d1")])
    assert seeded.store.stats()["edges"] == 0 and seeded.graph.n_edges == 0


def test_permissive_mode_accepts_unknown_relations_but_checks_registered_ones(seeded):
    seeded.set_schema_mode("permissive")
    seeded.add_edges([("t1", "mentions", "d1")])
    with pytest.raises(SchemaViolation):
        seeded.add_edges([("c1", "blocked_by", "t1")])


def test_no_schema_loaded_checks_nothing(eng):
    eng.add_nodes([Node("a", "x"), Node("b", "y")])
    eng.add_edges([("a", "blocked_by", "b"), ("b", "anything", "a")])
    assert eng.store.stats()["edges"] == 2


def test_loading_a_schema_that_existing_edges_break_is_rejected(eng, tmp_path):
    eng.add_nodes([Node("c1", "condition"), Node("t1", "task")])
    eng.add_edges([("c1", "blocked_by", "t1")])
    with pytest.raises(SchemaViolation):
        eng.load_schema(_write(tmp_path / "s.toml", SEED003_TOML))
    assert eng.store.get_meta("schema.generation") == "0" and eng.relation_schema().mode == "permissive"
    eng.load_schema(_write(tmp_path / "s.toml", SEED003_TOML), check_existing=False)
    assert eng.relation_schema().mode == "strict"


def test_node_type_change_that_breaks_an_edge_is_rejected(seeded):
    seeded.create_entity("t1", "task", state={"status": "blocked"})
    seeded.add_edges([("t1", "blocked_by", "t2")])
    with pytest.raises(SchemaViolation):
        seeded.add_nodes([Node("t2", "doc", "Auth API")])
    assert seeded.store.get_node("t2").type == "task"


# ------------------------------------------------------------------ invariants
def test_blocked_by_requires_blocked_status_and_rejection_is_atomic(seeded):
    seeded.create_entity("t1", "task", state={"status": "open"})
    seq = seeded.store.current_seq()
    with pytest.raises(InvariantViolation) as ei:
        seeded.add_edges([("t2", "blocked_by", "c1"), ("t1", "blocked_by", "t2")])  # t2 has no state at all
    assert ei.value.code == "invariant_violation"
    assert "blocked_by_requires_blocked" in ei.value.message
    assert set(ei.value.details["node_ids"]) == {"t1", "t2"}
    assert seeded.store.stats()["edges"] == 0 and seeded.store.current_seq() == seq  # nothing happened
    seeded.update_entity("t1", expected_revision=1, patch={"status": "blocked"})
    seeded.relate("t1", "blocked_by", "t2")
    assert seeded.neighbors("t1", "blocked_by", "out")[0]["node"] == "t2"


def test_marking_a_blocked_task_done_needs_its_blockers_removed_in_the_same_write(seeded):
    seeded.create_entity("t1", "task", state={"status": "blocked"})
    seeded.relate("t1", "blocked_by", "c1")
    with pytest.raises(InvariantViolation) as ei:
        seeded.update_entity("t1", expected_revision=1, patch={"status": "done"})
    assert {"blocked_by_requires_blocked", "done_has_no_blockers"} <= set(ei.value.details["invariants"])
    assert seeded.get_entity("t1")["state"] == {"status": "blocked"} and seeded.get_entity("t1")["revision"] == 1
    with seeded.schema_atomic():
        seeded.unrelate("t1", "blocked_by", "c1")
        seeded.update_entity("t1", expected_revision=1, patch={"status": "done"})
    assert seeded.get_entity("t1")["state"] == {"status": "done"} and seeded.neighbors("t1") == []
    assert seeded.graph.n_edges == 0  # the in-memory graph followed the deletion


def test_state_requires_edges_min_and_max(eng):
    eng.load_schema(
        {
            "invariants": [
                {
                    "name": "blocked_needs_a_blocker",
                    "kind": "state_requires_edges",
                    "node_type": "task",
                    "field": "status",
                    "in": ["blocked"],
                    "rel": "blocked_by",
                    "min": 1,
                },
                {
                    "name": "done_has_no_blockers",
                    "kind": "state_requires_edges",
                    "node_type": "task",
                    "field": "status",
                    "in": ["done"],
                    "rel": "blocked_by",
                    "max": 0,
                },
            ]
        }
    )
    eng.add_nodes([Node("c", "condition")])
    with pytest.raises(InvariantViolation, match="blocked_needs_a_blocker"):
        eng.create_entity("t", "task", state={"status": "blocked"})
    assert eng.store.get_node("t") is None  # the node write rolled back too
    with eng.schema_atomic():  # entity and blocker as one change
        eng.create_entity("t", "task", state={"status": "blocked"})
        eng.relate("t", "blocked_by", "c")
    with pytest.raises(InvariantViolation, match="blocked_needs_a_blocker"):
        eng.unrelate("t", "blocked_by", "c")  # removing the last blocker of a blocked task
    eng.update_entity("t", expected_revision=1, patch={"status": "open"})
    eng.relate("t", "blocked_by", "c")  # open tasks may carry blockers here
    with pytest.raises(InvariantViolation, match="done_has_no_blockers"):
        eng.update_entity("t", expected_revision=2, patch={"status": "done"})


def test_invariants_read_metadata_of_non_entity_nodes(seeded):
    seeded.add_nodes([Node("t3", "task", "meta task", metadata={"status": "blocked"})])
    seeded.add_edges([("t3", "blocked_by", "c1")])
    with pytest.raises(InvariantViolation):  # the metadata edit would break the invariant
        seeded.add_nodes([Node("t3", "task", "meta task", metadata={"status": "open"})])
    assert seeded.store.get_node("t3").metadata == {"status": "blocked"}


def test_entries_are_immutable_but_metadata_may_change(seeded):
    with pytest.raises(ImmutableEntry) as ei:
        seeded.add_nodes([Node("n1", "note", "login notes, edited")])
    assert ei.value.code == "immutable_entry" and "revise_entry" in ei.value.message
    seeded.add_nodes([Node("n1", "note", "login notes", metadata={"tag": "x"})])
    assert seeded.store.get_node("n1").metadata == {"tag": "x"}


def test_relate_applies_inverse_names_aliases_and_default_weight(seeded):
    seeded.create_entity("t1", "task", state={"status": "blocked"}, aliases=["Login"])
    out = seeded.relate("c1", "blocks", "login")  # = (t1, blocked_by, c1)
    assert out["stored"] == [["t1", "blocked_by", "c1"]]
    seeded.relate("n1", "evidence_of", "t1")
    assert seeded.store.get_edge("n1", "evidence_of", "t1")["weight"] == pytest.approx(0.8)
    seeded.relate("n2", "evidence_of", "t1", weight=0.3)
    assert seeded.store.get_edge("n2", "evidence_of", "t1")["weight"] == pytest.approx(0.3)


def test_duplicate_upsert_keeps_one_edge_and_merges_meta(seeded):
    seeded.create_entity("t1", "task", state={"status": "blocked"})
    seeded.add_edges([Edge("t1", "blocked_by", "c1", meta={"mode": "suggest", "raw_text": "needs auth API"})])
    seeded.add_edges([Edge("t1", "blocked_by", "c1", weight=0.5, meta={"mode": "confirmed", "by": "alice"})])
    assert seeded.store.stats()["edges"] == 1 and seeded.graph.n_edges == 1
    e = seeded.store.get_edge("t1", "blocked_by", "c1")
    assert e["meta"] == {"mode": "confirmed", "raw_text": "needs auth API", "by": "alice"}  # new keys win
    assert e["weight"] == 0.5
