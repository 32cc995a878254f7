"""Trace retention (issue 17: ``prune_traces`` / ``ngr traces prune``) run again on the PostgreSQL store.

The tests of tests/test_trace_retention.py are imported as they are; only the ``aged`` fixture opens the
store by URL (``ngr.open("postgresql://…")``, a fresh database on the session's server), so the inherited
``LedgerTables.prune_traces`` SQL runs on PostgreSQL, and the CLI test runs ``ngr --db postgresql://…``.
"""

from __future__ import annotations

import time

import pytest

pytest.importorskip("psycopg")

import neurongraph as ngr  # noqa: E402
from test_trace_retention import (  # noqa: E402, F401
    DAY,
    test_old_traces_without_feedback_go_and_the_rest_stay,
    test_the_cli_prunes_with_an_age_and_reports_json,
)


@pytest.fixture
def aged(pg_url):
    """As in test_trace_retention.py, on PostgreSQL: four old traces (two with feedback), one recent."""
    eng = ngr.open(pg_url, embedder="hashing")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"vlan tunnel note {i}", "mapping") for i in range(6)])
    t0 = time.time()
    eng.store.clock = lambda: t0 - 40 * DAY
    old = [eng.search("vlan tunnel", limit=3) for _ in range(4)]
    eng.record_source_use(old[0].trace_id, [{"node_id": old[0].hits[0].id, "stage": "selected"}])
    eng.record_retrieval_failure(old[1].trace_id, "nothing about the tunnel id")
    eng.store.clock = lambda: t0
    recent = eng.search("vlan tunnel", limit=3)
    yield eng, pg_url, old, recent
    eng.close()
