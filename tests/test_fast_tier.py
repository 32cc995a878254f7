"""The fast ingest tier (index/static_embedder.py): a static table distilled from the packaged MiniLM's ONNX
graph, used through ``--embedder fast``; a store it built is searched with it and re-embedded by the exact
model on demand (``--reembed``), never mixing the two models' vectors.  The table here is distilled from the
real model but only for the word pieces of the test's own texts (a second, not the full vocabulary's ~40 s);
a real git repository and real SQLite stores."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from git_fixtures import Repo
from neurongraph.cli.main import app
from neurongraph.engine import Engine
from neurongraph.index.embedder import DEFAULT_MODEL_ID, check_embedder_spec, make_embedder
from neurongraph.index.static_embedder import DIM, StaticEmbedder, distill, is_distilled, static_model_id
from neurongraph.index.vector_cache import ReembedRequired
from neurongraph.ingest import sync_source
from neurongraph.store.sqlite import SQLiteStore

pytestmark = pytest.mark.model
onnx_export = pytest.importorskip("neurongraph.index.onnx_export")
if not onnx_export.is_current():
    pytest.skip("the ONNX export of the packaged model is missing (scripts/bootstrap.sh)", allow_module_level=True)

runner = CliRunner()
MESSAGES = [
    ("Add the packet parser for ethernet frames", {"src/parser.c": "int parse(void);\n"}),
    ("Fix a crash in the vlan tag handling", {"src/vlan.c": "int vlan(void);\n"}),
    ("Document the build system and install steps", {"docs/build.md": "make install\n"}),
    ("Speed up the flow table lookup with a hash", {"src/flow.c": "int lookup(void);\n"}),
]
QUERIES = ["why did the vlan code crash", "how do I install it", "faster flow lookup", "ethernet frame parsing"]


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """The real distillation, restricted to the pieces of this file's texts (all other rows zero)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(onnx_export.source_model_dir() / "tokenizer.json"))
    words = " ".join([m for m, _ in MESSAGES] + QUERIES + ["Ada Dev ada@example.org src docs parser vlan flow"])
    pieces = tok.encode(words.lower(), add_special_tokens=False).ids
    return distill(tmp_path_factory.mktemp("static"), pieces=pieces)


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "widget")
    for message, files in MESSAGES:
        r.commit(message, files)
    return r


def run(db, *args):
    r = runner.invoke(app, ["--db", str(db), *args], catch_exceptions=False)
    assert r.exit_code == 0, r.output
    return r


def test_the_table_is_a_cached_distillation_with_its_own_model_id(table):
    assert is_distilled(table)
    manifest = json.loads((table / "manifest.json").read_text())
    assert manifest["model"] == "all-MiniLM-L6-v2" and 0 < manifest["pieces"] < 200
    emb = StaticEmbedder(table)
    assert emb.dim == DIM and emb.model_id == static_model_id() != DEFAULT_MODEL_ID
    assert check_embedder_spec("fast") == "fast" and make_embedder("fast").model_id == emb.model_id


def test_vectors_are_the_sum_of_the_pieces_and_rank_by_meaning(table):
    emb = StaticEmbedder(table)
    texts = [m for m, _ in MESSAGES]
    v = emb.embed(texts)
    assert v.dtype == np.float32 and v.shape == (4, DIM)
    assert np.allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # the word cache and sparse sum give what a direct lookup of the tokenizer's pieces gives
    for text, row in zip(texts, v):
        ids = emb._tok.encode(text, add_special_tokens=False).ids
        ref = emb._table[ids].sum(axis=0)
        assert float(row @ (ref / np.linalg.norm(ref))) > 0.9999
    q = emb.embed(QUERIES)
    assert (q @ v.T).argmax(axis=1).tolist() == [1, 2, 3, 0]  # each query nearest its own commit
    # a word cut at max_tokens pieces, and empty / piece-less texts are zero rows, not NaN
    short = StaticEmbedder(table, max_tokens=3)
    assert short.model_id.endswith(":3")
    assert np.allclose(short.embed(["vlan vlan vlan flow flow"]), short.embed(["vlan vlan vlan"]))
    assert not np.isnan(emb.embed(["", "   "])).any() and not emb.embed([""]).any()
    done = []
    emb.embed(texts, progress=lambda d, n: done.append((d, n)))
    assert done[-1] == (4, 4)


