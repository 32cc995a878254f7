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

from ..graph.learned import EdgeOverlay, step_keys
from .decay import decayed

__all__ = ["EdgeContext"]


@dataclass(frozen=True)
class EdgeContext:
    """Learned edges and the questions they were learned for, as arrays (rebuilt per store change).

    One row per (edge, credited node, learning query), sorted by step key so that a search's best
    association per learned step is one ``maximum.reduceat`` over the rows (no sort, no Python loop)."""

    pair_query: np.ndarray  # int64 row of ``queries``
    pair_plastic: np.ndarray  # float64 the edge's stored plastic part
    pair_at: np.ndarray  # float64 when it was set (NaN = never)
    starts: np.ndarray  # int64 first row of each step key
    keys: np.ndarray  # int64 the distinct step keys (graph/learned.py ``step_keys``), sorted
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
        key = step_keys(np.asarray(e, np.int64), np.asarray(t, np.int64))
        order = np.argsort(key, kind="stable")
        key = key[order]
        pa = np.array([plastic[x] for x in e], np.float64).reshape(-1, 2)[order]
        first = np.flatnonzero(np.r_[True, key[1:] != key[:-1]]) if key.size else np.zeros(0, np.int64)
        return cls(np.asarray(q, np.int64)[order], pa[:, 0], pa[:, 1], first, key[first], list(qrow))

    def __len__(self) -> int:
        return int(self.pair_query.shape[0])

    def overlay(
        self, qmat: np.ndarray, qvec: np.ndarray, tau: float, now: float, half_life: float
    ) -> EdgeOverlay | None:
        """This query's additions (None when no learning query is near: the search walks the base graph)."""
        if len(self) == 0 or qmat.shape[0] == 0:
            return None
        sims = np.clip((qmat @ np.asarray(qvec, np.float32) - tau) / max(1.0 - tau, 1e-9), 0.0, 1.0)
        assoc = sims[self.pair_query]
        if not assoc.any():
            return None
        extra = decayed(self.pair_plastic, self.pair_at, now, half_life) * assoc
        best = np.maximum.reduceat(extra, self.starts)  # max over a step's learning queries, not their sum
        keep = best > 0
        if not keep.any():
            return None
        return EdgeOverlay(self.keys[keep], best[keep])
