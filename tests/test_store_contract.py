"""The store compliance suite (issue 14): what every ``Store`` (store/base.py) must do, through its API only.

Each test runs once per store implementation in ``STORES``.  A factory gets pytest's ``tmp_path`` and
returns a function that opens a *new handle* on one and the same database (a second handle is how the
suite checks reopening and two processes sharing a database).  Adding an implementation is one line in
``STORES``; a server-backed store's factory makes a fresh, empty database (or schema) per test and returns
a function connecting to it (``pytest.param(_postgres, id="postgres", marks=...)`` with a skip mark when
no server is available).  No SQL here: a store passes by behaviour.
"""

from __future__ import annotations

import ast
import inspect
import threading
from pathlib import Path

import numpy as np
import pytest

from neurongraph.errors import InvalidArgument, UnknownNode
from neurongraph.learning import Learning
from neurongraph.model import Edge, Node
from neurongraph.store.base import (
    ChangeFeed,
    EdgeTables,
    LedgerTables,
    NodeTables,
    SchemaTables,
    SearchTables,
    Store,
    TraceTables,
)
from neurongraph.store.sqlite import SQLiteStore


def _sqlite(tmp_path):
    path = tmp_path / "contract.db"
    return lambda: SQLiteStore(path)


def _postgres(tmp_path):
    from neurongraph.store.postgres import PostgresStore
    from postgres_server import fresh_database  # a new database on the session's server; skips without the extra

    url = fresh_database()
    return lambda: PostgresStore(url)


STORES = [
    pytest.param(_sqlite, id="sqlite"),
    pytest.param(_postgres, id="postgres"),
]


@pytest.fixture(params=STORES)
def open_store(request, tmp_path):
    """``open_store()`` -> a new handle on the test's database; every handle is closed after the test."""
    make = request.param(tmp_path)
    handles: list[Store] = []

    def open_() -> Store:
        s = make()
        handles.append(s)
        return s

    yield open_
    for s in handles:
        s.close()


@pytest.fixture
def store(open_store) -> Store:
    return open_store()


def _nodes(*ids: str) -> list[Node]:
    return [Node(i, "note", f"title {i}", f"text of {i}") for i in ids]


def _idx(store: Store, node_id: str) -> int:
    return store.lookup_idx([node_id])[node_id]


def _eid(store: Store, src: str, rel: str, dst: str) -> int:
    e = store.get_edge(src, rel, dst)
    assert e is not None
    return int(e["eid"])


# ----------------------------------------------------------------------------- transactions
def test_an_exception_inside_a_transaction_leaves_nothing(store):
    store.upsert_nodes(_nodes("a"))
    seq = store.current_seq()
    with pytest.raises(RuntimeError, match="boom"):
        with store.transaction():
            store.upsert_nodes(_nodes("b", "c"))
            store.upsert_edges([Edge("a", "mentions", "b")])
            store.set_meta("contract.k", "v")
            store.save_trace(
                {"id": "tr_x", "created_at": 1.0, "query": "q", "params": {}, "fingerprint": "f", "hits": []}
            )
            assert store.in_transaction
            raise RuntimeError("boom")
    assert not store.in_transaction
    assert store.current_seq() == seq
    assert store.get_node("b") is None and store.lookup_idx(["b", "c"]) == {}
    assert store.get_edge("a", "mentions", "b") is None
    assert store.get_meta("contract.k") is None and store.get_trace("tr_x") is None
    ch = store.changes_since(seq)
    assert (ch.seq, ch.nodes, len(ch.edges), ch.deleted_nodes, ch.deleted_edges) == (seq, [], 0, [], [])


def test_a_failed_nested_block_rolls_back_only_itself(store):
    with store.transaction():
        store.upsert_nodes(_nodes("outer"))
        with pytest.raises(ValueError):
            with store.transaction():
                store.upsert_nodes(_nodes("inner"))
                raise ValueError("inner fails")
        store.upsert_nodes(_nodes("after"))
    assert set(store.lookup_idx(["outer", "inner", "after"])) == {"outer", "after"}


def test_a_write_naming_an_unknown_node_is_rejected_whole(store):
    store.upsert_nodes(_nodes("a", "b"))
    seq = store.current_seq()
    with pytest.raises(UnknownNode):
        store.upsert_edges([Edge("a", "mentions", "b"), Edge("a", "mentions", "ghost")])
    assert store.get_edge("a", "mentions", "b") is None and store.current_seq() == seq


