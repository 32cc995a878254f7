"""Issue 17, defect 3: a strict relation schema must not block the engine's own writes (co_used edges)."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.engine import Engine
from neurongraph.index.embedder import make_embedder
from neurongraph.learning import LearningPolicy
from neurongraph.schema.errors import SchemaViolation
from neurongraph.store.sqlite import SQLiteStore

WALK = ("selected", "validated", "used")
NODES = [
    ngr.Node(
        "decision:12",
        "decision",
        "Use JWT for sessions",
        "We decided to replace cookie sessions with signed JWT tokens.",
    ),
    ngr.Node("pr:40", "pull_request", "Implement token middleware", "Adds middleware that validates bearer headers."),
    ngr.Node("issue:77", "issue", "Clock skew breaks validation", "Expired checks fail when server clocks drift."),
]
STRICT = {"mode": "strict", "relations": {"implemented_by": {"allow": [["decision", "pull_request"]]}}}


def _walk(node):
    return [(node, s) for s in WALK]


@pytest.fixture
def eng(db_path):
    e = Engine(SQLiteStore(db_path), make_embedder("hashing"), ngr.SearchConfig(seeds=1))
    e.set_learning_policy(LearningPolicy(co_use_delta=0.5))
    e.add_nodes(NODES)
    e.add_edges([ngr.Edge("decision:12", "implemented_by", "pr:40", weight=0.5)])
    e.load_schema(STRICT)
    yield e
    e.close()


def test_strict_schema_allows_co_used_edges_from_feedback(eng):
    assert eng.relation_schema().mode == "strict"
    res = eng.search("JWT sessions decision middleware clock", limit=5)
    ids = [h.id for h in res]
    assert "decision:12" in ids and "issue:77" in ids
    eng.record_source_use(res.trace_id, _walk("decision:12"))
    rc = eng.record_source_use(res.trace_id, _walk("issue:77"))  # second source reaches `used`: co_used edges
    assert {(c["src"], c["dst"]) for c in rc["edges_changed"] if c["kind"] == "co_use"} == {
        ("decision:12", "issue:77"),
        ("issue:77", "decision:12"),
    }
    assert eng.store.get_edge("decision:12", "co_used", "issue:77") is not None
    assert "co_used" in eng.relation_schema().relations  # built in, like supersedes
    eng.set_schema_mode("strict", check_existing=True)  # the stored co_used edges pass a full check


def test_strict_schema_still_rejects_unknown_user_relations(eng):
    with pytest.raises(SchemaViolation):
        eng.add_edges([ngr.Edge("pr:40", "mentions", "issue:77")])


def test_schema_saved_before_co_used_was_built_in_still_accepts_it(eng):
    # a store whose schema rows predate the built-in: drop co_used's registration, as an old store has it
    c = eng.store.conn
    with eng.store.transaction():
        c.execute("DELETE FROM relation_types WHERE rel_id IN (SELECT id FROM relations WHERE name = 'co_used')")
        c.execute("UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'schema.generation'")
    res = eng.search("JWT sessions decision middleware clock", limit=5)
    eng.record_source_use(res.trace_id, _walk("decision:12"))
    eng.record_source_use(res.trace_id, _walk("issue:77"))
    assert eng.store.get_edge("issue:77", "co_used", "decision:12") is not None


def test_mcp_error_table_lists_schema_violation():
    from neurongraph.mcp.server import error_result
    from neurongraph.mcp.tools import HINTS

    assert "schema_violation" in HINTS
    res = error_result(SchemaViolation("edge (a, r, b): relation 'r' is not in the schema", edges=[["a", "r", "b"]]))
    assert res.is_error and res.content[0].text.startswith("error[schema_violation]")
    assert res.structured_content["error"]["hint"] == HINTS["schema_violation"]
