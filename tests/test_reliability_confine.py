"""Readers never leave the folder they were given (issue 27, finding 2): a symbolic link out of it, a
linked folder, a FIFO named like a page, or a link to a device are skipped with a reason and never become
a node (``link.md -> /etc/passwd`` was a searchable node served over MCP and HTTP)."""

from __future__ import annotations

import json
import os
import sqlite3

from typer.testing import CliRunner

from neurongraph.cli.main import app
from neurongraph.ingest.github import read_github
from neurongraph.ingest.markdown import read_markdown

SECRET = "TOPSECRET-credentials-4711"


def _folder(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret\n\n{SECRET}\n")
    (outside / "sub").mkdir()
    (outside / "sub" / "more.md").write_text(f"# More\n\n{SECRET} again\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "page.md").write_text("# Page\n\nThe real page, see [secret](../outside/secret.md).\n")
    (wiki / "link.md").symlink_to(outside / "secret.md")
    (wiki / "abs.md").symlink_to("/etc/hostname")
    (wiki / "linked").symlink_to(outside / "sub", target_is_directory=True)
    (wiki / "alias.md").symlink_to(wiki / "page.md")  # a link that stays inside is read
    (wiki / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    os.mkfifo(wiki / "pipe.md")  # would block a plain read for ever
    (wiki / "zero.md").symlink_to("/dev/zero")
    return wiki


def test_markdown_reads_nothing_outside_the_folder(tmp_path):
    wiki = _folder(tmp_path)
    b = read_markdown(wiki)
    ids = {n.id for n in b.nodes}
    assert ids == {"md:page.md", "md:alias.md"}
    assert all(SECRET not in n.text and SECRET not in n.title for n in b.nodes)
    reasons = {s["item"]: s["reason"] for s in b.skipped}
    assert "outside the folder" in reasons["link.md"] and "outside the folder" in reasons["abs.md"]
    assert "not followed" in reasons["linked"]
    assert "cannot resolve" in reasons["dangling.md"]
    assert "not a regular file" in reasons["pipe.md"]
    assert "outside the folder" in reasons["zero.md"]  # /dev/zero resolves outside before it is opened
    # a link target outside the folder is a missing link, never read
    assert b.stats["links_missing"] >= 1


def test_a_single_file_that_links_out_of_its_folder_is_skipped(tmp_path):
    wiki = _folder(tmp_path)
    b = read_markdown(wiki / "link.md")
    assert not b.nodes and "outside the folder" in b.skipped[0]["reason"]


def test_cli_summary_names_what_was_skipped_and_search_finds_no_secret(tmp_path):
    wiki = _folder(tmp_path)
    db = tmp_path / "s.db"
    r = CliRunner().invoke(
        app,
        ["--db", str(db), "--embedder", "hashing", "ingest", "markdown", str(wiki), "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["new_nodes"] == 2 and s["skipped"] == 6
    assert {x["item"] for x in s["skipped_items"]} >= {"link.md", "abs.md", "linked", "pipe.md", "zero.md"}
    r = CliRunner().invoke(
        app, ["--db", str(db), "--embedder", "hashing", "search", "secret page", "--json"], catch_exceptions=False
    )
    assert r.exit_code == 0
    hits = json.loads(r.stdout)["hits"]
    assert hits and all(SECRET not in json.dumps(h) for h in hits)
    con = sqlite3.connect(db)
    assert not con.execute(
        "SELECT count(*) FROM nodes WHERE text LIKE ? OR title LIKE ?", (f"%{SECRET}%",) * 2
    ).fetchone()[0]
    con.close()


def test_github_export_folder_skips_links_out_of_it(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.json").write_text(json.dumps([{"number": 99, "title": SECRET}]))
    export = tmp_path / "export"
    export.mkdir()
    (export / "issues.json").write_text(json.dumps([{"number": 1, "title": "Real issue"}]))
    (export / "link.json").symlink_to(outside / "other.json")
    b = read_github(export)
    assert [n.id for n in b.nodes] == ["issue:1"]
    assert b.skipped[0]["item"].endswith("link.json") and "outside the folder" in b.skipped[0]["reason"]
