"""Issue 45, cold start: the code history's columns persist beside the store (``<db>.codehistory``).

A real SQLite store of a git repository made here.  The second engine loads the file instead of reading
every commit's metadata; the search results are the same with and without the file; a new ingested commit,
a corrupt, truncated or forged file, another store's file, or a token the store does not hold all mean a
rebuild from the store (never a crash), and a write that changed no commit leaves the file in use.
"""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from tests.git_fixtures import Repo

import neurongraph as ngr
from neurongraph.index.code_history_file import TOKEN_KEY
from neurongraph.ingest import sync_source
from neurongraph.model import Node

QUERIES = [
    "fix crash in parser.c parse_header",
    "which commit introduced frobnicate_cache",
    "remove legacy_flag",
    "why was the cache added",
]


def _repo(tmp_path: Path) -> Repo:
    repo = Repo(tmp_path / "r")
    repo.commit("parser: first version", {"src/parser.c": "int parse_header(void) { return 0; }\n"})
    repo.commit(
        "cache: frobnicate_cache keeps parsed headers",
        {"src/cache.c": "int frobnicate_cache(int legacy_flag) {\n  return legacy_flag;\n}\n"},
    )
    repo.git("mv", "src/cache.c", "src/hcache.c")
    body = "int frobnicate_cache(int legacy_flag) {\n  return legacy_flag;\n}\n"
    repo.commit("cache: rename to hcache.c", {"src/hcache.c": body + "int hcache_size = 64;\n"})
    repo.commit(
        "parser: fix crash on an empty header in parse_header",
        {"src/parser.c": "int parse_header(void) {\n  if (!hdr) return -1;\n  return 0;\n}\n"},
    )
    return repo


def _open(db: Path):
    return ngr.open(str(db), embedder="hashing")


def _rankings(eng) -> list:
    out = []
    for q in QUERIES:
        d = eng.search(q, limit=5, record=False).to_dict()
        out.append(json.dumps({"seeds": d["seeds"], "hits": d["hits"]}, sort_keys=True))
    return out


def _code(eng):
    """Use the code history (the first code-aware search builds or loads it)."""
    ch = eng.code_history
    assert ch.commits > 0
    return ch


@pytest.fixture()
def store(tmp_path):
    repo = _repo(tmp_path)
    db = tmp_path / "s.db"
    eng = _open(db)
    sync_source(eng, "git", repo.path)
    eng.close()
    return repo, db


def _cache(db: Path) -> Path:
    return Path(str(db) + ".codehistory")


def _answers(eng) -> tuple:
    """What the code history answers besides rankings: postings, line counts, renames, blame."""
    ch = eng.code_history
    terms = ("frobnicate_cache", "legacy_flag", "parse_header")
    return (
        [ch.changes_of(t, side) for t in terms for side in ("added", "removed")],
        [ch.line_count(p) for p in ("src/parser.c", "src/hcache.c", "src/cache.c")],
        ch.renamed_away("src/cache.c"),
        eng.blame("src/parser.c", [1, 2, 3, 4]),
        eng.blame("src/hcache.c", [1, 2, 3]),
    )


def test_second_open_loads_the_file_and_ranks_the_same(store):
    _, db = store
    eng = _open(db)
    assert not _code(eng).loaded_from_file  # the first use builds from the store and writes the file
    first, answers = _rankings(eng), _answers(eng)
    eng.close()
    assert _cache(db).is_file()
    assert answers[1] == [4, 4, 0] and answers[2] and None not in answers[3]

    _reopen(db, True, first, answers)
    _cache(db).unlink()  # the same answers from the store itself
    _reopen(db, False, first, answers)


def _reopen(db: Path, from_file: bool, ranked: list, answers: tuple) -> None:
    """A new engine over ``db`` loads the file (or rebuilds) and answers as before."""
    eng = _open(db)
    assert _code(eng).loaded_from_file is from_file
    assert _rankings(eng) == ranked and _answers(eng) == answers
    eng.close()


