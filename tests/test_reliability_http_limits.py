"""HTTP and interface limits (issue 27, finding 7): with a token every /api read needs it too (it exposed
every user's query history and full node text) unless --public-reads; a slow client cannot hold a
connection open for ever and the connections are capped (1,100 half-sent requests all stayed open); a
JSON body that repeats a key is refused; the length limits are the same on every interface (CLI
`feedback use --key` took 100k characters where MCP/HTTP cap it at 200)."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager

import httpx
import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from http_fixtures import QUERY, build_store
from neurongraph.cli.main import app as cli_app
from neurongraph.errors import InvalidArgument
from neurongraph.learning.api import MAX_KEY_CHARS, MAX_REF_CHARS
from neurongraph.service.contract import LIMITS

pytest.importorskip("fastapi")
from fastapi.testclient import TestClient  # noqa: E402

from neurongraph.http.app import create_app  # noqa: E402
from neurongraph.http.server import uvicorn_config  # noqa: E402

TOKEN = "s3cret-token-0123456789"
AUTH = {"authorization": f"Bearer {TOKEN}"}


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("httplimits") / "s.db")


def _client(db, **kw):
    return TestClient(create_app(ngr.open(db, embedder="hashing"), **kw), base_url="http://127.0.0.1")


READS = [("/api/node", {"id": "pr:40"}), ("/api/neighbours", {"id": "pr:40"}), ("/api/traces", {}), ("/api/stats", {})]


def test_a_token_protects_every_read_unless_public_reads(db):
    with _client(db, token=TOKEN) as c:
        h = c.get("/api/health").json()
        assert h["token_required"] is True and h["reads_need_token"] is True
        assert c.get("/").status_code == 200  # the page holds no data
        tid = c.post("/api/search", json={"query": QUERY}, headers=AUTH).json()["trace_id"]
        for path, params in [*READS, (f"/api/traces/{tid}", {})]:
            r = c.get(path, params=params)
            assert r.status_code == 401 and r.json()["error"]["code"] == "unauthorized", path
            assert (
                c.get(path, params=params, headers={"authorization": "Bearer wrong-wrong-wrong-1"}).status_code == 401
            )
            assert c.get(path, params=params, headers=AUTH).status_code == 200, path
        job = c.post("/api/search/jobs", json={"query": QUERY}, headers=AUTH).json()["job_id"]
        assert c.get(f"/api/jobs/{job}").status_code == 401
    with _client(db, token=TOKEN, public_reads=True) as c:
        assert c.get("/api/health").json()["reads_need_token"] is False
        for path, params in READS:
            assert c.get(path, params=params).status_code == 200, path
        assert c.post("/api/search", json={"query": QUERY}).status_code == 401
    with _client(db) as c:  # no token (loopback): nothing needs one
        assert c.get("/api/node", params={"id": "pr:40"}).status_code == 200


def test_a_body_that_repeats_a_key_is_invalid(db):
    with _client(db) as c:
        body = '{"query": "jwt sessions", "limit": 3, "query": "something else"}'
        r = c.post("/api/search", content=body, headers={"content-type": "application/json"})
        e = r.json()["error"]
        assert r.status_code == 400 and e["code"] == "invalid_argument"
        assert "duplicate key 'query'" in e["message"] and "column 39" in e["message"]
        nested = '{"trace_id": "t", "events": [{"node_id": "a", "stage": "used", "stage": "selected"}]}'
        r = c.post("/api/source-use", content=nested, headers={"content-type": "application/json"})
        assert r.status_code == 400 and "duplicate key 'stage'" in r.json()["error"]["message"]


@contextmanager
def _served(app, **limits):
    import uvicorn

    server = uvicorn.Server(uvicorn_config(app, **limits))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    t = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    t.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        t.join(timeout=20)
        sock.close()


def _closed(s: socket.socket, wait: float) -> bytes | None:
    """What the server sent before closing ``s`` within ``wait`` seconds, or None while it stays open."""
    s.settimeout(wait)
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return got


def test_slow_clients_time_out_and_connections_are_capped(db):
    """50 half-sent requests ("slowloris") against a cap of 10 and a 1 s read deadline: 40 are answered
    503 at once, the other 10 get 408 after the deadline, and a normal client is served afterwards."""
    app = create_app(ngr.open(db, embedder="hashing"))
    with _served(app, read_timeout=1.0, max_connections=10) as port:
        socks = []
        for _ in range(50):
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
            socks.append(s)
        t0 = time.monotonic()
        time.sleep(0.3)
        refused = [got for s in socks if (got := _closed(s, 0.05)) is not None]
        assert len(refused) == 40 and all(b" 503 " in g and b'"busy"' in g for g in refused)
        held = [s for s in socks if s.fileno() >= 0 and _closed(s, 0.01) is None]
        assert len(held) == 10
        answers = [_closed(s, 3.0) for s in held]
        assert time.monotonic() - t0 < 3.5
        assert all(a is not None and b" 408 " in a for a in answers)
        # dribbling a byte at a time does not extend the deadline
        s = socket.create_connection(("127.0.0.1", port))
        t1 = time.monotonic()
        for ch in b"GET /api/health HTTP/1.1\r\n":
            try:
                s.sendall(bytes([ch]))
            except OSError:
                break
            time.sleep(0.1)
        assert _closed(s, 2.0) is not None and time.monotonic() - t1 < 3.0
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as c:
            assert c.get("/api/health").status_code == 200
        for x in [*socks, s]:
            x.close()


def test_length_limits_are_one_constant_on_every_interface(db, tmp_path):
    assert LIMITS["key_chars"] == MAX_KEY_CHARS and LIMITS["ref_chars"] == MAX_REF_CHARS
    local = tmp_path / "k.db"
    local.write_bytes(db.read_bytes())
    eng = ngr.open(local, embedder="hashing")
    try:
        res = eng.search(QUERY, limit=2)
        hit = res.hits[0].id
        with pytest.raises(InvalidArgument, match="idempotency_key is 201 characters"):
            eng.record_source_use(res.trace_id, [(hit, "selected")], idempotency_key="k" * (MAX_KEY_CHARS + 1))
        steps = [(hit, "selected"), (hit, "validated"), (hit, "used")]
        eng.record_source_use(res.trace_id, steps, idempotency_key="k" * MAX_KEY_CHARS)  # the limit itself
        with pytest.raises(InvalidArgument, match="external_ref"):
            eng.record_outcome(res.trace_id, [hit], "confirmed", "ok", external_ref="r" * (MAX_REF_CHARS + 1))
        tid = res.trace_id
    finally:
        eng.close()
    r = CliRunner().invoke(
        cli_app,
        ["--db", str(local), "--embedder", "hashing", "feedback", "use", tid, hit, "--key", "x" * 100_000, "--json"],
    )
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"
    assert "over the limit of 200" in json.loads(r.stdout)["error"]["message"]
