"""Graph channels behind one contract: seeds in, a graph score and a best path per node out.

The pipeline does not care which algorithm produced the signal; each channel
maps its algorithm's own result (spread activation, beam path score, PageRank
mass, strategy selection) to :class:`GraphSignal`, so scores, ranks, paths and
traces look the same whichever channel a query picks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..channels import Beam, Channel, NoGraph, Ppr, Spread
from ..config import SearchConfig
from ..graph.arrays import GraphArrays
from ..graph.beam import beam_search
from ..graph.ppr import ppr
from ..graph.spread import spread
from ..graph.strategies import EdgeSource, GraphEdges, Strategy, traverse

__all__ = ["ChannelInput", "GraphSignal", "PathStep", "run_channel"]


@dataclass
class PathStep:
    """One edge of an explanation path (store edge id, weight, relation)."""

    src: int
    dst: int
    eid: int  # store edge id, -1 for a metadata link
    weight: float
    rel: int | str  # predicate type id, or a label for metadata links


@dataclass
class GraphSignal:
    """What a graph channel returns: scored nodes and a way to rebuild each one's best path."""

    nodes: np.ndarray  # int64
    score: np.ndarray  # float64, aligned with nodes
    explain: Callable[[int], list[PathStep]]  # node -> its best path, seed first


@dataclass
class ChannelInput:
    """What every graph channel gets: the graph, the seeds and the query's signals."""

    cfg: SearchConfig
    graph: GraphArrays
    seeds: np.ndarray
    seed_acts: np.ndarray
    qsim: np.ndarray  # query similarity per node (may be shorter than the graph, or empty)
    vectors: np.ndarray | None  # L2-normalised rows (strategies' diversity)
    qtypes: list[int]  # predicate type ids the query is about ([-2]: named types that do not exist)
    extra_sources: Sequence[EdgeSource] = ()
    visible: np.ndarray | None = None

    def padded_qsim(self) -> np.ndarray:
        """``qsim`` over every node of the graph (0 past its end)."""
        n, qsim = self.graph.n_nodes, self.qsim
        return np.zeros(n) if qsim.size == 0 else np.pad(qsim.astype(np.float64), (0, max(0, n - qsim.shape[0])))


def _hops_from_triples(graph: GraphArrays, triples: list[tuple[int, int, int]]) -> list[PathStep]:
    if not triples:
        return []
    w, t = graph.edge_attrs([e for _, e, _ in triples])
    return [PathStep(int(s), int(d), int(e), float(wi), int(ti)) for (s, e, d), wi, ti in zip(triples, w, t)]


def _spread(ch: Spread, x: ChannelInput) -> GraphSignal:
    r = spread(
        x.graph,
        x.seeds,
        x.seed_acts,
        max_depth=ch.max_depth,
        depth_decay=ch.depth_decay,
        min_act=ch.min_act,
        query_types=x.qtypes,
        alpha=x.cfg.alpha,
        beta=x.cfg.beta,
        direction=ch.direction,
        reverse_weight=ch.reverse_weight,
        visible=x.visible,
        frontier_cap=x.cfg.frontier_cap,
        fan_ref=ch.fan_ref,
        fan_power=ch.fan_power,
    )
    return GraphSignal(r.nodes, r.act, explain=lambda node: [PathStep(s, d, e, w, t) for s, e, d, w, t in r.path(node)])


def _beam(ch: Beam, x: ChannelInput) -> GraphSignal:
    graph = x.graph
    r = beam_search(
        graph,
        x.seeds[x.seeds < graph.n_nodes],
        x.padded_qsim(),
        max_depth=ch.max_depth,
        beam_width=ch.width,
        min_sim=ch.min_sim,
        score_mode=ch.mode,
        query_types=x.qtypes,
        alpha=x.cfg.alpha,
        beta=x.cfg.beta,
        visible=x.visible,
    )
    return GraphSignal(
        r.nodes, np.clip(r.score, 0.0, None), explain=lambda node: _hops_from_triples(graph, r.path(node))
    )


def _ppr(ch: Ppr, x: ChannelInput) -> GraphSignal:
    graph = x.graph
    ok = x.seeds < graph.n_nodes
    r = ppr(
        graph,
        x.seeds[ok],
        x.seed_acts[ok],
        damping=ch.damping,
        undirected=True,
        query_types=x.qtypes,
        alpha=x.cfg.alpha,
        beta=x.cfg.beta,
        top_k=max(x.cfg.limit * 4, 50),
        visible=x.visible,
    )
    top = r.top_scores / r.top_scores.max() if r.top_scores.size and r.top_scores.max() > 0 else r.top_scores
    return GraphSignal(r.nodes, top, explain=lambda node: _hops_from_triples(graph, r.path(node)))


def _strategy(ch: Strategy, x: ChannelInput) -> GraphSignal:
    """A traversal strategy from the sparse seeds, over graph edges both ways and any extra sources."""
    graph = x.graph
    strat = ch if ch.select_k is not None else ch.with_(select_k=x.cfg.limit)  # by name: the search's limit
    sources = [GraphEdges(graph, direction="both"), *x.extra_sources]
    r = traverse(strat, x.seeds, x.seed_acts, x.padded_qsim(), x.vectors, sources, visible=x.visible)
    by_node = {h.node: h for h in r.hits}
    # a strategy's own scores are not comparable across strategies (similarity, MMR, custom):
    # its selection order is.  The k-th of n selected nodes gets (n - k) / n.
    k = len(r.hits)
    scores = (k - np.arange(k, dtype=np.float64)) / max(k, 1)

    def explain(node: int) -> list[PathStep]:
        hops: list[PathStep] = []
        h = by_node.get(node)
        while h is not None and h.edge is not None and len(hops) < 64:
            e = h.edge
            if e.source == "graph":
                w, t = graph.edge_attrs([e.key])
                hops.append(PathStep(e.src, h.node, int(e.key), float(w[0]), int(t[0])))
            else:
                hops.append(PathStep(e.src, h.node, -1, 1.0, f"{e.source}={e.key}"))
            h = by_node.get(e.src)
        return hops[::-1]

    return GraphSignal(r.nodes, scores, explain=explain)


def run_channel(x: ChannelInput) -> GraphSignal | None:
    """Run the configured graph channel (``x.cfg.channel``); ``None`` when there is nothing to do.
    ``x.visible`` (search filters): nodes outside it are not in the graph for this search, whatever the
    channel."""
    ch: Channel = x.cfg.channel
    if isinstance(ch, NoGraph) or x.seeds.size == 0:
        return None
    if isinstance(ch, Strategy):  # walks metadata links too, so it runs on a graph without edges
        return _strategy(ch, x)
    if not x.graph.n_edges:
        return None
    if isinstance(ch, Spread):
        return _spread(ch, x)
    if isinstance(ch, Beam):
        return _beam(ch, x)
    if isinstance(ch, Ppr):
        return _ppr(ch, x)
    raise TypeError(f"no runner for graph channel {type(ch).__name__}")
