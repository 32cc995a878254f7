"""Path beam search from sparse seeds (seed 000, ``Graph::beam_search``).

Unlike :func:`spread`, which keeps only each node's best activation, a beam keeps
whole paths and scores them by the query similarity of the nodes on them:

* ``mean`` — mean ``qsim`` over the path's nodes (seed included); long paths are
  not penalised, but a weak node riding on a strong path is over-rated;
* ``min``  — the weakest node ("a chain is as strong as its weakest link"); drops
  paths that detour through an off-topic passage;
* ``last`` — only the arrival node's ``qsim``; the path is merely the way there.

**One beam per seed**, merged at the end: a single shared beam would fill its
width with the strongest seed's neighbourhood and starve the sparse seeds whose
diversity is the point of pattern separation.  ``per_seed=False`` gives the shared
beam for ablations.

Rules: a node with ``qsim < min_sim`` is never entered (its path ends before it;
seeds are always kept as starts, they were chosen by the entry channel); a path
never revisits one of its own nodes; within one depth level each beam keeps only
its best path to any given node (a second, worse path to the same node would waste
a beam slot).  A node's score is the best score of any *kept* path ending at it.

With a ``visible`` mask (search filters), a node outside it is never entered.

Typed edges: with ``query_types`` non-empty every path score is multiplied by the
product of the :func:`edge_multipliers` of its edges (``alpha`` for an off-type
typed edge, ``beta`` for a negative one).  For a negative base score the product
divides instead, so an attenuated edge can only ever *lower* a path's score.  With
``query_types`` empty nothing is multiplied.

Work is level-synchronous: one ``graph.expand`` call per depth for all beams of
all seeds, then a lexsort groups candidates by beam to cut each to its width —
cost is O(seeds · width · degree) per level, independent of corpus size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..channels import BEAM_MODES
from ..checks import check_choice, check_int
from .arrays import GraphArrays, mask_at
from .spread import edge_multipliers

__all__ = ["BeamResult", "SCORE_MODES", "beam_search"]

SCORE_MODES = BEAM_MODES  # path scores: mean / min / last of per-node query similarity


@dataclass
class BeamResult:
    """Best kept path per reached node, best score first."""

    nodes: np.ndarray  # int64 node indices
    score: np.ndarray  # float64 score of the node's best path
    depth: np.ndarray  # int32 hops of that path (0 = seed)
    seed: np.ndarray  # int64 seed whose beam found it
    path_nodes: np.ndarray  # int64 (N, max_depth + 1): path nodes, -1 padded
    path_eids: np.ndarray  # int64 (N, max_depth): edge ids along it, -1 padded

    def as_dict(self) -> dict[int, float]:
        return {int(n): float(s) for n, s in zip(self.nodes, self.score)}

    def _row(self, node: int) -> int | None:
        where = np.flatnonzero(self.nodes == node)
        return int(where[0]) if where.size else None

    def node_path(self, node: int) -> list[int]:
        """Nodes of the best path to ``node``, seed first (empty if not reached)."""
        r = self._row(node)
        if r is None:
            return []
        return [int(x) for x in self.path_nodes[r, : int(self.depth[r]) + 1]]

    def path(self, node: int) -> list[tuple[int, int, int]]:
        """Best path as ``[(src, eid, dst), ...]`` like :meth:`SpreadResult.path`."""
        r = self._row(node)
        if r is None:
            return []
        d = int(self.depth[r])
        pn, pe = self.path_nodes[r], self.path_eids[r]
        return [(int(pn[i]), int(pe[i]), int(pn[i + 1])) for i in range(d)]


def _attenuate(base: np.ndarray, mult: np.ndarray) -> np.ndarray:
    """Apply typed multipliers so that they can only lower a score (see module doc)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        neg = np.where(mult > 0, base / np.where(mult > 0, mult, 1.0), -np.inf)
    return np.where(base >= 0, base * mult, neg)


def _first_of_groups(*keys_sorted: np.ndarray) -> np.ndarray:
    """Mask of the first row of each run of equal keys (rows already sorted)."""
    n = keys_sorted[0].shape[0]
    first = np.ones(n, bool)
    if n > 1:
        diff = np.zeros(n - 1, bool)
        for k in keys_sorted:
            diff |= k[1:] != k[:-1]
        first[1:] = diff
    return first


def _unique_in_order(a: np.ndarray) -> np.ndarray:
    _, first = np.unique(a, return_index=True)
    return a[np.sort(first)]


