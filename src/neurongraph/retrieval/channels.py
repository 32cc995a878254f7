"""Graph channels behind one contract: seeds in, a graph score and a best path per node out.

The pipeline does not care which algorithm produced the signal; each channel
maps its algorithm's own result (spread activation, beam path score, PageRank
mass, strategy selection) to :class:`GraphSignal`, so scores, ranks, paths and
traces look the same whichever channel a query picks.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import SearchConfig
from ..graph.arrays import GraphArrays
from ..graph.beam import beam_search
from ..graph.ppr import ppr
from ..graph.spread import spread
from ..graph.strategies import Eager, GraphEdges, Mmr, Scored, Strategy, traverse

__all__ = ["GraphSignal", "Hop", "run_channel", "STRATEGIES"]

STRATEGIES = {"eager": Eager, "mmr": Mmr, "scored": Scored}


@dataclass
class Hop:
    src: int
    dst: int
    eid: int  # store edge id, -1 for a metadata link
    weight: float
    rel: int | str  # predicate type id, or a label for metadata links


@dataclass
class GraphSignal:
    nodes: np.ndarray  # int64
    score: np.ndarray  # float64, aligned with nodes
    paths: dict[int, list[Hop]] = field(default_factory=dict)  # filled for requested nodes only
    explain: object = None  # callable(node) -> list[Hop]


def _hops_from_triples(graph: GraphArrays, triples) -> list[Hop]:
    if not triples:
        return []
    w, t = graph.edge_attrs([e for _, e, _ in triples])
    return [Hop(int(s), int(d), int(e), float(wi), int(ti)) for (s, e, d), wi, ti in zip(triples, w, t)]


def run_channel(
    cfg: SearchConfig,
    graph: GraphArrays,
    seeds: np.ndarray,
    seed_acts: np.ndarray,
    qsim: np.ndarray,
    vectors,
    entry_nodes: np.ndarray,
    entry_scores: np.ndarray,
    qtypes: list[int],
    extra_sources=(),
    visible: np.ndarray | None = None,
) -> GraphSignal | None:
    """Run the configured graph channel; ``None`` when there is nothing to do.  ``visible`` (search
    filters): nodes outside it are not in the graph for this search, whatever the channel."""
    ch = cfg.channel
    if ch == "none" or seeds.size == 0:
        return None
    n = graph.n_nodes
    if ch == "spread":
        if not graph.n_edges:
            return None
        r = spread(
            graph,
            seeds,
            seed_acts,
            max_depth=cfg.max_depth,
            depth_decay=cfg.depth_decay,
            min_act=cfg.min_act,
            query_types=qtypes,
            alpha=cfg.alpha,
            beta=cfg.beta,
            direction=cfg.direction,
            reverse_weight=cfg.reverse_weight,
            visible=visible,
        )
        return GraphSignal(r.nodes, r.act, explain=lambda node: [Hop(s, d, e, w, t) for s, e, d, w, t in r.path(node)])
    qs = np.zeros(n) if qsim.size == 0 else np.pad(qsim.astype(np.float64), (0, max(0, n - qsim.shape[0])))
    if ch == "beam":
        if not graph.n_edges:
            return None
        r = beam_search(
            graph,
            seeds[seeds < n],
            qs,
            max_depth=cfg.max_depth,
            beam_width=cfg.beam_width,
            min_sim=cfg.beam_min_sim,
            score_mode=cfg.beam_mode,
            query_types=qtypes,
            alpha=cfg.alpha,
            beta=cfg.beta,
            visible=visible,
        )
        return GraphSignal(
            r.nodes, np.clip(r.score, 0.0, None), explain=lambda node: _hops_from_triples(graph, r.path(node))
        )
    if ch == "ppr":
        if not graph.n_edges:
            return None
        ok = seeds < n
        r = ppr(
            graph,
            seeds[ok],
            seed_acts[ok],
            damping=cfg.ppr_damping,
            undirected=True,
            query_types=qtypes,
            alpha=cfg.alpha,
            beta=cfg.beta,
            top_k=max(cfg.limit * 4, 50),
            visible=visible,
        )
        top = r.top_scores / r.top_scores.max() if r.top_scores.size and r.top_scores.max() > 0 else r.top_scores
        return GraphSignal(r.nodes, top, explain=lambda node: _hops_from_triples(graph, r.path(node)))
    # traversal strategies
    strat: Strategy = cfg.strategy if cfg.strategy is not None else STRATEGIES[ch](select_k=cfg.limit)
    sources = [GraphEdges(graph, direction="both"), *extra_sources]
    r = traverse(strat, seeds, seed_acts, qs, vectors, sources, visible=visible)  # start from the sparse seeds
    by_node = {h.node: h for h in r.hits}
    # a strategy's own scores are not comparable across strategies (similarity, MMR, custom):
    # its selection order is.  The k-th of n selected nodes gets (n - k) / n.
    k = len(r.hits)
    scores = (k - np.arange(k, dtype=np.float64)) / max(k, 1)

    def explain(node: int) -> list[Hop]:
        hops: list[Hop] = []
        h = by_node.get(node)
        while h is not None and h.edge is not None and len(hops) < 64:
            e = h.edge
            if e.source == "graph":
                w, t = graph.edge_attrs([e.key])
                hops.append(Hop(e.src, h.node, int(e.key), float(w[0]), int(t[0])))
            else:
                hops.append(Hop(e.src, h.node, -1, 1.0, f"{e.source}={e.key}"))
            h = by_node.get(e.src)
        return hops[::-1]

    return GraphSignal(r.nodes, scores, explain=explain)
