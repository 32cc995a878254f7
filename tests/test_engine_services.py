"""The engine composes services (issue 14): Learning, Schema and QueryLinker are built from a bare store with
declared dependencies, the engine's public methods forward to them, and the open-time catch-up reports progress."""

from __future__ import annotations

import inspect

import pytest

import neurongraph as ngr
from neurongraph.engine import Engine
from neurongraph.errors import InvalidArgument
from neurongraph.index.embedder import make_embedder
from neurongraph.learning import Learning
from neurongraph.query_linker import QueryLinker
from neurongraph.schema import Schema, StoreGraph
from neurongraph.schema.validator import Validator
from neurongraph.store.sqlite import SQLiteStore

NODES = [
    ngr.Node("task:1", "task", "Ship the parser", "the parser ships"),
    ngr.Node("task:2", "task", "Write docs", "docs for the parser"),
    ngr.Node("note:1", "note", "Parser notes", "notes on the parser"),
]


def test_an_engine_owns_three_services_over_its_store(tmp_path):
    eng = Engine(SQLiteStore(tmp_path / "a.db"), make_embedder("hashing"))
    try:
        assert isinstance(eng.learning, Learning) and isinstance(eng.schema, Schema)
        assert isinstance(eng.query_linker, QueryLinker)
        assert eng.learning.store is eng.schema.store is eng.query_linker.store is eng.store
        assert isinstance(eng.store.validator, Validator)  # the Schema service attached the write-time checks
        # the public API stays on the engine: one forward per method, with the service's docstring and signature
        assert eng.relate.__doc__ == Schema.relate.__doc__
        assert inspect.signature(Engine.record_source_use) == inspect.signature(Learning.record_source_use)
        eng.add_nodes(NODES)
        eng.relate("task:1", "blocked_by", "task:2")
        assert eng.neighbors("task:1", "blocked_by", "out")[0]["node"] == "task:2"
        assert eng.schema.neighbors("task:2", "blocked_by", "in")[0]["node"] == "task:1"  # the same service
    finally:
        eng.close()


def test_schema_and_learning_work_over_a_bare_store_without_an_engine(tmp_path):
    path = tmp_path / "b.db"
    eng = Engine(SQLiteStore(path), make_embedder("hashing"))
    eng.add_nodes(NODES)
    eng.add_edges([("task:1", "blocked_by", "task:2"), ("task:2", "mentions", "note:1")])
    trace = eng.search("parser").trace_id
    eng.close()
    store = SQLiteStore(path)
    try:
        schema = Schema(store)  # no embedder, no engine: what `ngr schema` and `ngr neighbors` use
        assert isinstance(store.validator, Validator)
        paths = schema.find_paths("task:1", k=2, direction="out")["paths"]
        assert [p["nodes"] for p in paths] == [["task:1", "task:2", "note:1"]]  # walked on StoreGraph
        schema.relate("note:1", "mentions", "task:1")  # a write moves the store: the graph is rebuilt from the feed
        assert len(schema.find_paths("task:2", k=2, direction="out")["paths"]) == 1
        graph = StoreGraph(store)
        assert graph() is graph() and graph().n_edges == 3  # rebuilt only when the store's sequence moves
        learning = Learning(store)  # ledgers need no embedder or index: what `ngr feedback` uses
        assert set(learning.trace_stages(trace).values()) == {"retrieved"}
        learning.record_source_use(trace, [("task:1", s) for s in ("selected", "validated", "used")])
        assert learning.trace_stages(trace)["task:1"] == "used"
        assert learning.node_priming() is not None  # no qvec: plain decayed activation, no embedder needed
        with pytest.raises(InvalidArgument, match="needs an embedder"):
            learning.node_priming(qvec=[0.0])  # query-conditioned priming embeds the used queries
    finally:
        store.close()


def test_the_open_time_reembed_reports_progress(tmp_path):
    path = tmp_path / "c.db"
    eng = Engine(SQLiteStore(path), make_embedder("hashing"))
    eng.add_nodes(NODES)
    eng.close()
    calls: list[tuple[int, int]] = []
    eng = Engine(
        SQLiteStore(path), make_embedder("hashing:64"), progress=lambda done, total: calls.append((done, total))
    )
    try:
        assert calls and calls[-1] == (3, 3)  # every node embedded again for the other model, reported
        assert int(eng.vectors.present.sum()) == 3
    finally:
        eng.close()
