"""Three engine processes on one PostgreSQL (issue 30 item 3): a writer process, the HTTP server (``ngr serve
--db postgresql://...``) and this test's own engine; a node one of them writes is found by the others'
searches, and every process is stopped afterwards, also when an assertion fails.  The five-process run
with its numbers is ``benchmarks/postgres_team.py`` (docs/postgres.md)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

import neurongraph as ngr  # noqa: E402
from processes import wait_dead  # noqa: E402

_WRITER = """
import sys
import neurongraph as ngr
eng = ngr.open(sys.argv[1], embedder="hashing")
print("ready", flush=True)
for line in sys.stdin:
    k = line.strip()
    eng.add_nodes([ngr.Node(f"w:{k}", "note", f"Written {k}", f"a note with the word written{k} in it")])
    print("ok", flush=True)
eng.close()
"""


def _found(search, word: str, node: str, within: float = 20.0) -> float:
    """Seconds until ``search(word)`` returns ``node`` (fails after ``within``)."""
    t = time.monotonic()
    while time.monotonic() - t < within:
        if node in search(word):
            return time.monotonic() - t
        time.sleep(0.05)
    raise AssertionError(f"{node} not found by a search for {word!r} within {within} s")


def _stop(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)
    assert wait_dead(proc.pid)


def test_a_write_in_one_process_is_found_by_the_others_searches(pg_url):
    seed = ngr.open(pg_url, embedder="hashing")
    seed.add_nodes([ngr.Node(f"n{i}", "note", f"Seed {i}", f"seed note number {i}") for i in range(20)])
    seed.close()
    ngr_bin = str(Path(sys.executable).parent / "ngr")
    procs: list[subprocess.Popen] = []
    agent = None
    try:
        writer = subprocess.Popen(
            [sys.executable, "-c", _WRITER, pg_url], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )
        procs.append(writer)
        http = subprocess.Popen(
            [ngr_bin, "--db", pg_url, "--embedder", "hashing", "serve", "--port", "0", "--json"],
            stdout=subprocess.PIPE,
            text=True,
        )
        procs.append(http)
        assert writer.stdout is not None and http.stdout is not None and writer.stdin is not None
        base = json.loads(http.stdout.readline())["url"].rstrip("/")
        assert writer.stdout.readline().strip() == "ready"

        def http_search(q: str) -> list[str]:
            req = urllib.request.Request(
                f"{base}/api/search",
                data=json.dumps({"query": q, "limit": 5}).encode(),
                headers={"Content-Type": "application/json"},
            )
            with urllib.request.urlopen(req, timeout=30) as r:
                return [h["id"] for h in json.loads(r.read())["hits"]]

        agent = ngr.open(pg_url, embedder="hashing")

        def agent_search(q: str) -> list[str]:
            return [h.id for h in agent.search(q, limit=5).hits]

        assert "w:1" not in http_search("written1") and "w:1" not in agent_search("written1")
        writer.stdin.write("1\n")
        writer.stdin.flush()
        assert writer.stdout.readline().strip() == "ok"  # committed
        _found(http_search, "written1", "w:1", within=5)
        _found(agent_search, "written1", "w:1", within=5)
        res = agent.search("written1", limit=5)  # the agent's feedback is a write the server sees too
        agent.record_source_use(res.trace_id, [{"node_id": "w:1", "stage": "selected"}])
        agent.add_nodes([ngr.Node("a:1", "note", "Agent note", "the agent wrote agentword here")])
        _found(http_search, "agentword", "a:1", within=5)
        with urllib.request.urlopen(f"{base}/api/traces/{res.trace_id}", timeout=30) as r:
            stages = json.loads(r.read())
        assert "selected" in json.dumps(stages)
    finally:
        if agent is not None:
            agent.close()
        for p in procs:
            if p.stdin is not None:
                p.stdin.close()
            _stop(p)
