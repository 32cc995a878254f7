"""What a search read its question as (retrieval/reading.py): a question that asks when something began, or
which change introduced or removed a name, carries ``reading`` (intent, topic, what the search did, the change
put first) in the result and its JSON, and ``ngr search --explain`` prints it first; when the rule declines, the
reading says why; a plain question has none."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.cli.main import app
from neurongraph.ingest import sync_source


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("reading") / "sw")
    r.commit("datapath: Add support for Geneve tunneling.", {"src/geneve.c": "int geneve_open(void);\n"})
    for k in range(8):  # later changes that name Geneve too
        r.commit(f"geneve: Fix Geneve support for option {k}.", {f"src/geneve{k}.c": f"int opt{k};\n"})
    r.commit("Support template strings in the parser", {"src/tmpl.c": "int tmpl_parse(void);\n"})
    r.commit("Drop the old open helper", {"src/geneve.c": "int geneve_start(void);\n"})
    for k in range(30):  # a history large enough that 'geneve' is a rare word
        r.commit(f"misc: tidy module {k}", {f"src/m{k}.c": f"int m{k};\n"})
    db = tmp_path_factory.mktemp("db") / "t.db"
    e = ngr.open(db, embedder="hashing")
    sync_source(e, "git", str(r.path))
    e.close()
    return db


@pytest.fixture()
def eng(store):
    e = ngr.open(store, embedder="hashing")
    yield e
    e.close()


def test_an_origin_question_reads_its_topic_and_the_change_put_first(eng):
    res = eng.search("when did Geneve support begin?", 5, record=False)
    r = res.to_dict()["reading"]
    assert r["intent"] == "origin" and r["asked"] == "when did X start"
    assert r["topic"][0] == "Geneve"
    assert r["put_first"] == res.hits[0].id and res.hits[0].title.startswith("datapath: Add support for Geneve")
    assert "earliest change" in r["rule"] and res.read_as.startswith("read as: when did X start")


def test_a_declined_origin_says_why_and_searches_as_usual(eng):
    res = eng.search("when did the parser start to support template strings?", 5, record=False)
    r = res.reading
    assert r is not None and r["intent"] == "origin" and r["put_first"] is None
    assert r["rule"].startswith("searched as usual: the topic is in plain words")
    assert all("origin" not in h.scores for h in res.hits)


def test_a_question_about_a_beginning_does_not_prefer_recent_changes(eng):
    """The recency prior's age part is off for it (the first change of a feature is old by nature), and the
    reading says so; a plain question about the same words keeps it."""
    begun = eng.search("when did the parser start to support template strings?", 10, record=False)
    assert begun.hits and all(h.scores["recency"] == 1.0 for h in begun.hits)
    assert "recent changes are not preferred" in begun.reading["rule"]
    plain = eng.search("parser template strings", 10, record=False)
    assert any(h.scores["recency"] < 1.0 for h in plain.hits)


def test_a_beginning_dated_by_a_version_keeps_preferring_recent_changes(eng):
    """ "when did the v1.8 cycle start?" asks for the v1.8 one, not the oldest cycle: the age part stays on."""
    res = eng.search("when did the parser start to support template strings in 2.4.1?", 10, record=False)
    assert any(h.scores["recency"] < 1.0 for h in res.hits)
    assert "a version number dates it" in res.reading["rule"]


def test_an_introduction_of_a_name_reads_the_name(eng):
    r = eng.search("which commit introduced geneve_start", 5, record=False).reading
    assert r is not None and r["intent"] == "introduced" and "geneve_start" in r["topic"]
    assert r["rule"] == "the changes that added these names in the code score first"
    gone = eng.search("which commit removed geneve_open", 5, record=False).reading
    assert gone is not None and gone["intent"] == "removed" and "geneve_open" in gone["topic"]
    why = eng.search("why was geneve_open removed?", 5, record=False)  # the removal says why
    assert why.reading is not None and why.reading["intent"] == "removed"
    assert "removed" in " ".join(why.hits[0].evidence)


def test_a_plain_question_has_no_reading(eng):
    res = eng.search("Geneve tunneling option fixes", 5, record=False)
    assert res.reading is None and "reading" not in res.to_dict() and res.read_as == ""


def test_the_cli_prints_the_reading_first_and_puts_it_in_json(store):
    argv = ["--db", str(store), "--embedder", "hashing", "search", "when did Geneve support begin?", "-n", "3"]
    shown = CliRunner().invoke(app, [*argv, "--explain"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.splitlines()[0].startswith("read as: when did X start — topic 'Geneve")
    got = CliRunner().invoke(app, [*argv, "--json"])
    assert json.loads(got.output)["reading"]["intent"] == "origin"


def test_http_and_mcp_give_the_same_reading(store):
    import httpx

    from http_fixtures import served

    q = "when did Geneve support begin?"
    with served(store) as (url, _proc), httpx.Client(base_url=url, timeout=30) as client:
        r = client.post("/api/search", json={"query": q, "limit": 3})
        assert r.status_code == 200, r.text
        over_http = r.json()["reading"]
    assert over_http["intent"] == "origin" and over_http["put_first"]

    mcp = pytest.importorskip("mcp")
    import sys

    import anyio

    async def over_mcp() -> dict:
        params = mcp.StdioServerParameters(
            command=sys.executable,
            cwd=str(store.parent),
            args=["-m", "neurongraph.mcp", "--db", str(store), "--embedder", "hashing"],
        )
        async with mcp.Client(params, read_timeout_seconds=30) as c:
            got = await c.call_tool("search", {"query": q, "limit": 3})
            assert not got.is_error, got.content[0].text
            return got.structured_content

    assert anyio.run(over_mcp)["reading"] == over_http
