"""The PostgreSQL store beyond the compliance suite: engines over it, several processes on one database,
a writer killed mid-batch, copies between SQLite and PostgreSQL (issue 15).

Runs against a real PostgreSQL 18 + pgvector started by ``tests/postgres_server.py`` (one server per session).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time

import numpy as np
import pytest
import typer

from neurongraph.engine import Engine
from neurongraph.index.embedder import make_embedder
from neurongraph.model import Edge, Node
from neurongraph.store.sqlite import SQLiteStore

pytest.importorskip("psycopg")
from neurongraph.store.postgres import PostgresStore  # noqa: E402
from neurongraph.store.postgres_copy import TABLES, sqlite_to_postgres  # noqa: E402

DOCS = [
    ("river", "The Danube river flows through Vienna and Budapest to the Black Sea."),
    ("vienna", "Vienna is the capital of Austria, on the Danube, known for music and coffee houses."),
    ("budapest", "Budapest, the capital of Hungary, is split by the Danube into Buda and Pest."),
    ("mozart", "Mozart composed symphonies and operas; he worked in Vienna for the last decade of his life."),
    ("coffee", "Coffee houses in Vienna serve coffee with a glass of water and cake."),
    ("tokyo", "東京都は日本の首都であり、東京タワーがある。"),
    ("kyoto", "京都は古い寺が多い都市である。"),
]
QUERIES = ["Danube capital", "Vienna music composer", "coffee houses", "東京タワー", "Hungary river Buda"]


def _fill(eng: Engine) -> None:
    eng.add_nodes([Node(i, "note", i.title(), text) for i, text in DOCS])
    eng.add_edges(
        [
            Edge("river", "flows_through", "vienna"),
            Edge("river", "flows_through", "budapest"),
            Edge("mozart", "lived_in", "vienna"),
            Edge("coffee", "located_in", "vienna", weight=0.5),
            Edge("tokyo", "related", "kyoto"),
        ]
    )


def _ranking(eng: Engine, query: str) -> list[str]:
    return [h.id for h in eng.search(query, limit=5, record=False).hits]


def test_an_engine_on_postgres_ranks_as_on_sqlite(pg_url, tmp_path):
    pg = Engine(PostgresStore(pg_url), make_embedder("hashing"))
    lite = Engine(SQLiteStore(tmp_path / "s.db"), make_embedder("hashing"))
    try:
        _fill(pg)
        _fill(lite)
        for q in QUERIES:
            assert _ranking(pg, q) == _ranking(lite, q), q
        # the full-text channel alone: same BM25 (FTS5 and the SQL port), CJK bigrams included
        for q in ("Danube", "coffee Vienna", "東京"):
            a = pg.search(q, limit=5, record=False, channel="none")
            b = lite.search(q, limit=5, record=False, channel="none")
            assert [h.id for h in a.hits] == [h.id for h in b.hits], q
        assert pg.store.lexical_search(["東京"], 3)[0].tolist() == [pg.store.lookup_idx(["tokyo"])["tokyo"]]
        # feedback works the same: a used hit's path edge is reinforced, once per idempotency key
        res = pg.search("Mozart Vienna", limit=5)
        top = res.hits[0].id
        walk = [(top, s) for s in ("selected", "validated", "used")]
        first = pg.record_source_use(res.trace_id, walk, idempotency_key="once")
        assert pg.record_source_use(res.trace_id, walk, idempotency_key="once") == first
        assert pg.store.ledgers.receipts(res.trace_id) == [first]
    finally:
        pg.close()
        lite.close()


def test_pgvector_holds_the_vectors_and_its_hnsw_index_answers(pg_url):
    store = PostgresStore(pg_url)
    try:
        rng = np.random.default_rng(7)
        mat = rng.normal(size=(60, 384)).astype(np.float32)
        store.upsert_nodes([Node(f"n{i}", "note", f"t{i}", f"body {i}") for i in range(60)])
        hashes = {n.id: n.content_hash for n in store.iter_nodes()}
        store.put_vectors("m", [(hashes[f"n{i}"], mat[i]) for i in range(60)])
        idx, got = store.all_node_vectors("m", 384)
        order = {store.ids_by_idx([int(i)])[int(i)]: k for k, i in enumerate(idx)}
        assert np.array_equal(got[order["n5"]], mat[5])  # float32 round trip, bit for bit
        found, sims = store.vector_search("m", mat[17], 3)
        assert found[0] == store.lookup_idx(["n17"])["n17"] and sims[0] == pytest.approx(1.0, abs=1e-5)
        plan = "\n".join(
            r[0]
            for r in store.sql.execute(
                "EXPLAIN SELECT content_hash FROM embeddings WHERE dim = 384 ORDER BY vector::vector(384) <=>"
                " %s::real[]::vector(384) LIMIT 3",
                (mat[0].tolist(),),
            )
        )
        assert "embeddings_hnsw_384" in plan
    finally:
        store.close()


# ----------------------------------------------------------------------------- processes
_WORKER = textwrap.dedent(
    """
    import json, sys, time
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import make_embedder
    from neurongraph.model import Edge, Node
    from neurongraph.store.postgres import PostgresStore

    url, name, other, trace = sys.argv[1:5]
    eng = Engine(PostgresStore(url), make_embedder("hashing"))
    receipts = {}
    for b in range(6):
        ids = [f"{name}-{b}-{k}" for k in range(5)]
        eng.add_nodes([Node(i, "note", f"{name} batch {b}", f"token{name} item {i}") for i in ids])
        eng.add_edges([Edge(ids[0], "mentions", i) for i in ids[1:]])
        walk = [(f"hub{b}", s) for s in ("selected", "validated", "used")]
        receipts[f"shared-{b}"] = eng.record_source_use(trace, walk, idempotency_key=f"shared-{b}")
        eng.search(f"token{name} batch {b}", limit=3)  # a trace of its own
    deadline = time.time() + 60
    while eng.store.stats()["nodes"] < 67 and time.time() < deadline:
        time.sleep(0.05)
    hits = [h.id for h in eng.search(f"token{other}", limit=3, record=False).hits]
    print(json.dumps({"receipts": receipts, "other_hits": hits}))
    eng.close()
    """
)


def _hub_trace(store: PostgresStore) -> str:
    hubs = [f"hub{b}" for b in range(6)]
    store.upsert_nodes([Node(h, "note", h, f"hub {h}") for h in hubs] + [Node("root", "note", "root", "root")])
    store.upsert_edges([Edge("root", "mentions", h, weight=0.5) for h in hubs])
    path = lambda h: {"nodes": ["root", h], "edges": [{"src": "root", "rel": "mentions", "dst": h}]}  # noqa: E731
    store.save_trace(
        {
            "id": "tr_shared",
            "created_at": time.time(),
            "query": "hubs",
            "params": {},
            "fingerprint": "f",
            "hits": [{"rank": k + 1, "id": h, "paths": [path(h)]} for k, h in enumerate(hubs)],
        }
    )
    return "tr_shared"


def test_two_engine_processes_ingest_and_feed_back_on_one_database(pg_url):
    store = PostgresStore(pg_url)
    try:
        trace = _hub_trace(store)
        base = {h: store.get_edge("root", "mentions", h)["weight"] for h in (f"hub{b}" for b in range(6))}
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", _WORKER, pg_url, name, other, trace],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for name, other in (("A", "B"), ("B", "A"))
        ]
        outs = []
        for p in procs:
            out, err = p.communicate(timeout=240)
            assert p.returncode == 0, err[-3000:]
            outs.append(json.loads(out.strip().splitlines()[-1]))
        # nothing lost: every node of both, each under its own index that was never handed out twice
        ch = store.changes_since(0)
        ids = [r[1] for r in ch.nodes]
        assert len(ids) == len(set(ids)) == 67 and len({r[0] for r in ch.nodes}) == 67
        assert store.stats()["edge_relations"]["mentions"] == 6 + 2 * 6 * 4
        # each process followed the other's writes through the change feed
        assert outs[0]["other_hits"][0].startswith("B-") and outs[1]["other_hits"][0].startswith("A-")
        # nothing twice: a key shared by both processes was applied once; both got the original receipt
        for b in range(6):
            key = f"shared-{b}"
            assert outs[0]["receipts"][key] == outs[1]["receipts"][key]
        receipts = store.ledgers.receipts(trace)
        assert sorted(r["idempotency_key"] for r in receipts) == [f"shared-{b}" for b in range(6)]
        changes = store.ledgers.weight_changes(trace, kinds=("path",))
        assert sorted(c["eid"] for c in changes) == sorted(
            store.get_edge("root", "mentions", f"hub{b}")["eid"] for b in range(6)
        )  # one reinforcement per hub edge, not two
        for b in range(6):
            e = store.get_edge("root", "mentions", f"hub{b}")
            assert e["reinforce_count"] == 1 and e["plastic"] > 0 and e["weight"] == base[f"hub{b}"]
    finally:
        store.close()


_BATCHER = textwrap.dedent(
    """
    import sys
    from neurongraph.model import Edge, Node
    from neurongraph.store.postgres import PostgresStore

    store = PostgresStore(sys.argv[1])
    prefix = sys.argv[3] if len(sys.argv) > 3 else "b"
    for b in range(int(sys.argv[2])):
        ids = [f"{prefix}{b}-{k}" for k in range(25)]
        with store.transaction():
            store.upsert_nodes([Node(i, "note", i, "batch text") for i in ids])
            store.upsert_edges([Edge(ids[0], "has", i) for i in ids[1:]])
    store.close()
    """
)


def test_a_reader_never_sees_half_a_batch(pg_url):
    store = PostgresStore(pg_url)
    try:
        writer = subprocess.Popen([sys.executable, "-c", _BATCHER, pg_url, "40"], stderr=subprocess.PIPE, text=True)
        seen, seq, polls = 0, 0, 0
        nodes, edges = 0, 0
        while True:
            done = writer.poll() is not None
            ch = store.changes_since(seq)
            nodes, edges, seq = nodes + len(ch.nodes), edges + len(ch.edges), ch.seq
            assert nodes % 25 == 0 and edges == nodes // 25 * 24, (nodes, edges)
            n = store.stats()["nodes"]
            assert n % 25 == 0
            seen, polls = max(seen, n), polls + 1
            if done:
                break
        assert writer.returncode == 0, writer.stderr.read()[-2000:] if writer.stderr else ""
        assert nodes == 1000 and edges == 960 and polls > 1
    finally:
        store.close()


def test_a_reader_following_the_change_feed_misses_nothing_two_writers_commit(pg_url):
    """Sequence order is commit order: a reader that only ever asks for ``changes_since(its last seq)``
    while two processes write at once ends with every node, none skipped by a later commit."""
    store = PostgresStore(pg_url)
    try:
        writers = [
            subprocess.Popen([sys.executable, "-c", _BATCHER, pg_url, "20", p], stderr=subprocess.PIPE, text=True)
            for p in ("x", "y")
        ]
        seen: set[str] = set()
        seq = 0
        while True:
            done = all(w.poll() is not None for w in writers)
            ch = store.changes_since(seq)
            seen.update(r[1] for r in ch.nodes)
            seq = ch.seq
            if done:
                break
        for w in writers:
            assert w.returncode == 0, w.stderr.read()[-2000:] if w.stderr else ""
        expected = {f"{p}{b}-{k}" for p in ("x", "y") for b in range(20) for k in range(25)}
        assert seen == expected and seq == store.current_seq() == 2 * 20 * 2  # two stamps per batch
    finally:
        store.close()


_KILLED = textwrap.dedent(
    """
    import sys, time
    from neurongraph.model import Node
    from neurongraph.store.postgres import PostgresStore

    store = PostgresStore(sys.argv[1])
    with store.transaction():
        store.upsert_nodes([Node(f"doomed{k}", "note", "doomed", "half a batch") for k in range(50)])
        print("half", flush=True)
        time.sleep(120)
        store.upsert_nodes([Node(f"doomed{k}", "note", "doomed", "other half") for k in range(50, 100)])
    """
)


def test_a_writer_killed_mid_batch_leaves_nothing_and_the_other_keeps_working(pg_url):
    store = PostgresStore(pg_url)
    try:
        store.upsert_nodes([Node("before", "note", "before", "x")])
        seq = store.current_seq()
        victim = subprocess.Popen([sys.executable, "-c", _KILLED, pg_url], stdout=subprocess.PIPE, text=True)
        assert victim.stdout is not None and victim.stdout.readline().strip() == "half"
        # the other writer waits for the victim's write lock meanwhile, reads never wait
        assert store.get_node("before") is not None and store.current_seq() == seq
        wrote: list[int] = []
        other = threading.Thread(target=lambda: wrote.append(store.upsert_nodes([Node("after", "note", "a", "y")])))
        other.start()
        time.sleep(0.5)
        assert wrote == []  # blocked behind the victim's open transaction
        os.kill(victim.pid, signal.SIGKILL)
        victim.wait(30)
        other.join(30)
        assert not other.is_alive() and wrote, "the surviving writer must get the lock once the victim is gone"
        assert store.lookup_idx([f"doomed{k}" for k in range(100)]) == {}
        ch = store.changes_since(seq)
        assert [r[1] for r in ch.nodes] == ["after"] and ch.seq == wrote[0] == seq + 1
    finally:
        store.close()


# ----------------------------------------------------------------------------- copies
def test_a_store_copied_to_postgres_and_back_keeps_rows_rankings_and_learning(pg_url, tmp_path):
    lite = Engine(SQLiteStore(tmp_path / "src.db"), make_embedder("hashing"))
    try:
        _fill(lite)
        res = lite.search("Mozart Vienna", limit=5)
        walk = [(res.hits[0].id, s) for s in ("selected", "validated", "used")]
        receipt = lite.record_source_use(res.trace_id, walk, idempotency_key="k1")
        lite.delete_nodes(["kyoto"])
        before = {q: _ranking(lite, q) for q in QUERIES}
        src_store = lite.store
        assert isinstance(src_store, SQLiteStore)
        pg_store = PostgresStore(pg_url)
        counts = sqlite_to_postgres(src_store, pg_store)
        assert counts["nodes"] == 6 and counts["source_use_receipts"] == 1 and counts["tombstones"] >= 1
        for table, _ in TABLES:
            if table != "meta":
                n_pg = pg_store.sql.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
                assert n_pg == counts[table], table
        assert pg_store.current_seq() == src_store.current_seq()
        with pytest.raises(Exception, match="not empty"):
            sqlite_to_postgres(src_store, pg_store)
    finally:
        lite.close()
    pg = Engine(pg_store, make_embedder("hashing"))
    try:
        assert {q: _ranking(pg, q) for q in QUERIES} == before
        assert pg.record_source_use(res.trace_id, walk, idempotency_key="k1") == receipt  # the key came along
        e = pg.store.get_edge("mozart", "lived_in", "vienna")
        assert e is not None
        pg.add_nodes([Node("new", "note", "New", "fresh node")])
        assert pg.store.lookup_idx(["new"])["new"] > max(pg.store.lookup_idx([i for i, _ in DOCS]).values())
        out = tmp_path / "back.db"
        pg.store.copy_to(out)
        back = Engine(SQLiteStore(out), make_embedder("hashing"))
        try:
            assert {q: _ranking(back, q) for q in QUERIES} == {q: _ranking(pg, q) for q in QUERIES}
            assert back.store.get_edge("mozart", "lived_in", "vienna") == e
            assert back.store.ledgers.receipt_by_key("k1") == pg.store.ledgers.receipt_by_key("k1")
        finally:
            back.close()
    finally:
        pg.close()


def _migrate_app():
    """``migrate`` under a root that sets the options (as ``ngr`` does) with the hashing embedder."""
    from neurongraph.cli.common import Ctx
    from neurongraph.cli.migrate_cmd import migrate_command

    app = typer.Typer()

    @app.callback()
    def root(ctx: typer.Context) -> None:
        ctx.obj = Ctx(db="unused", db_explicit=False, embedder="hashing")

    app.command("migrate")(migrate_command)
    return app


def test_ngr_migrate_copies_and_verifies_both_ways(pg_url, tmp_path):
    from typer.testing import CliRunner

    src = tmp_path / "src.db"
    eng = Engine(SQLiteStore(src), make_embedder("hashing"))
    _fill(eng)
    res = eng.search("Mozart Vienna", limit=5)
    eng.record_source_use(res.trace_id, [(res.hits[0].id, s) for s in ("selected", "validated", "used")])
    eng.close()
    app, run = _migrate_app(), CliRunner()
    r = run.invoke(app, ["migrate", "--from", f"sqlite:{src}", "--to", pg_url, "--json"])
    assert r.exit_code == 0, r.output
    report = json.loads(r.output)
    assert report["verified"] and report["counts_match"] and report["queries_compared"] == 5
    assert report["rows"]["nodes"] == len(DOCS) and report["rows"]["source_use_receipts"] == 1
    back = tmp_path / "back.db"
    r = run.invoke(app, ["migrate", "--from", pg_url, "--to", f"sqlite:{back}"])
    assert r.exit_code == 0 and "rankings identical" in r.output, r.output
    r = run.invoke(app, ["migrate", "--from", f"sqlite:{src}", "--to", pg_url])  # the target is not empty
    assert r.exit_code == 2 and "error[store_error]" in r.output and "not empty" in r.output
    r = run.invoke(app, ["migrate", "--from", "nowhere.db", "--to", pg_url])
    assert r.exit_code == 2 and "error[invalid_argument]" in r.output
    r = run.invoke(app, ["migrate", "--from", f"sqlite:{src}", "--to", f"sqlite:{back}"])
    assert r.exit_code == 2 and "one SQLite store and one PostgreSQL store" in r.output


def test_bm25_scores_equal_fts5_and_follow_updates_and_deletes(pg_url, tmp_path):
    """The SQL BM25 is FTS5's formula: on words both stemmers treat alike the scores agree, also after
    the document frequencies and lengths changed through updates and deletes."""
    pg, lite = PostgresStore(pg_url), SQLiteStore(tmp_path / "bm25.db")
    try:
        words = "river sea boat harbour island bridge tower castle forest mountain".split()
        rng = np.random.default_rng(3)
        nodes = [Node(f"d{i}", "note", "", " ".join(rng.choice(words, int(rng.integers(3, 12))))) for i in range(80)]
        for s in (pg, lite):
            s.upsert_nodes(nodes)
            s.upsert_nodes([Node("d1", "note", "", "castle castle castle tower"), Node("d2", "note", "", "sea")])
            s.delete_nodes(["d3", "d4", "d5"])

        def scores(s):
            idx, sc = s.lexical_search(["castle", "tower", "sea"], 20)
            ids = s.ids_by_idx(idx.tolist())
            return {ids[int(i)]: float(v) for i, v in zip(idx, sc)}

        a, b = scores(pg), scores(lite)
        assert a.keys() == b.keys() and len(a) == 20
        for key in a:
            assert a[key] == pytest.approx(b[key], rel=1e-9), key
        kept_pg = pg.lexical_search(["castle", "tower", "sea"], 50, max_postings=1)
        kept_lite = lite.lexical_search(["castle", "tower", "sea"], 50, max_postings=1)
        assert sorted(pg.ids_by_idx(kept_pg[0].tolist()).values()) == sorted(
            lite.ids_by_idx(kept_lite[0].tolist()).values()
        )  # the budget keeps the same (rarest) term
    finally:
        pg.close()
        lite.close()


def test_a_wrong_url_is_a_store_error_at_once(pg_server):
    from neurongraph.errors import StoreError

    t = time.perf_counter()
    with pytest.raises(StoreError, match="cannot connect to postgresql://postgres@127.0.0.1:.*/no_such_db"):
        PostgresStore(pg_server.url("no_such_db"))
    with pytest.raises(StoreError, match="not a PostgreSQL URL"):
        PostgresStore("mysql://x")
    assert time.perf_counter() - t < 10


def test_driver_failures_are_store_errors(pg_url):
    """What interfaces report as error[store_error], without knowing the driver."""
    from neurongraph.errors import StoreError

    store = PostgresStore(pg_url)
    try:
        store.upsert_nodes([Node("nul", "note", "a\x00b", "")])  # PostgreSQL text holds no NUL: U+FFFD instead
        assert store.get_node("nul").title == "a\ufffdb"
        store.save_trace({"id": "t", "created_at": 1.0, "query": "q", "params": {}, "fingerprint": "f", "hits": []})
        receipt = {"receipt_id": "r1", "trace_id": "t", "created_at": 1.0}
        with store.transaction():
            store.ledgers.save_receipt(receipt, "key", "h")
        with pytest.raises(StoreError, match="duplicate key"):
            with store.transaction():
                store.ledgers.save_receipt({**receipt, "receipt_id": "r2"}, "key", "h")
        assert [r["receipt_id"] for r in store.ledgers.receipts("t")] == ["r1"]
    finally:
        store.close()


def test_the_cli_and_ngr_open_run_on_a_postgresql_url(pg_url, tmp_path):
    """Same CLI and Python API on either store: ``--db postgresql://…`` and ``ngr.open("postgresql://…")``."""
    from typer.testing import CliRunner

    import neurongraph as ngr
    from neurongraph.cli.main import app

    lines = [{"id": i, "type": "note", "title": i.title(), "text": text} for i, text in DOCS]
    lines += [
        {"src": "river", "rel": "flows_through", "dst": "vienna"},
        {"src": "mozart", "rel": "lived_in", "dst": "vienna"},
    ]
    f = tmp_path / "h.jsonl"
    f.write_text("\n".join(json.dumps(x, ensure_ascii=False) for x in lines) + "\n")
    run = CliRunner()
    pre = ["--db", pg_url, "--embedder", "hashing"]
    r = run.invoke(app, [*pre, "ingest", str(f), "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    r = run.invoke(app, [*pre, "search", "Mozart Vienna", "--json"], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    hits = json.loads(r.output)["hits"]
    assert hits and hits[0]["id"] in {"mozart", "vienna"}
    r = run.invoke(app, [*pre, "stats", "--json"], catch_exceptions=False)
    assert r.exit_code == 0 and json.loads(r.output)["path"] == pg_url and json.loads(r.output)["nodes"] == len(DOCS)
    with ngr.open(pg_url, embedder="hashing") as eng:
        assert isinstance(eng.store, PostgresStore)
        assert eng.search("Mozart Vienna", limit=3).hits[0].id == hits[0]["id"]
    r = run.invoke(app, ["--db", "postgresql://postgres@127.0.0.1:1/none", "stats"], catch_exceptions=False)
    assert r.exit_code == 2 and "error[store_error]" in r.output
