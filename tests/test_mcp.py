"""MCP server (issue 7): the real server as a stdio subprocess, driven by the SDK's real client.

Every test starts ``python -m neurongraph.mcp --db PATH --embedder hashing`` and talks to it
with ``mcp.Client`` over stdio: no transport, client or engine is replaced by a fake.
"""

from __future__ import annotations

import json
import subprocess
import sys
from contextlib import AsyncExitStack

import anyio
import pytest

pytest.importorskip("mcp.server", reason="the optional extra neurongraph[mcp] (official mcp SDK 2.x) is not installed")
from mcp import Client, StdioServerParameters  # noqa: E402

import neurongraph as ngr  # noqa: E402

TOOLS = {
    "search",
    "get_node",
    "record_source_use",
    "record_retrieval_failure",
    "record_outcome",
    "get_trace",
    "ask",
    "graph_schema",
    "cypher",
}
QUERY = "why did we replace cookie sessions with JWT tokens"
WALK = ("selected", "validated", "used")
HISTORY = [
    ngr.Node(
        "decision:12",
        "decision",
        "Use JWT for sessions",
        "We decided to replace cookie sessions with signed JWT tokens.",
    ),
    ngr.Node(
        "pr:40", "pull_request", "Implement token middleware", "Adds middleware that validates bearer headers. " * 20
    ),
    ngr.Node("issue:77", "issue", "Clock skew breaks validation", "Expired checks fail when server clocks drift."),
    ngr.Node(
        "wiki:deploy",
        "wiki",
        "Deploy guide",
        "How to roll out a release (and new session tokens) to the cluster with helm.",
    ),
    ngr.Node("note:helm", "note", "Helm chart values", "Chart values for the cluster release."),
]
LINKS = [
    ngr.Edge("decision:12", "implemented_by", "pr:40", weight=0.5),
    ngr.Edge("pr:40", "corrected_by", "issue:77", weight=0.5),
    ngr.Edge("wiki:deploy", "mentions", "note:helm", weight=0.5),
]


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "ngr.db"
    eng = ngr.open(path, embedder="hashing")
    eng.add_nodes(HISTORY)
    eng.add_edges(LINKS)
    eng.close()
    return path


def server(db, **kw) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(db.parent),
        args=["-m", "neurongraph.mcp", "--db", str(db), "--embedder", "hashing"],
    )
    return Client(params, read_timeout_seconds=30, **kw)


def run(fn, *args):
    anyio.run(fn, *args)


async def call(c: Client, tool: str, **args) -> dict:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    assert json.loads(r.content[0].text) == r.structured_content
    return r.structured_content


async def fails(c: Client, code: str, tool: str, **args) -> dict:
    r = await c.call_tool(tool, args)
    assert r.is_error, f"{tool} {args} should fail with {code}"
    err = r.structured_content["error"]
    assert err["code"] == code, err
    assert r.content[0].text.startswith(f"error[{code}]: ") and len(err["message"]) > 10
    return err


def walk(node, upto=WALK):
    return [{"node_id": node, "stage": s} for s in upto]


def hit(res, node):
    return next(h for h in res["hits"] if h["id"] == node)


# ------------------------------------------------------------------------------------------ tests
def test_lists_tools_with_strict_schemas_and_teaching_descriptions(db):
    async def main():
        async with server(db, mode="legacy") as c:  # the initialize handshake most clients still use
            assert "record_source_use" in (c.instructions or "")
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert set(tools) == TOOLS
            for t in tools.values():
                s = t.input_schema
                assert s["type"] == "object" and s["additionalProperties"] is False, t.name
                assert "$ref" not in json.dumps(s), t.name
            ev = tools["record_source_use"].input_schema["properties"]["events"]
            assert ev["items"]["additionalProperties"] is False and ev["maxItems"] == 200
            assert ev["items"]["properties"]["stage"]["enum"] == list(WALK)
            assert set(tools["record_source_use"].input_schema["required"]) == {"trace_id", "events", "idempotency_key"}
            q = tools["search"].input_schema["properties"]
            assert q["query"]["maxLength"] == 4000 and q["limit"]["maximum"] == 50
            d = {n: " ".join(t.description.split()) for n, t in tools.items()}
            assert "only a CANDIDATE" in d["search"] and "teaches the engine nothing" in d["search"]
            assert "stages go in order" in d["record_source_use"]
            assert "ONLY for sources your final answer or decision really rests on" in d["record_source_use"]
            assert (
                "INSTEAD of punishing" in d["record_retrieval_failure"]
                and "changes no weight" in d["record_retrieval_failure"]
            )
            assert "reached `used`" in d["record_outcome"]
            assert tools["get_node"].annotations.read_only_hint is True

    run(main)


