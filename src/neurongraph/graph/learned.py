"""A read-only view of the graph with one search's learned weights added (contextual plasticity, issue 26).

Why a view and not an edit of the arrays: a learned weight belongs to the questions it was learned for,
so it differs per search.  The shared CSR arrays keep the base weights; a search whose query is near
some learning queries walks this view, which adds ``extra`` to a step only when it crosses a learned
edge *towards* the node that edge was credited to (``toward``: the used source).  A walk leaving that
source, or reaching any other node over the same edge, sees the base weight, so a reinforced path can
never carry more activation into a hub than before.  A search with nothing near learns nothing: it gets
the graph itself, bit for bit.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import Expansion, GraphArrays

__all__ = ["EdgeOverlay", "LearnedView", "step_keys"]


SHIFT = 31  # a step's key: eid << SHIFT | reached node (node indices stay below 2**31)
_SMALL = 32  # an overlay (or an expansion's candidate steps) this small is read through a dict


def step_keys(eid: np.ndarray, node: np.ndarray) -> np.ndarray:
    """The overlay key of steps over stored edges ``eid`` reaching ``node``."""
    return (np.asarray(eid, np.int64) << SHIFT) | np.asarray(node, np.int64)


@dataclass(frozen=True)
class EdgeOverlay:
    """Per-search additions to edge weights: ``extra[k]`` on a step with key ``key[k]`` (``step_keys``:
    the stored edge and the node the step reaches).  ``key`` is sorted and unique.  ``back[k]``: the step
    runs against the stored edge (it reaches the edge's source), so a "both" walk scales its addition like
    its weight (``reverse_weight``)."""

    key: np.ndarray  # int64, sorted
    extra: np.ndarray  # float64, > 0
    back: np.ndarray | None = None  # bool per key; None = every key forwards

    @classmethod
    def of(cls, eid, toward, extra, back=None) -> EdgeOverlay:
        """From unsorted rows (tests, callers without pre-sorted keys); a repeated key keeps its largest."""
        key = step_keys(eid, toward)
        extra = np.asarray(extra, np.float64)
        bk = np.zeros(key.shape[0], bool) if back is None else np.asarray(back, bool)
        order = np.lexsort((extra, key))
        key, extra, bk = key[order], extra[order], bk[order]
        last = np.r_[key[1:] != key[:-1], True] if key.size else np.zeros(0, bool)
        return cls(key[last], extra[last], bk[last] if back is not None else None)

    def __len__(self) -> int:
        return int(self.key.shape[0])

    def toward(self) -> np.ndarray:
        """The nodes learned steps reach (with repeats)."""
        return self.key & ((1 << SHIFT) - 1)

    def added(self, eid: np.ndarray, dst: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray | None] | None:
        """Rows of the steps ``(eid, dst)`` that are learned and what each gains, or None when none is."""
        if eid.shape[0] == 0 or self.key.shape[0] == 0:
            return None
        want = step_keys(eid, dst)
        i = np.minimum(np.searchsorted(self.key, want), self.key.shape[0] - 1)
        hit = self.key[i] == want
        if not hit.any():
            return None
        rows = np.flatnonzero(hit)
        extra = self.extra[i[rows]]
        return rows, extra, (self.back[i[rows]] if self.back is not None else None)


class LearnedView(GraphArrays):
    """``graph`` with ``overlay`` added to the weights its walks read; everything else is the graph's.

    Never mutated: it lives for one search.  Writes go to the graph itself (``set_weights`` etc. raise)."""

    def __init__(self, graph: GraphArrays, overlay: EdgeOverlay):  # no super().__init__: every read delegates
        self._g = graph
        self.overlay = overlay
        self.n_nodes = graph.n_nodes
        self.version = graph.version
        toward = overlay.toward()
        # the nodes a learned step reaches: most steps of a walk reach none, and one gather over this mask
        # tells (the step keys are computed only for the few that do)
        self._toward = np.zeros(max(graph.n_nodes, int(toward.max(initial=-1)) + 1), bool)
        self._toward[toward] = True
        # a search is near a few learning queries, so its overlay holds a few steps: then a dict answers
        # the few candidate steps of an expansion in Python, cheaper than a dozen numpy calls on tiny arrays
        self._lut: dict[int, tuple[float, bool]] | None = None
        if len(overlay) <= _SMALL:
            back = overlay.back.tolist() if overlay.back is not None else [False] * len(overlay)
            self._lut = dict(zip(overlay.key.tolist(), zip(overlay.extra.tolist(), back)))

    def __getattr__(self, name):  # anything not overridden reads the wrapped graph's state
        return getattr(self._g, name)

    def _add(self, exp: Expansion, reverse_weight: float = 1.0) -> Expansion:
        """``exp`` with the learned additions; in a "both" walk a backward step's addition is scaled like its
        weight (``reverse_weight``, which the graph already applied to the base part)."""
        if exp.dst.shape[0] == 0:
            return exp
        near = np.flatnonzero(self._toward[exp.dst])
        if near.size == 0:
            return exp
        if self._lut is not None and near.size <= _SMALL:
            lut, rows, add = self._lut, [], []
            for r, e, d in zip(near.tolist(), exp.eid[near].tolist(), exp.dst[near].tolist()):
                got = lut.get((e << SHIFT) | d)
                if got is not None:
                    rows.append(r)
                    add.append(got[0] * reverse_weight if got[1] else got[0])
            if not rows:
                return exp
            weight = exp.weight.copy()
            weight[rows] += add
        else:
            found = self.overlay.added(exp.eid[near], exp.dst[near])
            if found is None:
                return exp
            hit, extra, back = found
            if back is not None and reverse_weight != 1.0:
                extra = np.where(back, extra * reverse_weight, extra)
            weight = exp.weight.copy()
            weight[near[hit]] += extra
        return Expansion(exp.src_pos, exp.src, exp.dst, weight, exp.fact, exp.rtype, exp.pol, exp.eid)

    def expand(self, frontier, reverse: bool = False, direction: str | None = None, reverse_weight: float = 1.0):
        exp = self._g.expand(frontier, reverse, direction, reverse_weight)
        return self._add(exp, reverse_weight if direction == "both" else 1.0)

    def all_edges(self) -> Expansion:
        return self._add(self._g.all_edges())

    def edge_attrs(self, eids):
        return self._g.edge_attrs(eids)

    @property
    def n_edges(self) -> int:
        return self._g.n_edges

    def node_buffers(self, n: int):
        return self._g.node_buffers(n)

    def return_buffers(self, bufs) -> None:
        self._g.return_buffers(bufs)

    def _read_only(self, *args, **kwargs):
        raise TypeError("LearnedView is read-only: edit the graph it wraps")

    upsert_edges = set_weights = remove_edges = compact = ensure_nodes = _read_only
