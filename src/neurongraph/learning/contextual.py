"""Contextual plasticity (issue 26): a learned edge weight counts only for questions near the ones it was
learned for.

What a used report teaches is stored with the question it answered: the weight-change ledger names the
trace, the trace names the query.  Per store change this module gathers every learned edge's
``(edge, credited node, learning query)`` rows into flat arrays and the distinct learning queries into one
small matrix; per search it is one matrix-vector product (``m`` learning queries × the embedding
dimension), a clipped cosine per query, and a gather over the rows whose query is near.  No scan of the
edge table, no Python loop over edges.

The association of an edge with a query is ``max`` over its learning queries of
``clip((cos(q, q_learned) − τ) / (1 − τ), 0, 1)`` (τ = ``priming_min_query_sim``, the rule priming
already uses), and a step crossing it towards its credited node gains ``plastic(now) × association``.
Unrelated questions (association 0) walk the base weights.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph.learned import EdgeOverlay
from .decay import decayed

__all__ = ["EdgeContext"]


@dataclass(frozen=True)
class EdgeContext:
    """Learned edges and the questions they were learned for, as arrays (rebuilt per store change)."""

    pair_eid: np.ndarray  # int64, one row per (edge, credited node, learning query)
    pair_toward: np.ndarray  # int64 node index a step must reach to gain
    pair_query: np.ndarray  # int64 row of ``queries``
    pair_plastic: np.ndarray  # float64 the edge's stored plastic part
    pair_at: np.ndarray  # float64 when it was set (NaN = never)
    queries: list[str]  # distinct learning queries (rows of the matrix the caller embeds)

    @classmethod
    def build(cls, rows, plastic: dict[int, tuple[float, float]]) -> EdgeContext:
        """From the store's ``learned_edge_queries`` rows and ``{eid: (plastic, plastic_at)}`` of live,
        non-dormant learned edges.  A co-use edge is credited towards its own destination (it exists both
        ways); a path or confirmation edge towards the used node."""
        qrow: dict[str, int] = {}
        e, t, q = [], [], []
        for eid, kind, node, dst, query in rows:
            if eid not in plastic:
                continue
            e.append(int(eid))
            t.append(int(dst if kind == "co_use" else node))
            q.append(qrow.setdefault(query, len(qrow)))
        eid_a = np.asarray(e, np.int64)
        pa = np.array([plastic[x] for x in e], np.float64).reshape(-1, 2)
        return cls(eid_a, np.asarray(t, np.int64), np.asarray(q, np.int64), pa[:, 0], pa[:, 1], list(qrow))

    def __len__(self) -> int:
        return int(self.pair_eid.shape[0])

    def overlay(
        self, qmat: np.ndarray, qvec: np.ndarray, tau: float, now: float, half_life: float, n_nodes: int
    ) -> EdgeOverlay | None:
        """This query's additions (None when no learning query is near: the search walks the base graph)."""
        if len(self) == 0 or qmat.shape[0] == 0:
            return None
        sims = np.clip((qmat @ np.asarray(qvec, np.float32) - tau) / max(1.0 - tau, 1e-9), 0.0, 1.0)
        assoc = sims[self.pair_query]
        near = np.flatnonzero(assoc > 0)
        if near.size == 0:
            return None
        extra = decayed(self.pair_plastic[near], self.pair_at[near], now, half_life) * assoc[near]
        n = max(int(n_nodes), int(self.pair_toward[near].max()) + 1)
        key = self.pair_eid[near] * n + self.pair_toward[near]
        uniq, inv = np.unique(key, return_inverse=True)
        best = np.zeros(uniq.shape[0])
        np.maximum.at(best, inv, extra)  # max over an edge's learning queries, not their sum
        keep = best > 0
        if not keep.any():
            return None
        uniq, best = uniq[keep], best[keep]
        return EdgeOverlay(uniq // n, uniq % n, best, n)