def test_search_walk_reinforce_replay_and_second_search(db):
    async def main():
        async with server(db) as c:
            res = await call(c, "search", query=QUERY, limit=5)
            trace = res["trace_id"]
            assert trace.startswith("tr_") and res["hits"][0]["id"] == "decision:12"
            for h in res["hits"]:
                assert h["stage"] == "retrieved"
                assert {"id", "title", "snippet", "scores", "paths", "explanation"} <= set(h)
                assert h["scores"]["final"] >= 0
            target = hit(res, "issue:77")  # reached through the graph only
            assert [e["rel"] for e in target["paths"][0]["edges"]] == ["implemented_by", "corrected_by"]
            assert "-[corrected_by w=0.50]-> issue:77" in target["explanation"]
            assert len(hit(res, "pr:40")["snippet"]) < 400  # a snippet, not the full text

            node = await call(c, "get_node", node_id="pr:40")  # read the full source
            assert node["text"] == HISTORY[1].text and node["title"] == "Implement token middleware"

            receipts = []
            for i, stage in enumerate(WALK):  # one stage per call
                r = await call(
                    c,
                    "record_source_use",
                    trace_id=trace,
                    idempotency_key=f"t/{i}",
                    events=[{"node_id": "issue:77", "stage": stage}],
                )
                assert r["transitions"] == [{"node_id": "issue:77", "from": (("retrieved",) + WALK)[i], "to": stage}]
                receipts.append(r)
            assert receipts[0]["edges_changed"] == [] and receipts[1]["edges_changed"] == []  # reading teaches nothing
            used = receipts[2]
            assert used["newly_used"] == ["issue:77"]
            changed = {(e["src"], e["rel"], e["dst"]): e for e in used["edges_changed"]}
            assert set(changed) == {("pr:40", "corrected_by", "issue:77")}  # the hop into the used source (issue 26)
            for e in changed.values():
                assert e["old_weight"] == pytest.approx(0.5) and e["new_weight"] > e["old_weight"]
            new_w = changed[("pr:40", "corrected_by", "issue:77")]["new_weight"]

            again = await call(
                c,
                "record_source_use",
                trace_id=trace,
                idempotency_key="t/2",
                events=[{"node_id": "issue:77", "stage": "used"}],
            )
            assert again == used  # the same receipt, nothing re-applied

            tr = await call(c, "get_trace", trace_id=trace)
            assert hit(tr, "issue:77")["stage"] == "used" and hit(tr, "pr:40")["stage"] == "retrieved"
            assert [r["receipt_id"] for r in tr["receipts"]] == [r["receipt_id"] for r in receipts]

            res2 = await call(c, "search", query=QUERY, limit=5)  # the learned weight shows in the explanation
            assert res2["trace_id"] != trace
            edges2 = {(e["src"], e["rel"], e["dst"]): e["weight"] for e in hit(res2, "issue:77")["paths"][0]["edges"]}
            assert edges2[("pr:40", "corrected_by", "issue:77")] == pytest.approx(new_w, abs=1e-4)
            assert f"-[corrected_by w={new_w:.2f}]-> issue:77" in hit(res2, "issue:77")["explanation"]
            assert hit(res2, "issue:77")["stage"] == "retrieved"  # a new trace starts over

            out = await call(
                c,
                "record_outcome",
                trace_id=trace,
                node_ids=["issue:77"],
                outcome="confirmed",
                summary="the skew fix was merged",
                external_ref="pr#41",
            )
            assert out["outcome"] == "confirmed" and out["effect"] == "record" and out["edges_changed"] == []
            fail = await call(
                c,
                "record_retrieval_failure",
                trace_id=res2["trace_id"],
                reason="the exact ADR page was missing; fell back to git log",
            )
            assert fail["trace_id"] == res2["trace_id"]
            tr2 = await call(c, "get_trace", trace_id=res2["trace_id"])
            assert [f["reason"] for f in tr2["failures"]] == [fail["reason"]]
            assert (await call(c, "get_trace", trace_id=trace))["outcomes"][0]["external_ref"] == "pr#41"

    run(main)


