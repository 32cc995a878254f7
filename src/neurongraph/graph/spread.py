"""Spreading activation from sparse seeds (seed 000, ``Graph::spread``).

Semantics (documented because tests check them to the bit):

* ``act(seed) = seed_act``; a node's activation is the **maximum** over paths of at
  most ``max_depth`` hops from any seed of
  ``seed_act · Π_edges (weight · factuality · m_e) · depth_decay^hops``;
* ``m_e = alpha`` when the proposition layer is on (``query_types`` non-empty), the
  edge is typed (type id ≥ 0) and its type is not in ``query_types``; additionally
  ``× beta`` when, under the same conditions of a typed edge, its polarity is −1.
  Untyped edges, and every edge when ``query_types`` is empty, pass with ``m_e = 1``
  and no multiplication at all — so turning the layer off reproduces the untyped
  computation bit for bit;
* ``direction="both"`` also walks each edge backwards (same weight): a query that
  lands on an issue reaches the PR that ``fixes`` it;
* a contribution below ``min_act`` neither counts nor propagates (the prefix of a
  path carries at least as much activation as long as weights ≤ 1);
* with a ``frontier_cap`` M, at each hop only the M frontier nodes of highest activation
  propagate (ties: lower node index first); a frontier of at most M nodes is untouched, so
  where the cap is not reached the result is bit-identical to the uncapped one.  Why: the
  frontier of hop *k* grows with the degree to the power *k−1* (a hub seed's whole
  neighbourhood), and its weakest members rarely carry a best path;
* with a ``fan_ref`` F > 0, from hop 2 on a frontier node of fan-out *d* (its edges walked in this hop)
  passes on ``× min(1, (F/d)^fan_power)``.  Why: a file every change touches (``core.py``) is one hop
  from the seed that touched it and one more from thousands of unrelated changes; undamped, each of them
  gets the same activation and the hub's neighbourhood outranks strong text matches.  A seed's own edges
  are never damped (the query chose the seed), and ``fan_ref`` 0 (the function's default) changes nothing
  bit for bit;
* with a ``visible`` mask (search filters such as ``as_of``), an edge into a node outside
  it is not walked: such a node gets no activation and passes none on.  Without one
  nothing is masked at all (the computation is unchanged bit for bit).

The hop loop is level-synchronous (Jacobi): hop *k* propagates the values that
changed at hop *k−1*, so after *k* hops each node holds exactly its best path of at
most *k* edges.  Work per hop is proportional to the frontier's out-edges, never
to the corpus: activations and depths live in node-sized buffers the graph lends
(allocated once, only the reached entries are written and zeroed again), not in
per-node Python dictionaries.  Parent records per hop let the caller rebuild each
node's best path for explanations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import FRONTIER_CAP
from .arrays import Expansion, GraphArrays, mask_at

__all__ = ["SpreadResult", "spread", "edge_multipliers"]


@dataclass
class SpreadResult:
    """Activation reached per node and the per-hop record that rebuilds each node's best path."""

    nodes: np.ndarray  # int64 node indices with activation > 0
    act: np.ndarray  # float64 their activation
    depth: np.ndarray  # int32 hops of the best path (0 = seed)
    # per hop: (updated nodes, source node, edge id, edge weight, type, pol)
    hops: list[tuple[np.ndarray, ...]] = field(default_factory=list)
    _lookup: tuple | None = field(default=None, init=False, repr=False, compare=False)  # see _index

    def as_dict(self) -> dict[int, float]:
        return {int(n): float(a) for n, a in zip(self.nodes, self.act)}

    def path(self, node: int) -> list[tuple[int, int, int, float, int]]:
        """Best path to ``node`` as ``[(src, eid, dst, weight, type), ...]`` (empty for a seed)."""
        depth_of, at_hop, cols = self._index()
        d = depth_of.get(int(node))
        if d is None:
            return []
        out: list[tuple[int, int, int, float, int]] = []
        cur = int(node)
        # walk back: the value of `cur` that counted was set at hop d; its parent's at an earlier hop
        while d > 0:
            found = None
            for h in range(d, 0, -1):
                j = at_hop[h - 1].get(cur)
                if j is not None:
                    srcs, eids, ws, ts = cols[h - 1]
                    found = (h, srcs[j], eids[j], ws[j], ts[j])
                    break
            if found is None:
                break
            h, src, eid, w, t = found
            out.append((src, eid, cur, w, t))
            cur, d = src, h - 1  # the parent's value that counted stood after hop h-1
        out.reverse()
        return out

    def _index(self):
        """Lookups behind :meth:`path`, built on its first call: node → depth, and per hop node → its
        last record and the records' columns as Python numbers."""
        if self._lookup is None:
            nodes, depth = self.nodes.tolist(), self.depth.tolist()
            depth_of = dict(zip(reversed(nodes), reversed(depth)))  # a node listed twice: its first entry
            at_hop = [{n: j for j, n in enumerate(h[0].tolist())} for h in self.hops]  # ... its last record
            cols = [tuple(c.tolist() for c in h[1:5]) for h in self.hops]
            self._lookup = (depth_of, at_hop, cols)
        return self._lookup


def edge_multipliers(exp: Expansion, query_types, alpha: float, beta: float) -> np.ndarray | None:
    """Soft typed-edge attenuation, or ``None`` when the proposition layer is off."""
    if query_types is None or len(query_types) == 0:
        return None
    typed = exp.rtype >= 0
    off_type = typed & ~np.isin(exp.rtype, np.asarray(list(query_types), np.int32))
    neg = typed & (exp.pol < 0)
    if not off_type.any() and not neg.any():
        return None
    m = np.ones(len(exp), np.float64)
    m[off_type] *= alpha
    m[neg] *= beta
    return m


