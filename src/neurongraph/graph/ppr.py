"""Personalised PageRank from the seeds (HippoRAG-style), for comparison.

``r = (1 - d) · p + d · (Pᵀ r + p · Σ_dangling r)`` where ``p`` is the seed
activation vector normalised to sum 1 and ``P`` the row-normalised transition
matrix with entries ``weight · factuality (· typed multiplier)``.

* **Damping ``d = 0.5``** by default, the value HippoRAG uses: half the mass
  returns to the seeds every step, which keeps the walk local to the seeds (the
  point of a *personalised* walk over a retrieval graph) and converges in about
  ``log(tol)/log(d)`` ≈ 30 iterations.
* **Dangling nodes** (no out-edge, or only zero-weight ones) do not leak mass:
  what sits on them returns to the personalisation vector, so ``Σ r = 1`` holds
  at every iteration.
* ``undirected=True`` walks every edge both ways, as HippoRAG does.
* The normalised ``Pᵀ`` (CSR) is cached per graph keyed by ``graph.version`` and
  the options, so repeated queries only pay for the sparse mat-vecs.
* With a ``visible`` mask (search filters such as ``as_of``) the walk runs on the graph
  restricted to visible nodes: edges touching a hidden node are left out before the rows
  are normalised, so no mass reaches or leaves a hidden node (cached per mask digest).

Explanation: for the top nodes a best path from a seed is found by a BFS from the
seeds that may only enter the top nodes (plus seeds), at each level keeping the
parent that maximises ``r[parent] · weight · factuality``.  It is cheap (the pool
is small) and shows how mass *could* have flowed; it is not an exact attribution.
In undirected mode a hop may run against the stored edge direction; path triples
are in walk order ``(from, eid, to)``.
"""

from __future__ import annotations

import hashlib
import weakref
from dataclasses import dataclass, field

import numpy as np

from ..checks import check_number
from ..index.sparse import Csr
from .arrays import GraphArrays, mask_at
from .spread import edge_multipliers

__all__ = ["DEFAULT_DAMPING", "PprResult", "ppr", "transition_matrix"]

DEFAULT_DAMPING = 0.5
_CACHE_PER_GRAPH = 4

_cache: weakref.WeakKeyDictionary[GraphArrays, tuple[int, dict]] = weakref.WeakKeyDictionary()


@dataclass
class PprResult:
    """Personalised PageRank's scores and its top nodes, with the iterations it took to converge."""

    scores: np.ndarray  # float64 (n_nodes,), sums to 1
    nodes: np.ndarray  # int64 top nodes, best first
    top_scores: np.ndarray  # float64 their scores
    iterations: int
    converged: bool
    paths: dict[int, list[tuple[int, int, int]]] = field(default_factory=dict)

    def as_dict(self) -> dict[int, float]:
        return {int(n): float(s) for n, s in zip(self.nodes, self.top_scores)}

    def path(self, node: int) -> list[tuple[int, int, int]]:
        """Explanation path ``[(from, eid, to), ...]`` (empty for seeds / unexplained)."""
        return self.paths.get(int(node), [])


@dataclass(frozen=True)
class _Transition:
    mt: Csr  # Pᵀ: mt[j, i] = w_ij / out_i
    dangling: np.ndarray  # int64 nodes whose out-mass is zero


def _build(
    graph: GraphArrays, undirected: bool, query_types, alpha: float, beta: float, visible: np.ndarray | None = None
) -> _Transition:
    n = graph.n_nodes
    a = graph.all_edges()
    if visible is not None:
        ok = mask_at(visible, a.src) & mask_at(visible, a.dst)
        a = type(a)(*(getattr(a, f)[ok] for f in a.__dataclass_fields__))
    w = np.clip(a.weight * a.fact, 0.0, None)
    m = edge_multipliers(a, query_types, alpha, beta)
    if m is not None:
        w = w * m
    src, dst = a.src, a.dst
    if undirected:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    out = np.bincount(src, weights=w, minlength=n)
    o = out[src]
    val = np.divide(w, o, out=np.zeros_like(w), where=o > 0)  # w/out, not w·(1/out): subnormals
    mt = Csr.from_coo(val, dst, src, (n, n))  # parallel edges summed
    return _Transition(mt=mt, dangling=np.flatnonzero(out <= 0))


def transition_matrix(
    graph: GraphArrays,
    undirected: bool = False,
    query_types=(),
    alpha: float = 1.0,
    beta: float = 1.0,
    visible: np.ndarray | None = None,
) -> _Transition:
    """Cached normalised transition (rebuilt only when ``graph.version`` changes)."""
    qt = tuple(sorted(int(t) for t in query_types)) if query_types is not None else ()
    key: tuple = (bool(undirected), qt, float(alpha) if qt else 1.0, float(beta) if qt else 1.0)
    if visible is not None:
        vis = np.asarray(visible, bool)
        key += (vis.shape[0], hashlib.blake2b(np.packbits(vis).tobytes(), digest_size=16).hexdigest())
    version, entries = _cache.get(graph, (None, {}))
    if version != graph.version:
        entries = {}
    t = entries.get(key)
    if t is None:
        t = _build(graph, undirected, qt, alpha, beta, visible)
        if len(entries) >= _CACHE_PER_GRAPH:
            entries.pop(next(iter(entries)))
        entries[key] = t
    _cache[graph] = (graph.version, entries)
    return t


