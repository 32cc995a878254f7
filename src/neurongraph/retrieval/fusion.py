"""Entry fusion of lexical and dense candidates into one entry score.

Both channels are put on a 0..1 scale before mixing: BM25 by its maximum over the
lexical candidates, cosine in two ways that answer two questions:

* ``entry`` - *which candidates are near-ties at the top?* (seed selection): cosine
  min-max over the dense top-k, so the k-th candidate scores 0 and contrast at the top
  is large;
* ``match`` - *how well does a node match the query at all?* (final ranking): cosine
  between the query's typical similarity over the corpus (0) and the best candidate (1).
  This scale exists for every node, so a node the graph reaches from outside the
  candidate lists keeps its query match instead of dropping to 0 (musique_train200:
  R@5 +0.005, R@10 +0.005, docs/benchmarks.md).

RRF is the rank-only alternative.  Output arrays are aligned on the union of candidates.

After the graph is mixed in (retrieval/pipeline.py ``_fuse_step``), :func:`keep_agreed` holds the node both
entry channels rank first in the top :data:`AGREED_TOP`: two independent readings of the question (its words,
its meaning) agreeing on one node is the near-exact match, and graph evidence may lift others beside it but
not push it out (issue 43: "why did the project move from A to B" lost the commits whose subjects say so).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import overload

import numpy as np

__all__ = ["AGREED_TOP", "EntryScores", "agreed_node", "fuse", "dense_match", "keep_agreed", "sorted_union"]

AGREED_TOP = 3  # the place the graph cannot push the entry channels' common first candidate below


def sorted_union(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``np.union1d(a, b)`` of 1-d arrays by one sort: numpy 2.4's ``unique`` takes a hash path that costs
    ~10 us on the few hundred candidates of a search, against ~2 us for sort-and-compare."""
    x = np.concatenate((a, b))
    x.sort()
    if x.shape[0] < 2:
        return x
    keep = np.empty(x.shape[0], bool)
    keep[0] = True
    np.not_equal(x[1:], x[:-1], out=keep[1:])
    return x[keep]


class EntryScores:
    """The lexical and dense scores and ranks of the entry candidates, aligned by node, before graph work."""

    def __init__(
        self,
        nodes: np.ndarray,
        lexical: np.ndarray,
        dense: np.ndarray,
        entry: np.ndarray,
        lex_rank: np.ndarray,
        dense_rank: np.ndarray,
        dense_abs: np.ndarray | None = None,
        match: np.ndarray | None = None,
    ):
        self.nodes = nodes  # int64 candidate node indices
        self.lexical = lexical  # normalised BM25 (0 where not a lexical candidate)
        self.dense = dense  # cosine, min-max over the dense candidates
        self.entry = entry  # fused on that scale: picks the seeds
        self.lex_rank = lex_rank  # 1-based rank in the lexical list, 0 = absent
        self.dense_rank = dense_rank
        self.dense_abs = dense if dense_abs is None else dense_abs  # cosine on the corpus-anchored scale
        self.match = entry if match is None else match  # fused on that scale: final ranking
        self.blind: np.ndarray | None = None  # bool mask: True where the lexical channel cannot see the node (fuse)


def _ranks(nodes: np.ndarray, ranked: np.ndarray) -> np.ndarray:
    """1-based position of each of ``nodes`` (sorted, unique) in ``ranked`` (its last one if repeated), 0 if absent."""
    out = np.zeros(nodes.shape[0], np.int64)
    if ranked.size and nodes.size:
        ranked = np.asarray(ranked, np.int64)
        where = np.searchsorted(nodes, ranked)
        if where.max() < nodes.shape[0] and (nodes[where] == ranked).all():
            # the usual case, every ranked node among ``nodes``: scatter the ranks; the read-back finds a
            # node listed twice (its slot holds one rank only), which takes the general path below
            rank = np.arange(1, ranked.shape[0] + 1)
            out[where] = rank
            if (out[where] == rank).all():
                return out
            out[:] = 0
        last = ranked.shape[0] - 1 - np.unique(ranked[::-1], return_index=True)[1]  # last occurrence of each
        where = np.searchsorted(nodes, ranked[last])
        ok = (where < nodes.shape[0]) & (nodes[np.minimum(where, nodes.shape[0] - 1)] == ranked[last])
        out[where[ok]] = last[ok] + 1
    return out


@overload
def dense_match(sims: float, best: float, floor: float) -> float: ...
@overload
def dense_match(sims: np.ndarray, best: float, floor: float) -> np.ndarray: ...
def dense_match(sims: np.ndarray | float, best: float, floor: float) -> np.ndarray | float:
    """Cosine on a 0..1 scale: ``floor`` (and below) is 0, ``best`` is 1 (of one similarity: a numpy float)."""
    span = best - floor if best > floor else 1.0
    return np.clip((np.asarray(sims, np.float64) - floor) / span, 0.0, 1.0)