def test_every_error_code_and_input_limit(db):
    async def main():
        async with server(db) as c:
            res = await call(c, "search", query=QUERY, limit=3)
            trace = res["trace_id"]
            assert "note:helm" not in {h["id"] for h in res["hits"]}

            await fails(
                c, "unknown_trace", "record_source_use", trace_id="tr_nope", events=walk("pr:40"), idempotency_key="e/1"
            )
            await fails(c, "unknown_trace", "get_trace", trace_id="tr_nope")
            await fails(c, "unknown_trace", "record_retrieval_failure", trace_id="tr_nope", reason="nothing")
            await fails(c, "unknown_node", "get_node", node_id="nope:1")
            await fails(
                c,
                "node_not_in_trace",
                "record_source_use",
                trace_id=trace,
                events=walk("note:helm"),
                idempotency_key="e/2",
            )
            err = await fails(
                c,
                "invalid_stage_transition",
                "record_source_use",
                trace_id=trace,
                events=[{"node_id": "pr:40", "stage": "selected"}, {"node_id": "pr:40", "stage": "used"}],
                idempotency_key="e/3",
            )
            assert err["details"]["requested"] == "used" and "validated" in err["message"]
            tr = await call(c, "get_trace", trace_id=trace)
            assert hit(tr, "pr:40")["stage"] == "retrieved" and tr["receipts"] == []  # all or nothing

            await call(c, "record_source_use", trace_id=trace, events=walk("pr:40", WALK[:1]), idempotency_key="e/4")
            await fails(
                c,
                "idempotency_conflict",
                "record_source_use",
                trace_id=trace,
                events=walk("pr:40", WALK[1:2]),
                idempotency_key="e/4",
            )
            await fails(
                c,
                "source_not_used",
                "record_outcome",
                trace_id=trace,
                node_ids=["pr:40"],
                outcome="corrected",
                summary="was wrong",
            )
            await call(c, "record_source_use", trace_id=trace, events=walk("pr:40", WALK[:1]), idempotency_key="e/3")
            # a rejected request did not consume its key (e/3 above), and going back is refused
            await fails(
                c,
                "invalid_stage_transition",
                "record_source_use",
                trace_id=trace,
                events=[
                    {"node_id": "pr:40", "stage": "selected"},
                    {"node_id": "pr:40", "stage": "validated"},
                    {"node_id": "pr:40", "stage": "selected"},
                ],
                idempotency_key="e/5",
            )

            # invalid_argument: schema violations, limits and unknown fields, all typed
            bad = [
                ("search", {"query": QUERY, "k": 3}, "unknown field(s) 'k'"),
                (
                    "record_source_use",
                    {
                        "trace_id": trace,
                        "idempotency_key": "e/6",
                        "events": [{"node_id": "pr:40", "stage": "selected", "note": "x"}],
                    },
                    "'events[0].note'",
                ),
                ("search", {"query": "x" * 4001}, "query"),
                ("search", {"query": "   "}, "non-empty"),
                ("search", {"query": QUERY, "limit": 0}, "limit"),
                ("search", {"query": QUERY, "limit": 51}, "limit"),
                ("search", {"query": QUERY, "strategy": "bogus"}, "strategy"),
                ("search", {}, "query is required"),
                ("record_source_use", {"trace_id": trace, "events": [], "idempotency_key": "e/7"}, "events"),
                (
                    "record_source_use",
                    {"trace_id": trace, "events": walk("pr:40", ("validated",)) * 201, "idempotency_key": "e/8"},
                    "events",
                ),
                (
                    "record_source_use",
                    {"trace_id": trace, "events": walk("pr:40", ("retrieved",)), "idempotency_key": "e/9"},
                    "stage",
                ),
                ("record_source_use", {"trace_id": trace, "events": walk("pr:40")}, "idempotency_key is required"),
                (
                    "record_outcome",
                    {"trace_id": trace, "node_ids": ["pr:40"] * 101, "outcome": "confirmed", "summary": "s"},
                    "node_ids",
                ),
                (
                    "record_outcome",
                    {"trace_id": trace, "node_ids": ["pr:40"], "outcome": "great", "summary": "s"},
                    "outcome",
                ),
                ("record_retrieval_failure", {"trace_id": trace, "reason": "r" * 4001}, "reason"),
                ("get_node", {"node_id": "pr:40", "trace_id": trace}, "unknown field(s) 'trace_id'"),
            ]
            for tool, args, needle in bad:
                err = await fails(c, "invalid_argument", tool, **args)
                assert needle in err["message"], (tool, err["message"])
            tr = await call(c, "get_trace", trace_id=trace)
            assert hit(tr, "pr:40")["stage"] == "selected" and len(tr["receipts"]) == 2
            for channel in ("spread", "beam", "ppr", "eager", "mmr", "scored", "none"):  # accepted by name
                res = await call(c, "search", query=QUERY, limit=2, channel=channel)
                assert res["hits"] and "warnings" not in res, channel
            old = await call(c, "search", query=QUERY, limit=2, strategy="beam")  # the deprecated name: works, said
            assert old["hits"] and old["warnings"] == [
                "strategy is deprecated: it is channel (the same option); strategy will be removed in the next release"
            ]

    run(main)