def test_new_commits_are_read_on_top_of_the_file_and_many_rebuild_it(store, monkeypatch):
    import neurongraph.index.code_history_file as chf

    repo, db = store
    eng = _open(db)
    _code(eng)
    eng.close()

    eng = _open(db)  # a write that changes no commit: the file stays exact (stamped with the new sequence)
    eng.store.upsert_nodes([Node(id="note:1", type="note", title="a note", text="about parse_header")])
    eng.close()
    eng = _open(db)
    ch = _code(eng)
    assert ch.loaded_from_file and ch.caught_up == 0
    eng.close()

    repo.commit("cache: drop legacy_flag from quux_table", {"src/quux.c": "int quux_table = 1;\n"})
    eng = _open(db)
    sync_source(eng, "git", repo.path)
    eng.close()
    eng = _open(db)  # the new commit: read on top of the file, which stays as it was
    ch = _code(eng)
    assert ch.loaded_from_file and ch.caught_up == 1 and len(ch.changes_of("quux_table", "added")[0]) == 1
    answers, ranked = _answers(eng), _rankings(eng)
    eng.close()
    _reopen(db, True, ranked, answers)

    monkeypatch.setattr(chf, "MAX_CATCH_UP_COMMITS", 0)  # too many to re-read: rebuilt, and the file rewritten
    _reopen(db, False, ranked, answers)
    eng = _open(db)
    ch = _code(eng)
    assert ch.loaded_from_file and ch.caught_up == 0
    eng.close()
    _cache(db).unlink()  # and all of it as a build from the store says
    _reopen(db, False, ranked, answers)


