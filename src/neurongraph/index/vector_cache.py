"""Embeddings through the store's (text hash, model) cache, and the vector index kept in step with node rows.

Why here: a node's vector is derived state like the BM25 postings; the store caches vectors by content
hash and model so a text is embedded once for every process sharing the database, and opening a store
built with another model re-embeds it only when the caller allows that many (``ReembedRequired``).

A placeholder node with no text of its own (``metadata.placeholder`` true, e.g. a ``pr:N`` known only from
a merge message, ingest/git.py) is not run through the model by itself (:func:`vector_text`): it takes the
vector of its title with the numbers taken out (``PR #12`` -> ``PR #``), one text for all of them, so a big
history's thousands (7.8k on mypy) cost one model call.  That label is what the number-free part of its
title said anyway, so the dense channel and the corpus's typical similarity see nearly what they saw when
each was embedded (measured in docs/ingest.md).  Once real text replaces it (a GitHub export) the node is
embedded like any new text.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

import numpy as np

from ..errors import NeuronGraphError
from ..model import body_of, content_hash
from ..store.base import Store
from .embedder import Embedder
from .vectors import VectorIndex

__all__ = ["ReembedRequired", "cached_embeddings", "load_node_vectors", "vector_text"]

Progress = Callable[[int, int], None]


_NUMBER = re.compile(r"[0-9]+")


def vector_text(metadata: dict, title: str, text: str) -> str:
    """The text a node's vector is made from: its body, or for a placeholder without text its title with
    the numbers taken out (the module docstring says why)."""
    if metadata.get("placeholder") is True and not text.strip():
        return _NUMBER.sub("", title)
    return body_of(title, text)


def _spec_hint(model_id: str) -> str:
    """A model id as the error names it: with the ``--embedder`` spec that opens it, where one does."""
    from .static_embedder import FAST_SPEC, static_model_id

    return f"{model_id} = --embedder {FAST_SPEC}" if model_id == static_model_id() else model_id


class ReembedRequired(NeuronGraphError):
    """Opening the store would embed many nodes again (another embedder than the one it was built with)."""

    code = "reembed_required"


def cached_embeddings(
    store: Store, embedder: Embedder, texts: Sequence[str], progress: Progress | None = None, batch: int = 256
) -> tuple[np.ndarray, int | None]:
    """Embeddings of ``texts`` and how many were embedded (None for no text): only unseen (text, model)
    pairs are embedded, in batches, each batch cached in the store before the next."""
    if not texts:
        return np.zeros((0, embedder.dim), np.float32), None
    hashes = [content_hash(t) for t in texts]
    cached = store.get_vectors(embedder.model_id, hashes)
    todo: dict[str, str] = {}
    for h, t in zip(hashes, texts):
        if h not in cached:
            todo.setdefault(h, t)
    if todo:
        # longest first, so each batch holds texts of similar length (little padding), and a batch that
        # runs out of memory does so at the start
        pending = sorted(todo.items(), key=lambda kv: -len(kv[1]))
        for i in range(0, len(pending), batch):
            chunk = pending[i : i + batch]
            vecs = np.asarray(embedder.embed([t for _, t in chunk]), np.float32)
            store.put_vectors(embedder.model_id, [(h, v) for (h, _), v in zip(chunk, vecs)])
            cached.update({h: v for (h, _), v in zip(chunk, vecs)})
            if progress:
                progress(min(i + batch, len(pending)), len(pending))
    return np.stack([cached[h] for h in hashes]), len(todo)


def load_node_vectors(
    store: Store,
    embedder: Embedder,
    vectors: VectorIndex,
    idx: np.ndarray,
    hashes: list[str],
    embed: Callable[[Sequence[str], Progress | None], np.ndarray],
    reembed_limit: int | None,
    progress: Progress | None = None,
) -> None:
    """Put the vectors of changed nodes ``idx`` (content ``hashes``) into ``vectors``: the first load in one
    bulk scan, then from the cache; texts (:func:`vector_text`) without a cached vector go through ``embed``
    (more than ``reembed_limit`` of them: ReembedRequired instead)."""
    if vectors.n == 0:  # first load: one bulk scan
        have, mat = store.all_node_vectors(embedder.model_id, embedder.dim)
        vectors.set(have, mat)
        done = np.zeros(int(max(idx.max(), have.max() if have.size else 0)) + 1, bool)
        done[have] = True
        todo = ~done[idx]
        idx, hashes = idx[todo], [h for h, t in zip(hashes, todo) if t]
        if idx.size == 0:
            return
    cached = store.get_vectors(embedder.model_id, hashes)
    key = dict(zip(idx.tolist(), hashes))  # node -> the hash its vector is cached under
    missing = [i for i, h in key.items() if h not in cached]
    rows = store.nodes_by_idx(missing) if missing else {}
    texts = {i: vector_text(r.metadata, r.title, r.text) for i, r in rows.items()}
    key.update({i: content_hash(t) for i, t in texts.items()})  # a placeholder: its label's hash
    cached.update(store.get_vectors(embedder.model_id, [key[i] for i in texts]))
    missing = [i for i in texts if key[i] not in cached]
    todo = {key[i]: texts[i] for i in missing}  # distinct texts: every placeholder shares one label
    if reembed_limit is not None and len(todo) > reembed_limit:
        models = {m: n for m, n in store.embedding_models().items() if m != embedder.model_id}
        raise ReembedRequired(
            f"{len(todo)} texts of {len(missing)} nodes have no vector for the embedder {embedder.model_id}"
            + (f" (the store was embedded with {', '.join(_spec_hint(m) for m in sorted(models))})" if models else "")
            + "; embedding them takes a while: open with that embedder (--embedder), or pass --reembed",
            missing=len(todo),
            embedder=embedder.model_id,
            store_models=models,
        )
    if todo:  # written by another process or for another model: embed once, cached for everyone
        cached.update(zip(todo, embed(list(todo.values()), progress)))
    loaded = [(i, cached[h]) for i, h in key.items() if h in cached]
    if loaded:
        vectors.set(np.array([i for i, _ in loaded], np.int64), np.stack([v for _, v in loaded]))
