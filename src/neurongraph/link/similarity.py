"""Nearest neighbours in embedding space above a threshold: synonym edges between entity nodes.

Exact blocked matmul over unit vectors: at the entity counts a corpus of thousands of passages
produces (10^4-10^5) it is a few hundred milliseconds and needs no ANN index. Blocking bounds memory
to ``block x n`` floats.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

__all__ = ["EmbedFn", "unit_rows", "similar_pairs"]

EmbedFn = Callable[[Sequence[str]], np.ndarray]
"""Maps texts to a ``(len(texts), dim)`` array. Any sentence encoder fits; rows need not be unit length."""


def unit_rows(x: np.ndarray) -> np.ndarray:
    """Rows scaled to unit length (zero rows stay zero) so a dot product is a cosine."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.maximum(norms, 1e-12)


def similar_pairs(
    queries: np.ndarray,
    base: np.ndarray,
    threshold: float,
    k: int,
    query_offset: int = 0,
    block: int = 1024,
) -> list[tuple[int, int, float]]:
    """``(i, j, cos)`` for each query row's top-``k`` base rows with cosine >= ``threshold``.

    ``queries`` are rows ``query_offset ..`` of ``base`` when they are part of it (the fit case); the
    diagonal self-match is then excluded. Both inputs must be unit rows. Indices ``i`` are global
    (offset added).
    """
    out: list[tuple[int, int, float]] = []
    if len(queries) == 0 or len(base) == 0 or k <= 0:
        return out
    kk = min(k + 1, base.shape[0])  # +1 leaves room for the self match
    for s in range(0, len(queries), block):
        sims = queries[s : s + block] @ base.T
        rows = np.arange(sims.shape[0])
        self_cols = rows + s + query_offset
        inside = self_cols < base.shape[0]
        sims[rows[inside], self_cols[inside]] = -np.inf
        if kk < sims.shape[1]:
            top = np.argpartition(-sims, kk - 1, axis=1)[:, :kk]
        else:
            top = np.broadcast_to(np.arange(sims.shape[1]), (sims.shape[0], sims.shape[1]))
        vals = np.take_along_axis(sims, top, axis=1)
        r, c = np.nonzero(vals >= threshold)
        # keep at most k per row, best first
        order = np.lexsort((-vals[r, c], r))
        per_row: dict[int, int] = {}
        for idx in order:
            i = int(r[idx])
            if per_row.get(i, 0) >= k:
                continue
            per_row[i] = per_row.get(i, 0) + 1
            out.append((i + s + query_offset, int(top[i, c[idx]]), float(vals[r[idx], c[idx]])))
    return out