def test_two_clients_feeding_back_at_once_lose_nothing_and_apply_nothing_twice(db):
    async def main():
        async with AsyncExitStack() as stack:
            a = await stack.enter_async_context(server(db))
            b = await stack.enter_async_context(server(db))  # a second process on the same SQLite file
            trace = (await call(a, "search", query=QUERY, limit=5))["trace_id"]
            hits = {h["id"] for h in (await call(b, "get_trace", trace_id=trace))["hits"]}
            assert {"issue:77", "pr:40", "decision:12", "wiki:deploy"} <= hits

            async def both(argsets):
                out = [None, None]

                async def one(i, c, args):
                    r = await c.call_tool("record_source_use", args)
                    out[i] = r

                async with anyio.create_task_group() as tg:
                    for i, (c, args) in enumerate(zip((a, b), argsets)):
                        tg.start_soon(one, i, c, args)
                return out

            # 1. the same report (same key) from both at once: applied once, the other gets the same receipt
            same = {"trace_id": trace, "events": walk("issue:77"), "idempotency_key": "k/1"}
            r1, r2 = await both([same, same])
            assert not r1.is_error and not r2.is_error
            assert r1.structured_content == r2.structured_content
            assert r1.structured_content["newly_used"] == ["issue:77"] and r1.structured_content["edges_changed"]
            # 2. the same walk under different keys: one applies, the other is refused (nothing twice)
            r1, r2 = await both(
                [{"trace_id": trace, "events": walk("pr:40"), "idempotency_key": f"k/2{x}"} for x in "ab"]
            )
            assert sorted([r1.is_error, r2.is_error]) == [False, True]
            bad = r1 if r1.is_error else r2
            assert bad.structured_content["error"]["code"] == "invalid_stage_transition"
            # 3. different nodes under different keys: both apply
            r1, r2 = await both(
                [
                    {"trace_id": trace, "events": walk(n), "idempotency_key": f"k/3{n}"}
                    for n in ("decision:12", "wiki:deploy")
                ]
            )
            assert not r1.is_error and not r2.is_error

            tr = await call(b, "get_trace", trace_id=trace)
            assert {
                h["id"]: h["stage"]
                for h in tr["hits"]
                if h["id"] in ("issue:77", "pr:40", "decision:12", "wiki:deploy")
            } == dict.fromkeys(("issue:77", "pr:40", "decision:12", "wiki:deploy"), "used")
            assert len(tr["receipts"]) == 4

        eng = ngr.open(db, embedder="hashing")
        try:
            rep = eng.learning_report(trace)
        finally:
            eng.close()
        assert sorted(n for r in rep["receipts"] for n in r["newly_used"]) == [
            "decision:12",
            "issue:77",
            "pr:40",
            "wiki:deploy",
        ]
        by_edge: dict = {}
        for ch in sorted(rep["weight_changes"], key=lambda ch: ch["id"]):
            by_edge.setdefault(ch["eid"], []).append(ch)
        assert by_edge
        for chain in by_edge.values():  # every edit starts from the previous one's result: no lost update
            for prev, nxt in zip(chain, chain[1:]):
                assert nxt["old_weight"] == pytest.approx(prev["new_weight"], abs=1e-4)  # (minus decay)
        credited = [(ch["eid"], ch["node_id"]) for ch in rep["weight_changes"] if ch["kind"] == "path"]
        assert len(credited) == len(set(credited))  # each (edge, node) credit exactly once

    run(main)


def test_server_refuses_a_missing_store_without_touching_stdout(tmp_path):
    p = subprocess.run(
        [sys.executable, "-m", "neurongraph.mcp", "--db", str(tmp_path / "none.db"), "--embedder", "hashing"],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert p.returncode == 2 and p.stdout == ""
    assert "error[no_store]" in p.stderr and not (tmp_path / "none.db").exists()


def test_core_never_imports_the_sdk():
    code = (
        "import sys, neurongraph, neurongraph.engine, neurongraph.learning, neurongraph.cli.main, neurongraph.mcp;"
        "bad = sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types')));"
        "assert not bad, bad"
    )
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
