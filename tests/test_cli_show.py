"""Hits people can read, through the command line (issue 25): ``ngr show`` by a short sha, short shas in
``neighbors`` and ``feedback``, an ambiguous prefix as a clear error, the search table's date / author /
short sha, ``--explain``'s formula, an unknown ``--type`` listing the store's types, and a keyed
``feedback use`` retry returning the stored receipt."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from neurongraph.cli.main import app

runner = CliRunner()

SHA_FIX = "abc1234" + "5" * 33
SHA_ORIGIN = "abc1299" + "0" * 33
SHA_OTHER = "0fe9876" + "1" * 33
DAY = 86400


def ngr(db, *args):
    return runner.invoke(app, ["--db", str(db), "--embedder", "hashing", *args], catch_exceptions=False)


def _commit(sha, title, text, t, author, files, issues=()):
    md = {
        "sha": sha,
        "author": author,
        "time": t,
        "files": [{"path": p, "added": 3, "deleted": 1} for p in files],
        "files_total": len(files),
        "refs": {"issues": list(issues), "shas": []},
    }
    return {"kind": "node", "id": "commit:" + sha, "type": "commit", "title": title, "text": text, "metadata": md}


@pytest.fixture
def db(tmp_path):
    rows = [
        _commit(SHA_ORIGIN, "route: add nexthop weights", "Weights per nexthop.", 1_600_000_000, "Ada", ["ip/route.c"]),
        _commit(
            SHA_FIX,
            "route: fix nexthop weight parsing",
            "Weights above 255 overflowed.\n\nFixes #12",
            1_600_000_000 + 30 * DAY,
            "Bob Builder",
            ["ip/route.c", "ip/nexthop.c"],
            issues=[12],
        ),
        _commit(SHA_OTHER, "docs: man page", "Manual.", 1_600_000_000 + 31 * DAY, "Ada", ["man/ip.8"]),
        *(
            {"kind": "node", "id": "file:" + p, "type": "file", "title": p, "text": "", "metadata": {"path": p}}
            for p in ("ip/route.c", "ip/nexthop.c", "man/ip.8")
        ),
        {"kind": "edge", "src": "commit:" + SHA_FIX, "rel": "fixes", "dst": "commit:" + SHA_ORIGIN},
        {"kind": "edge", "src": "commit:" + SHA_FIX, "rel": "touches", "dst": "file:ip/route.c"},
        {"kind": "edge", "src": "commit:" + SHA_FIX, "rel": "touches", "dst": "file:ip/nexthop.c"},
        {"kind": "edge", "src": "commit:" + SHA_ORIGIN, "rel": "touches", "dst": "file:ip/route.c"},
        {"kind": "edge", "src": "commit:" + SHA_OTHER, "rel": "touches", "dst": "file:man/ip.8"},
    ]
    src = tmp_path / "h.jsonl"
    src.write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    path = tmp_path / "h.db"
    r = ngr(path, "ingest", str(src))
    assert r.exit_code == 0, r.output
    return path


def test_show_by_short_sha_json_and_text(db):
    r = ngr(db, "show", SHA_FIX[:8], "--json")
    assert r.exit_code == 0, r.output
    rep = json.loads(r.stdout)
    assert rep["node"]["id"] == "commit:" + SHA_FIX and rep["node"]["text"].startswith("Weights above 255")
    assert rep["meta"] == {"sha": SHA_FIX[:12], "date": "2020-10-13", "author": "Bob Builder"}
    assert [f["path"] for f in rep["files"]] == ["ip/route.c", "ip/nexthop.c"] and rep["files_total"] == 2
    out = {(e["rel"], e["node"]) for e in rep["edges"]["out"]}
    assert out == {("fixes", "commit:" + SHA_ORIGIN), ("touches", "file:ip/route.c"), ("touches", "file:ip/nexthop.c")}
    assert rep["edges"]["in"] == [] and rep["edges_truncated"] == {"out": False, "in": False}
    assert rep["pending_refs"] == [{"number": 12, "note": "named in the message; no issue export with it was ingested"}]
    text = ngr(db, "show", "commit:" + SHA_FIX[:6])
    assert text.exit_code == 0, text.output
    for part in ("route: fix nexthop weight parsing", "Bob Builder", "2020-10-13", "files (2)", "-[fixes]->", "#12"):
        assert part in text.stdout, part
    origin = json.loads(ngr(db, "show", SHA_ORIGIN[:7], "--json").stdout)
    assert [(e["rel"], e["node"]) for e in origin["edges"]["in"]] == [("fixes", "commit:" + SHA_FIX)]
    limited = json.loads(ngr(db, "show", SHA_FIX[:8], "--limit", "1", "--json").stdout)
    assert len(limited["edges"]["out"]) == 1 and limited["edges_truncated"]["out"] is True


def test_an_ambiguous_or_unknown_prefix_is_a_clear_error(db):
    r = ngr(db, "show", "abc12", "--json")  # bare: too short to be read as a sha
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "unknown_node"
    r = ngr(db, "show", "commit:abc12", "--json")  # both abc1234… and abc1299… start with it
    assert r.exit_code == 2
    e = json.loads(r.stdout)["error"]
    assert e["code"] == "invalid_argument" and "ambiguous" in e["message"]
    assert e["details"]["candidates"] == ["commit:" + SHA_FIX, "commit:" + SHA_ORIGIN]
    r = ngr(db, "show", "commit:abc12")
    assert r.exit_code == 2 and "Traceback" not in r.output and "ambiguous" in r.output


def test_neighbors_takes_a_short_sha(db):
    r = ngr(db, "neighbors", SHA_FIX[:7], "--rel", "fixes", "--json")
    assert r.exit_code == 0, r.output
    got = json.loads(r.stdout)
    assert got["node"] == "commit:" + SHA_FIX and [n["node"] for n in got["neighbors"]] == ["commit:" + SHA_ORIGIN]


def test_search_table_json_and_explain_show_who_and_when(db):
    r = ngr(db, "search", "nexthop weight parsing", "--json")
    assert r.exit_code == 0, r.output
    hits = json.loads(r.stdout)["hits"]
    fix = next(h for h in hits if h["id"] == "commit:" + SHA_FIX)
    assert fix["meta"] == {"sha": SHA_FIX[:12], "date": "2020-10-13", "author": "Bob Builder"}
    assert all(h["type"] == "commit" for h in hits)  # files are structural: not hits by default
    table = ngr(db, "search", "nexthop weight parsing")
    assert "commit:" + SHA_FIX[:12] in table.stdout and SHA_FIX[:13] not in table.stdout
    assert "2020-10-13" in table.stdout and "Bob Builder" in table.stdout
    explained = ngr(db, "search", "nexthop weight parsing", "--explain")
    assert "× recency" in explained.stdout and "= (0.30·entry" in explained.stdout
    files = json.loads(ngr(db, "search", "nexthop weight parsing", "--type", "file", "--json").stdout)["hits"]
    assert files and {h["type"] for h in files} == {"file"}


def test_an_unknown_type_lists_the_store_types(db):
    r = ngr(db, "search", "nexthop", "--type", "pr", "--json")
    assert r.exit_code == 2
    e = json.loads(r.stdout)["error"]
    assert e["code"] == "invalid_argument" and "'pr'" in e["message"] and "commit (3)" in e["message"]
    assert e["details"]["store_types"] == ["commit", "file"]
    plain = ngr(db, "search", "nexthop", "--type", "pr")
    assert plain.exit_code == 2 and "error[invalid_argument]" in plain.output and "file (3)" in plain.output


def test_a_keyed_feedback_retry_returns_the_stored_receipt(db):
    trace = json.loads(ngr(db, "search", "nexthop weight parsing", "--json").stdout)["trace_id"]
    first = ngr(db, "feedback", "use", trace, SHA_FIX[:8], "--key", "k1", "--json")
    assert first.exit_code == 0, first.output
    receipt = json.loads(first.stdout)
    assert [t["to"] for t in receipt["transitions"]] == ["used"] and receipt["newly_used"] == ["commit:" + SHA_FIX]
    retry = ngr(db, "feedback", "use", trace, "commit:" + SHA_FIX, "--key", "k1", "--json")
    assert retry.exit_code == 0, retry.output
    assert json.loads(retry.stdout) == receipt  # the same receipt, nothing applied twice
    report = json.loads(ngr(db, "trace", trace, "--json").stdout)
    assert len(report["receipts"]) == 1
    other = ngr(db, "feedback", "use", trace, SHA_ORIGIN[:8], "--key", "k1", "--json")  # same key, other request
    assert other.exit_code == 2 and json.loads(other.stdout)["error"]["code"] == "idempotency_conflict"