# ----------------------------------------------------------------------------- change feed
def test_the_change_feed_returns_exactly_what_each_write_added_in_order(store):
    s0 = store.current_seq()
    s1 = store.upsert_nodes(_nodes("a", "b"))
    s2 = store.upsert_nodes(_nodes("c"))
    s3 = store.upsert_edges([Edge("a", "mentions", "c", weight=0.5)])
    assert s0 < s1 < s2 < s3 == store.current_seq()
    assert {r[1] for r in store.changes_since(s0).nodes} == {"a", "b", "c"}
    after1 = store.changes_since(s1)
    assert [r[1] for r in after1.nodes] == ["c"] and after1.node_types == ["note"]
    assert after1.seq == s3 and len(after1.edges) == 1
    e = store.changes_since(s2).edges
    assert (int(e.src[0]), int(e.dst[0]), float(e.weight[0])) == (_idx(store, "a"), _idx(store, "c"), 0.5)
    assert store.relation_names()[int(e.rel_id[0])] == "mentions"
    assert store.changes_since(s3).nodes == [] and store.change_count_since(s3) == 0
    assert store.change_count_since(s0) == 4  # three node rows and one edge row
    # an update is a change again, under a new number; the node keeps its index
    idx_a = _idx(store, "a")
    s4 = store.upsert_nodes([Node("a", "note", "new title", "new text")])
    ch = store.changes_since(s3)
    assert ch.seq == s4 and [(r[0], r[1]) for r in ch.nodes] == [(idx_a, "a")]
    assert [r[:3] for r in store.node_records(s3, s4)] == [(idx_a, "a", "note")]


def test_tombstones_report_deleted_nodes_and_every_edge_they_took_along(store):
    store.upsert_nodes(_nodes("a", "b", "c"))
    store.upsert_edges([Edge("a", "mentions", "b"), Edge("c", "mentions", "a"), Edge("b", "mentions", "c")])
    ia, e_ab, e_ca, e_bc = (
        _idx(store, "a"),
        *(_eid(store, *t) for t in (("a", "mentions", "b"), ("c", "mentions", "a"), ("b", "mentions", "c"))),
    )
    seq = store.current_seq()
    assert store.delete_nodes(["a", "nope"]) == 1
    ch = store.changes_since(seq)
    assert ch.deleted_nodes == [ia] and sorted(ch.deleted_edges) == sorted([e_ab, e_ca])
    assert store.get_node("a") is None and store.get_edge("c", "mentions", "a") is None
    s2 = store.current_seq()
    assert store.delete_edges([("b", "mentions", "c"), ("b", "mentions", "zzz")]) == 1
    assert store.changes_since(s2).deleted_edges == [e_bc]
    assert sorted(store.tombstones_between(seq, store.current_seq())) == sorted(
        [("node", ia), ("edge", e_ab), ("edge", e_ca), ("edge", e_bc)]
    )
    assert store.delete_nodes(["a"]) == 0 and store.delete_edges([("b", "mentions", "c")]) == 0


def test_node_and_edge_keys_are_never_reused_even_after_reopening(open_store):
    s = open_store()
    s.upsert_nodes(_nodes("a", "b", "c"))
    s.upsert_edges([Edge("a", "mentions", "b"), Edge("a", "mentions", "c")])
    top_idx, top_eid = _idx(s, "c"), _eid(s, "a", "mentions", "c")
    s.delete_nodes(["c"])  # the highest node index and the highest edge key are gone
    s.upsert_nodes(_nodes("d"))
    s.upsert_edges([Edge("a", "mentions", "d")])
    assert _idx(s, "d") > top_idx and _eid(s, "a", "mentions", "d") > top_eid
    top_idx, top_eid = _idx(s, "d"), _eid(s, "a", "mentions", "d")
    s.delete_nodes(["d"])
    s.close()
    s = open_store()
    s.upsert_nodes(_nodes("e"))
    s.upsert_edges([Edge("b", "mentions", "e")])
    assert _idx(s, "e") > top_idx and _eid(s, "b", "mentions", "e") > top_eid
    # an upsert of an existing edge keeps its key and what was learned
    eid = _eid(s, "a", "mentions", "b")
    s.upsert_edges([Edge("a", "mentions", "b", weight=0.25)])
    assert _eid(s, "a", "mentions", "b") == eid and s.get_edge("a", "mentions", "b")["weight"] == 0.25


# ----------------------------------------------------------------------------- ledgers
def _trace(store: Store, trace_id: str, hit_ids: list[str], query: str = "q") -> None:
    store.save_trace(
        {
            "id": trace_id,
            "created_at": 1.0,
            "query": query,
            "params": {},
            "fingerprint": "f",
            "hits": [{"rank": k + 1, "id": h, "paths": []} for k, h in enumerate(hit_ids)],
        }
    )


