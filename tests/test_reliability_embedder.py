"""Issue 17, defect 5: --embedder / make_embedder specs are validated: a bad spec is a clean
InvalidArgument (CLI: error[invalid_argument], exit 2), never a traceback or a giant allocation."""

from __future__ import annotations

import json
import sqlite3

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.index.embedder import MAX_HASHING_DIM, HashingEmbedder, make_embedder

runner = CliRunner()
BAD_SPECS = [
    "hashing:0",
    "hashing:-5",
    "hashing:abc",
    "hashing:100000000",
    f"hashing:{MAX_HASHING_DIM + 1}",
    "hashing:",
    "hashing:1.5",
    "hashingfoo",
    "hashing: 64",
]


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_make_embedder_rejects_bad_hashing_specs(spec):
    with pytest.raises(InvalidArgument, match="hashing"):
        make_embedder(spec)


@pytest.mark.parametrize("dim", [0, -5, MAX_HASHING_DIM + 1, 2.0, True, "64"])
def test_hashing_embedder_rejects_bad_dims(dim):
    with pytest.raises(InvalidArgument):
        HashingEmbedder(dim)


def test_valid_hashing_specs_are_unchanged():
    assert make_embedder("hashing").model_id == "hashing:256"
    assert make_embedder("hashing:64").dim == 64
    assert make_embedder(f"hashing:{MAX_HASHING_DIM}").dim == MAX_HASHING_DIM
    e = HashingEmbedder(32)
    assert make_embedder(e) is e


def test_make_embedder_rejects_a_directory_that_is_not_a_model(tmp_path):
    d = tmp_path / "not-a-model"
    d.mkdir()
    (d / "README.txt").write_text("hello")
    with pytest.raises(InvalidArgument, match="no model"):
        make_embedder(str(d))


def test_make_embedder_rejects_a_non_embedder_object():
    with pytest.raises(InvalidArgument):
        make_embedder(42)


def test_open_with_a_bad_embedder_is_invalid_argument_and_leaves_the_store_closed(tmp_path):
    with pytest.raises(InvalidArgument):
        ngr.open(tmp_path / "s.db", embedder="hashing:0")


def _cli(db, spec, *args):
    return runner.invoke(app, ["--db", str(db), "--embedder", spec, *args])


@pytest.fixture
def store(tmp_path):
    db = tmp_path / "s.db"
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "a", "title": "alpha", "text": "first node"}) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", str(f)])
    assert r.exit_code == 0, r.output
    return db


def _size(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM embeddings").fetchone()[0]
    finally:
        con.close()


@pytest.mark.parametrize("spec", ["hashing:0", "hashing:-5", "hashing:abc", "hashing:100000000"])
@pytest.mark.parametrize("cmd", [("search", "alpha"), ("search", "alpha", "--json"), ("ingest", "IN")])
def test_cli_bad_embedder_is_error_invalid_argument(store, tmp_path, spec, cmd):
    before = _size(store)
    cmd = tuple(str(tmp_path / "in.jsonl") if a == "IN" else a for a in cmd)
    r = _cli(store, spec, *cmd)
    assert r.exit_code == 2, (r.exit_code, r.output, r.exception)
    assert r.exception is None or isinstance(r.exception, SystemExit)
    assert "invalid_argument" in r.output
    if "--json" in cmd:
        assert json.loads(r.output)["error"]["code"] == "invalid_argument"
    assert _size(store) == before  # nothing re-embedded or written


def test_cli_directory_that_is_not_a_model(store, tmp_path):
    d = tmp_path / "empty-model"
    d.mkdir()
    r = _cli(store, str(d), "search", "alpha")
    assert r.exit_code == 2 and "error[invalid_argument]" in r.output, r.output


def test_a_broken_model_directory_is_invalid_argument(tmp_path):
    pytest.importorskip("sentence_transformers")
    d = tmp_path / "broken-model"
    d.mkdir()
    (d / "config.json").write_text("{}")
    with pytest.raises(InvalidArgument, match="cannot load"):
        make_embedder(str(d))


def test_reembedding_on_open_shows_progress_with_a_rate(tmp_path):
    """Issue 18 item 5: opening a store with another embedder under --reembed embeds every node again;
    the CLI shows it as a progress bar (done/total, rate, time left), never silently."""
    db = tmp_path / "r.db"
    with ngr.open(db, embedder="hashing:64") as eng:
        eng.add_nodes([ngr.Node(f"n{i}", "note", f"note {i}", "text") for i in range(300)])
    r = runner.invoke(app, ["--db", str(db), "--embedder", "hashing:32", "--reembed", "search", "note", "--json"])
    assert r.exit_code == 0, r.output
    assert "re-embedding the store" in r.stderr and "300/300" in r.stderr and "left" in r.stderr
