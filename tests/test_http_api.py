"""The HTTP API (issue 16) through a real ``ngr serve`` process on loopback, driven with httpx.

Covers: the search JSON equals ``ngr search --json``; every search option; node, neighbours,
traces; the learning loop selected → validated → used with the weight change visible in the
receipt, the trace and the neighbours; outcomes and retrieval failures; every error code the
API can return from a request (with its HTTP status); request caps; the Host check; the token
rule (refused without a token beyond loopback; every POST needs it, GETs do not); background
jobs with progress; and the engine queue's bound (``busy``) on a real uvicorn server in-process.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from contextlib import contextmanager

import httpx
import pytest

import neurongraph as ngr
from http_fixtures import DAY, QUERY, T0, build_store, run_ngr, served
from neurongraph.http import create_app

TOKEN = "s3cret-token-for-tests-0123456789"


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    return build_store(tmp_path_factory.mktemp("http") / "ngr.db")


@pytest.fixture(scope="module")
def server(db):
    with served(db) as (url, _proc):
        with httpx.Client(base_url=url, timeout=30) as client:
            yield client


def _err(r: httpx.Response, status: int, code: str) -> dict:
    assert r.status_code == status, r.text
    assert r.headers["content-type"].startswith("application/json")
    body = r.json()
    assert set(body) == {"error"} and body["error"]["code"] == code, body
    assert body["error"]["message"]
    return body["error"]


def _search(client, **body) -> dict:
    r = client.post("/api/search", json={"query": QUERY, **body})
    assert r.status_code == 200, r.text
    return r.json()


def _walk(client, trace_id: str, node: str, stages=("selected", "validated", "used"), key=None) -> httpx.Response:
    events = [{"node_id": node, "stage": s} for s in stages]
    return client.post(
        "/api/source-use",
        json={"trace_id": trace_id, "events": events, "idempotency_key": key or uuid.uuid4().hex},
    )


# ----------------------------------------------------------------------------- reads and search
def test_page_health_and_openapi(server):
    r = server.get("/")
    assert r.status_code == 200 and "text/html" in r.headers["content-type"]
    assert "Neuron Graph RAG" in r.text and "default-src 'self'" in r.headers["content-security-policy"]
    for name in ("app.js", "style.css"):
        assert server.get(f"/static/{name}").status_code == 200
    h = server.get("/api/health").json()
    assert h["status"] == "ok" and h["token_required"] is False and h["limits"]["limit"] == 50
    spec = server.get("/openapi.json").json()
    paths = set(spec["paths"])
    assert {
        "/api/search",
        "/api/search/jobs",
        "/api/jobs/{job_id}",
        "/api/node",
        "/api/neighbours",
        "/api/traces",
        "/api/traces/{trace_id}",
        "/api/source-use",
        "/api/outcome",
        "/api/retrieval-failure",
        "/api/stats",
        "/api/ask",
    } <= paths
    search = spec["paths"]["/api/search"]["post"]
    assert "422" not in search["responses"] and {"400", "401", "413"} <= set(search["responses"])
    assert spec["components"]["securitySchemes"]["HTTPBearer"]["scheme"] == "bearer"


def test_search_is_the_cli_json(server, db):
    """Same store, same query: the API returns what `ngr search --json` prints (trace id and times aside)."""
    cli = run_ngr(db, "search", QUERY, "--limit", "5", "--json")
    assert cli.returncode == 0, cli.stderr
    want = json.loads(cli.stdout)
    got = _search(server, limit=5)
    assert set(got) == set(want) == {"trace_id", "query", "seeds", "hits", "timings_ms"}
    assert got["hits"] == want["hits"] and got["seeds"] == want["seeds"] and got["query"] == QUERY
    assert got["trace_id"] != want["trace_id"] and got["trace_id"].startswith("tr_")
    # the trace list is the store's: the CLI process's search is listed beside the server's, newest first
    listed = server.get("/api/traces", params={"limit": 200}).json()
    assert [x["trace_id"] for x in listed[:2]] == [got["trace_id"], want["trace_id"]]
    assert listed[1] == {**listed[1], "query": QUERY, "kind": "search", "hits": len(want["hits"])}
    top = got["hits"][0]
    assert top["id"] == "decision:12" and set(top["scores"]) >= {"lexical", "dense", "entry", "graph", "final"}
    reached = [h for h in got["hits"] if h["paths"] and h["paths"][0]["edges"]]
    assert reached, "a graph path explains at least one hit"
    edge = reached[0]["paths"][0]["edges"][0]
    assert set(edge) == {"src", "rel", "dst", "weight"}


def test_search_options(server):
    only = _search(server, types=["pull_request"], limit=10)
    assert only["hits"] and {h["type"] for h in only["hits"]} == {"pull_request"}
    # as_of: nodes with a later event time are invisible (issue:77 is 9 days after T0)
    before = _search(server, query="clock skew token validation", as_of=T0 + 5 * DAY, limit=20)
    after = _search(server, query="clock skew token validation", limit=20)
    assert "issue:77" in {h["id"] for h in after["hits"]}
    assert "issue:77" not in {h["id"] for h in before["hits"]}
    iso = _search(server, query="clock skew token validation", as_of="2023-11-19T00:00:00Z", limit=20)
    assert "issue:77" not in {h["id"] for h in iso["hits"]}
    since = _search(server, query="tokens sessions", since=T0 + DAY, limit=20)
    assert "decision:12" not in {h["id"] for h in since["hits"]}
    until = _search(server, query="tokens sessions", until=T0 + DAY, limit=20)
    assert not {"pr:40", "issue:77"} & {h["id"] for h in until["hits"]}
    wiki = _search(server, query="release cluster helm", sources=["wiki"], limit=20)
    assert "pr:40" not in {h["id"] for h in wiki["hits"]}
    where = _search(server, query="tokens", where={"state": "open"}, limit=20)
    assert not {"pr:40", "decision:12"} & {h["id"] for h in where["hits"]}
    files = _search(server, query="login slow", files=["src/auth.py", "nope.py"], limit=5)
    assert files["unknown_files"] == ["nope.py"]
    for channel in ("spread", "beam", "ppr", "eager", "mmr", "scored", "none"):
        res = _search(server, channel=channel, rels=["implemented_by"], limit=3)
        assert res["hits"] and not res.get("warnings"), channel
    old = _search(server, strategy="beam", until=T0 + DAY, limit=3)  # deprecated names: still work, said once each
    assert [w.split(" is deprecated")[0] for w in old["warnings"]] == ["strategy", "until"]
    cjk = _search(server, query="ログインが遅い原因は?", limit=3)
    assert cjk["hits"][0]["id"] == "issue:88"


def test_node_neighbours_stats(server):
    n = server.get("/api/node", params={"id": "issue:88"}).json()
    assert n["title"] == "ログインが遅い" and n["metadata"]["lang"] == "ja"
    nb = server.get("/api/neighbours", params={"id": "pr:40"}).json()
    assert nb["node"] == "pr:40" and nb["direction"] == "both"
    assert {(x["rel"], x["node"], x["direction"]) for x in nb["neighbours"]} == {
        ("implemented_by", "decision:12", "in"),
        ("corrected_by", "issue:77", "out"),
        ("touches", "file:src/auth.py", "out"),
    }
    out = server.get("/api/neighbours", params={"id": "pr:40", "direction": "out", "rel": "touches"}).json()
    assert [x["node"] for x in out["neighbours"]] == ["file:src/auth.py"]
    s = server.get("/api/stats").json()
    assert s["nodes"] == 8 and s["edges"] == 6 and s["db"] == "ngr.db" and "path" not in s


# ----------------------------------------------------------------------------- the learning loop
def test_walk_to_used_changes_weights(server):
    res = _search(server, limit=5)
    tid = res["trace_id"]
    hit = next(h for h in res["hits"] if h["paths"] and h["paths"][0]["edges"])
    r = _walk(server, tid, hit["id"], ("selected",))
    assert r.status_code == 200 and r.json()["transitions"] == [
        {"node_id": hit["id"], "from": "retrieved", "to": "selected"}
    ]
    key = uuid.uuid4().hex
    r = _walk(server, tid, hit["id"], ("validated", "used"), key=key)
    receipt = r.json()
    assert r.status_code == 200 and receipt["newly_used"] == [hit["id"]]
    changed = receipt["edges_changed"]
    assert changed and all(c["new_weight"] > c["old_weight"] for c in changed)
    # a retry with the same key is the same receipt, applied once
    again = _walk(server, tid, hit["id"], ("validated", "used"), key=key)
    assert again.status_code == 200 and again.json() == receipt
    # the trace shows the stage, the receipt and the weight changes
    t = server.get(f"/api/traces/{tid}").json()
    assert t["query"] == QUERY and len(t["receipts"]) == 2
    assert {h["id"]: h["stage"] for h in t["hits"]}[hit["id"]] == "used"
    logged = {(c["eid"], c.get("src"), c.get("rel"), c.get("dst"), c["new_weight"]) for c in t["weight_changes"]}
    assert logged >= {(c["eid"], c["src"], c["rel"], c["dst"], c["new_weight"]) for c in changed}
    # the store has the new weight: the neighbours show it (base weight + the learned, plastic part)
    c0 = changed[0]
    nb = server.get("/api/neighbours", params={"id": c0["src"], "direction": "out", "rel": c0["rel"]}).json()
    x = {x["node"]: x for x in nb["neighbours"]}[c0["dst"]]
    assert x["weight"] == pytest.approx(c0["old_weight"]) and x["plastic"] > 0
    assert x["weight"] + x["plastic"] == pytest.approx(c0["new_weight"], rel=1e-3)
    # outcome on the used hit; retrieval failure on the trace
    o = server.post(
        "/api/outcome",
        json={"trace_id": tid, "node_ids": [hit["id"]], "outcome": "confirmed", "summary": "merged, CI green"},
    )
    assert o.status_code == 200 and o.json()["outcome"] == "confirmed"
    f = server.post("/api/retrieval-failure", json={"trace_id": tid, "reason": "needed the deploy runbook too"})
    assert f.status_code == 200 and f.json()["failure_id"] >= 1
    t = server.get(f"/api/traces/{tid}").json()
    assert len(t["outcomes"]) == 1 and t["failures"][0]["reason"] == "needed the deploy runbook too"
    listed = server.get("/api/traces", params={"limit": 200}).json()
    assert tid in {x["trace_id"] for x in listed} and listed[0]["created_at"] >= listed[-1]["created_at"]


def test_jobs_report_progress_then_the_result(server):
    r = server.post("/api/search/jobs", json={"query": QUERY, "limit": 3})
    assert r.status_code == 202
    job = r.json()
    assert job["state"] in ("queued", "running", "done") and job["kind"] == "search"
    deadline = time.monotonic() + 30
    while job["state"] not in ("done", "error") and time.monotonic() < deadline:
        time.sleep(0.05)
        job = server.get(f"/api/jobs/{job['job_id']}").json()
    assert job["state"] == "done" and job["phase"] == "done" and job["elapsed_ms"] > 0
    assert job["result"]["hits"][0]["id"] == "decision:12" and job["result"]["trace_id"].startswith("tr_")
    bad = server.post("/api/search/jobs", json={"query": "x", "as_of": "not a time"}).json()
    for _ in range(300):
        if bad["state"] in ("done", "error"):
            break
        time.sleep(0.05)
        bad = server.get(f"/api/jobs/{bad['job_id']}").json()
    assert bad["state"] == "error" and bad["error"]["code"] == "invalid_argument"


def test_ask(server):
    r = server.post("/api/ask", json={"question": "what implemented the JWT sessions decision?", "limit": 3})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["trace_id"].startswith("tr_") and a["route"]["mode"] in ("graph", "vector", "hybrid")
    assert isinstance(a["answer"], str) and a["answer"]
    assert set(a["refs"]) <= {h["id"] for h in server.get(f"/api/traces/{a['trace_id']}").json()["hits"]}


# ----------------------------------------------------------------------------- every error code
def test_error_codes_of_the_learning_loop(server):
    res = _search(server, limit=3)
    tid, first, second = res["trace_id"], res["hits"][0]["id"], res["hits"][1]["id"]
    _err(server.get("/api/traces/tr_nope"), 404, "unknown_trace")
    _err(_walk(server, "tr_nope", first), 404, "unknown_trace")
    e = _err(_walk(server, tid, "note:not-a-hit"), 409, "node_not_in_trace")
    assert e["hint"]
    _err(_walk(server, tid, first, ("used",)), 409, "invalid_stage_transition")
    key = uuid.uuid4().hex
    assert _walk(server, tid, first, ("selected",), key=key).status_code == 200
    _err(_walk(server, tid, second, ("selected",), key=key), 409, "idempotency_conflict")
    _err(
        server.post(
            "/api/outcome", json={"trace_id": tid, "node_ids": [second], "outcome": "confirmed", "summary": "x"}
        ),
        409,
        "source_not_used",
    )
    _err(server.get("/api/node", params={"id": "nope:1"}), 404, "unknown_node")
    _err(server.get("/api/neighbours", params={"id": "nope:1"}), 404, "unknown_node")
    _err(server.get("/api/jobs/job_nope"), 404, "unknown_job")


@pytest.mark.parametrize(
    "body, fragment",
    [
        (None, "Input should be a valid dictionary"),
        ([], "Input should be a valid dictionary"),
        ({}, "query is required"),
        ({"limit": 3}, "query is required"),
        ({"query": QUERY, "limit": 0}, "limit"),
        ({"query": QUERY, "limit": 51}, "limit"),
        ({"query": QUERY, "limit": "10"}, "limit"),
        ({"query": QUERY, "colour": "red"}, "unknown field(s) 'colour'"),
        ({"query": "   "}, "query must be a non-empty string"),
        ({"query": QUERY, "as_of": "yesterday-ish"}, "as_of"),
        ({"query": QUERY, "strategy": "dfs"}, "strategy"),
        ({"query": QUERY, "where": {"n": 1e400}}, "where"),
        ({"query": "a" * 4001}, "query: String should have at most 4000 characters"),
        ({"query": "bad \ud800 text"}, "query: Input should be a valid string"),  # a lone surrogate
    ],
)
def test_invalid_search_bodies(server, body, fragment):
    r = server.post("/api/search", content=json.dumps(body), headers={"content-type": "application/json"})
    e = _err(r, 400, "invalid_argument")
    assert fragment in e["message"], e


def test_request_level_errors(server):
    _err(
        server.post("/api/search", content=b'{"query": "x",', headers={"content-type": "application/json"}),
        400,
        "invalid_json",
    )
    _err(
        server.post("/api/search", content=b"query=x", headers={"content-type": "text/plain"}), 400, "invalid_argument"
    )
    big = json.dumps({"query": QUERY, "pad": "x" * 300_000})
    _err(server.post("/api/search", content=big), 413, "payload_too_large")
    _err(server.get("/api/nothing-here"), 404, "not_found")
    _err(server.get("/static/../pyproject.toml"), 404, "not_found")
    _err(server.get("/static/%2e%2e%2fapp.py"), 404, "not_found")
    _err(server.delete("/api/search"), 405, "method_not_allowed")
    _err(server.get("/api/health", headers={"host": "evil.example:80"}), 400, "invalid_host")
    _err(server.get("/api/neighbours", params={"id": "pr:40", "limit": 201}), 400, "invalid_argument")
    _err(server.get("/api/node"), 400, "invalid_argument")
    # a query parameter the route does not take is named, not ignored (a typo would answer with the default)
    typo = _err(server.get("/api/traces", params={"limt": 5}), 400, "invalid_argument")
    assert "limt" in typo["message"] and "limit" in typo["message"], typo
    assert server.get("/api/traces", params={"limit": 5}).status_code == 200


# ----------------------------------------------------------------------------- the token rule
def test_beyond_loopback_without_a_token_is_refused(db):
    r = run_ngr(db, "serve", "--host", "0.0.0.0", "--port", "0")
    assert r.returncode == 2 and "error[token_required]" in r.stderr and "Traceback" not in r.stderr
    r = run_ngr(db, "serve", "--port", "0", "--token", "short")
    assert r.returncode == 2 and "error[invalid_argument]" in r.stderr
    missing = db.parent / "no-such.db"
    r = run_ngr(missing, "serve", "--port", "0", "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["error"]["code"] == "no_store"


def test_token_guards_every_post(db):
    """Bound to all interfaces with the token from NGR_TOKEN and --public-reads: POSTs need it, GETs do not
    (without --public-reads the GETs need it too: tests/test_reliability_http_limits.py)."""
    with served(db, "--host", "0.0.0.0", "--public-reads", env={"NGR_TOKEN": TOKEN}) as (url, _proc):
        port = url.rsplit(":", 1)[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            assert c.get("/api/health").json()["token_required"] is True
            assert c.get("/api/node", params={"id": "pr:40"}).status_code == 200
            e = _err(c.post("/api/search", json={"query": QUERY}), 401, "unauthorized")
            assert "token" in e["message"] and e["hint"]
            r = c.post("/api/search", json={"query": QUERY}, headers={"authorization": "Bearer wrong-token-xxxxxxxx"})
            _err(r, 401, "unauthorized")
            assert r.headers["www-authenticate"] == "Bearer"
            auth = {"authorization": f"Bearer {TOKEN}"}
            ok = c.post("/api/search", json={"query": QUERY, "limit": 2}, headers=auth)
            assert ok.status_code == 200
            tid, hit = ok.json()["trace_id"], ok.json()["hits"][0]["id"]
            body = {"trace_id": tid, "events": [{"node_id": hit, "stage": "selected"}], "idempotency_key": "k1"}
            _err(c.post("/api/source-use", json=body), 401, "unauthorized")
            _err(c.post("/api/retrieval-failure", json={"trace_id": tid, "reason": "r"}), 401, "unauthorized")
            _err(c.post("/api/ask", json={"question": "q"}), 401, "unauthorized")
            assert c.post("/api/source-use", json=body, headers=auth).status_code == 200
            # not bound to loopback: any Host name is answered
            assert c.get("/api/health", headers={"host": "ngr.internal:8765"}).status_code == 200


# ----------------------------------------------------------------------------- the engine lanes
@contextmanager
def _in_process(app):
    """A real uvicorn server in this process (so a test can hold an engine thread busy through the
    app's runner, as a long search would), always stopped."""
    import uvicorn

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
    t = threading.Thread(target=server.run, daemon=True)
    t.start()
    try:
        for _ in range(200):
            if server.started:
                break
            time.sleep(0.05)
        port = server.servers[0].sockets[0].getsockname()[1]
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
            yield c
    finally:
        server.should_exit = True
        t.join(timeout=20)
    assert not t.is_alive()


def _hold(runner, gate: threading.Event):
    """Occupy the primary engine's thread until ``gate`` is set."""
    job = runner.submit("ask", lambda engine, job: gate.wait(30) and {})
    for _ in range(100):
        if job.state == "running":
            return job
        time.sleep(0.02)
    raise AssertionError("the holding job never started")


def test_engine_calls_are_queued_and_bounded(tmp_path):
    """One engine thread, FIFO; a full queue is error[busy] (429); the page's job shows its queue position."""
    eng = ngr.open(build_store(tmp_path / "q.db"), embedder="hashing")
    app = create_app(eng, max_waiting=2)
    gate = threading.Event()
    try:
        with _in_process(app) as c:
            _hold(app.state.runner, gate)
            job = c.post("/api/search/jobs", json={"query": QUERY}).json()
            assert job["state"] == "queued" and job["queue_position"] == 0
            assert job["phase"] == "waiting for the engine (0 ahead)"
            second = c.post("/api/search/jobs", json={"query": QUERY}).json()
            assert second["queue_position"] == 1
            _err(c.post("/api/search", json={"query": QUERY}), 429, "busy")
            assert c.get("/api/health").status_code == 200  # the event loop is free while the engine works
            gate.set()
            for _ in range(200):
                job = c.get(f"/api/jobs/{second['job_id']}").json()
                if job["state"] == "done":
                    break
                time.sleep(0.05)
            assert job["state"] == "done" and job["result"]["hits"]
            assert c.post("/api/search", json={"query": QUERY}).status_code == 200
    finally:
        gate.set()


def test_searches_run_on_extra_engines_and_see_every_write(tmp_path):
    """With a second (search) engine, a search is answered while the primary engine is busy; feedback
    written by the primary reaches the second engine's next search through the store's change feed."""
    path = build_store(tmp_path / "lanes.db")
    eng, searcher = ngr.open(path, embedder="hashing"), ngr.open(path, embedder="hashing")
    app = create_app(eng, search_engines=[searcher])
    runner = app.state.runner

    def path_weight(res: dict, node: str) -> float:
        hit = next(h for h in res["hits"] if h["id"] == node)
        return hit["paths"][0]["edges"][-1]["weight"]

    with _in_process(app) as c:
        gate = threading.Event()
        try:
            _hold(runner, gate)
            first = c.post("/api/search", json={"query": QUERY, "limit": 5})  # the primary is held: engine 2
            assert first.status_code == 200
        finally:
            gate.set()
        res = first.json()
        before = path_weight(res, "pr:40")
        receipt = _walk(c, res["trace_id"], "pr:40").json()  # the primary writes; the trace came from engine 2
        (change,) = [e for e in receipt["edges_changed"] if e["dst"] == "pr:40"]
        assert change["old_weight"] == pytest.approx(before) and change["new_weight"] > before
        gate = threading.Event()
        try:
            _hold(runner, gate)
            again = c.post("/api/search", json={"query": QUERY, "limit": 5}).json()  # engine 2 again
        finally:
            gate.set()
        assert path_weight(again, "pr:40") == pytest.approx(change["new_weight"], rel=1e-3)
        assert runner.search_lanes[1].finished == 2  # both searches were answered by the second engine


def test_search_threads_option(db):
    r = run_ngr(db, "serve", "--port", "0", "--search-threads", "0")
    assert r.returncode == 2 and "error[invalid_argument]" in r.stderr
    with served(db, "--search-threads", "3") as (url, _proc):
        with httpx.Client(base_url=url, timeout=30) as c:
            results: list[int] = []

            def one():
                results.append(c.post("/api/search", json={"query": QUERY, "limit": 3}).status_code)

            threads = [threading.Thread(target=one) for _ in range(9)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            assert results == [200] * 9