def beam_search(
    graph: GraphArrays,
    seeds,
    qsim,
    max_depth: int = 3,
    beam_width: int = 4,
    min_sim: float = 0.0,
    score_mode: str = "mean",
    query_types=(),
    alpha: float = 1.0,
    beta: float = 1.0,
    per_seed: bool = True,
    visible: np.ndarray | None = None,
) -> BeamResult:
    """Beam search over paths from each seed; see the module docstring for semantics."""
    check_choice("score_mode", score_mode, SCORE_MODES)
    check_int("beam_width", beam_width, lo=1, hi=2**62)
    qsim = np.asarray(qsim, np.float64)
    seeds = _unique_in_order(np.asarray(seeds, np.int64).ravel())
    if seeds.size and (seeds.min() < 0 or seeds.max() >= qsim.shape[0]):
        raise ValueError("seed index outside qsim")
    D = max(int(max_depth), 0)
    typed = query_types is not None and len(query_types) > 0

    # live beam state, one row per path
    owner = np.arange(seeds.shape[0], dtype=np.int64) if per_seed else np.zeros(seeds.shape[0], np.int64)
    pn = np.full((seeds.shape[0], D + 1), -1, np.int64)
    pn[:, 0] = seeds
    pe = np.full((seeds.shape[0], D), -1, np.int64)
    ssum = qsim[seeds].copy()
    smin = qsim[seeds].copy()
    mult = np.ones(seeds.shape[0])
    score = qsim[seeds].copy()
    rec = [(owner.copy(), pn.copy(), pe.copy(), score.copy(), np.zeros(seeds.shape[0], np.int32))]

    for d in range(1, D + 1):
        if pn.shape[0] == 0:
            break
        # nodes past graph.n_nodes have no edges; keep them out of `expand`, whose
        # src_pos would otherwise shift (arrays.py drops them before numbering)
        live = np.flatnonzero(pn[:, d - 1] < graph.n_nodes)
        exp = graph.expand(pn[live, d - 1])
        if len(exp) == 0:
            break
        src_pos = live[exp.src_pos]
        dst = exp.dst
        ok = dst < qsim.shape[0]
        q = np.where(ok, qsim[np.where(ok, dst, 0)], -np.inf)
        ok &= q >= min_sim
        if visible is not None:
            ok &= mask_at(visible, dst)
        ok &= ~(pn[src_pos, :d] == dst[:, None]).any(axis=1)  # no cycles
        idx = np.flatnonzero(ok)
        if idx.size == 0:
            break
        p, dst, q = src_pos[idx], dst[idx], q[idx]
        n_sum, n_min = ssum[p] + q, np.minimum(smin[p], q)
        n_mult = mult[p]
        m = edge_multipliers(exp, query_types, alpha, beta) if typed else None
        if m is not None:
            n_mult = n_mult * m[idx]
        if score_mode == "mean":
            base = n_sum / (d + 1)
        elif score_mode == "min":
            base = n_min
        else:
            base = q
        sc = _attenuate(base, n_mult) if typed else base
        own = owner[p]
        # best path per (beam, node); lexsort is stable so ties keep expansion order
        o = np.lexsort((-sc, dst, own))
        o = o[_first_of_groups(own[o], dst[o])]
        # cut each beam to its width: rank inside the beam after sorting by score
        o = o[np.lexsort((dst[o], -sc[o], own[o]))]
        own_s = own[o]
        first = _first_of_groups(own_s)
        ar = np.arange(o.shape[0])
        rank = ar - np.maximum.accumulate(np.where(first, ar, 0))
        keep = o[rank < beam_width]

        kp = p[keep]
        pn = pn[kp]
        pn[:, d] = dst[keep]
        pe = pe[kp]
        pe[:, d - 1] = exp.eid[idx[keep]]
        owner, ssum, smin, mult, score = own[keep], n_sum[keep], n_min[keep], n_mult[keep], sc[keep]
        rec.append((owner, pn, pe, score, np.full(keep.shape[0], d, np.int32)))

    return _merge(rec, D)


def _merge(rec, D: int) -> BeamResult:
    """A node's result is its best kept path over all beams and depths."""
    pn = np.concatenate([r[1] for r in rec])
    pe = np.concatenate([r[2] for r in rec])
    sc = np.concatenate([r[3] for r in rec])
    dep = np.concatenate([r[4] for r in rec])
    node = pn[np.arange(pn.shape[0]), dep] if pn.shape[0] else np.zeros(0, np.int64)
    o = np.lexsort((dep, -sc, node))  # per node: best score, then shallowest
    o = o[_first_of_groups(node[o])]
    o = o[np.lexsort((node[o], -sc[o]))]  # output: best first
    seed_of = pn[o, 0] if o.size else np.zeros(0, np.int64)
    return BeamResult(
        nodes=node[o],
        score=sc[o],
        depth=dep[o],
        seed=seed_of,
        path_nodes=pn[o] if o.size else np.zeros((0, D + 1), np.int64),
        path_eids=pe[o] if o.size else np.zeros((0, D), np.int64),
    )
