"""Issue 17: every search stores a trace; `ngr traces prune --older-than AGE` deletes the old ones that carry
no feedback, keeps every trace with a stage, receipt, failure or outcome, and never changes node statistics."""

from __future__ import annotations

import json
import subprocess
import sys
import time

import pytest

import neurongraph as ngr
from neurongraph.cli.traces_cmd import parse_age
from neurongraph.errors import InvalidArgument

DAY = 86400.0


@pytest.fixture
def aged(tmp_path):
    """A store with four old traces (two with feedback) and one recent trace; the store clock is moved."""
    db = tmp_path / "t.db"
    eng = ngr.open(db, embedder="hashing")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"vlan tunnel note {i}", "mapping") for i in range(6)])
    t0 = time.time()
    eng.store.clock = lambda: t0 - 40 * DAY  # searches made 40 days ago
    old = [eng.search("vlan tunnel", limit=3) for _ in range(4)]
    eng.record_source_use(old[0].trace_id, [{"node_id": old[0].hits[0].id, "stage": "selected"}])
    eng.record_retrieval_failure(old[1].trace_id, "nothing about the tunnel id")
    eng.store.clock = lambda: t0  # and one today
    recent = eng.search("vlan tunnel", limit=3)
    yield eng, db, old, recent
    eng.close()


def test_old_traces_without_feedback_go_and_the_rest_stay(aged):
    eng, _db, old, recent = aged
    stats_before = eng.node_stats([f"n{i}" for i in range(6)])
    r = eng.prune_traces(30 * DAY)
    assert r["deleted"] == 2 and r["kept_with_feedback"] == 2
    for t in (old[0], old[1], recent):
        eng.get_trace(t.trace_id)  # still there
    for t in (old[2], old[3]):
        with pytest.raises(ngr.errors.NeuronGraphError):
            eng.get_trace(t.trace_id)
    # retrieval counts were folded in before the traces went: statistics are unchanged
    assert eng.node_stats([f"n{i}" for i in range(6)]) == stats_before
    assert eng.prune_traces(30 * DAY)["deleted"] == 0  # idempotent


def test_the_cli_prunes_with_an_age_and_reports_json(aged):
    eng, db, _old, _recent = aged
    eng.close()
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "traces", "prune", "--json"]
    r = subprocess.run([*cmd, "--older-than", "100d"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"] == 0  # nothing is 100 days old
    r = subprocess.run([*cmd, "--older-than", "30d"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["deleted"] == 2
    r = subprocess.run([*cmd, "--older-than", "a month"], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"


def test_ages_parse_and_bad_ones_are_invalid_argument(tmp_path):
    assert parse_age("30d") == 30 * DAY and parse_age("12h") == 12 * 3600 and parse_age("90") == 90.0
    assert parse_age("2w") == 14 * DAY and parse_age("1.5m") == 90.0
    for bad in ("", "-1d", "30 days", "1e9", "d"):
        with pytest.raises(InvalidArgument):
            parse_age(bad)
    with ngr.open(tmp_path / "e.db", embedder="hashing") as eng:
        for bad in (-1, float("nan"), float("inf"), True, "30d"):
            with pytest.raises(InvalidArgument):
                eng.prune_traces(bad)