def test_fast_ingest_searches_then_the_exact_model_replaces_its_vectors(table, repo, tmp_path, monkeypatch):
    monkeypatch.setenv("NGR_STATIC_DIR", str(table))
    db = tmp_path / "fast.db"
    r = run(db, "--embedder", "fast", "ingest", "git", str(repo.path), "--json")
    s = json.loads(r.stdout)
    assert s["embedder"] == static_model_id() and s["embedded"] >= 4
    hits = json.loads(run(db, "--embedder", "fast", "search", "why did the vlan code crash", "--json").stdout)
    assert hits["hits"][0]["title"].startswith("Fix a crash in the vlan")
    store = SQLiteStore(str(db))
    try:
        assert set(store.embedding_models()) == {static_model_id()}  # one model's vectors, nothing exact yet
    finally:
        store.close()
    # the exact model on demand (`ngr reembed`): every node embedded again with it, then searched with it
    r = json.loads(run(db, "reembed", "--json").stdout)
    assert r["embedder"] == DEFAULT_MODEL_ID and r["embedded"] >= 4
    assert set(r["embedding_models"]) == {DEFAULT_MODEL_ID, static_model_id()}
    assert json.loads(run(db, "reembed", "--json").stdout)["embedded"] == 0  # done once
    hits = json.loads(run(db, "search", "why did the vlan code crash", "--json").stdout)
    assert hits["hits"][0]["title"].startswith("Fix a crash in the vlan")
    store = SQLiteStore(str(db))
    try:
        models = store.embedding_models()
        assert models[DEFAULT_MODEL_ID] >= models[static_model_id()]  # the fast ones stay for --embedder fast
    finally:
        store.close()
    r = runner.invoke(app, ["--db", str(tmp_path / "none.db"), "reembed", "--json"])
    assert r.exit_code != 0 and json.loads(r.stdout)["error"]["code"] == "no_store"


def test_a_fast_store_opened_with_the_exact_model_names_the_spec_and_waits_for_consent(table, repo, tmp_path):
    db = tmp_path / "fast.db"
    eng = Engine(SQLiteStore(str(db)), StaticEmbedder(table))
    sync_source(eng, "git", repo.path)
    eng.close()
    store = SQLiteStore(str(db))
    try:
        with pytest.raises(ReembedRequired, match="--embedder fast") as e:
            Engine(store, make_embedder(None), reembed_limit=2)  # nothing embedded: the exact model not loaded
        assert e.value.code == "reembed_required"
    finally:
        store.close()


def test_the_ingest_progress_shows_rate_time_spent_and_time_left():
    from rich.console import Console

    from neurongraph.cli.ingest_cmd import stage_progress

    console = Console(record=True, force_terminal=True, width=160)
    with stage_progress(transient=False, console=console) as prog:
        task = prog.add_task("embedding new text", total=1000)
        prog.update(task, completed=250)
        prog.refresh()
    text = console.export_text()
    assert "250/1000" in text and "left" in text
    assert text.count("0:00:") >= 2 or "-:--:--" in text  # time spent, then time left


def test_the_git_log_stream_reports_commits_read_against_the_total(repo, tmp_path):
    from neurongraph.ingest import git_log

    seen = []
    eng = Engine(SQLiteStore(str(tmp_path / "p.db")), make_embedder("hashing"))
    try:
        sync_source(eng, "git", repo.path, progress=lambda stage, done, total: seen.append((stage, done, total)))
    finally:
        eng.close()
    log = [(d, t) for s, d, t in seen if s == "log"]
    assert log[0] == (0, len(MESSAGES)) and log[-1] == (len(MESSAGES), len(MESSAGES))
    assert [s for s, _, _ in seen].index("log") < [s for s, _, _ in seen].index("reading")
    counts = []
    old, git_log.PROGRESS_EVERY = git_log.PROGRESS_EVERY, 2
    try:
        commits, _ = git_log.read_log(repo.path, ["HEAD"], counts.append)
    finally:
        git_log.PROGRESS_EVERY = old
    assert len(commits) == len(MESSAGES) and counts == [2]  # every 2nd while streaming; the end by read_git


def test_the_word_cache_is_bounded_and_gives_the_same_vectors_when_it_starts_again(table, monkeypatch):
    from neurongraph.index import static_embedder

    texts = [m for m, _ in MESSAGES] + QUERIES
    want = StaticEmbedder(table).embed(texts)
    monkeypatch.setattr(static_embedder, "_MAX_WORDS", 8)
    emb = StaticEmbedder(table)
    got = np.concatenate([emb.embed([t]) for t in texts])  # each text resets the small cache
    assert len(emb._words) <= max(8, len(set(texts[-1].lower().split()))) and np.allclose(got, want, atol=1e-6)