def test_ledgers_keep_stages_changes_outcomes_failures_and_node_stats(store):
    t = store.ledgers
    store.upsert_nodes(_nodes("a", "b"))
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5)])
    ia, ib, eid = _idx(store, "a"), _idx(store, "b"), _eid(store, "a", "mentions", "b")
    _trace(store, "tr_1", ["a", "b"], query="first")
    _trace(store, "tr_2", ["b"], query="second")
    with store.transaction():
        t.set_stages("tr_1", {"a": 1, "b": 3}, 10.0)
        t.set_stages("tr_1", {"a": 2}, 11.0)
        ids = t.log_weight_changes(
            [("su_1", "tr_1", "b", eid, "path", 0.5, 0.75, 10.0), ("su_1", "tr_1", "a", eid, "co_use", 0.75, 0.8, 10.0)]
        )
        t.mark_reversed(ids[:1], 7)
        fid = t.add_failure("tr_2", "nothing fit", 12.0)
        oid = t.add_outcome("tr_1", ["b"], "confirmed", "it held", None, {"confirmed": "record"}, 13.0)
    assert t.stages("tr_1") == {"a": 2, "b": 3} and t.stages("tr_2") == {}
    assert ids[0] < ids[1]
    assert [c["kind"] for c in t.weight_changes("tr_1")] == ["path", "co_use"]
    assert [c["id"] for c in t.weight_changes("tr_1", unreversed=True)] == [ids[1]]
    assert t.weight_changes("tr_1", node_id="b")[0]["reversed_by"] == 7
    assert [c["kind"] for c in t.weight_changes("tr_1", kinds=("co_use",))] == ["co_use"]
    assert t.failures("tr_2") == [{"id": fid, "reason": "nothing fit", "created_at": 12.0}]
    (o,) = t.outcomes("tr_1")
    assert (o["id"], o["node_ids"], o["outcome"], o["policy"]) == (oid, ["b"], "confirmed", {"confirmed": "record"})
    # traces fold into retrieval counts through a cursor that only grows
    first = t.traces_after(0, 1)
    assert [h["id"] for h in first[0][1]] == ["a", "b"]
    rest = t.traces_after(first[0][0], 10)
    assert [[h["id"] for h in hits] for _, hits in rest] == [["b"]] and t.traces_after(rest[-1][0], 10) == []
    with store.transaction():
        t.add_retrievals({ia: 1, ib: 2})
        t.add_retrievals({ib: 1})
        assert t.node_activation(ib) == (0.0, None)
        t.mark_used(ib, 0.5, 20.0)
    assert {r[0]: r[1:3] for r in t.node_stats()} == {ia: (1, 0), ib: (3, 1)}
    assert t.node_activation(ib) == (0.5, 20.0) and t.node_activation(10**9) is None
    idx, act, at = t.active_nodes()
    assert idx.tolist() == [ib] and act.tolist() == [0.5] and at.tolist() == [20.0]
    assert t.used_queries() == [("b", "first")]  # stage 3 (used) of an active node
    with store.transaction():
        t.set_activations([(ib, 0.0, None)])
    assert t.active_nodes()[0].size == 0


def test_learned_edge_state_is_stamped_into_the_change_feed(store):
    t = store.ledgers
    store.upsert_nodes(_nodes("a", "b"))
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5)])
    eid = t.edge_id("a", "mentions", "b")
    assert eid == _eid(store, "a", "mentions", "b") and t.edge_id("b", "mentions", "a") is None
    assert t.edge_state(eid) == (eid, "a", "mentions", "b", 0.5, 0.0, None, False, 0)
    assert t.plastic_edges()[0].size == 0
    seq = store.current_seq()
    with store.transaction():
        t.write_learned([(eid, 0.25, store.clock(), False, 1)], store.next_seq(), store.clock())
    ch = store.changes_since(seq)
    assert ch.edges.eid.tolist() == [eid] and 0.74 < float(ch.edges.weight[0]) <= 0.75  # base + plastic (decaying)
    e_ids, base, plastic, _, dormant = t.plastic_edges()
    assert (e_ids.tolist(), base.tolist(), plastic.tolist(), dormant.tolist()) == ([eid], [0.5], [0.25], [0.0])
    assert store.get_edge("a", "mentions", "b")["reinforce_count"] == 1
    s2 = store.current_seq()
    with store.transaction():
        t.set_plastic([(eid, 0.0, None)], store.next_seq())
    assert float(store.changes_since(s2).edges.weight[0]) == 0.5
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5)])  # an upsert keeps what was learned
    assert t.edge_state(eid)[8] == 1


def test_an_idempotency_key_is_applied_once(store):
    t = store.ledgers
    _trace(store, "tr_1", ["a"])
    receipt = {"receipt_id": "su_1", "trace_id": "tr_1", "created_at": 5.0, "n": 1}
    with store.transaction():
        t.save_receipt(receipt, "key-1", "hash-1")
    assert t.receipt_by_key("key-1") == ("hash-1", receipt) and t.receipt_by_key("other") is None
    with pytest.raises(Exception):  # noqa: B017 - the driver's own error: the key is unique
        with store.transaction():
            t.save_receipt({**receipt, "receipt_id": "su_2"}, "key-1", "hash-2")
    with store.transaction():
        t.save_receipt({**receipt, "receipt_id": "su_3", "created_at": 6.0}, None, "hash-3")  # no key: no limit
    assert [r["receipt_id"] for r in t.receipts("tr_1")] == ["su_1", "su_3"]


def test_a_replayed_source_use_request_changes_weights_once(store):
    store.upsert_nodes(_nodes("a", "b"))
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5)])
    path = {"nodes": ["a", "b"], "edges": [{"src": "a", "rel": "mentions", "dst": "b", "weight": 0.5}]}
    store.save_trace(
        {
            "id": "tr_1",
            "created_at": 1.0,
            "query": "q",
            "params": {},
            "fingerprint": "f",
            "hits": [{"rank": 1, "id": "a", "paths": []}, {"rank": 2, "id": "b", "paths": [path]}],
        }
    )
    learning = Learning(store)
    walk = [("b", s) for s in ("selected", "validated", "used")]
    first = learning.record_source_use("tr_1", walk, idempotency_key="k1")
    weight = store.get_edge("a", "mentions", "b")["weight"] + store.get_edge("a", "mentions", "b")["plastic"]
    again = learning.record_source_use("tr_1", walk, idempotency_key="k1")
    assert again == first and first["newly_used"] == ["b"] and len(first["edges_changed"]) == 1
    assert store.get_edge("a", "mentions", "b")["weight"] + store.get_edge("a", "mentions", "b")["plastic"] == weight
    assert len(store.ledgers.receipts("tr_1")) == 1


