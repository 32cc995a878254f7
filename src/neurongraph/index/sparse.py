"""Compressed sparse rows in numpy: the little of ``scipy.sparse`` the project runs, without scipy.

Why: scipy was a run-time dependency for three uses (Personalised PageRank's transition matrix, the fast
tier's text x word counts, the tag graph's reachability) and weighed 143 MB of a 464 MB fresh install
(``pip install 'neurongraph[embed]'``, docs/install.md).  These are the same operations in the same
order of arithmetic: entries sorted by (row, column), duplicates summed in input order, a product that
adds each row's terms one after another from zero (as scipy's ``csr_matvec`` does), so the results are
scipy's to the last bit for a matrix without three or more duplicates of one entry (tested).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Csr"]

_BLOCK = 1 << 16  # stored entries per block of a sparse x dense product (bounds the temporary)


@dataclass(frozen=True)
class Csr:
    """A ``shape`` matrix: row ``i`` holds ``data[indptr[i]:indptr[i+1]]`` at columns ``indices[...]``,
    columns ascending and distinct within a row."""

    data: np.ndarray
    indices: np.ndarray
    indptr: np.ndarray
    shape: tuple[int, int]

    @classmethod
    def from_coo(cls, data, rows, cols, shape: tuple[int, int]) -> Csr:
        """Entries ``(rows[k], cols[k]) = data[k]``, duplicates summed (as ``csr_matrix((data, (rows, cols)))``)."""
        data = np.asarray(data)
        rows, cols = np.asarray(rows, np.int64), np.asarray(cols, np.int64)
        n, m = int(shape[0]), int(shape[1])
        if rows.size and (rows.min() < 0 or rows.max() >= n or cols.min() < 0 or cols.max() >= m):
            raise ValueError("an entry lies outside the matrix")
        order = np.lexsort((cols, rows))  # stable: duplicates keep their input order
        r, c, d = rows[order], cols[order], data[order]
        if r.size:
            new = np.empty(r.size, bool)
            new[0] = True
            np.logical_or(r[1:] != r[:-1], c[1:] != c[:-1], out=new[1:])
            starts = np.flatnonzero(new)
            if starts.size < r.size:  # sum each run of duplicates, first to last
                d = np.add.reduceat(d, starts)
                r, c = r[starts], c[starts]
        indptr = np.zeros(n + 1, np.int64)
        np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
        return cls(d, c, indptr, (n, m))

    @property
    def nnz(self) -> int:
        return int(self.data.shape[0])

    def _rows(self) -> np.ndarray:
        return np.repeat(np.arange(self.shape[0], dtype=np.int64), np.diff(self.indptr))

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        """``self @ x`` for a vector (float64 sums, row by row) or a dense matrix (in ``x``'s dtype)."""
        x = np.asarray(x)
        dtype = np.result_type(self.data.dtype, x.dtype)
        if x.ndim == 1:
            terms = (self.data * x[self.indices]).astype(dtype, copy=False)
            if dtype == np.float64:  # bincount adds in float64, one term after another
                y = np.bincount(self._rows(), weights=terms, minlength=self.shape[0])
                return y.astype(dtype, copy=False)  # (int64 when there is no entry at all)
            y = np.zeros(self.shape[0], dtype)
            np.add.at(y, self._rows(), terms)
            return y
        out = np.zeros((self.shape[0], x.shape[1]), dtype)
        rows = self._rows()
        for s in range(0, self.nnz, _BLOCK):  # blocks of entries: each row's terms still added in order
            prod = self.data[s : s + _BLOCK, None].astype(dtype) * x[self.indices[s : s + _BLOCK]].astype(dtype)
            np.add.at(out, rows[s : s + _BLOCK], prod)  # one term after another (add.reduceat regroups them)
        return out

    def transpose(self) -> Csr:
        return Csr.from_coo(self.data, self.indices, self._rows(), (self.shape[1], self.shape[0]))

    @property
    def T(self) -> Csr:  # noqa: N802  (scipy's name)
        return self.transpose()

    def reachable(self, start: int) -> np.ndarray:
        """Rows reachable from ``start`` along stored entries (``start`` included), as a mask."""
        seen = np.zeros(self.shape[0], bool)
        seen[start] = True
        frontier = np.array([start], np.int64)
        while frontier.size:
            lo, hi = self.indptr[frontier], self.indptr[frontier + 1]
            at = np.repeat(lo - np.cumsum(np.concatenate([[0], (hi - lo)[:-1]])), hi - lo)  # each entry's row start
            nxt = np.unique(self.indices[at + np.arange(at.size)].astype(np.int64))
            nxt = nxt[~seen[nxt]]
            seen[nxt] = True
            frontier = nxt
        return seen
