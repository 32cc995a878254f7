"""Entry fusion of lexical and dense candidates into one entry score.

Both channels are put on a 0..1 scale over their own candidate list before
mixing: BM25 by its maximum, cosine by min-max over the dense top-k (so the
k-th dense candidate scores 0 and the best 1).  RRF is the rank-only
alternative.  Output arrays are aligned on the union of candidates.
"""
from __future__ import annotations

import numpy as np

__all__ = ["EntryScores", "fuse"]


class EntryScores:
    def __init__(self, nodes, lexical, dense, entry, lex_rank, dense_rank):
        self.nodes = nodes          # int64 candidate node indices
        self.lexical = lexical      # normalised BM25 (0 where not a lexical candidate)
        self.dense = dense          # normalised cosine
        self.entry = entry          # fused
        self.lex_rank = lex_rank    # 1-based rank in the lexical list, 0 = absent
        self.dense_rank = dense_rank


def _ranks(nodes: np.ndarray, ranked: np.ndarray) -> np.ndarray:
    pos = {int(n): i + 1 for i, n in enumerate(ranked)}
    return np.fromiter((pos.get(int(n), 0) for n in nodes), np.int64, nodes.shape[0])


def fuse(lex_nodes, lex_scores, dense_nodes, dense_scores, qsim, *, method="linear",
         lexical_weight=0.5, dense_weight=0.5, rrf_k=60) -> EntryScores:
    nodes = np.union1d(lex_nodes, dense_nodes).astype(np.int64)
    lex_rank = _ranks(nodes, lex_nodes)
    dense_rank = _ranks(nodes, dense_nodes)
    lexical = np.zeros(nodes.shape[0])
    if lex_scores.size and lex_scores.max() > 0:
        m = lex_rank > 0
        lexical[m] = lex_scores[lex_rank[m] - 1] / lex_scores.max()
    dense = np.zeros(nodes.shape[0])
    if dense_scores.size and qsim.size:
        hi, lo = float(dense_scores[0]), float(dense_scores[-1])
        span = hi - lo if hi > lo else 1.0
        dense = np.clip((qsim[nodes].astype(np.float64) - lo) / span, 0.0, 1.0)
        if hi <= lo:
            dense = (dense_rank > 0).astype(np.float64)
    if method == "rrf":
        entry = np.where(lex_rank > 0, lexical_weight / (rrf_k + lex_rank), 0.0)
        entry += np.where(dense_rank > 0, dense_weight / (rrf_k + dense_rank), 0.0)
        if entry.size and entry.max() > 0:
            entry = entry / entry.max()
    else:
        total = lexical_weight + dense_weight or 1.0
        entry = (lexical_weight * lexical + dense_weight * dense) / total
    return EntryScores(nodes, lexical, dense, entry, lex_rank, dense_rank)
