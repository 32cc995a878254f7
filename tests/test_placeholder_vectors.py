"""Placeholder nodes (``pr:N`` from a merge message) are not run through the model until real text replaces
them, and texts are embedded longest first in batches (index/vector_cache.py); a real git repository
with a PR merge, a real SQLite store, a counting embedder around the hashing one."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.engine import Engine
from neurongraph.index.embedder import HashingEmbedder
from neurongraph.index.vector_cache import ReembedRequired, cached_embeddings, needs_vector
from neurongraph.ingest import sync_source
from neurongraph.model import Node
from neurongraph.store.sqlite import SQLiteStore


class CountingEmbedder:
    """The hashing embedder, recording every batch of texts it is given."""

    def __init__(self, dim: int = 64):
        self._inner = HashingEmbedder(dim)
        self.dim, self.model_id = self._inner.dim, self._inner.model_id
        self.calls: list[list[str]] = []

    def embed(self, texts, show_progress=False, progress=None):
        self.calls.append(list(texts))
        return self._inner.embed(texts)

    @property
    def texts(self) -> list[str]:
        return [t for call in self.calls for t in call]


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "widget")
    r.commit("Add the packet parser", {"src/parser.c": "int parse(void);\n"})
    r.commit("Add vlan support (#12)", {"src/vlan.c": "int vlan(void);\n"})
    r.git("checkout", "-q", "-b", "feature")
    r.commit("Better error messages", {"src/errors.c": "const char *err;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #20 from ada/feature\n\nBetter errors")
    return r


def _has_vector(eng, node_id: str) -> bool:
    idx = eng.store.lookup_idx([node_id])[node_id]
    return bool(idx < eng.vectors.n and eng.vectors.present[idx])


def test_placeholders_wait_for_real_text(repo, tmp_path):
    emb = CountingEmbedder()
    with ngr.open(tmp_path / "h.db", embedder=emb) as eng:
        s = sync_source(eng, "git", repo.path)
        for pr in ("pr:12", "pr:20"):
            node = eng.get_node(pr)
            assert node["metadata"]["placeholder"] is True and node["text"] == ""
            assert not _has_vector(eng, pr)
        assert not [t for t in emb.texts if t.startswith("PR #")]  # no placeholder reached the model
        assert s["embedded"] == len(emb.texts) > 0  # the commits and files were embedded, and counted
        assert _has_vector(eng, eng.get_node("commit:" + repo.git("rev-parse", "HEAD"))["id"])
        # a search still works and never fails on the vector-less nodes
        hits = [h.id for h in eng.search("vlan support", limit=5).hits]
        assert hits and hits[0].startswith("commit:")

    emb2 = CountingEmbedder()  # reopening: the placeholders are not embedded at load either
    with ngr.open(tmp_path / "h.db", embedder=emb2) as eng:
        assert not emb2.calls and not _has_vector(eng, "pr:12")
        # a GitHub export brings the real PR: new text, a new content hash, embedded once
        body = "Tag frames with their VLAN id; the parser reads the 802.1Q header."
        r = eng.add_nodes([Node("pr:12", "pull_request", "Add vlan support", body, {"number": 12})])
        assert r["embedded"] == 1 and emb2.texts == ["Add vlan support\n" + body]
        assert _has_vector(eng, "pr:12") and not _has_vector(eng, "pr:20")
        # the placeholder again (a re-sync of the repository) keeps the real node and embeds nothing
        s = sync_source(eng, "git", repo.path)
        assert s["embedded"] == 0 and len(emb2.texts) == 1 and eng.get_node("pr:12")["text"] == body


def test_a_placeholder_added_directly_is_not_embedded(tmp_path):
    emb = CountingEmbedder()
    with ngr.open(tmp_path / "d.db", embedder=emb) as eng:
        r = eng.add_nodes([Node("pr:7", "pull_request", "PR #7", "", {"placeholder": True})])
        assert r == {"nodes": 1, "embedded": 0} and not emb.calls and not _has_vector(eng, "pr:7")
        # a placeholder that carries text of its own is embedded like any node
        r = eng.add_nodes([Node("pr:8", "pull_request", "PR #8", "Body text.", {"placeholder": True})])
        assert r["embedded"] == 1 and _has_vector(eng, "pr:8")
    assert needs_vector({}, "") and needs_vector({"placeholder": False}, "")
    assert not needs_vector({"placeholder": True}, "  \n") and needs_vector({"placeholder": True}, "x")


def test_batches_hold_texts_of_similar_length(tmp_path):
    """Longest first across the whole call, so each batch pads little; rows come back in input order."""
    emb = CountingEmbedder()
    texts = ["a" * n + f" {n}" for n in (3, 40, 1, 25, 7, 60, 12)] + ["a" * 3 + " 3"]  # one duplicate
    with ngr.open(tmp_path / "b.db", embedder="hashing:64") as eng:
        out, embedded = cached_embeddings(eng.store, emb, texts, batch=3)
    assert embedded == 7 and [len(c) for c in emb.calls] == [3, 3, 1]
    lengths = [len(t) for c in emb.calls for t in c]
    assert lengths == sorted(lengths, reverse=True)
    assert np.allclose(out, emb._inner.embed(texts))


def test_another_model_reembeds_only_nodes_with_text(repo, tmp_path):
    """Opening with another embedder (as a multilingual widening does) embeds every node but the
    placeholders, and the re-embed consent counts only those nodes."""
    with ngr.open(tmp_path / "m.db", embedder="hashing:64") as eng:
        sync_source(eng, "git", repo.path)
        with_text = eng.stats()["nodes"] - 2  # pr:12 and pr:20 are placeholders
    with pytest.raises(ReembedRequired) as err:
        Engine(SQLiteStore(tmp_path / "m.db"), CountingEmbedder(32), reembed_limit=with_text - 1)
    assert err.value.details["missing"] == with_text
    emb = CountingEmbedder(32)
    eng = Engine(SQLiteStore(tmp_path / "m.db"), emb, reembed_limit=with_text)
    try:
        assert len(emb.texts) == with_text and not [t for t in emb.texts if t.startswith("PR #")]
        assert not _has_vector(eng, "pr:12") and eng.stats()["vectors_in_memory"] == with_text
    finally:
        eng.close()