# ----------------------------------------------------------------------------- schema tables
def test_schema_tables_round_trip_and_compare_and_set(store):
    t = store.schema_tables
    gen = t.save_relation_schema(
        [("blocked_by", True, "blocks", 1.0, "task waits"), ("related", False, None, 0.5, "")],
        [("blocked_by", "task", "task"), ("blocked_by", "task", "*")],
        [("done_unblocked", '{"name": "done_unblocked"}')],
        "strict",
        ["decision"],
    )
    types, rules, specs = t.relation_schema_rows()
    assert sorted(types) == [("blocked_by", True, "blocks", 1.0, "task waits"), ("related", False, None, 0.5, "")]
    assert rules == {"blocked_by": [("task", "task"), ("task", "*")]} and specs == ['{"name": "done_unblocked"}']
    assert store.get_meta("schema.mode") == "strict" and int(store.get_meta("schema.generation")) == gen
    assert t.save_relation_schema([], [], [], "permissive", []) == gen + 1 and t.relation_schema_rows()[0] == []
    store.upsert_nodes(_nodes("t1"))
    i = _idx(store, "t1")
    with store.transaction():
        t.add_alias("first task", i)
        assert t.insert_entity_state(i, '{"status": "open"}', 1.0)
        assert not t.insert_entity_state(i, "{}", 2.0)
        assert t.update_entity_state(i, '{"status": "done"}', 3.0, expected_revision=1)
        assert not t.update_entity_state(i, '{"status": "lost"}', 4.0, expected_revision=1)  # stale
    assert t.alias_target("first task") == (i, "t1") and t.aliases_of(i) == ["first task"]
    row = t.entity_row("t1")
    assert row is not None and (row[4], row[5]) == ('{"status": "done"}', 2)
    assert t.node_states([i]) == [(i, "t1", "note", '{"status": "done"}')]


# ----------------------------------------------------------------------------- two handles
def test_a_second_handle_sees_writes_through_its_change_feed(open_store):
    a, b = open_store(), open_store()
    seen_b = b.current_seq()
    a.upsert_nodes(_nodes("x"))
    ch = b.changes_since(seen_b)
    assert [r[1] for r in ch.nodes] == ["x"] and ch.seq == a.current_seq() == b.current_seq()
    b.upsert_edges([Edge("x", "mentions", "x")])
    a_ch = a.changes_since(ch.seq)
    assert len(a_ch.edges) == 1 and a.get_edge("x", "mentions", "x") is not None
    b.delete_nodes(["x"])
    assert a.changes_since(a_ch.seq).deleted_nodes == [ch.nodes[0][0]]


def test_concurrent_writers_on_two_handles_lose_no_write(open_store):
    a, b = open_store(), open_store()
    start = a.current_seq()
    a.set_meta("contract.counter", "0")
    errors: list[BaseException] = []

    def work(s: Store, name: str) -> None:
        try:
            for k in range(25):
                s.upsert_nodes(_nodes(f"{name}{k}"))
                with s.transaction():  # read-modify-write: a write transaction sees the latest commit
                    n = int(s.get_meta("contract.counter") or 0)
                    s.set_meta("contract.counter", str(n + 1))
        except BaseException as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(s, n)) for s, n in ((a, "a"), (b, "b"))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(60)
    assert not errors and not any(th.is_alive() for th in threads)
    assert a.get_meta("contract.counter") == b.get_meta("contract.counter") == "50"
    ch = open_store().changes_since(start)
    assert sorted(r[1] for r in ch.nodes) == sorted([f"a{k}" for k in range(25)] + [f"b{k}" for k in range(25)])
    idx = np.array([r[0] for r in ch.nodes])
    assert np.unique(idx).size == 50  # two writers never got the same key


