"""One item a sync cannot take no longer aborts the sync (issue 27, finding 3): a commit with a message
over the text limit, a page with more front matter than node metadata may hold, a GitHub thread with a
huge title are skipped and named with the limit they hit, and the rest is written; ``--strict`` keeps
the all-or-nothing behaviour.  A TOML ``nan`` in front matter is a front-matter error (the page is read
as plain text), not a failed sync."""

from __future__ import annotations

import json
import sqlite3

from typer.testing import CliRunner

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.cli.main import app
from neurongraph.ingest.github import read_github
from neurongraph.ingest.markdown import read_markdown
from neurongraph.model import MAX_METADATA_BYTES, MAX_TEXT_CHARS, MAX_TITLE_CHARS


def _ngr(db, *args):
    return CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", *args, "--json"])


def _node_ids(db) -> set[str]:
    con = sqlite3.connect(db)
    try:
        return {r[0] for r in con.execute("SELECT id FROM nodes")}
    finally:
        con.close()


def _repo(tmp_path) -> tuple[Repo, str, str, str]:
    repo = Repo(tmp_path / "r")
    a = repo.commit("Add the cache", {"cache.c": "int cache;\n"})
    msg = tmp_path / "msg.txt"
    msg.write_text("Import the vendored blob\n\n" + "x" * (MAX_TEXT_CHARS + 10) + "\n")
    (repo.path / "blob.c").write_text("int blob;\n")
    repo.git("add", "blob.c")
    repo.t += 3600
    repo.git("commit", "-q", "-F", str(msg))
    big = repo.git("rev-parse", "HEAD")
    c = repo.commit("Fix the cache after the import", {"cache.c": "int cache2;\n"})
    return repo, a, big, c


def test_a_commit_over_the_text_limit_is_skipped_and_the_rest_written(tmp_path):
    repo, a, big, c = _repo(tmp_path)
    db = tmp_path / "s.db"
    r = _ngr(db, "ingest", "git", str(repo.path))
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    skipped = {x["item"]: x["reason"] for x in s["skipped_items"]}
    assert f"commit:{big}" in skipped
    assert "text is" in skipped[f"commit:{big}"] and "NGR_MAX_TEXT_CHARS" in skipped[f"commit:{big}"]
    ids = _node_ids(db)
    assert {f"commit:{a}", f"commit:{c}", "file:cache.c"} <= ids and f"commit:{big}" not in ids
    # the next sync is incremental (the tip was recorded) and the store stays searchable
    again = json.loads(_ngr(db, "ingest", "git", str(repo.path)).stdout)
    assert again["adapter"]["up_to_date"] is True


def test_strict_keeps_all_or_nothing(tmp_path):
    repo, _a, big, _c = _repo(tmp_path)
    db = tmp_path / "s.db"
    r = _ngr(db, "ingest", "git", str(repo.path), "--strict")
    assert r.exit_code == 2
    e = json.loads(r.stdout)["error"]
    assert e["code"] == "invalid_argument" and f"commit:{big}" in e["message"] and "NGR_MAX_TEXT_CHARS" in e["message"]
    assert not db.exists() or not _node_ids(db)


def test_markdown_front_matter_over_the_metadata_limit_and_toml_nan(tmp_path):
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "ok.md").write_text("# OK\n\nSee [huge](huge.md) and [nan](nan.md).\n")
    blob = "y" * (MAX_METADATA_BYTES + 400_000)  # 1.4 MB of front matter
    (wiki / "huge.md").write_text(f"---\ntitle: Huge\nnotes: {blob}\n---\n\nBody of the huge page.\n")
    (wiki / "nan.md").write_text('+++\ntitle = "Not a number"\nweight = nan\n+++\n\nThe nan page body.\n')
    b = read_markdown(wiki)
    ids = {n.id for n in b.nodes}
    assert ids == {"md:ok.md", "md:nan.md"}
    reasons = {x["item"]: x["reason"] for x in b.skipped}
    assert "NGR_MAX_METADATA_BYTES" in reasons["huge.md"] and "metadata" in reasons["huge.md"]
    assert "nan" in reasons["nan.md (front matter)"]
    assert all("md:huge.md" not in (e.src, e.dst) for e in b.edges)  # no edge points at a page not taken
    assert b.stats["pages"] == 2
    db = tmp_path / "s.db"
    s = json.loads(_ngr(db, "ingest", "markdown", str(wiki)).stdout)
    assert s["new_nodes"] == 2 and s["edges_pending"] == 0


def test_github_thread_over_the_title_limit_is_skipped(tmp_path):
    f = tmp_path / "issues.json"
    f.write_text(
        json.dumps(
            [
                {"number": 1, "title": "T" * (MAX_TITLE_CHARS + 1), "body": "huge title"},
                {"number": 2, "title": "Crash on start", "body": "Duplicate of #1; see also #3."},
                {"number": 3, "title": "Slow start", "body": "Startup takes 9 s."},
            ]
        )
    )
    b = read_github(f)
    assert sorted(n.id for n in b.nodes) == ["issue:2", "issue:3"]
    assert b.skipped[0]["item"] == "issue:1" and "NGR_MAX_TITLE_CHARS" in b.skipped[0]["reason"]
    assert all("issue:1" not in (e.src, e.dst) for e in b.edges) and any(e.dst == "issue:3" for e in b.edges)
    assert b.stats["issues"] == 2
    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    try:
        assert ngr.ingest.apply_batch(eng, b)["new_nodes"] == 2
    finally:
        eng.close()
