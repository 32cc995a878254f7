"""The one request model (issue 28): CLI flags, MCP tool arguments and HTTP bodies become the same
``SearchRequest`` and so the same engine call, with the same errors; the working-set options (``--file
PATH:A-B``, ``--diff FILE|-``, ``files`` with ranges, ``diff``) end to end on a real git repository
ingested into a real SQLite store (hashing embedder)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from git_fixtures import Repo
from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.retrieval.changes import WorkingSet
from neurongraph.service import SearchRequest, has_range, where_pairs

pytest.importorskip("pydantic")
from neurongraph.service.contract import ARG_MODELS, LIMITS, SearchArgs  # noqa: E402

BODY = "static int parse(struct hdr *h)\n{\n\treturn h->len;\n}\n"


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    """parser.c: lines 1-4 written by the first commit, lines 5-8 by the second; vlan.c by a third."""
    root = tmp_path_factory.mktemp("req")
    r = Repo(root / "widget")
    r.c1 = r.commit("Add the packet parser", {"src/parser.c": BODY})
    r.c2 = r.commit("Parse vlan tags", {"src/parser.c": BODY + "int vlan_tag(int t)\n{\n\treturn t & 0xfff;\n}\n"})
    r.c3 = r.commit("Add the vlan table", {"src/vlan.c": "int vlan_table[4096];\n"})
    db = str(root / "ngr.db")
    res = cli(db, "ingest", "git", str(r.path), "--json")
    assert res.exit_code == 0, res.output
    return r, db


def cli(db, *args, input=None):
    return CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *args], input=input)


def search_json(db, *args, input=None) -> dict:
    res = cli(db, "search", "parser tag", "--json", *args, input=input)
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)


def test_every_interface_builds_the_same_engine_call():
    flags = SearchRequest(
        "why",
        limit=3,
        channel="beam",
        as_of="2024-01-01",
        types=["commit"],
        rels=["fixes"],
        sources=["shop"],
        where=where_pairs(["state=open", "number=12"]),
        files=["src/a.c", "src/b.c:7-9"],
    )
    wire = ARG_MODELS["search"].model_validate(
        {
            "query": "why",
            "limit": 3,
            "channel": "beam",
            "as_of": "2024-01-01",
            "types": ["commit"],
            "sources": ["shop"],
            "where": {"state": "open", "number": 12},
            "files": ["src/a.c", "src/b.c:7-9"],
        }
    )
    a, b = flags.engine_options(), wire.to_request().engine_options()
    assert a.pop("query_types") == ("fixes",)  # --rel: CLI and HTTP only
    assert a["where"] == (("state", "open"), ("number", 12)) and b["where"] == {"state": "open", "number": 12}
    a.pop("where"), b.pop("where")
    assert a == b
    assert a["files"] == ("src/a.c",)  # a whole file seeds as before
    assert a["changes"].to_dict()["files"][0] == {
        "path": "src/b.c",
        "old_ranges": [[7, 9]],
        "anchors": [],
        "added": [],
        "removed": [],
    }
    assert SearchRequest("q").engine_options() == {}  # nothing set: the engine's defaults
    assert has_range("a.c:7") and has_range("a.c:7-9") and not has_range("a.c") and not has_range("C:x.c")


def test_old_names_still_work_and_say_so_once():
    """``strategy`` (now ``channel``) and ``until`` (now ``as_of``, the same filter) are deprecated aliases for
    one release: the same engine call, one warning each; ``until`` with ``as_of`` is the earlier of the two."""
    old = ARG_MODELS["search"].model_validate({"query": "why", "strategy": "beam", "until": "2024-01-01T00:00:00Z"})
    new = ARG_MODELS["search"].model_validate({"query": "why", "channel": "beam", "as_of": 1704067200})
    a, b = old.to_request(), new.to_request()
    assert a.engine_options() == b.engine_options() == {"channel": "beam", "as_of": 1704067200}
    assert b.warnings == () and len(a.warnings) == 2
    assert a.warnings[0].startswith("strategy is deprecated: it is channel")
    assert a.warnings[1].startswith("until is deprecated: it is as_of")
    assert SearchRequest.with_aliases("q", as_of=200, until=100).engine_options() == {"as_of": 100.0}
    with pytest.raises(InvalidArgument, match="disagree"):
        SearchRequest.with_aliases("q", channel="ppr", strategy="beam")
    with pytest.raises(InvalidArgument, match="^--until: "):
        SearchRequest.with_aliases("q", lambda n: "--" + n.replace("_", "-"), until="soon")


def test_cli_until_is_as_of_and_warns(history):
    _, db = history
    old = cli(db, "search", "parser tag", "--until", "2030-01-01")
    new = cli(db, "search", "parser tag", "--as-of", "2030-01-01")
    assert old.exit_code == new.exit_code == 0, old.output
    assert "--until is deprecated: it is --as-of" in old.stderr and "deprecated" not in new.stderr
    assert old.stderr.count("deprecated") == 1


@pytest.mark.parametrize(
    ("req", "fragment"),
    [
        (SearchRequest("q", files=["a.c:9-3"]), "need 1 <= A <= B"),
        (SearchRequest("q", files=["a.c:0"]), "need 1 <= A <= B"),
        (SearchRequest("q", diff="just words, no hunks"), "no file headers or hunks"),
        (SearchRequest("q", diff="   "), "diff is empty"),
    ],
)
def test_bad_working_sets_are_invalid_arguments(req, fragment):
    with pytest.raises(InvalidArgument, match=fragment):
        req.engine_options()


def test_contract_teaches_the_working_set():
    schema = SearchArgs.model_json_schema()
    props = schema["properties"]
    assert "diff" in props and "files" in props and schema["additionalProperties"] is False
    assert "120-131" in props["files"]["description"] and "lines you are about to edit" in props["files"]["description"]
    assert "git diff" in props["diff"]["description"]
    with pytest.raises(ValueError):
        SearchArgs.model_validate({"query": "q", "diff": "x" * (LIMITS["diff_chars"] + 1)})
    from neurongraph.mcp.tools import DESCRIPTIONS

    assert "lines you are editing" in DESCRIPTIONS["search"] and "scores.blame" in DESCRIPTIONS["search"]


def test_cli_lines_find_the_commit_that_wrote_them(history):
    r, db = history
    whole = search_json(db, "--file", "src/parser.c")  # a bare path: the file seeds, no line is blamed
    assert whole["hits"] and all("blame" not in h["scores"] for h in whole["hits"])
    lines = search_json(db, "--file", "src/parser.c:6-7")
    top = lines["hits"][0]
    assert top["id"].endswith(r.c2) and top["scores"].get("blame", 0) > 0, lines["hits"][:3]
    early = search_json(db, "--file", "src/parser.c:1-3")
    assert early["hits"][0]["id"].endswith(r.c1), early["hits"][:3]


def test_cli_diff_from_a_file_and_stdin(history, tmp_path):
    r, db = history
    patch = r.git("diff", f"{r.c1}", f"{r.c2}")  # not a stored commit's own text: a change being made now
    patch = patch.replace("return t & 0xfff;", "return t & 0x0fff;")
    edit = "--- a/src/parser.c\n+++ b/src/parser.c\n@@ -6,2 +6,2 @@\n-{\n-\treturn t & 0xfff;\n"
    edit += "+{\n+\treturn t & 0x7ff;\n"
    p = tmp_path / "change.patch"
    p.write_text(edit)
    from_file = search_json(db, "--diff", str(p))
    from_stdin = search_json(db, "--diff", "-", input=edit)
    assert from_file["hits"][0]["id"] == from_stdin["hits"][0]["id"]
    assert from_file["hits"][0]["id"].endswith(r.c2) and from_file["hits"][0]["scores"].get("blame", 0) > 0
    assert patch  # the repository's real diff parses too
    assert search_json(db, "--diff", "-", input=patch)["hits"]


@pytest.mark.parametrize(
    ("args", "code", "fragment"),
    [
        (["--diff", "no-such.patch"], "file_not_found", "no such file: no-such.patch"),
        (["--file", "src/parser.c:9-3"], "invalid_argument", "need 1 <= A <= B"),
        (["--where", "state"], "invalid_argument", "expected KEY=VALUE"),
    ],
)
def test_cli_mistakes_are_clear_errors(history, args, code, fragment):
    _, db = history
    res = cli(db, "search", "parser", *args, "--json")
    assert res.exit_code == 2, res.output
    e = json.loads(res.stdout)["error"]
    assert e["code"] == code and fragment in e["message"]
    res = cli(db, "search", "parser", *args)
    assert res.exit_code == 2 and f"error[{code}]" in res.stderr and "Traceback" not in res.output


def test_mcp_and_http_take_files_with_lines_and_a_diff(history):
    pytest.importorskip("mcp.server")
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    import neurongraph as ngr
    from neurongraph.http import create_app
    from neurongraph.mcp import build_server

    r, db = history
    eng = ngr.open(db, embedder="hashing")
    try:
        tools = build_server(eng).ngr_tools
        res = tools.call("search", query="parser tag", files=["src/parser.c:6-7", "src/nope.c"])
        out = res.structured_content
        assert not res.is_error and out["hits"][0]["id"].endswith(r.c2) and out["unknown_files"] == ["src/nope.c"]
        bad = tools.call("search", query="parser", files=["src/parser.c:9-3"])
        assert bad.is_error and bad.structured_content["error"]["code"] == "invalid_argument"
        receipt = tools.call("record_retrieval_failure", trace_id=out["trace_id"], reason="testing the model")
        assert not receipt.is_error and receipt.structured_content["trace_id"] == out["trace_id"]
    finally:
        eng.close()
    edit = "--- a/src/parser.c\n+++ b/src/parser.c\n@@ -7 +7 @@\n-\treturn t & 0xfff;\n+\treturn t & 0x7ff;\n"
    with TestClient(create_app(ngr.open(db, embedder="hashing")), base_url="http://127.0.0.1") as client:
        got = client.post("/api/search", json={"query": "parser tag", "diff": edit}).json()
        assert got["hits"][0]["id"].endswith(r.c2)
        cli_json = search_json(db, "--diff", "-", input=edit)
        assert [h["id"] for h in got["hits"]] == [h["id"] for h in cli_json["hits"]]
        e = client.post("/api/search", json={"query": "q", "diff": "no hunks here"})
        assert e.status_code == 400 and e.json()["error"]["code"] == "invalid_argument"
        spec = client.get("/openapi.json").json()
        body = spec["components"]["schemas"]["SearchBody"]["properties"]
        assert "diff" in body and "120-131" in body["files"]["description"]


def test_working_set_is_the_lead_api():
    """The request hands the engine the documented WorkingSet value (merge of ranged specs and the diff)."""
    edit = "--- a/x.c\n+++ b/x.c\n@@ -3 +3 @@\n-a\n+b\n"
    ws = SearchRequest("q", files=["y.c:1-2", "z.c"], diff=edit).working_set()
    assert isinstance(ws, WorkingSet) and set(ws.paths) == {"x.c", "y.c"}
