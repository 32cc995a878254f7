"""How near a search is to each learning query: its vector AND its distinctive terms (issue 26).

Why both: on real histories a later fix is often worded like an earlier one ("fix memory leak in X" after
"fix memory leak in Y"), so the vectors are near (cos ≥ 0.7) while the answer is another change; what
tells them apart is the rare word, the identifier or path the two questions do not share.  So a learning
query counts for a search in proportion to the clipped cosine, *gated* by how much of the learning
query's specificity the search repeats: the share of its terms' IDF weight (corpus document frequency)
found among the search's terms.  Below ``min_overlap`` the learning query does not count at all.

One bank per store change holds every distinct learning query (priming's and the learned edges'): their
vectors as one matrix and their terms as a sparse matrix of normalised IDF weights, kept both by row and
by term.  With the term gate on (the default), a learning query can only count for a search that shares
one of its terms, so a search first gathers the postings of its own few terms (the overlap of every
learning query that shares any), keeps those at or above the gate, and takes the cosine of those rows
only: a product over a handful of rows instead of the whole ``m × d`` matrix, which the search's own
corpus scan has just pushed out of the CPU cache (that product was most of the learned state's cost per
search: docs/learning.md).  Without the gate it is one matrix-vector product.  No loop over learning
queries, no scan of the corpus.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..index.bm25 import LexicalIndex
from ..index.tokenize import query_terms
from ..index.vectors import one_blas_thread

__all__ = ["QueryBank", "Idf", "lexical_idf"]

Idf = Callable[[Sequence[str]], "np.ndarray | None"]  # terms -> IDF weight of each (> 0); None: no index yet


@dataclass(frozen=True)
class QueryBank:
    """Distinct learning queries: row ``i`` is ``queries[i]``."""

    queries: list[str]
    row: dict[str, int]
    vecs: np.ndarray  # (m, d) float32 unit vectors
    vocab: dict[str, int]  # term -> column id
    tptr: np.ndarray  # int64 CSR over rows: the terms of row i are tcol[tptr[i]:tptr[i + 1]]
    tcol: np.ndarray  # int64 term column
    tw: np.ndarray  # float64 the term's share of its row's IDF weight (a row's shares sum to 1)
    cptr: np.ndarray  # int64 CSR over term columns: the rows holding term c are crow[cptr[c]:cptr[c + 1]]
    crow: np.ndarray  # int64 row of each posting
    cw: np.ndarray  # float64 the posting's share of its row's weight (``tw`` reordered by term)
    weighted: bool = True  # False: built while no IDF was available (uniform term weights)

    @classmethod
    def build(cls, queries: Sequence[str], vecs: np.ndarray, idf: Idf | None) -> QueryBank:
        qs = list(queries)
        per = [query_terms(q) for q in qs]
        vocab: dict[str, int] = {}
        for ts in per:
            for t in ts:
                vocab.setdefault(t, len(vocab))
        words = list(vocab)
        got = idf(words) if idf is not None else None
        w = np.ones(len(words)) if got is None else np.asarray(got, np.float64)
        n = np.array([len(ts) for ts in per], np.int64)
        rows = np.repeat(np.arange(len(qs)), n)
        cols = np.fromiter((vocab[t] for ts in per for t in ts), np.int64, count=rows.shape[0])
        val = w[cols] if cols.size else np.zeros(0)
        tot = np.bincount(rows, val, minlength=len(qs))
        val = val / np.maximum(tot[rows], 1e-12)
        ptr = np.r_[0, np.cumsum(n)].astype(np.int64)
        by_term = np.argsort(cols, kind="stable")
        cptr = np.searchsorted(cols[by_term], np.arange(len(words) + 1)).astype(np.int64)
        vec = np.ascontiguousarray(vecs, np.float32)
        row = {q: i for i, q in enumerate(qs)}
        return cls(qs, row, vec, vocab, ptr, cols, val, cptr, rows[by_term], val[by_term], got is not None)

    def __len__(self) -> int:
        return len(self.queries)

    def overlap(self, rows: np.ndarray, query: str) -> np.ndarray:
        """For learning queries ``rows``: the share of their term weight that ``query``'s terms repeat."""
        mine = [c for c in (self.vocab.get(t) for t in query_terms(query)) if c is not None]
        if not mine or rows.size == 0:
            return np.zeros(rows.shape[0])
        has = np.zeros(len(self.vocab), bool)
        has[mine] = True
        if rows.shape[0] == 1:  # the common case: one near learning query
            lo, hi = int(self.tptr[rows[0]]), int(self.tptr[rows[0] + 1])
            return np.array([float(self.tw[lo:hi] @ has[self.tcol[lo:hi]])])
        lo = self.tptr[rows]
        n = self.tptr[rows + 1] - lo
        at = np.repeat(lo - (np.cumsum(n) - n), n) + np.arange(int(n.sum()))
        own = np.repeat(np.arange(rows.shape[0]), n)
        return np.bincount(own, self.tw[at] * has[self.tcol[at]], minlength=rows.shape[0])

    def gated(self, query: str, min_overlap: float) -> np.ndarray:
        """The learning queries (sorted rows) whose term overlap with ``query`` is at least ``min_overlap``
        (> 0): only rows sharing one of its terms can reach it, so only their postings are read.  (A row
        holds each of its terms once, ``query_terms`` being distinct, so a one-term search's postings are
        already each row's overlap.)"""
        cptr, vocab = self.cptr, self.vocab
        spans = [(int(cptr[c]), int(cptr[c + 1])) for c in map(vocab.get, query_terms(query)) if c is not None]
        if not spans:
            return np.zeros(0, np.int64)
        if len(spans) == 1:
            lo, hi = spans[0]
            return self.crow[lo:hi][self.cw[lo:hi] >= min_overlap]
        rows = np.concatenate([self.crow[lo:hi] for lo, hi in spans])
        total = np.bincount(rows, np.concatenate([self.cw[lo:hi] for lo, hi in spans]), minlength=len(self))
        return np.flatnonzero(total >= min_overlap)

    def near(
        self, qvec: np.ndarray, query: str | None, tau: float, min_overlap: float, power: float = 1.0
    ) -> tuple[np.ndarray, np.ndarray]:
        """The learning queries this search is near and its association with each, ``clip((cos − τ)/(1 −
        τ), 0, 1)`` > 0, leaving out those whose term overlap is below ``min_overlap`` (``query`` None or
        ``min_overlap`` 0: the vector alone).  Sparse: most learning queries are not near."""
        if len(self) == 0:
            return np.zeros(0, np.int64), np.zeros(0)
        q = np.asarray(qvec, np.float32)
        if query is not None and min_overlap > 0:
            rows = self.gated(query, min_overlap)
            if rows.size == 0:
                return rows, np.zeros(0)
            cos = self.vecs[rows] @ q
            if rows.shape[0] <= _FEW:  # a few gated rows (the common case): the clip in Python, same arithmetic
                scale, cut = max(1.0 - tau, 1e-9), float(np.float32(tau))  # (the float32 test ``cos > tau``)
                got = [(r, min((c - tau) / scale, 1.0)) for r, c in zip(rows.tolist(), cos.tolist()) if c > cut]
                a = np.array([x for _, x in got])
                return np.array([r for r, _ in got], np.int64), (a if power == 1.0 else a**power)
        else:
            with one_blas_thread(len(self)):  # a small product, memory-bound after the search's own scan
                cos = self.vecs @ q
            rows = np.arange(len(self))
        keep = cos > tau
        rows, cos = rows[keep], cos[keep].astype(np.float64)
        a = np.minimum((cos - tau) / max(1.0 - tau, 1e-9), 1.0)
        return rows, (a if power == 1.0 else a**power)


_FEW = 16  # gated rows clipped in Python up to this many (numpy's per-call cost dominates such tiny arrays)


def lexical_idf(index: Callable[[], LexicalIndex]) -> Idf:
    """``log(1 + N / (1 + df))`` of each term from the engine's in-memory BM25 index (``index()``: the
    store's own tokens, so stems match); 1 for a term that is not one token; None while the index is not
    built (it is only read here, never built: a one-shot command keeps asking the store)."""

    def idf(terms: Sequence[str]) -> np.ndarray | None:
        lexical = index()
        ix = lexical.index
        if ix is None or ix.n_rows == 0:
            return None
        out = np.ones(len(terms))
        for k, t in enumerate(terms):
            tok = lexical.phrases([t])
            if tok is None:
                continue
            tid = ix.vocab.get(tok[0], -1)
            out[k] = float(np.log1p(ix.n_rows / (1.0 + (ix.df(tid) if tid >= 0 else 0))))
        return out

    return idf
