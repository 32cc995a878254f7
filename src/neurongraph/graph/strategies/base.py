"""Traversal strategies (seed 002): the shared machinery.

A strategy only decides *which* discovered nodes to select (return) and which to
traverse (expand).  Expansion itself — edge sources, ``adjacent_k``, ``max_depth``,
``max_traverse``, de-duplication and provenance — lives in :class:`Tracker`, so no
strategy can forget to enforce a cap.  Conventions:

* start nodes are the top ``start_k`` of the given entry scores, depth 0;
* a node at depth ``max_depth`` is never expanded, so no hit is deeper;
* every expanded node counts once against ``max_traverse``, neighbours or not;
* a node is discovered once, by the first edge that reaches it (BFS order: the
  frontier's order, then edge source order, then neighbour rank by ``qsim``);
* ``visible`` (search filters such as ``as_of``): a node outside the mask is never
  discovered, so it is neither selected nor expanded (it starts out as "seen").
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol, runtime_checkable

import numpy as np

from ...channels import Channel
from ...checks import check_int
from ...errors import InvalidArgument

__all__ = ["Adjacent", "EdgeRef", "EdgeSource", "Visit", "Strategy", "Tracker", "TraversalResult", "traverse"]


@dataclass(frozen=True)
class EdgeRef:
    """The edge that first reached a node: graph edge id, or metadata value."""

    src: int
    source: str  # "graph" or "field_out->field_in"
    key: Any  # store edge id (graph) or the shared value (metadata)


@dataclass(frozen=True)
class Visit:
    """A node a traversal strategy selected, with the edge that first reached it (its path back)."""

    node: int
    score: float  # the strategy's score (qsim for Eager, MMR score, score_fn)
    sim: float  # query similarity qsim[node]
    depth: int  # 0 = start node
    edge: EdgeRef | None = None  # None for start nodes


@dataclass
class TraversalResult:
    """A traversal's selected nodes in order and the nodes it expanded (its cost)."""

    hits: list[Visit]
    expanded: np.ndarray  # int64 nodes expanded, in order

    @property
    def nodes(self) -> np.ndarray:
        return np.fromiter((h.node for h in self.hits), np.int64, len(self.hits))

    @property
    def n_expanded(self) -> int:
        return int(self.expanded.shape[0])

    def as_dict(self) -> dict[int, float]:
        return {h.node: h.score for h in self.hits}


@dataclass(frozen=True)
class Adjacent:
    """Neighbours of a batch of nodes from one edge source (one row per link)."""

    src_pos: np.ndarray  # int64 position in the expanded batch
    dst: np.ndarray  # int64 neighbour node
    spec: np.ndarray  # int64 which spec of the source produced the link
    key: np.ndarray  # int64 edge id / value id, decoded by ``source.edge_ref``


@runtime_checkable
class EdgeSource(Protocol):
    """Where a traversal gets neighbours from (graph edges or shared metadata values): one method to implement."""

    def neighbors(self, nodes: np.ndarray, qsim: np.ndarray, k: int, seen: np.ndarray) -> Adjacent:
        """Top-``k`` by ``qsim`` unseen neighbours per node and per spec, sorted by
        (src_pos, spec, rank)."""

    def edge_ref(self, src: int, spec: int, key: int) -> EdgeRef: ...


@dataclass(frozen=True)
class Strategy(Channel):
    """Common knobs; ``with_`` returns a modified copy (the default is never mutated).

    A strategy is also a search's graph channel (``SearchConfig(channel=Mmr(...))``); its ``kind`` is
    its lower-case name.  ``select_k=None`` means "the search's ``limit``": that is the strategy
    ``channel="eager"`` (by name) selects, and only a search can run it."""

    needs_all_similarities: ClassVar[bool] = True  # every visited node is scored by query similarity
    is_strategy: ClassVar[bool] = True
    select_k: int | None = 5
    start_k: int = 4
    adjacent_k: int = 10
    max_depth: int | None = None
    max_traverse: int | None = None

    def __post_init__(self) -> None:
        for name in ("select_k", "start_k", "adjacent_k", "max_depth", "max_traverse"):
            v = getattr(self, name)
            if v is not None:
                check_int(name, v, hi=2**62)

    @classmethod
    def for_search(cls) -> Strategy:
        return cls(select_k=None)

    def legacy_params(self) -> dict[str, Any]:
        """The flat form of traces: ``strategy`` is None for the by-name default, else its knobs."""
        if self == type(self).for_search():
            return {"strategy": None}
        knobs = {k: v for k, v in dataclasses.asdict(self).items() if not callable(v)}
        return {"strategy": {"kind": type(self).__name__, **knobs}}

    def run(self, tracker: Tracker, start: np.ndarray) -> list[Visit]:
        raise NotImplementedError