def fan_damping(exp: Expansion, n_front: int, fan_ref: float, fan_power: float) -> np.ndarray:
    """Per step, ``min(1, (fan_ref / d)^fan_power)`` where *d* is its source's number of steps in ``exp``."""
    deg = np.bincount(exp.src_pos, minlength=n_front).astype(np.float64)
    damp = np.minimum(1.0, (fan_ref / np.maximum(deg, 1.0)) ** fan_power)
    return damp[exp.src_pos]


def _best_steps(exp: Expansion, front_act, depth_decay, min_act, query_types, alpha, beta, visible, damp=None):
    """(node, contribution, step) of the best step into each node one hop reaches, nodes ascending (ties
    between equal contributions: the earlier step); ``None`` when no step counts."""
    contrib = front_act[exp.src_pos] * (exp.weight * exp.fact) * depth_decay
    if damp is not None:
        contrib = contrib * damp
    m = edge_multipliers(exp, query_types, alpha, beta)
    if m is not None:
        contrib = contrib * m
    keep = contrib >= min_act
    if visible is not None:
        keep &= mask_at(visible, exp.dst)
    if not keep.all():
        exp_idx = np.flatnonzero(keep)
        contrib = contrib[exp_idx]
    else:
        exp_idx = np.arange(contrib.shape[0])
    if contrib.size == 0:
        return None
    dst = exp.dst[exp_idx]
    # best contribution per destination: sort by (dst, -contrib), take first of each group
    order = np.lexsort((-contrib, dst))
    dst_s, c_s, e_s = dst[order], contrib[order], exp_idx[order]
    first = np.ones(dst_s.shape[0], bool)
    first[1:] = dst_s[1:] != dst_s[:-1]
    cand, cval, cedge = dst_s[first], c_s[first], e_s[first]
    return cand, cval, cedge


def spread(
    graph: GraphArrays,
    seeds,
    seed_acts,
    max_depth: int = 2,
    depth_decay: float = 0.5,
    min_act: float = 0.01,
    query_types=(),
    alpha: float = 1.0,
    beta: float = 1.0,
    direction: str = "out",
    reverse_weight: float = 1.0,
    visible: np.ndarray | None = None,
    frontier_cap: int | None = FRONTIER_CAP,
    fan_ref: float = 0.0,
    fan_power: float = 0.5,
) -> SpreadResult:
    """Max-product spreading activation (semantics in the module docstring); ``frontier_cap`` None or 0
    means no cap, ``fan_ref`` 0 no fan-out damping."""
    seeds = np.asarray(seeds, np.int64)
    seed_acts = np.asarray(seed_acts, np.float64)
    if seeds.shape != seed_acts.shape:
        raise ValueError("seeds and seed_acts must have the same length")
    if seeds.size and seeds.min() < 0:
        raise ValueError("seeds must be node indices (>= 0)")
    best: dict[int, float] = {}  # a repeated seed keeps its best activation, at its first place
    for s, a in zip(seeds.tolist(), seed_acts.tolist()):
        if a > best.get(s, 0.0):
            best[s] = a
    frontier = np.fromiter(best.keys(), np.int64, len(best))
    front_act = np.fromiter(best.values(), np.float64, len(best))
    # activation and depth per node live in two node-sized buffers the graph lends (zero = not reached:
    # every activation kept is > 0); ``reached`` lists the nodes in the order they were first reached
    bufs = graph.node_buffers(max(graph.n_nodes, int(frontier.max()) + 1 if frontier.size else 0))
    act, depth = bufs
    reached = [frontier]
    try:
        act[frontier] = front_act
        hops: list[tuple[np.ndarray, ...]] = []
        for hop in range(1, max_depth + 1):
            if frontier.size == 0:
                break
            if frontier_cap and frontier.size > frontier_cap:
                top = np.lexsort((frontier, -front_act))[:frontier_cap]
                top.sort()  # the kept nodes stay in frontier order (ties downstream resolve as uncapped)
                frontier, front_act = frontier[top], front_act[top]
            exp = graph.expand(frontier, direction=direction, reverse_weight=reverse_weight)
            if len(exp) == 0:
                break
            damp = fan_damping(exp, frontier.size, fan_ref, fan_power) if fan_ref > 0 and hop >= 2 else None
            best_in = _best_steps(exp, front_act, depth_decay, min_act, query_types, alpha, beta, visible, damp)
            if best_in is None:
                break
            cand, cval, cedge = best_in
            current = act[cand]
            better = cval > current
            if not better.any():
                break
            upd, uval, uedge = cand[better], cval[better], cedge[better]
            new = upd[current[better] == 0.0]
            act[upd] = uval
            depth[upd] = hop
            if new.size:
                reached.append(new)
            hops.append((upd, exp.src[uedge], exp.eid[uedge], exp.weight[uedge], exp.rtype[uedge], exp.pol[uedge]))
            frontier, front_act = upd, uval
        nodes = reached[0] if len(reached) == 1 else np.concatenate(reached)
        return SpreadResult(nodes=nodes, act=act[nodes], depth=depth[nodes], hops=hops)
    finally:
        for part in reached:
            act[part] = 0.0
            depth[part] = 0
        graph.return_buffers(bufs)