# ----------------------------------------------------------------------------- reads used by the layers above
def test_lookups_vectors_and_traces(store):
    store.upsert_nodes([Node("commit:abc123", "commit", "Fix Parser", "fixes it"), *_nodes("file:x.py")])
    store.upsert_edges([Edge("commit:abc123", "touches", "file:x.py")])
    ic = _idx(store, "commit:abc123")
    assert store.node_types(["commit:abc123", "nope"]) == {"commit:abc123": "commit"}
    assert store.ids_by_idx([ic, 10**9]) == {ic: "commit:abc123"}
    assert store.node_heads([ic, 10**9]) == {ic: ("commit:abc123", "commit", "Fix Parser", "fixes it")}
    assert store.ids_with_prefix("commit:abc", 2) == [("commit:abc123", "commit")]
    assert store.nodes_titled("fix parser", 2) == [("commit:abc123", "commit")]
    assert store.edge_pairs("touches") == [("commit:abc123", "file:x.py")] and store.edge_count() == 1
    assert store.node_type_counts() == {"commit": 1, "note": 1}
    store.upsert_nodes([Node("commit:def456", "commit", "Tidy", "Found by the 100%_cov! run")])
    assert store.message_grep(["PARSER"]) == ["commit:abc123"]  # title or text, any case, as git log -i --grep
    assert store.message_grep(["fix", "it"]) == ["commit:abc123"] and store.message_grep(["fix", "tidy"]) == []
    assert store.message_grep(["100%_cov!"]) == ["commit:def456"] and store.message_grep(["0%x"]) == []  # literal
    assert store.message_grep(["parser"], "note") == [] and store.message_grep([]) == []
    store.delete_nodes(["commit:def456"])
    assert store.relation_type_pairs() == [("touches", "commit", "note", 1)]
    v = np.arange(4, dtype=np.float32)
    store.put_vectors("m", [("h1", v)])
    assert np.array_equal(store.get_vectors("m", ["h1", "h2"])["h1"], v) and store.get_vectors("other", ["h1"]) == {}
    assert store.embedding_models() == {"m": 1}
    _trace(store, "tr_1", ["commit:abc123"])
    assert store.get_trace("tr_1")["hits"][0]["id"] == "commit:abc123" and store.get_trace("tr_2") is None
    nodes, scores = store.lexical_search(["parser"], 5)
    assert nodes.tolist() == [ic] and scores[0] > 0


def test_recent_traces_newest_first_with_hit_counts(open_store):
    a, b = open_store(), open_store()
    for k, n in enumerate((2, 0, 3)):
        a.save_trace(
            {
                "id": f"tr_{k}",
                "created_at": 10.0 + (k == 2) * 5,  # tr_0 and tr_1 in the same second: the later write first
                "query": f"q{k}",
                "params": {},
                "fingerprint": "ask:m" if k == 1 else "f",
                "hits": [{"rank": i + 1, "id": f"n{i}", "paths": []} for i in range(n)],
            }
        )
    got = b.recent_traces(10)  # another handle: traces made by any process
    assert [(t["id"], t["hits"], t["fingerprint"]) for t in got] == [
        ("tr_2", 3, "f"),
        ("tr_1", 0, "ask:m"),
        ("tr_0", 2, "f"),
    ]
    assert got[0]["query"] == "q2" and got[0]["created_at"] == 15.0
    assert [t["id"] for t in b.recent_traces(1)] == ["tr_2"] and open_store().recent_traces(0) == []


def test_metadata_filters_and_bulk_reads(store):
    store.upsert_nodes(
        [
            Node("s", "note", "s", "", {"lang": "py", "n": 3, "tags": ["a", "b"], "ok": True}),
            Node("t", "note", "t", "", {"lang": "go", "n": "3", "tags": ["c"], "ok": False}),
            Node("u", "note", "u", "", {"lang": None}),
            Node("v", "note", "v", "", {}),
        ]
    )
    i = {n: _idx(store, n) for n in "stuv"}
    assert store.nodes_failing([("lang", "py")]).tolist() == [i["t"]]  # no key / null: not judged
    assert store.nodes_failing([("n", 3)]).tolist() == [i["t"]]  # the string "3" is not the number 3
    assert store.nodes_failing([("tags", "c")]).tolist() == [i["s"]]  # a list passes when one element equals
    assert store.nodes_failing([("ok", True)]).tolist() == [i["t"]] and store.nodes_failing([]).size == 0
    assert set(store.metadata_keys(10)) == {"lang", "n", "tags", "ok"}
    assert [r.id for r in store.iter_nodes(batch=3)] == ["s", "t", "u", "v"]  # index order, across batches
    v = np.ones(4, np.float32)
    store.put_vectors("m", [(store.get_node("s").content_hash, v)])
    idx, mat = store.all_node_vectors("m", 4)
    assert idx.tolist() == [i["s"]] and mat.shape == (1, 4) and store.all_node_vectors("m", 8)[0].size == 0
    st = store.stats()
    assert (st["nodes"], st["edges"], st["node_types"]) == (4, 0, {"note": 4})


def test_edge_numbers_reads_numeric_meta_only(store):
    from neurongraph.errors import InvalidArgument

    store.upsert_nodes(_nodes("c1", "c2", "c3", "c4", "f"))
    store.upsert_edges(
        [
            Edge("c1", "touches", "f", meta={"added": 120, "deleted": 3}),
            Edge("c2", "touches", "f", meta={"added": 2.5}),
            Edge("c3", "touches", "f", meta={"added": "12"}),  # a string is not a number
            Edge("c4", "touches", "f"),  # no meta
        ]
    )
    e = {c: _eid(store, c, "touches", "f") for c in ("c1", "c2", "c3", "c4")}
    assert store.edge_numbers(list(e.values()) + [10**9], "added") == {e["c1"]: 120.0, e["c2"]: 2.5}
    assert store.edge_numbers([e["c1"]], "deleted") == {e["c1"]: 3.0} and store.edge_numbers([], "added") == {}
    for bad in ("a.b", "x') OR 1=1 --", "", "é"):
        with pytest.raises(InvalidArgument):
            store.edge_numbers([e["c1"]], bad)


