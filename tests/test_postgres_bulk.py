"""Bulk vector writes on PostgreSQL (issue 30 item 3): a large write drops the HNSW index and the load's end
builds it once; searches stay exact meanwhile; a loader killed with ``kill -9`` leaves a store whose next
open builds the index; an index dropped on purpose stays dropped; the start rule (store/postgres_bulk.py)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

pytest.importorskip("psycopg")

from neurongraph.model import Node  # noqa: E402
from neurongraph.store import postgres_bulk  # noqa: E402
from neurongraph.store.postgres import PostgresStore  # noqa: E402
from neurongraph.store.postgres_bulk import HNSW_INDEX, PENDING, HnswBulk  # noqa: E402
from processes import wait_dead  # noqa: E402

ROWS = postgres_bulk.BULK_MIN_ROWS + 200


def _corpus(n: int, seed: int = 3) -> tuple[list[Node], np.ndarray]:
    rng = np.random.default_rng(seed)
    mat = rng.normal(size=(n, 384)).astype(np.float32)
    return [Node(f"n{i}", "note", f"t{i}", f"body {i}") for i in range(n)], mat


def _load(store: PostgresStore, nodes: list[Node], mat: np.ndarray) -> None:
    store.upsert_nodes(nodes)
    store.put_vectors("m", [(n.hash, v) for n, v in zip(nodes, mat)])


def _has_index(store: PostgresStore) -> bool:
    return bool(store.sql.execute("SELECT count(*) FROM pg_indexes WHERE indexname = %s", (HNSW_INDEX,)).rows[0][0])


def _plan_uses_index(store: PostgresStore, q: np.ndarray) -> bool:
    """Whether the index serves the search (sequential scans off: at a thousand rows, after the build's
    ANALYZE, the planner rightly prefers to scan)."""
    with store.transaction() as c:
        c.execute("SET LOCAL enable_seqscan = off")
        rows = c.execute(
            "EXPLAIN SELECT content_hash FROM embeddings WHERE dim = 384 ORDER BY vector::vector(384) <=>"
            " %s::real[]::vector(384) LIMIT 3",
            (q.tolist(),),
        ).fetchall()
    return any(HNSW_INDEX in r[0] for r in rows)


def test_a_large_write_drops_the_index_searches_stay_exact_and_close_builds_it(pg_url):
    nodes, mat = _corpus(ROWS)
    store = PostgresStore(pg_url)
    other = PostgresStore(pg_url)
    try:
        _load(store, nodes, mat)
        assert store.bulk.active and not _has_index(store)
        assert other.get_meta(PENDING) == "pending"
        ids = other.lookup_idx([n.id for n in nodes])
        for i in (0, 77, ROWS - 1):  # another process's server-side search: an exact scan, the row first
            found, sims = other.vector_search("m", mat[i], 3)
            assert found[0] == ids[f"n{i}"] and sims[0] == pytest.approx(1.0, abs=1e-5)
        other.put_vectors("m", [(nodes[0].hash, mat[0])])  # small writes elsewhere go on meanwhile
        assert not other.bulk.active
    finally:
        store.close()  # the load's end: the index is built before close returns
        try:
            assert _has_index(other) and other.get_meta(PENDING) is None
            assert _plan_uses_index(other, mat[5])
            found, _ = other.vector_search("m", mat[5], 3)
            assert found[0] == other.lookup_idx(["n5"])["n5"]
        finally:
            other.close()


def test_small_writes_keep_the_index_and_a_dropped_index_stays_dropped(pg_url):
    nodes, mat = _corpus(300)
    store = PostgresStore(pg_url)
    try:
        for k in range(0, 300, 100):
            _load(store, nodes[k : k + 100], mat[k : k + 100])
        assert not store.bulk.active and _has_index(store)
        store.sql.execute(f"DROP INDEX {HNSW_INDEX}")  # a deployment without server-side vector search
        _, mat2 = _corpus(ROWS, seed=4)
        more = [Node(f"m{i}", "note", f"u{i}", f"more {i}") for i in range(ROWS)]
        _load(store, more, mat2)
        assert not store.bulk.active  # nothing to keep up: no load starts
    finally:
        store.close()
    again = PostgresStore(pg_url)
    try:
        assert again.repaired_index is None and not _has_index(again)
    finally:
        again.close()


_LOADER = """
import sys, numpy as np
from neurongraph.model import Node
from neurongraph.store.postgres import PostgresStore
n = int(sys.argv[2])
mat = np.random.default_rng(3).normal(size=(n, 384)).astype(np.float32)
nodes = [Node(f"n{i}", "note", f"t{i}", f"body {i}") for i in range(n)]
s = PostgresStore(sys.argv[1])
s.upsert_nodes(nodes)
s.put_vectors("m", [(x.hash, v) for x, v in zip(nodes, mat)])
print("loading" if s.bulk.active else "not bulk", flush=True)
sys.stdin.read()  # until killed
"""


def test_a_loader_killed_mid_load_leaves_a_store_whose_next_open_builds_the_index(pg_url):
    loader = subprocess.Popen(
        [sys.executable, "-c", _LOADER, pg_url, str(ROWS)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert loader.stdout is not None and loader.stdout.readline().strip() == "loading"
        during = PostgresStore(pg_url)
        try:  # the load holds the lock: an open does not build under it
            assert during.repaired_index is None and not _has_index(during)
            _, mat = _corpus(ROWS)
            found, _ = during.vector_search("m", mat[9], 1)
            assert found[0] == during.lookup_idx(["n9"])["n9"]
        finally:
            during.close()
    finally:
        os.kill(loader.pid, signal.SIGKILL)
        loader.wait(30)
        assert wait_dead(loader.pid)
    after = PostgresStore(pg_url)  # the killed session's lock went with its connection
    try:
        assert after.repaired_index is not None and after.repaired_index["vectors"] == ROWS
        assert _has_index(after) and after.get_meta(PENDING) is None
        assert after.lookup_idx(["n0", f"n{ROWS - 1}"]).keys() == {"n0", f"n{ROWS - 1}"}  # the committed load
    finally:
        after.close()


def test_the_start_rule_large_relative_to_the_table_or_the_ski_rental():
    bulk = HnswBulk("postgresql://unused")
    assert bulk.wants(1_000, lambda: 0) and bulk.wants(2_500, lambda: 10_000)
    assert not bulk.wants(999, lambda: 0)  # small writes never go bulk at once
    assert not bulk.wants(2_000, lambda: 100_000)  # nor a large one into a much larger table
    table = 20_000  # a rebuild is expected to take table / BUILD_RATE seconds
    bulk.maintained(0.9 * table / postgres_bulk.BUILD_RATE)
    assert not bulk.wants(256, lambda: table)
    bulk.maintained(0.2 * table / postgres_bulk.BUILD_RATE)  # maintenance has now cost more than a rebuild
    assert bulk.wants(256, lambda: table)
    bulk._last_write -= postgres_bulk.IDLE_S + 1  # a pause: the next writes are another load
    assert not bulk.wants(256, lambda: table)


def test_a_copy_from_sqlite_loads_in_bulk_and_ends_with_the_index_built(pg_url, tmp_path):
    from neurongraph.store.postgres_copy import sqlite_to_postgres
    from neurongraph.store.sqlite import SQLiteStore

    nodes, mat = _corpus(50)
    src = SQLiteStore(tmp_path / "src.db")
    try:
        src.upsert_nodes(nodes)
        src.put_vectors("m", [(n.hash, v) for n, v in zip(nodes, mat)])
        dst = PostgresStore(pg_url)
        try:
            sqlite_to_postgres(src, dst)
            assert dst.bulk.last_build is not None and dst.bulk.last_build["vectors"] == 50  # built once, after
            assert _has_index(dst) and dst.get_meta(PENDING) is None and not dst.bulk.active
            found, _ = dst.vector_search("m", mat[7], 1)
            assert found[0] == dst.lookup_idx(["n7"])["n7"]
        finally:
            dst.close()
    finally:
        src.close()


def test_a_pause_in_writes_ends_the_load_and_builds_the_index_while_the_store_stays_open(pg_url, monkeypatch):
    monkeypatch.setattr(postgres_bulk, "IDLE_S", 0.6)  # the watcher's clock (30 s by default)
    nodes, mat = _corpus(ROWS)
    store = PostgresStore(pg_url)
    try:
        _load(store, nodes, mat)
        assert store.bulk.active
        deadline = time.monotonic() + 20
        while store.bulk.active and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not store.bulk.active and _has_index(store) and store.get_meta(PENDING) is None
        assert store.bulk.last_build is not None and store.bulk.last_build["vectors"] == ROWS
    finally:
        store.close()


def test_ngr_ingest_builds_the_index_as_a_visible_stage_and_reports_it(pg_url, tmp_path, monkeypatch):
    """`ngr ingest` into PostgreSQL ends a bulk load itself, behind a progress line, and says what the build
    took (`vector_index` in the summary), instead of a silent wait inside close()."""
    import json as _json

    monkeypatch.setattr(postgres_bulk, "BULK_MIN_ROWS", 100)  # the engine writes 256 vectors at a time

    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    repo = tmp_path / "big"
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True)
    stream = []
    for i in range(400):  # one fast-import stream (each commit follows the branch's tip): well under a second
        msg = f"change {i}: tune knob {i}\n".encode()
        data = f"knob {i}\n".encode()
        stream.append(
            b"commit refs/heads/main\n"
            + f"committer Ada <ada@example.org> {1_700_000_000 + i * 60} +0000\n".encode()
            + b"data %d\n%s" % (len(msg), msg)
            + b"M 100644 inline knobs/k%d.txt\ndata %d\n%s\n" % (i % 50, len(data), data)
        )
    subprocess.run(["git", "-C", str(repo), "fast-import", "--quiet"], input=b"".join(stream), check=True)
    res = CliRunner().invoke(
        app, ["--db", pg_url, "--embedder", "hashing:384", "ingest", "git", str(repo), "--json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    summary = _json.loads(res.stdout)
    assert summary["vector_index"]["vectors"] >= 400 and summary["vector_index"]["build_s"] >= 0
    store = PostgresStore(pg_url)
    try:
        assert _has_index(store) and not store.bulk.active
    finally:
        store.close()


def test_ngr_ingest_jsonl_ends_the_bulk_load_the_same_way(pg_url, tmp_path, monkeypatch):
    import json as _json

    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    monkeypatch.setattr(postgres_bulk, "BULK_MIN_ROWS", 100)
    f = tmp_path / "notes.jsonl"
    f.write_text(
        "".join(
            _json.dumps({"kind": "node", "id": f"note:{i}", "type": "note", "title": f"note {i}", "text": f"body {i}"})
            + "\n"
            for i in range(400)
        )
    )
    res = CliRunner().invoke(
        app, ["--db", pg_url, "--embedder", "hashing:384", "ingest", str(f), "--json"], catch_exceptions=False
    )
    assert res.exit_code == 0, res.output
    assert _json.loads(res.stdout)["vector_index"]["vectors"] >= 400