def _damage(path: Path, how: str) -> None:
    data = bytearray(path.read_bytes())
    if how == "truncated":
        path.write_bytes(bytes(data[: len(data) // 2]))
    elif how == "garbage":
        path.write_bytes(b"not a code history file at all")
    elif how == "flipped":  # the columns' bytes changed: offsets and indices out of range
        rng = np.random.default_rng(0)
        at = rng.integers(len(data) // 2, len(data), 400)
        for i in at.tolist():
            data[i] ^= 0xFF
        path.write_bytes(bytes(data))
    elif how == "huge":  # a header that claims an array of 2^62 elements
        n = struct.unpack("<Q", data[17:25])[0]
        header = json.loads(bytes(data[25 : 25 + n]))
        header["arrays"]["c_idx"][1] = [2**62]
        raw = json.dumps(header).encode()
        path.write_bytes(bytes(data[:17]) + struct.pack("<Q", len(raw)) + raw + bytes(data[25 + n :]))
    else:
        raise AssertionError(how)


@pytest.mark.parametrize("how", ["truncated", "garbage", "flipped", "huge"])
def test_a_damaged_file_is_rebuilt_not_trusted(store, how):
    _, db = store
    eng = _open(db)
    _code(eng)
    first = _rankings(eng)
    eng.close()
    _damage(_cache(db), how)
    eng = _open(db)
    ch = _code(eng)
    assert not ch.loaded_from_file
    assert _rankings(eng) == first
    eng.close()
    eng = _open(db)  # rewritten by that rebuild
    assert _code(eng).loaded_from_file
    eng.close()


def test_another_stores_file_or_an_unknown_token_is_not_used(store, tmp_path):
    repo, db = store
    eng = _open(db)
    _code(eng)
    eng.close()
    other = tmp_path / "other.db"  # another store of the same history, given this store's file
    eng = _open(other)
    sync_source(eng, "git", repo.path)
    eng.close()
    shutil.copy(_cache(db), _cache(other))
    eng = _open(other)
    assert not _code(eng).loaded_from_file
    eng.close()

    eng = _open(db)
    eng.store.set_meta(TOKEN_KEY, "0" * 32)  # a write that died between the file and the token
    eng.close()
    eng = _open(db)
    assert not _code(eng).loaded_from_file
    eng.close()


def test_an_in_memory_store_has_no_file(tmp_path):
    repo = _repo(tmp_path)
    eng = ngr.open(":memory:", embedder="hashing")
    sync_source(eng, "git", repo.path)
    assert _code(eng).commits == 4 and not eng.code_history.loaded_from_file
    eng.close()


@pytest.mark.parametrize("column", ["e_commit", "c_par_off", "pa_term", "e_path"])
def test_a_forged_file_with_a_valid_checksum_is_checked_column_by_column(store, column):
    from neurongraph.index.code_facts import CodeFacts
    from neurongraph.index.code_history_file import CodeHistoryFile

    _, db = store
    eng = _open(db)
    _code(eng)
    first = _rankings(eng)
    f = CodeHistoryFile.beside(eng.store)
    got = f.load()
    assert got is not None
    facts = got[0]
    cols = {k: np.array(v) for k, v in facts.cols.items()}
    cols[column][...] = cols[column][::-1] if column == "e_path" else 10**6  # unsorted paths, or out of range
    if column == "e_path" and (np.diff(cols[column]) >= 0).all():
        cols[column][0] = 10**6
    assert f._write(CodeFacts(facts.strings, cols), eng.store.current_seq(), eng.store.get_meta(TOKEN_KEY))
    eng.close()
    eng = _open(db)
    assert not _code(eng).loaded_from_file
    assert _rankings(eng) == first
    eng.close()


def test_a_commit_synced_into_an_engine_that_loaded_the_file(store):
    """The change feed's rows go on top of the loaded columns: the new commit is found, a changed one
    answers with its new facts, and a reopened store agrees, from the file and from the store."""
    repo, db = store
    eng = _open(db)
    _code(eng)
    eng.close()
    eng = _open(db)
    ch = _code(eng)
    assert ch.loaded_from_file
    before = ch.changes_of("legacy_flag", "added")[0]
    repo.commit("cache: quux_table replaces legacy_flag", {"src/quux.c": "int quux_table(void);\n"})
    sync_source(eng, "git", repo.path)
    assert len(ch.changes_of("quux_table", "added")[0]) == 1
    assert ch.changes_of("legacy_flag", "added")[0] == before and ch.commits == 5
    answers, ranked = _answers(eng), _rankings(eng)
    eng.close()
    _reopen(db, True, ranked, answers)  # the file, with the new commit read on top of it
    _cache(db).unlink()
    _reopen(db, False, ranked, answers)  # and a build from the store


def test_a_killed_writers_temporary_is_removed_and_no_write_joins_a_transaction(store):
    from neurongraph.index.code_history_file import CodeHistoryFile

    _, db = store
    dead = Path(f"{_cache(db)}.999999999.abcd1234.tmp")
    dead.write_bytes(b"half a file")
    eng = _open(db)
    _code(eng)  # builds and writes: the dead writer's temporary goes
    assert not dead.exists() and _cache(db).is_file()
    f = CodeHistoryFile.beside(eng.store)
    got = f.load()
    assert got is not None
    facts = got[0]
    with eng.store.transaction():
        assert not f.save(facts, eng.store.current_seq())
    eng.close()


def test_the_command_line_exits_without_teardown_yet_flushes_everything(store, tmp_path):
    """``ngr`` ends a finished command with ``os._exit`` after the exit handlers: the whole JSON answer is out
    and the exit status is the command's (a user mistake still exits 2 the normal way)."""
    _, db = store
    ngr = Path(sys.executable).with_name("ngr")
    if not ngr.exists():
        pytest.skip("the ngr script is not installed next to this Python")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    r = subprocess.run(
        [str(ngr), "--db", str(db), "--embedder", "hashing", "search", "crash in parse_header", "--json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert any("fix crash" in h["title"] for h in json.loads(r.stdout)["hits"])
    r = subprocess.run(
        [str(ngr), "--db", str(tmp_path / "none.db"), "search", "x"], capture_output=True, text=True, env=env
    )
    assert r.returncode == 2 and "error[" in r.stderr