def test_node_flags_read_json_true_only(store):
    from neurongraph.errors import InvalidArgument

    flags = [{"aggregate": True}, {"aggregate": False}, {"aggregate": "true"}, {"aggregate": 1}, {}]
    store.upsert_nodes([Node(f"m{k}", "commit", f"merge {k}", "", md) for k, md in enumerate(flags)])
    idx = {f"m{k}": _idx(store, f"m{k}") for k in range(len(flags))}
    assert store.node_flags([*idx.values(), 10**9], "aggregate") == {idx["m0"]}
    assert store.node_flags([], "aggregate") == set() and store.node_flags([idx["m0"]], "other") == set()
    assert store.node_flags(None, "aggregate") == {idx["m0"]} and store.node_flags(None, "other") == set()
    for bad in ("a.b", "x') OR 1=1 --", ""):
        with pytest.raises(InvalidArgument):
            store.node_flags([idx["m0"]], bad)


def test_ingest_bookkeeping_owned_rows_and_pending_edges(store):
    store.upsert_nodes(
        [
            Node("page", "page", "p", "", {"source": "docs", "ingest": "markdown"}),
            Node("sec1", "section", "s", "", {"owner": "page"}),
            Node("sec2", "section", "s", "", {"owner": "other"}),
        ]
    )
    store.upsert_edges(
        [
            Edge("page", "contains", "sec1", meta={"owner": "page"}),
            Edge("sec1", "mentions", "sec2", meta={"linker": "mention"}),
        ]
    )
    assert store.source_node_ids("markdown", "docs") == ["page"] and store.source_node_ids("git", "docs") == []
    assert store.owned_nodes(["page"]) == ["sec1"]
    assert store.owned_edges(["page"]) == [("page", "contains", "sec1")]
    assert store.edges_marked("linker") == [("sec1", "mentions", "sec2")]
    assert store.edges_from(["page", "sec1"]) == {("page", "contains", "sec1"), ("sec1", "mentions", "sec2")}
    store.put_pending_edges([("later", "page", {"src": "page", "rel": "links", "dst": "later"})])
    store.put_pending_edges([("later", "sec2", {"src": "sec2", "rel": "links", "dst": "later"})])
    assert store.pending_edge_count() == 2 and store.drop_pending_edges(["sec2"]) == 1
    with store.transaction():
        assert store.take_pending_edges(["later"]) == [{"src": "page", "rel": "links", "dst": "later"}]
    assert store.pending_edge_count() == 0


def test_hit_metadata_values_and_short_id_resolution(store):
    """A hit's sha and author are read for the given nodes only (scalars; a key a node lacks is absent), and a
    short sha resolves to the one node whose id starts with it (issue 25)."""
    sha_a, sha_b = "abc1234" + "0" * 33, "abc1239" + "f" * 33
    store.upsert_nodes(
        [
            Node("commit:" + sha_a, "commit", "a", "", {"sha": sha_a, "author": "Ada", "time": 5, "files": [1]}),
            Node("commit:" + sha_b, "commit", "b", "", {"sha": sha_b}),
            Node("file:x.py", "file", "x.py", ""),
        ]
    )
    ia, ib, ix = (_idx(store, i) for i in ("commit:" + sha_a, "commit:" + sha_b, "file:x.py"))
    got = store.node_meta_values([ia, ib, ix, 10**9], ("sha", "author", "time"))
    assert got == {ia: {"sha": sha_a, "author": "Ada", "time": 5}, ib: {"sha": sha_b}, ix: {}}
    assert store.node_meta_values([], ("sha",)) == {} and store.node_meta_values([ia], ()) == {}
    with pytest.raises(InvalidArgument):
        store.node_meta_values([ia], ("bad key",))
    assert store.resolve_node_id("file:x.py") == "file:x.py"
    assert store.resolve_node_id("abc12340") == "commit:" + sha_a  # bare hex, 7+ digits
    assert store.resolve_node_id("commit:abc1239") == "commit:" + sha_b
    assert store.resolve_node_id("ABC1239F") == "commit:" + sha_b  # git prints lower case; either is accepted
    with pytest.raises(UnknownNode):
        store.resolve_node_id("abc123")  # 6 digits: too short for a bare sha
    with pytest.raises(UnknownNode):
        store.resolve_node_id("commit:ffff")
    with pytest.raises(InvalidArgument) as amb:
        store.resolve_node_id("commit:abc123")  # both start with it
    assert amb.value.details["candidates"] == sorted(["commit:" + sha_a, "commit:" + sha_b])
    assert "ambiguous" in str(amb.value)


# ----------------------------------------------------------------------------- the rest of the contract
def test_copies_records_of_written_edges_and_a_trace_saved_anyway(open_store, tmp_path):
    store = open_store()
    assert store.schema_version > 0 and open_store().schema_version == store.schema_version
    store.upsert_nodes(_nodes("a", "b"))
    ia, ib = _idx(store, "a"), _idx(store, "b")
    assert {i: r.id for i, r in store.nodes_by_idx([ia, ib, 10**9]).items()} == {ia: "a", ib: "b"}
    s0 = store.current_seq()
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5, polarity=-1, factuality=0.75)])
    eid = _eid(store, "a", "mentions", "b")
    assert store.edge_records(s0, store.current_seq()) == [(eid, ia, "mentions", ib, 0.5, -1, 0.75)]
    assert store.edge_records(store.current_seq(), store.current_seq()) == []
    trace = {"id": "tr_1", "created_at": 1.0, "query": "q", "params": {}, "fingerprint": "f", "hits": []}
    assert store.try_save_trace(trace) is None and store.get_trace("tr_1")["query"] == "q"
    with store.transaction():
        assert store.try_save_trace({**trace, "id": "tr_2"}) is None
    store.copy_to(tmp_path / "copy.db")  # a SQLite file, whatever the store
    copy = SQLiteStore(tmp_path / "copy.db")
    try:
        assert copy.get_node("a") is not None and copy.edge_count() == 1 and copy.get_trace("tr_2") is not None
    finally:
        copy.close()


