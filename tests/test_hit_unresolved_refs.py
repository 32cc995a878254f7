"""A search hit shows the issue numbers its message names that no ingested node has (issue 25): "Fixes #7"
with no issue export is a pending edge, and the reader sees "refers to #7 (not ingested)" instead of nothing;
once a node of that number arrives, the note is gone."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from git_fixtures import Repo
from neurongraph.cli.main import app


def test_search_hits_name_the_references_not_ingested(tmp_path):
    r = Repo(tmp_path / "proj")
    r.commit("Add the lexer", {"lexer.c": "int lex;\n"})
    r.commit("Lexer: no crash on empty input\n\nFixes #7, see #3", {"lexer.c": "int lex(int n);\n"})
    db = str(tmp_path / "s.db")

    def run(*args: str):
        res = CliRunner(env={"COLUMNS": "300"}).invoke(app, ["--db", db, "--embedder", "hashing", *args])
        assert res.exit_code == 0, res.output
        return res

    run("ingest", "git", str(r.path), "--json")
    hits = json.loads(run("search", "lexer crash on empty input", "--json").stdout)["hits"]
    fix = next(h for h in hits if h["title"].startswith("Lexer: no crash"))
    assert fix["refs_not_ingested"] == ["#3", "#7"]
    assert all(h["refs_not_ingested"] == [] for h in hits if h is not fix)
    assert "refers to #3, #7: not ingested" in run("search", "lexer crash on empty input").stdout
    assert "refers to #3, #7 (not ingested)" in run("search", "lexer crash on empty input", "--explain").stdout
    # issue 7 arrives (any adapter): only #3 is left unresolved
    issue = tmp_path / "issue.jsonl"
    issue.write_text(json.dumps({"id": "issue:7", "type": "issue", "title": "Crash on empty input"}) + "\n")
    run("ingest", str(issue), "--json")
    hits = json.loads(run("search", "lexer crash on empty input", "--json").stdout)["hits"]
    fix = next(h for h in hits if h["id"] == fix["id"])
    assert fix["refs_not_ingested"] == ["#3"]
