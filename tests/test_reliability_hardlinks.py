"""Readers skip hard links (issue 40): ``os.link(OUTSIDE, DIR/x.md)`` makes a regular file inside the folder
that *is* the outside file; its resolved path lies under the folder, so the symbolic-link check of
confine.py passed it and `ngr ingest markdown DIR` made the outside file's text a searchable node.  A
regular file with more than one name (``st_nlink > 1``, read with fstat on the descriptor that is read) is
now skipped and named in ``skipped_items``, in Markdown folders and GitHub export folders alike."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

from neurongraph.ingest.github import read_github
from neurongraph.ingest.markdown import read_markdown

SECRET = "HARDLINKED-secret-8675309"


def _ngr(db, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env={**os.environ, "COLUMNS": "200"})


def _wiki(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text(f"# Secret page\n\n{SECRET}\n")
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "page.md").write_text("# Page\n\nThe real secret page of the wiki.\n")
    os.link(outside / "secret.md", wiki / "hard.md")  # the outside file itself, under a name in the folder
    return wiki


def test_markdown_skips_a_hard_link_to_a_file_outside_the_folder(tmp_path):
    wiki = _wiki(tmp_path)
    assert (wiki / "hard.md").is_file() and not (wiki / "hard.md").is_symlink()
    b = read_markdown(wiki)
    assert {n.id for n in b.nodes} == {"md:page.md"}
    assert all(SECRET not in n.text and SECRET not in n.title for n in b.nodes)
    reasons = {s["item"]: s["reason"] for s in b.skipped}
    assert set(reasons) == {"hard.md"}
    assert reasons["hard.md"].startswith("hard link: may point outside the folder")


def test_a_single_hard_linked_file_is_skipped_and_a_lone_file_is_read(tmp_path):
    wiki = _wiki(tmp_path)
    b = read_markdown(wiki / "hard.md")
    assert not b.nodes and "hard link" in b.skipped[0]["reason"]
    assert [n.id for n in read_markdown(wiki / "page.md").nodes] == ["md:page.md"]


def test_two_names_inside_the_folder_are_skipped_too(tmp_path):
    """The reader cannot tell where a file's other names are, so a hard link inside the folder is skipped
    as well (the page stays readable through a copy or a symbolic link)."""
    wiki = tmp_path / "wiki"
    wiki.mkdir()
    (wiki / "a.md").write_text("# A\n\nalpha\n")
    os.link(wiki / "a.md", wiki / "b.md")
    (wiki / "c.md").write_text("# C\n\ngamma\n")
    b = read_markdown(wiki)
    assert {n.id for n in b.nodes} == {"md:c.md"}
    assert {s["item"] for s in b.skipped} == {"a.md", "b.md"}


def test_cli_summary_names_the_hard_link_and_search_never_finds_its_text(tmp_path):
    wiki = _wiki(tmp_path)
    db = tmp_path / "s.db"
    r = _ngr(db, "ingest", "markdown", str(wiki))
    assert r.returncode == 0, r.stderr
    assert "skipped 1" in r.stdout and "hard.md (hard link: may point outside the folder" in r.stdout
    r = _ngr(db, "ingest", "markdown", str(wiki), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["skipped"] == 1 and s["skipped_items"][0]["item"] == "hard.md"
    assert s["skipped_items"][0]["reason"].startswith("hard link: may point outside the folder")
    r = _ngr(db, "search", f"secret page {SECRET}", "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    assert hits and all(SECRET not in json.dumps(h) for h in hits)
    con = sqlite3.connect(db)
    try:
        n = con.execute("SELECT count(*) FROM nodes WHERE text LIKE ? OR title LIKE ?", (f"%{SECRET}%",) * 2)
        assert not n.fetchone()[0]
    finally:
        con.close()


def test_github_export_folder_skips_a_hard_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "other.json").write_text(json.dumps([{"number": 99, "title": SECRET}]))
    export = tmp_path / "export"
    export.mkdir()
    (export / "issues.json").write_text(json.dumps([{"number": 1, "title": "Real issue"}]))
    os.link(outside / "other.json", export / "more.json")
    b = read_github(export)
    assert [n.id for n in b.nodes] == ["issue:1"]
    assert len(b.skipped) == 1 and b.skipped[0]["item"].endswith("more.json")
    assert b.skipped[0]["reason"].startswith("hard link: may point outside the folder")
    db = tmp_path / "g.db"
    r = _ngr(db, "ingest", "github", str(export), "--json")
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["new_nodes"] == 1 and s["skipped_items"][0]["item"].endswith("more.json")
    r = _ngr(db, "search", SECRET, "--json")
    assert r.returncode == 0, r.stderr
    assert all(SECRET not in json.dumps(h) for h in json.loads(r.stdout)["hits"])