class Tracker:
    """Discovery state of one traversal; the only place that expands nodes."""

    def __init__(
        self,
        strategy: Strategy,
        qsim: np.ndarray,
        vectors,
        sources: Sequence[EdgeSource],
        visible: np.ndarray | None = None,
    ):
        if strategy.select_k is None:
            raise InvalidArgument(
                "select_k=None (the search's limit) is only meaningful inside a search; give a number"
            )
        self.strategy = strategy
        self.select_k: int = strategy.select_k
        self.qsim = qsim
        self.vectors = vectors
        self.sources = list(sources)
        self.seen = np.zeros(qsim.shape[0], bool)  # calloc'd: no O(n) work per query
        self.masked = visible is not None
        if visible is not None:  # hidden nodes count as already seen: no edge ever discovers them
            n = min(qsim.shape[0], visible.shape[0])
            self.seen[:n] = ~np.asarray(visible[:n], bool)
            self.seen[n:] = True
        self.depth: dict[int, int] = {}
        self.edge: dict[int, EdgeRef] = {}
        self.expanded: list[int] = []
        mt = strategy.max_traverse
        self.budget = np.inf if mt is None else int(mt)

    def start(self, nodes, scores) -> np.ndarray:
        nodes = np.asarray(nodes, np.int64).ravel()
        scores = np.asarray(scores, np.float64).ravel()
        o = np.argsort(-scores, kind="stable")
        nodes = nodes[o]
        _, first = np.unique(nodes, return_index=True)
        nodes = nodes[np.sort(first)]
        if self.masked:
            nodes = nodes[~self.seen[nodes]]  # a hidden node never starts a walk either
        nodes = nodes[: self.strategy.start_k]
        self.seen[nodes] = True
        for n in nodes.tolist():
            self.depth[n] = 0
        return nodes

    def hit(self, node: int, score: float) -> Visit:
        return Visit(node, float(score), float(self.qsim[node]), self.depth[node], self.edge.get(node))

    def expand(self, nodes) -> np.ndarray:
        """Expand what the caps allow of ``nodes``; return newly discovered nodes in order."""
        nodes = np.asarray(nodes, np.int64).ravel()
        md = self.strategy.max_depth
        if md is not None:
            nodes = nodes[np.fromiter((self.depth[n] < md for n in nodes.tolist()), bool, nodes.shape[0])]
        if self.budget < nodes.shape[0]:
            nodes = nodes[: int(self.budget)]
        if nodes.size == 0:
            return nodes
        self.budget -= nodes.shape[0]
        self.expanded.extend(nodes.tolist())
        parts = []
        for si, src in enumerate(self.sources):
            a = src.neighbors(nodes, self.qsim, self.strategy.adjacent_k, self.seen)
            if a.dst.size:
                parts.append((np.full(a.dst.shape[0], si, np.int64), a))
        if not parts:
            return np.zeros(0, np.int64)
        sidx = np.concatenate([p[0] for p in parts])
        pos = np.concatenate([p[1].src_pos for p in parts])
        dst = np.concatenate([p[1].dst for p in parts])
        spec = np.concatenate([p[1].spec for p in parts])
        key = np.concatenate([p[1].key for p in parts])
        o = np.argsort(pos, kind="stable")  # frontier order, then source order
        sidx, pos, dst, spec, key = sidx[o], pos[o], dst[o], spec[o], key[o]
        _, first = np.unique(dst, return_index=True)
        first = np.sort(first)  # first reach wins
        new = dst[first]
        self.seen[new] = True
        for j, n in zip(first.tolist(), new.tolist()):
            parent = int(nodes[pos[j]])
            self.depth[n] = self.depth[parent] + 1
            self.edge[n] = self.sources[sidx[j]].edge_ref(parent, int(spec[j]), int(key[j]))
        return new


def traverse(
    strategy: Strategy,
    start_nodes,
    start_scores,
    qsim,
    vectors=None,
    edge_sources: Sequence[EdgeSource] | EdgeSource = (),
    visible: np.ndarray | None = None,
) -> TraversalResult:
    """Run ``strategy`` from the entry nodes over the given edge sources (never entering a node
    outside ``visible``, when given)."""
    qsim = np.asarray(qsim, np.float64)
    sources: Sequence[EdgeSource] = (
        [edge_sources] if isinstance(edge_sources, EdgeSource) else edge_sources  # one source or several
    )
    t = Tracker(strategy, qsim, vectors, sources, visible)
    hits = strategy.run(t, t.start(start_nodes, start_scores))
    return TraversalResult(hits=hits, expanded=np.asarray(t.expanded, np.int64))
