"""A NUL character on PostgreSQL (issue 42 item 7): PostgreSQL text and jsonb cannot hold U+0000, so one
Markdown page or GitHub item with a NUL byte aborted the whole sync (``store_error: PostgreSQL text
fields cannot contain NUL (0x00) bytes``), where SQLite stores it.  Now the PostgreSQL store writes U+FFFD
in its place, in every string it sends and in the JSON it reads as jsonb, so the sync completes and every
metadata filter (which casts all rows to jsonb) still works.

Against a real PostgreSQL 18 + pgvector started by ``tests/postgres_server.py``; real ``ngr`` processes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("psycopg")

import neurongraph as ngr  # noqa: E402
from neurongraph.store.postgres import NUL_STAND_IN, pg_json  # noqa: E402

GH = Path(__file__).parent / "fixtures" / "github" / "gh"
ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


def _ngr(db: str, *args: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", db, "--embedder", "hashing", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=180)


def _docs(tmp_path: Path) -> Path:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ok.md").write_text("# Fine page\n\nCache eviction notes.\n")
    (docs / "nul.md").write_text("# Title with \x00 NUL\n\nBody about cache with a \x00 byte.\n")
    return docs


def test_a_markdown_page_with_a_nul_byte_does_not_abort_the_sync(pg_url, tmp_path):
    docs = _docs(tmp_path)
    r = _ngr(pg_url, "ingest", "markdown", str(docs), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads(r.stdout)["store_nodes"] == 2
    r = _ngr(pg_url, "search", "cache", "--json")
    assert r.returncode == 0, r.stderr
    hits = json.loads(r.stdout)["hits"]
    assert f"Title with {NUL_STAND_IN} NUL" in [h["title"] for h in hits]
    # the same folder on SQLite keeps the NUL itself (nothing changes there)
    sqlite_db = str(tmp_path / "s.db")
    r = _ngr(sqlite_db, "ingest", "markdown", str(docs), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["store_nodes"] == 2
    r = _ngr(sqlite_db, "search", "cache", "--json")
    assert "Title with \x00 NUL" in [h["title"] for h in json.loads(r.stdout)["hits"]]
    # a second sync of the same folder sees nothing new (the stored hash is the page's own)
    r = _ngr(pg_url, "ingest", "markdown", str(docs), "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["new_nodes"] == 0, r.stdout


def test_a_github_item_with_nul_bytes_in_text_and_metadata(pg_url, tmp_path):
    export = tmp_path / "gh"
    shutil.copytree(GH, export)
    issues = json.loads((export / "issues.json").read_text())
    issues[0]["title"] = "Login \x00 fails"
    issues[0]["body"] = "token\x00expiry " + issues[0]["body"]
    issues[0]["author"]["login"] = "ma\x00ria"  # lands in the node's metadata (jsonb)
    (export / "issues.json").write_text(json.dumps(issues))
    r = _ngr(pg_url, "ingest", "github", str(export), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    summary = json.loads(r.stdout)
    assert not summary["skipped_items"]
    assert "issue:" + str(issues[0]["number"]) in summary["adapter"]["nul_replaced"]  # said, not silent
    # a metadata filter casts every node's metadata to jsonb: one bad row would fail them all
    r = _ngr(pg_url, "search", "login token expiry", "--where", "state=closed", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    r = _ngr(pg_url, "search", "login fails", "--json")
    assert r.returncode == 0, r.stderr
    assert any(h["title"] == f"Login {NUL_STAND_IN} fails" for h in json.loads(r.stdout)["hits"])


def test_jsonl_records_with_nul_in_ids_meta_and_queries(pg_url, tmp_path):
    f = tmp_path / "r.jsonl"
    rows = [
        {"id": "a", "type": "note", "title": "alpha\x00", "text": "cache \x00 alpha", "metadata": {"k\x00": "v\x00"}},
        {"id": "b", "type": "note", "title": "beta", "text": "cache beta"},
        {"kind": "edge", "src": "a", "rel": "mentions", "dst": "b", "meta": {"why": "x\x00y"}},
    ]
    f.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = _ngr(pg_url, "ingest", str(f), "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    eng = ngr.open(pg_url, embedder="hashing")  # a query with a NUL (no command line can pass one) is a trace
    try:
        res = eng.search("cache \x00 alpha", limit=3)
        assert res.trace_saved and res.hits
        assert eng.get_trace(res.trace_id)["query"] == f"cache {NUL_STAND_IN} alpha"
    finally:
        eng.close()
    r = _ngr(pg_url, "show", "a", "--json")
    node = json.loads(r.stdout)["node"]
    assert node["title"] == f"alpha{NUL_STAND_IN}" and node["metadata"] == {f"k{NUL_STAND_IN}": f"v{NUL_STAND_IN}"}


def test_pg_json_replaces_only_nul_escapes():
    assert pg_json({"a": "x\x00y"}) == '{"a": "x\\ufffdy"}'
    assert pg_json({"a": "lit \\u0000"}) == '{"a": "lit \\\\u0000"}'  # a backslash and "u0000": kept
    assert pg_json({"a": "b\\\x00"}) == '{"a": "b\\\\\\ufffd"}'
    assert json.loads(pg_json({"k\x00": ["\x00"]})) == {f"k{NUL_STAND_IN}": [NUL_STAND_IN]}
