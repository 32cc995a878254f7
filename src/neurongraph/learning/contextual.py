"""Contextual plasticity (issue 26): a learned edge weight, and a used node's priming, count only for
questions near the ones they were learned for.

What a used report teaches is stored with the question it answered: the weight-change ledger names the
trace, the trace names the query.  Per store change this module gathers every learned edge's
``(edge, credited node, learning query)`` rows and every use's ``(node, learning query)`` rows into flat
arrays grouped by learning query (a CSR over the rows of the query bank, learning/assoc.py).  Per search
the bank gives each learning query's association with this query; only the rows of the few *near*
learning queries are gathered (``np.repeat`` of their ranges), so the cost follows what is near, not
how much was learned.  No scan of the edge table, no Python loop over edges or uses.

The association of an edge (a node) with a query is ``max`` over its learning queries of their
association; a step crossing the edge towards its credited node gains ``plastic(now) × association``, a
node's priming is ``activation(now) × association``.  Unrelated questions (association 0) walk the base
weights and see no priming.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..graph.learned import EdgeOverlay, step_keys
from .decay import decayed

__all__ = ["EdgeContext", "UseContext", "Near", "near_rows"]


Near = tuple[np.ndarray, np.ndarray]  # (bank rows near this search, association of each > 0)


def near_rows(ptr: np.ndarray, near_queries: Near) -> tuple[np.ndarray, np.ndarray]:
    """The rows of every near learning query (``ptr``: CSR over bank rows) and each row's association."""
    near, assoc = near_queries
    if near.size == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    if near.size == 1:  # the common case: one near learning query, one slice
        first, end = int(ptr[near[0]]), int(ptr[near[0] + 1])
        return np.arange(first, end), np.full(end - first, assoc[0])
    lo = ptr[near]
    n = ptr[near + 1] - lo
    total = int(n.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0)
    start = np.cumsum(n) - n
    rows = np.repeat(lo - start, n) + np.arange(total)
    return rows, np.repeat(assoc, n)


def _csr(qrow: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    order = np.argsort(qrow, kind="stable")
    return order, np.searchsorted(qrow[order], np.arange(m + 1))


@dataclass(frozen=True)
class EdgeContext:
    """Learned edges and the questions they were learned for, grouped by learning query (bank row)."""

    key: np.ndarray  # int64 step key (graph/learned.py ``step_keys``) of each row
    back: np.ndarray  # bool: the credited node is the edge's source (the path walked it backwards)
    plastic: np.ndarray  # float64 the edge's stored plastic part
    at: np.ndarray  # float64 when it was set (NaN = never)
    ptr: np.ndarray  # int64 CSR over bank rows

    @classmethod
    def build(cls, rows, plastic: dict[int, tuple[float, float]], bank_row: dict[str, int]) -> EdgeContext:
        """From the store's ``learned_edge_queries`` rows and ``{eid: (plastic, plastic_at)}`` of live,
        non-dormant learned edges.  A co-use edge is credited towards its own destination (it exists both
        ways); a path or confirmation edge towards the used node."""
        e, t, d, q = [], [], [], []
        for eid, kind, node, dst, query in rows:
            if eid not in plastic or query not in bank_row:
                continue
            e.append(int(eid))
            t.append(int(dst if kind == "co_use" else node))
            d.append(int(dst))
            q.append(bank_row[query])
        qrow, toward = np.asarray(q, np.int64), np.asarray(t, np.int64)
        key = step_keys(np.asarray(e, np.int64), toward)
        # by learning query, then by step key; a step learned twice for one query is one row (it is one
        # edge towards one node: the same plastic part), so one near query's rows are already the overlay
        order = np.lexsort((key, qrow))
        first = np.ones(order.shape[0], bool)
        first[1:] = (qrow[order][1:] != qrow[order][:-1]) | (key[order][1:] != key[order][:-1])
        order = order[first]
        ptr = np.searchsorted(qrow[order], np.arange(len(bank_row) + 1))
        back = toward != np.asarray(d, np.int64)
        pa = np.array([plastic[x] for x in e], np.float64).reshape(-1, 2)
        return cls(key[order], back[order], pa[order, 0], pa[order, 1], ptr)

    def __len__(self) -> int:
        return int(self.key.shape[0])

    def overlay(self, assoc: Near, now: float, half_life: float) -> EdgeOverlay | None:
        """This query's additions (None when no learning query is near: the search walks the base graph)."""
        if len(self) == 0:
            return None
        rows, a = near_rows(self.ptr, assoc)
        if rows.size == 0:
            return None
        extra = decayed(self.plastic[rows], self.at[rows], now, half_life) * a
        keep = extra > 0
        if not keep.any():
            return None
        if not keep.all():
            rows, extra = rows[keep], extra[keep]
        key, back = self.key[rows], self.back[rows]
        if assoc[0].size == 1:  # one near learning query: its rows are sorted by key and unique
            return EdgeOverlay(key, extra, back)
        order = np.lexsort((extra, key))  # max over a step's learning queries, not their sum
        key, extra, back = key[order], extra[order], back[order]
        last = np.ones(key.shape[0], bool)
        last[:-1] = key[1:] != key[:-1]
        return EdgeOverlay(key[last], extra[last], back[last])


@dataclass(frozen=True)
class UseContext:
    """Used nodes and the questions they were used for, grouped by learning query; their activation."""

    node: np.ndarray  # int64 node index of each use row
    ptr: np.ndarray  # int64 CSR over bank rows
    act: np.ndarray  # float64 stored activation per node index (dense)
    act_at: np.ndarray  # float64 when it was set
    n_nodes: int  # 1 + the largest active node index

    @classmethod
    def build(cls, uses: list[tuple[int, str]], idx, act, at, bank_row: dict[str, int]) -> UseContext:
        kept = [(n, bank_row[q]) for n, q in uses if q in bank_row]
        node = np.array([n for n, _ in kept], np.int64)
        order, ptr = _csr(np.array([r for _, r in kept], np.int64), len(bank_row))
        n = int(idx.max()) + 1 if idx.size else 0
        dense_act, dense_at = np.zeros(n), np.zeros(n)
        dense_act[idx], dense_at[idx] = act, at
        return cls(node[order], ptr, dense_act, dense_at, n)

    def priming(
        self, assoc: Near, now: float, half_life: float, n_nodes: int, sparse_none: bool = False
    ) -> np.ndarray | None:
        """Decayed activation × association per node index (length ≥ ``n_nodes``; zeros when no used
        node is near this query, or None then with ``sparse_none``)."""
        rows, a = near_rows(self.ptr, assoc)
        if rows.size == 0 and sparse_none:
            return None
        out = np.zeros(max(n_nodes, self.n_nodes))
        if rows.size == 0:
            return out
        nodes = self.node[rows]
        if assoc[0].size == 1:  # one near learning query: one association for all its nodes
            out[nodes] = assoc[1][0] * decayed(self.act[nodes], self.act_at[nodes], now, half_life)
            return out
        np.maximum.at(out, nodes, a)  # max over a node's near learning queries
        # (a node repeated in ``nodes`` reads and writes the same value: no unique needed)
        out[nodes] = out[nodes] * decayed(self.act[nodes], self.act_at[nodes], now, half_life)
        return out
