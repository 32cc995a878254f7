"""Embeddings through the store's (text hash, model) cache, and the vector index kept in step with node rows.

Why here: a node's vector is derived state like the BM25 postings; the store caches vectors by content
hash and model so a text is embedded once for every process sharing the database, and opening a store
built with another model re-embeds it only when the caller allows that many (``ReembedRequired``).

A placeholder node with no text of its own (``metadata.placeholder`` true, e.g. a ``pr:N`` known only from
a merge message, ingest/git.py) is not embedded (:func:`needs_vector`): its title says nothing a model
should read, and a big history holds thousands (7.8k on mypy).  It has no vector, so the dense channel
does not see it (a missing row scores 0 and is masked, index/vectors.py); once real text replaces it
(a GitHub export) its content hash changes and it is embedded like any new text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ..errors import NeuronGraphError
from ..model import content_hash
from ..store.base import Store
from .embedder import Embedder
from .vectors import VectorIndex

__all__ = ["ReembedRequired", "cached_embeddings", "load_node_vectors", "needs_vector"]

Progress = Callable[[int, int], None]


def needs_vector(metadata: dict, text: str) -> bool:
    """False for a placeholder without text of its own (see the module docstring): nothing to embed yet."""
    return not (metadata.get("placeholder") is True and not text.strip())


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
    bulk scan, then from the cache; bodies without a cached vector go through ``embed`` (more than
    ``reembed_limit`` of them: ReembedRequired instead)."""
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
    missing = [i for i, h in zip(idx.tolist(), hashes) if h not in cached]
    rows = store.nodes_by_idx(missing) if missing else {}
    missing = [i for i in missing if i in rows and needs_vector(rows[i].metadata, rows[i].text)]
    if reembed_limit is not None and len(missing) > reembed_limit:
        models = {m: n for m, n in store.embedding_models().items() if m != embedder.model_id}
        raise ReembedRequired(
            f"{len(missing)} nodes have no vector for the embedder {embedder.model_id}"
            + (f" (the store was embedded with {', '.join(sorted(models))})" if models else "")
            + "; embedding them takes a while: open with that embedder (--embedder), or pass --reembed",
            missing=len(missing),
            embedder=embedder.model_id,
            store_models=models,
        )
    if missing:  # written by another process or for another model: embed once, cached for everyone
        bodies = [rows[i].body for i in missing]
        for h, v in zip((content_hash(b) for b in bodies), embed(bodies, progress)):
            cached[h] = v
    loaded = [(i, cached[h]) for i, h in zip(idx.tolist(), hashes) if h in cached]
    if loaded:
        vectors.set(np.array([i for i, _ in loaded], np.int64), np.stack([v for _, v in loaded]))