def test_bulk_edge_columns_and_relation_ids(store):
    store.upsert_nodes(_nodes("a", "b"))
    ids = store.relation_ids(["cites", "mentions"])
    assert store.relation_ids(["cites"]) == {"cites": ids["cites"]} and ids["cites"] != ids["mentions"]
    assert store.relation_names()[ids["cites"]] == "cites"
    seq, written = store.upsert_edge_columns(
        ["a", "a"], ["cites", "cites"], ["b", "b"], np.array([0.2, 0.7]), np.array([1, 1]), np.array([1.0, 0.9])
    )
    e = store.get_edge("a", "cites", "b")
    assert seq == store.current_seq() and e is not None and (e["weight"], e["factuality"]) == (0.7, 0.9)
    if written is not None:  # the written edges as the change feed reports them, where the store gives them
        assert written.eid.tolist() == [e["eid"]] and written.weight.tolist() == [0.7]
    with pytest.raises(UnknownNode):
        store.upsert_edge_columns(["a"], ["cites"], ["zz"], np.array([1.0]), np.array([1]), np.array([1.0]))
    assert store.edge_count() == 1


def test_lexical_tokens_and_postings_rank_like_the_search(store):
    store.upsert_nodes([Node("n1", "note", "Parsers", "parsing parsers"), Node("n2", "note", "Other", "words")])
    i1, i2 = _idx(store, "n1"), _idx(store, "n2")
    tokens = store.lexical_tokens(["parsers", "words"])
    if tokens is None:  # the store cannot say: the engine then ranks through lexical_search
        assert store.lexical_postings() is None
        return
    assert len(tokens) == 2 and tokens[0] and tokens[1]
    post = store.lexical_postings()
    assert post is not None and {i1, i2} <= set(post.rows.tolist())
    t = post.terms.index(tokens[0][0])
    assert i1 in post.docs[post.ptr[t] : post.ptr[t + 1]].tolist()
    only = store.lexical_postings([i2])
    assert only is not None and only.rows.tolist() == [i2] and tokens[0][0] not in only.terms


def test_vectors_cached_by_a_failed_write_are_released(store):
    store.upsert_nodes(_nodes("a"))
    used = store.get_node("a").content_hash
    v = np.ones(4, np.float32)
    mark = store.vector_mark()
    store.put_vectors("m", [("orphan", v), (used, v)])
    gone = store.release_vectors_since(mark)
    if mark < 0:  # the store keeps no order of its cache: releasing does nothing
        assert gone == 0 and set(store.get_vectors("m", ["orphan", used])) == {"orphan", used}
    else:
        assert gone == 1 and set(store.get_vectors("m", ["orphan", used])) == {used}


def test_pruning_keeps_traces_with_feedback(store):
    t = store.ledgers
    _trace(store, "tr_1", ["a"])
    _trace(store, "tr_2", ["a"])
    store.save_trace({"id": "tr_3", "created_at": 100.0, "query": "q", "params": {}, "fingerprint": "f", "hits": []})
    with store.transaction():
        t.set_stages("tr_1", {"a": 1}, 5.0)
        assert t.prune_traces(50.0) == (1, 1)
    assert store.get_trace("tr_2") is None and store.get_trace("tr_1") and store.get_trace("tr_3")


def test_learned_edge_queries_name_the_questions_each_edge_was_learned_for(store):
    t = store.ledgers
    store.upsert_nodes(_nodes("a", "b"))
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5)])
    ib, eid = _idx(store, "b"), _eid(store, "a", "mentions", "b")
    _trace(store, "tr_1", ["a", "b"], query="first")
    with store.transaction():
        ids = t.log_weight_changes(
            [("su_1", "tr_1", "b", eid, "path", 0.5, 0.75, 10.0), ("su_1", "tr_1", "a", eid, "co_use", 0.75, 0.8, 10.0)]
        )
        t.mark_reversed(ids[1:], 7)
    assert t.learned_edge_queries() == []  # the edge carries no learned part yet
    with store.transaction():
        t.write_learned([(eid, 0.25, 10.0, False, 1)], store.next_seq(), 10.0)
    assert t.learned_edge_queries() == [(eid, "path", ib, ib, "first")]


