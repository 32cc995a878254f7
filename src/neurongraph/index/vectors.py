"""Dense vector matrix indexed by node index, grown incrementally.

Exact search by one matrix-vector product: ~1 ms at 10k and ~5 ms at 100k
rows of 384 floats on this machine, and it yields the full per-node query
similarity that beam search and strategies need anyway.  Rows of missing or
deleted nodes are zero, so they score 0 and are masked out.

A query's products over a small matrix run on **one BLAS thread** (:func:`one_blas_thread`): below
``SMALL_MATRIX_ROWS`` a second thread saves little, and when another process holds a core a
two-thread OpenBLAS product stalls on it (10k rows on 2 busy cores: search p50 16 ms instead of
1.4 ms, docs/performance.md).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from .ivf import IvfIndex

__all__ = ["VectorIndex", "one_blas_thread", "SMALL_MATRIX_ROWS"]

SMALL_MATRIX_ROWS = 50_000  # below this many rows a query's matrix products use one BLAS thread


_blas_found: list = [-1, ()]  # [len(sys.modules) when looked up, the controllers found]


def _blas_libraries() -> tuple:
    """threadpoolctl's controllers of every BLAS library loaded (numpy's OpenBLAS, and any that an import
    loaded since: scipy's, torch's); empty without threadpoolctl (then each keeps its own thread count).
    Looked up again only after new modules were imported (~1 ms), not per search."""
    if _blas_found[0] != len(sys.modules):
        try:
            from threadpoolctl import ThreadpoolController
        except ImportError:
            libs: tuple = ()
        else:
            libs = tuple(ThreadpoolController().select(user_api="blas").lib_controllers)
        _blas_found[:] = [len(sys.modules), libs]
    return _blas_found[1]


@contextmanager
def one_blas_thread(rows: int) -> Iterator[None]:
    """One BLAS thread inside the block when the matrix has fewer than ``SMALL_MATRIX_ROWS`` rows (the
    previous count is restored after it; ~1 us).  Process-wide, as BLAS thread counts are."""
    changed = []
    if rows < SMALL_MATRIX_ROWS:
        for lib in _blas_libraries():
            n = lib.get_num_threads()
            if n is not None and n > 1:
                lib.set_num_threads(1)
                changed.append((lib, n))
    try:
        yield
    finally:
        for lib, n in changed:
            lib.set_num_threads(n)


def _median(x: np.ndarray) -> float:
    """``float(np.median(x))`` of a 1-d float array, bit for bit, in a fraction of its time (in a search,
    4,096 fresh values: ~45 us for ``np.median``, whose partition around *two* middle positions is numpy's
    slow multi-pivot path, against ~6 us here): one single-pivot partition at the upper middle, the lower
    middle as the largest value before it, their mean in the array's precision summed from 0 as
    ``np.mean`` does (so -0.0 comes out as 0.0); NaN if any value is NaN (NaN sorts last, so a NaN lies at
    or after the pivot)."""
    n = x.shape[0]
    h = n // 2
    part = np.partition(x, h)
    if np.isnan(part[h:].max()):
        return float("nan")
    zero = x.dtype.type(0)
    if n % 2:
        return float(zero + part[h])
    return float((zero + part[:h].max() + part[h]) / x.dtype.type(2))


class VectorIndex:
    """The dense vectors as one float32 matrix indexed by node row, so a query is one matrix product."""

    def __init__(self, dim: int):
        self.dim = dim
        self._mat = np.zeros((0, dim), np.float32)
        self._present = np.zeros(0, bool)
        self.n = 0  # logical rows (max node index + 1)
        self.ivf: IvfIndex | None = None  # built on demand for large corpora (see ann_top_k)
        self._ivf_trained_n = 0
        self._sample: np.ndarray | None = None  # sampled rows behind typical_similarity, reset on change
        self._ivf_saved: tuple | None = None  # (centroids, assignments, rows set since) to rebuild lazily
        self._n_present: int | None = None  # present rows, cached until the next change (read per search)

    def _grow(self, n: int) -> None:
        if n <= self._mat.shape[0]:
            self.n = max(self.n, n)
            self._n_present = None
            return
        cap = max(n, int(self._mat.shape[0] * 1.5) + 1024)
        mat = np.zeros((cap, self.dim), np.float32)
        mat[: self._mat.shape[0]] = self._mat
        present = np.zeros(cap, bool)
        present[: self._present.shape[0]] = self._present
        self._mat, self._present = mat, present
        self.n = n
        self._n_present = None

    def set(self, idx: np.ndarray, vecs: np.ndarray) -> None:
        idx = np.asarray(idx, np.int64)
        if idx.size == 0:
            return
        self._grow(int(idx.max()) + 1)
        self._mat[idx] = vecs
        self._present[idx] = True
        self._sample = None
        self._n_present = None
        if self.ivf is not None:
            self.ivf.add(idx, self._mat[idx], self.matrix)
        elif self._ivf_saved is not None:
            self._ivf_saved[2].append(idx)  # assigned when the saved index is rebuilt

    def remove(self, idx) -> None:
        idx = np.asarray(idx, np.int64)
        idx = idx[idx < self._mat.shape[0]]
        self._mat[idx] = 0.0
        self._present[idx] = False
        self._sample = None
        self._n_present = None

    @property
    def matrix(self) -> np.ndarray:
        return self._mat[: self.n]

    @property
    def present(self) -> np.ndarray:
        return self._present[: self.n]

    def typical_similarity(self, q: np.ndarray, sample: int = 4096) -> float:
        """Median cosine of ``q`` over the corpus (an evenly spaced sample of at most ``sample``
        rows): the level of "unrelated" for this query, cheap at any corpus size."""
        if self._sample is None or self._sample.shape[0] > sample:
            rows = np.flatnonzero(self.present)
            if rows.shape[0] > sample:
                rows = rows[np.linspace(0, rows.shape[0] - 1, sample).astype(np.int64)]
            self._sample = self._mat[rows]  # a copy: one contiguous read per query
        if self._sample.shape[0] == 0:
            return 0.0
        return _median(self._sample @ np.asarray(q, np.float32))

    def similarity(self, q: np.ndarray) -> np.ndarray:
        """Cosine similarity of every row to ``q`` (rows are normalised)."""
        if self.n == 0:
            return np.zeros(0, np.float32)
        return self.matrix @ np.asarray(q, np.float32)

    def ann_top_k(self, q: np.ndarray, k: int, nprobe: int) -> tuple[np.ndarray, np.ndarray]:
        """Approximate top-k through the IVF index (trained on first use, retrained when the
        corpus has doubled since): scores only the ``nprobe`` nearest clusters."""
        if self.ivf is None and self._ivf_saved is not None and self.n <= 2 * self._ivf_trained_n:
            centroids, assign, late = self._ivf_saved
            self.ivf = IvfIndex(centroids, assign, self.matrix)
            if late:
                idx = np.unique(np.concatenate(late))
                self.ivf.add(idx, self._mat[idx], self.matrix)
        self._ivf_saved = None
        if self.ivf is None or self.n > 2 * self._ivf_trained_n:
            self.ivf = IvfIndex.train(self.matrix, self.present)
            self._ivf_trained_n = self.n
        cand, sims = self.ivf.search(q, nprobe, self.matrix, self.present)
        if cand.size == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        k = min(k, cand.shape[0])
        part = np.argpartition(-sims, k - 1)[:k]
        order = part[np.argsort(-sims[part], kind="stable")]
        return cand[order], sims[order]

    def ivf_state(self) -> tuple[np.ndarray, np.ndarray, int] | None:
        """(centroids, cluster of each row, rows at training) of a trained IVF index, for a snapshot."""
        if self.ivf is None:
            if self._ivf_saved is None or self._ivf_saved[2]:
                return None  # never trained, or restored with rows not yet assigned: nothing exact to save
            return self._ivf_saved[0], self._ivf_saved[1], self._ivf_trained_n
        return self.ivf.centroids, self.ivf.assignments(), self._ivf_trained_n

    def restore_ivf(self, centroids: np.ndarray, assign: np.ndarray, trained_n: int) -> None:
        """Take a trained IVF index from :meth:`ivf_state` (no k-means).  Its lists are grouped on the
        first approximate search, so an open that never searches (ingest, stats) does not pay for it."""
        self.ivf = None
        self._ivf_saved = (np.asarray(centroids, np.float32), np.asarray(assign, np.int32), [])
        self._ivf_trained_n = int(trained_n)

    def similarity_of(self, q: np.ndarray, nodes: np.ndarray) -> np.ndarray:
        """A full-length similarity array that is exact at ``nodes`` and 0 elsewhere (no full scan)."""
        out = np.zeros(self.n, np.float32)  # calloc: untouched pages cost nothing
        nodes = np.asarray(nodes, np.int64)
        nodes = nodes[(nodes >= 0) & (nodes < self.n)]
        out[nodes] = self._mat[nodes] @ np.asarray(q, np.float32)
        return out

    def top_k(self, sims: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Indices and scores of the k best present rows (argpartition, not a full sort)."""
        if sims.size == 0 or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        if self._n_present is None:
            self._n_present = int(np.count_nonzero(self.present))
        # every row present (the usual case): nothing to mask
        masked = sims if self._n_present == self.n else np.where(self.present, sims, -np.inf)
        k = min(k, self._n_present)
        if k == 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float32)
        part = np.argpartition(-masked, k - 1)[:k]
        order = part[np.argsort(-masked[part], kind="stable")]
        return order.astype(np.int64), masked[order]