def ppr(
    graph: GraphArrays,
    seeds,
    seed_acts=None,
    damping: float = DEFAULT_DAMPING,
    tol: float = 1e-8,
    max_iter: int = 100,
    undirected: bool = False,
    query_types=(),
    alpha: float = 1.0,
    beta: float = 1.0,
    top_k: int = 20,
    explain_depth: int = 4,
    visible: np.ndarray | None = None,
) -> PprResult:
    """Power iteration until the L1 change drops below ``tol`` or ``max_iter`` steps."""
    check_number("damping", damping, lo=0, hi=1, hi_open=True)
    n = graph.n_nodes
    seeds = np.asarray(seeds, np.int64).ravel()
    acts = np.ones(seeds.shape[0]) if seed_acts is None else np.asarray(seed_acts, np.float64).ravel()
    if acts.shape != seeds.shape:
        raise ValueError("seeds and seed_acts must have the same length")
    if seeds.size and (seeds.min() < 0 or seeds.max() >= n):
        raise ValueError("seed index outside the graph")
    p = np.bincount(seeds, weights=np.clip(acts, 0.0, None), minlength=n).astype(np.float64)
    total = p.sum()
    if total <= 0:
        return PprResult(np.zeros(n), np.zeros(0, np.int64), np.zeros(0), 0, True)
    p /= total
    t = transition_matrix(graph, undirected, query_types, alpha, beta, visible)
    r = p.copy()
    pidx = np.flatnonzero(p)  # the personalisation is sparse: add it in place
    pval = p[pidx]
    converged, it = False, 0
    for it in range(1, max_iter + 1):  # noqa: B007 — `it` is reported after the loop
        leak = r[t.dangling].sum()
        nxt = t.mt @ r
        nxt *= damping
        nxt[pidx] += (damping * leak + (1.0 - damping)) * pval
        r -= nxt
        err = np.abs(r, out=r).sum()
        r = nxt
        if err < tol:
            converged = True
            break
    k = min(int(top_k), n)
    top = np.argpartition(-r, k - 1)[:k] if 0 < k < n else np.arange(n)[:k]
    top = top[r[top] > 0]
    top = top[np.lexsort((top, -r[top]))]
    paths = _explain(graph, r, np.unique(seeds[acts > 0]), top, explain_depth, undirected)
    return PprResult(r, top, r[top], it, converged, paths)


def _explain(
    graph: GraphArrays, r: np.ndarray, seeds: np.ndarray, targets: np.ndarray, max_depth: int, undirected: bool
) -> dict[int, list[tuple[int, int, int]]]:
    """BFS from the seeds inside ``seeds ∪ targets``; see the module docstring."""
    pool = np.union1d(seeds, targets)
    parent: dict[int, tuple[int, int]] = {}
    reached = set(int(s) for s in seeds)
    frontier = seeds
    for _ in range(max_depth):
        if frontier.size == 0 or len(reached) == pool.size:
            break
        exps = [graph.expand(frontier)]
        if undirected:
            exps.append(graph.expand(frontier, reverse=True))
        parts: list[tuple[np.ndarray, ...]] = []
        for e in exps:
            cur = frontier[e.src_pos]
            # the far end of the edge, whichever way `expand(reverse=True)` orients it
            nxt = np.where(e.src == cur, e.dst, e.src)
            parts.append((cur, nxt, e.eid, r[cur] * e.weight * e.fact))
        frm, to, eid, val = (np.concatenate(col) for col in zip(*parts))
        ok = np.isin(to, pool) & ~np.isin(to, np.fromiter(reached, np.int64, len(reached)))
        frm, to, eid, val = frm[ok], to[ok], eid[ok], val[ok]
        if to.size == 0:
            break
        o = np.lexsort((-val, to))
        first = np.ones(o.shape[0], bool)
        first[1:] = to[o][1:] != to[o][:-1]
        o = o[first]
        for f, tnode, edge in zip(frm[o].tolist(), to[o].tolist(), eid[o].tolist()):
            parent[tnode] = (f, edge)
            reached.add(tnode)
        frontier = to[o]
    out: dict[int, list[tuple[int, int, int]]] = {}
    for tnode in targets.tolist():
        path: list[tuple[int, int, int]] = []
        cur = tnode
        while cur in parent:
            f, edge = parent[cur]
            path.append((f, edge, cur))
            cur = f
        out[tnode] = path[::-1]
    return out
