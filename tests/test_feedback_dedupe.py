"""Issue 17: the same retrieval failure, or the same outcome about the same external event (external_ref),
sent again (an agent's retry) is recorded and applied once — the ledgers do not grow with retries, and a
repeated verdict does not move weights again. (A repeated confirmation without an external_ref is a new
confirmation, with diminishing gains: tests/test_learning.py.)"""

from __future__ import annotations

import neurongraph as ngr


def _used(tmp_path):
    eng = ngr.open(tmp_path / "d.db", embedder="hashing")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"vlan tunnel {i}", "mapping") for i in range(4)])
    eng.add_edges([("n0", "refs", "n1"), ("n1", "refs", "n2"), ("n2", "refs", "n3")])
    res = eng.search("vlan tunnel", limit=4)
    hit = res.hits[0].id
    eng.record_source_use(res.trace_id, [{"node_id": hit, "stage": s} for s in ("selected", "validated", "used")])
    return eng, res.trace_id, hit


def test_a_repeated_failure_is_recorded_once(tmp_path):
    eng, trace, _ = _used(tmp_path)
    try:
        a = eng.record_retrieval_failure(trace, "nothing about the tunnel id")
        b = eng.record_retrieval_failure(trace, "nothing about the tunnel id")
        c = eng.record_retrieval_failure(trace, "another reason")
        assert b["failure_id"] == a["failure_id"] and b.get("duplicate") is True
        assert c["failure_id"] != a["failure_id"] and "duplicate" not in c
        assert len(eng.learning_report(trace)["failures"]) == 2
    finally:
        eng.close()


def test_a_repeated_outcome_is_recorded_and_applied_once(tmp_path):
    eng, trace, hit = _used(tmp_path)
    try:
        first = eng.record_outcome(trace, [hit], "confirmed", "fix held in production", "deploy-123")
        again = eng.record_outcome(trace, [hit], "confirmed", "fix held in production", "deploy-123")
        assert again["outcome_id"] == first["outcome_id"] and again["duplicate"] is True
        assert again["edges_changed"] == []
        assert len(eng.learning_report(trace)["outcomes"]) == 1
        other = eng.record_outcome(trace, [hit], "confirmed", "held a second week", "deploy-123")  # a new verdict
        assert other["outcome_id"] != first["outcome_id"] and "duplicate" not in other
        assert len(eng.learning_report(trace)["outcomes"]) == 2
    finally:
        eng.close()
