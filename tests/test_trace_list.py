"""The trace list: the newest stored searches and asks of a store, from any process (``ngr traces list``,
``GET /api/traces``, ``Learning.recent_traces``) — what a person picks a trace from before giving feedback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.learning import Learning


@pytest.fixture
def store_with_traces(tmp_path):
    db = tmp_path / "t.db"
    eng = ngr.open(db, embedder="hashing")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"vlan tunnel note {i}", "mapping of the tunnel id") for i in range(5)])
    s1 = eng.search("vlan tunnel", limit=3)
    a = eng.ask("which note is about the vlan tunnel?", mode="vector", limit=2)
    s2 = eng.search("tunnel id mapping", limit=4)
    eng.close()
    return db, s1, a, s2


def test_newest_first_with_kind_and_hit_count(store_with_traces):
    db, s1, a, s2 = store_with_traces
    eng = ngr.open(db, embedder="hashing")  # another engine: the list is the store's, not a process's
    try:
        got = eng.learning.recent_traces(10)
        assert [t["trace_id"] for t in got] == [s2.trace_id, a["trace_id"], s1.trace_id]
        assert [t["kind"] for t in got] == ["search", "ask", "search"]
        assert got[0]["hits"] == len(s2.hits) and got[0]["query"] == "tunnel id mapping"
        assert got[1]["query"] == "which note is about the vlan tunnel?"
        assert [t["trace_id"] for t in eng.learning.recent_traces(1)] == [s2.trace_id]
        with pytest.raises(InvalidArgument):
            Learning(eng.store).recent_traces(-1)
    finally:
        eng.close()


def test_the_cli_lists_json_and_text(store_with_traces):
    db, s1, _a, s2 = store_with_traces
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "traces", "list"]
    r = subprocess.run([*cmd, "--limit", "2", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    items = json.loads(r.stdout)
    assert len(items) == 2 and items[0]["trace_id"] == s2.trace_id and items[1]["kind"] == "ask"
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and s1.trace_id in r.stdout and "vlan tunnel" in r.stdout
    r = subprocess.run([*cmd, "--limit", "0", "--json"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"
