"""Placeholder nodes (``pr:N`` from a merge message) are not run through the model one by one: they share
the vector of their number-free label until real text replaces them; texts are embedded longest first in
batches (index/vector_cache.py).  A real git repository with a PR merge, a real SQLite store, a counting
embedder around the hashing one."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.engine import Engine
from neurongraph.index.embedder import HashingEmbedder
from neurongraph.index.vector_cache import ReembedRequired, cached_embeddings, vector_text
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
    r.commit("Tidy the vlan table (#14)", {"src/vlan.c": "int vlan(void); /* t */\n"})
    r.git("checkout", "-q", "-b", "feature")
    r.commit("Better error messages", {"src/errors.c": "const char *err;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #20 from ada/feature\n\nBetter errors")
    return r


def _vector(eng, node_id: str) -> np.ndarray | None:
    idx = eng.store.lookup_idx([node_id])[node_id]
    return eng.vectors.matrix[idx] if idx < eng.vectors.n and eng.vectors.present[idx] else None


def test_placeholders_share_one_label_until_real_text(repo, tmp_path):
    emb = CountingEmbedder()
    with ngr.open(tmp_path / "h.db", embedder=emb) as eng:
        s = sync_source(eng, "git", repo.path)
        assert [eng.get_node(p)["metadata"]["placeholder"] for p in ("pr:12", "pr:14", "pr:20")] == [True] * 3
        pr_texts = [t for t in emb.texts if t.startswith("PR #")]
        assert sorted(pr_texts) == ["PR #", "PR #: Better errors"]  # never "PR #12" and "PR #14" one by one
        assert s["embedded"] == len(emb.texts)
        label = HashingEmbedder(64).embed(["PR #"])[0]
        assert np.allclose(_vector(eng, "pr:12"), label) and np.allclose(_vector(eng, "pr:14"), label)
        hits = [h.id for h in eng.search("vlan support", limit=5).hits]
        assert hits and hits[0].startswith("commit:")

    emb2 = CountingEmbedder()  # reopening: every vector comes from the cache, none is made
    with ngr.open(tmp_path / "h.db", embedder=emb2) as eng:
        assert not emb2.calls and np.allclose(_vector(eng, "pr:12"), label)
        # a GitHub export brings the real PR: new text, a new content hash, embedded once
        body = "Tag frames with their VLAN id; the parser reads the 802.1Q header."
        r = eng.add_nodes([Node("pr:12", "pull_request", "Add vlan support", body, {"number": 12})])
        assert r["embedded"] == 1 and emb2.texts == ["Add vlan support\n" + body]
        assert np.allclose(_vector(eng, "pr:12"), HashingEmbedder(64).embed(["Add vlan support\n" + body])[0])
        assert np.allclose(_vector(eng, "pr:14"), label)
        # the placeholder again (a re-sync of the repository) keeps the real node and embeds nothing
        s = sync_source(eng, "git", repo.path, full=True)
        assert s["embedded"] == 0 and len(emb2.texts) == 1 and eng.get_node("pr:12")["text"] == body


def test_vector_text():
    assert vector_text({"placeholder": True}, "PR #7", "") == "PR #"
    assert vector_text({"placeholder": True}, "PR #7", "  \n") == "PR #"
    assert vector_text({"placeholder": True}, "PR #7", "Body.") == "PR #7\nBody."  # text of its own
    assert vector_text({}, "Fix #7 in 2.0", "") == "Fix #7 in 2.0"  # not a placeholder: the body
    emb = CountingEmbedder()
    with ngr.open(":memory:", embedder=emb) as eng:
        r = eng.add_nodes([Node(f"pr:{n}", "pull_request", f"PR #{n}", "", {"placeholder": True}) for n in (7, 8)])
        assert r == {"nodes": 2, "embedded": 1} and emb.texts == ["PR #"]


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


def test_another_model_embeds_the_label_once(repo, tmp_path):
    """Opening with another embedder (as a multilingual widening does) embeds each node text once and the
    placeholders' label once; the re-embed consent counts those texts."""
    with ngr.open(tmp_path / "m.db", embedder="hashing:64") as eng:
        sync_source(eng, "git", repo.path)
        texts = eng.stats()["nodes"] - 2 + 1  # pr:12 and pr:14 share the label "PR #"
    with pytest.raises(ReembedRequired) as err:
        Engine(SQLiteStore(tmp_path / "m.db"), CountingEmbedder(32), reembed_limit=texts - 1)
    assert err.value.details["missing"] == texts
    emb = CountingEmbedder(32)
    eng = Engine(SQLiteStore(tmp_path / "m.db"), emb, reembed_limit=texts)
    try:
        assert len(emb.texts) == texts and emb.texts.count("PR #") == 1
        assert np.allclose(_vector(eng, "pr:12"), HashingEmbedder(32).embed(["PR #"])[0])
        assert eng.stats()["vectors_in_memory"] == eng.stats()["nodes"]
    finally:
        eng.close()
