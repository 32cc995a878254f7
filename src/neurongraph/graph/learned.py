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

import dataclasses
from dataclasses import dataclass

import numpy as np

from .arrays import Expansion, GraphArrays

__all__ = ["EdgeOverlay", "LearnedView", "step_keys"]


SHIFT = 31  # a step's key: eid << SHIFT | reached node (node indices stay below 2**31)


def step_keys(eid: np.ndarray, node: np.ndarray) -> np.ndarray:
    """The overlay key of steps over stored edges ``eid`` reaching ``node``."""
    return (np.asarray(eid, np.int64) << SHIFT) | np.asarray(node, np.int64)


@dataclass(frozen=True)
class EdgeOverlay:
    """Per-search additions to edge weights: ``extra[k]`` on a step with key ``key[k]`` (``step_keys``:
    the stored edge and the node the step reaches).  ``key`` is sorted and unique."""

    key: np.ndarray  # int64, sorted
    extra: np.ndarray  # float64, > 0

    @classmethod
    def of(cls, eid, toward, extra) -> EdgeOverlay:
        """From unsorted rows (tests, callers without pre-sorted keys); a repeated key keeps its largest."""
        key = step_keys(eid, toward)
        extra = np.asarray(extra, np.float64)
        order = np.lexsort((extra, key))
        key, extra = key[order], extra[order]
        last = np.r_[key[1:] != key[:-1], True] if key.size else np.zeros(0, bool)
        return cls(key[last], extra[last])

    def __len__(self) -> int:
        return int(self.key.shape[0])

    def added(self, eid: np.ndarray, dst: np.ndarray) -> np.ndarray | None:
        """What each step ``(eid, dst)`` gains (0 for most), or None when no step is learned."""
        if eid.shape[0] == 0 or self.key.shape[0] == 0:
            return None
        want = step_keys(eid, dst)
        i = np.minimum(np.searchsorted(self.key, want), self.key.shape[0] - 1)
        hit = self.key[i] == want
        if not hit.any():
            return None
        return np.where(hit, self.extra[i], 0.0)


class LearnedView(GraphArrays):
    """``graph`` with ``overlay`` added to the weights its walks read; everything else is the graph's.

    Never mutated: it lives for one search.  Writes go to the graph itself (``set_weights`` etc. raise)."""

    def __init__(self, graph: GraphArrays, overlay: EdgeOverlay):  # no super().__init__: every read delegates
        self._g = graph
        self.overlay = overlay
        self.n_nodes = graph.n_nodes
        self.version = graph.version

    def __getattr__(self, name):  # anything not overridden reads the wrapped graph's state
        return getattr(self._g, name)

    def _add(self, exp: Expansion, scale: float = 1.0) -> Expansion:
        extra = self.overlay.added(exp.eid, exp.dst)
        if extra is None:
            return exp
        return dataclasses.replace(exp, weight=exp.weight + extra * scale)

    def expand(self, frontier, reverse: bool = False, direction: str | None = None, reverse_weight: float = 1.0):
        if direction != "both":
            return self._add(self._g.expand(frontier, reverse, direction, reverse_weight))
        # the two halves apart, so a backward step's addition is scaled like its weight; same order as the graph's
        fwd = self._add(self._g.expand(frontier, direction="out"))
        back = self._add(self._g.expand(frontier, direction="in"))
        if reverse_weight != 1.0:
            back = dataclasses.replace(back, weight=back.weight * reverse_weight)
        if len(back) == 0:
            return fwd
        if len(fwd) == 0:
            return back
        return Expansion(
            *(np.concatenate([getattr(fwd, f.name), getattr(back, f.name)]) for f in dataclasses.fields(Expansion))
        )

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