def fuse(
    lex_nodes: np.ndarray,
    lex_scores: np.ndarray,
    dense_nodes: np.ndarray,
    dense_scores: np.ndarray,
    qsim: np.ndarray,
    *,
    method: str = "linear",
    lexical_weight: float = 0.5,
    dense_weight: float = 0.5,
    rrf_k: int = 60,
    dense_floor: float | None = None,
    lexical_blind: Callable[[np.ndarray], np.ndarray | None] | None = None,
) -> EntryScores:
    """``dense_floor`` is the query's typical similarity over the corpus (``VectorIndex.typical_similarity``);
    without it ``match`` equals ``entry``.  ``lexical_blind`` marks, of the candidate nodes, those the lexical
    channel cannot see (written in another script than the question, index/multilingual.py ``LanguageGate``):
    their fused scores are at least their dense ones, so a lexical match they cannot have costs them nothing
    and one they have (a number, a Latin name inside Japanese text) still counts.  Why not "blind only where
    BM25 did not match": a Japanese sentence that BM25 matched by one digit was then scored as a weak lexical
    match while its unmatched neighbours had their dense score alone (tatoeba_en_ja ngr R@5 0.973 -> 0.965)."""
    nodes = sorted_union(lex_nodes, dense_nodes).astype(np.int64)
    lex_rank = _ranks(nodes, lex_nodes)
    dense_rank = _ranks(nodes, dense_nodes)
    lexical = np.zeros(nodes.shape[0])
    if lex_scores.size and lex_scores.max() > 0:
        m = lex_rank > 0
        lexical[m] = lex_scores[lex_rank[m] - 1] / lex_scores.max()
    dense = np.zeros(nodes.shape[0])
    dense_abs = None
    if dense_scores.size and qsim.size:
        hi, lo = float(dense_scores[0]), float(dense_scores[-1])
        sims = qsim[nodes].astype(np.float64)
        dense = dense_match(sims, hi, lo) if hi > lo else (dense_rank > 0).astype(np.float64)
        if dense_floor is not None:
            dense_abs = dense_match(sims, hi, dense_floor)
    if method == "rrf":
        entry = np.where(lex_rank > 0, lexical_weight / (rrf_k + lex_rank), 0.0)
        entry += np.where(dense_rank > 0, dense_weight / (rrf_k + dense_rank), 0.0)
        if entry.size and entry.max() > 0:
            entry = entry / entry.max()
        return EntryScores(nodes, lexical, dense, entry, lex_rank, dense_rank)
    total = lexical_weight + dense_weight or 1.0
    entry = (lexical_weight * lexical + dense_weight * dense) / total
    match = None if dense_abs is None else (lexical_weight * lexical + dense_weight * dense_abs) / total
    blind = lexical_blind(nodes) if lexical_blind is not None and dense_weight > 0 else None
    if blind is not None and blind.any():
        np.maximum(entry, np.where(blind, dense, 0.0), out=entry)
        if match is not None and dense_abs is not None:
            np.maximum(match, np.where(blind, dense_abs, 0.0), out=match)
    out = EntryScores(nodes, lexical, dense, entry, lex_rank, dense_rank, dense_abs, match)
    out.blind = blind if blind is not None and blind.any() else None
    return out


def agreed_node(e: EntryScores) -> int | None:
    """The node both entry channels rank first (lexical and dense), None when they rank different ones first."""
    both = np.flatnonzero((e.lex_rank == 1) & (e.dense_rank == 1))
    return int(e.nodes[both[0]]) if both.size else None


def keep_agreed(final: np.ndarray, at: int, eligible: np.ndarray, top: int = AGREED_TOP) -> float:
    """Raise ``final[at]`` (in place) to just above the ``top``-th best positive score of the other ``eligible``
    nodes (those that may be hits) when it is not above it, so it ranks within ``top``; returns the floor it
    was raised from (0.0: already there, fewer than ``top`` others, or not eligible itself)."""
    if not eligible[at] or final[at] <= 0:
        return 0.0
    mask = eligible.copy()
    mask[at] = False
    others = final[mask]
    others = others[others > 0]
    if others.shape[0] < top:
        return 0.0
    floor = float(-np.partition(-others, top - 1)[top - 1])  # the top-th best of the others
    if final[at] > floor:
        return 0.0
    final[at] = np.nextafter(floor, np.inf)
    return floor