def test_superseded_flags_and_the_validator_queries(store):
    t = store.schema_tables
    t.save_relation_schema(
        [("supersedes", True, None, 1.0, ""), ("blocked_by", True, None, 1.0, "")],
        [("blocked_by", "task", "task")],
        [],
        "strict",
        [],
    )
    sn = store.upsert_nodes(
        [
            Node("d1", "decision", "old", ""),
            Node("d2", "decision", "new", ""),
            Node("t1", "task", "t", ""),
            *_nodes("n1"),
        ]
    )
    assert {r[1] for r in t.nodes_stamped(sn)} == {"d1", "d2", "t1", "n1"}
    d1, d2, t1, n1 = (_idx(store, i) for i in ("d1", "d2", "t1", "n1"))
    assert sorted(t.node_indices("decision")) == sorted([d1, d2]) and sorted(t.node_indices()) == sorted(
        [d1, d2, t1, n1]
    )
    seq = store.upsert_edges([Edge("d2", "supersedes", "d1")])
    rel = store.relation_ids(["supersedes"])["supersedes"]
    assert t.edges_stamped(seq) == [(d2, d1, rel)]
    with store.transaction():
        t.mark_superseded(seq, rel, 5.0)
    assert t.superseded_by("d1") == "d2" and t.supersedes("d2") == "d1" and t.superseded_by("d2") is None
    assert t.superseded_nodes().tolist() == [d1]
    assert [(r[0], r[1]) for r in t.neighbor_rows(d2, "out", None, True)] == [("supersedes", "d1")]
    assert t.neighbor_rows(d2, "out", None, False) == []  # the superseded end is left out
    assert [r[1] for r in t.neighbor_rows(d1, "in", [rel], True)] == ["d2"]
    assert t.edge_counts([d2, n1], rel, "src") == {d2: 1} and t.edge_counts([d1], rel, "dst") == {d1: 1}
    bad = store.upsert_edges([Edge("n1", "blocked_by", "t1"), Edge("n1", "unregistered", "t1")])
    rule = ("n1", "blocked_by", "t1", "note", "task")
    loose = ("n1", "unregistered", "t1", "note", "task")
    assert set(t.edges_breaking_rules(True, [], seq=bad)) == {rule, loose}
    assert t.edges_breaking_rules(False, [], nodes=[n1]) == [rule]
    assert set(t.edges_breaking_rules(True, ["unregistered"])) == {rule}
    store.delete_edges([("d2", "supersedes", "d1")])
    with store.transaction():
        t.unmark_superseded([d1], rel)
    assert t.superseded_nodes().tolist() == [] and t.superseded_by("d1") is None


# ----------------------------------------------------------------------------- the suite names every member
CONTRACT_MEMBERS: dict[type, str] = {
    ChangeFeed: "transaction in_transaction next_seq current_seq schema_version close copy_to changes_since"
    " change_count_since tombstones_between node_records edge_records",
    NodeTables: "upsert_nodes delete_nodes get_node nodes_by_idx node_heads edge_numbers node_flags node_meta_values"
    " resolve_node_id lookup_idx ids_by_idx node_types ids_with_prefix nodes_titled iter_nodes nodes_failing"
    " owned_nodes source_node_ids",
    EdgeTables: "upsert_edges upsert_edge_columns delete_edges get_edge relation_names relation_ids edges_marked"
    " owned_edges edges_from edge_count edge_pairs put_pending_edges take_pending_edges drop_pending_edges"
    " pending_edge_count",
    SearchTables: "lexical_search lexical_tokens lexical_postings get_vectors put_vectors all_node_vectors"
    " embedding_models vector_mark release_vectors_since",
    TraceTables: "save_trace get_trace recent_traces get_meta set_meta stats node_type_counts relation_type_pairs"
    " metadata_keys message_grep",
    LedgerTables: "stages set_stages receipt_by_key save_receipt receipts log_weight_changes weight_changes"
    " mark_reversed add_failure failures add_outcome outcomes prune_traces traces_after add_retrievals"
    " node_activation mark_used node_stats active_nodes used_queries learned_edge_queries set_activations"
    " plastic_edges edge_id edge_state write_learned set_plastic",
    SchemaTables: "save_relation_schema relation_schema_rows alias_target add_alias aliases_of entity_row"
    " insert_entity_state update_entity_state node_states superseded_by supersedes superseded_nodes"
    " mark_superseded unmark_superseded edges_breaking_rules edges_stamped nodes_stamped node_indices edge_counts"
    " neighbor_rows",
    Store: "clock try_save_trace",
}


def _members(cls: type) -> set[str]:
    """The public methods and properties ``cls`` itself declares (abstract or with a default)."""
    return {
        name
        for name, v in vars(cls).items()
        if not name.startswith("_") and (inspect.isfunction(v) or isinstance(v, (property, staticmethod)))
    }


def test_the_member_list_is_the_whole_contract():
    """A member added to (or removed from) store/base.py must be added here too, and so tested below."""
    for cls, names in CONTRACT_MEMBERS.items():
        assert set(names.split()) == _members(cls), cls.__name__


def test_the_suite_names_every_member_of_the_contract():
    """Every member is used by some test of this module (an attribute of that name appears in its code)."""
    tree = ast.parse(Path(__file__).read_text(encoding="utf-8"))
    named = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    missing = [
        f"{cls.__name__}.{m}" for cls, names in CONTRACT_MEMBERS.items() for m in names.split() if m not in named
    ]
    assert missing == []
