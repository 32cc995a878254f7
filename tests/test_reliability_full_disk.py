"""A full disk (issue 27, finding 5): a failed ingest used to keep the vectors it had cached and a grown
write-ahead log, and then every search failed with ``store_error`` because a search always writes its
trace.  Now a search that cannot store its trace still answers and says so (``trace_saved: false`` and a
warning), the store stays readable, and a failed ingest releases the vectors it cached and truncates the
log when the disk lets it.

How the full disk is simulated without root: ``RLIMIT_FSIZE`` in a child process (no file it writes may
grow past the limit; SIGXFSZ ignored, so a write fails with EFBIG, which SQLite reports as "disk I/O
error", as it reports ENOSPC as "database or disk is full"); and, for the release, a store whose node write
fails with SQLite's own "database or disk is full" error after the vectors were cached."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

import neurongraph as ngr
from neurongraph.index.embedder import make_embedder
from neurongraph.ingest.batch import IngestBatch
from neurongraph.ingest.sync import apply_batch
from neurongraph.store.sqlite import SQLiteStore

_LIMITED = (
    "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, ({limit}, {limit})); "
    "from neurongraph.cli.main import main; sys.argv = ['ngr'] + sys.argv[1:]; main()"
)


def _store(tmp_path, n: int = 300):
    db = tmp_path / "s.db"
    eng = ngr.open(db, embedder="hashing")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"note {i}", f"text about cache eviction {i} " * 5) for i in range(n)])
    eng.close()
    return db


def _ngr_limited(db, limit: int, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-c", _LIMITED.format(limit=limit), "--db", str(db), "--embedder", "hashing", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)


def _vectors(db) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    finally:
        con.close()


def test_a_search_that_cannot_store_its_trace_still_answers(tmp_path):
    db = _store(tmp_path)
    # 32 KiB: the WAL index fits, a 200-hit trace (tens of KB) does not
    r = _ngr_limited(db, 32768, "search", "cache eviction", "--limit", "200", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["hits"] and d["trace_saved"] is False
    assert "the trace was not stored" in d["warnings"][0]
    r = _ngr_limited(db, 32768, "search", "cache eviction", "--limit", "200")  # the table says so too
    assert r.returncode == 0 and "warning: the trace was not stored" in r.stderr
    r = _ngr_limited(db, 32768, "stats", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["traces"] == 0
    # with room again, the trace is stored as before
    eng = ngr.open(db, embedder="hashing")
    try:
        res = eng.search("cache eviction", limit=3)
        assert res.trace_saved and eng.store.get_trace(res.trace_id) is not None
        assert "trace_saved" not in res.to_dict()
    finally:
        eng.close()


def test_after_an_ingest_fails_on_a_full_disk_the_store_stays_readable(tmp_path):
    db = _store(tmp_path)
    big = tmp_path / "big.jsonl"
    with open(big, "w") as f:
        for i in range(3000):
            f.write(json.dumps({"id": f"b{i}", "title": f"big {i}", "text": f"unique words {i} lorem " * 20}) + "\n")
    limit = os.path.getsize(db) + 300_000
    r = _ngr_limited(db, limit, "ingest", str(big), "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "store_error"
    full = max(os.path.getsize(p) for p in tmp_path.glob("s.db*"))  # no file may grow any more
    r = _ngr_limited(db, full, "search", "cache eviction", "--limit", "200", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["hits"]
    r = _ngr_limited(db, full, "stats", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["nodes"] == 300


class _FullOnNodes(SQLiteStore):
    """A store whose node write fails as SQLite fails on a full disk (after the vectors were cached)."""

    def upsert_nodes(self, *a, **kw):
        raise sqlite3.OperationalError("database or disk is full")


def test_a_failed_sync_releases_the_vectors_it_cached_and_truncates_the_log(tmp_path):
    db = _store(tmp_path)
    before = _vectors(db)
    eng = ngr.Engine(_FullOnNodes(db), make_embedder("hashing"))
    try:
        batch = IngestBatch(kind="markdown", source="wiki")
        batch.nodes = [ngr.Node(f"md:p{i}.md", "page", f"Page {i}", f"new words {i} " * 30) for i in range(600)]
        with pytest.raises(sqlite3.OperationalError, match="full"):
            apply_batch(eng, batch)
        assert _vectors(db) == before  # the 600 vectors it had cached are gone again
        wal = db.with_name(db.name + "-wal")
        assert not wal.exists() or wal.stat().st_size == 0
        assert eng.search("new words", limit=3).trace_saved
    finally:
        eng.close()


class _FullOnTraces(SQLiteStore):
    """A store that reads as usual but refuses a trace as SQLite does on a full disk."""

    def save_trace(self, trace):
        raise sqlite3.OperationalError("database or disk is full")


def test_an_ask_that_cannot_store_its_trace_still_answers(tmp_path):
    from neurongraph.engine import Engine

    db = _store(tmp_path, n=20)
    eng = Engine(_FullOnTraces(str(db)), make_embedder("hashing"))
    try:
        out = eng.ask("notes about cache eviction", mode="vector")
        assert out["hits"] and out["trace_saved"] is False
        assert "the trace was not stored" in out["warnings"][0]
        assert eng.store.recent_traces(5) == []
    finally:
        eng.close()
