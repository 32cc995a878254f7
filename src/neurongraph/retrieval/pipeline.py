"""The search pipeline: entry retrieval → sparse seeds → graph channel → final fusion.

Everything here works on node indices and numpy arrays; ids, titles and texts
are fetched from the store only for the few hits returned.  Nothing here writes
an edge weight: retrieval never changes what the graph has learned.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import SearchConfig
from ..graph.arrays import GraphArrays
from ..index.tokenize import query_terms
from ..index.vectors import VectorIndex
from .channels import run_channel
from .fusion import fuse

__all__ = ["Ranking", "GraphPath", "rank"]


@dataclass
class GraphPath:
    """How the graph reached a node: seed first, hit last."""
    nodes: list[int]
    edges: list[int]            # store edge keys, one per hop (-1 for a metadata link)
    weights: list[float]
    rel_ids: list[int | str]    # predicate type ids, or labels of metadata links
    score: float

    @property
    def hops(self) -> int:
        return len(self.edges)


@dataclass
class Ranking:
    nodes: np.ndarray               # final order, best first (int64 node indices)
    scores: dict[str, np.ndarray]   # per channel, aligned with nodes
    ranks: dict[str, np.ndarray]    # 1-based per channel, 0 = not ranked by that channel
    seeds: np.ndarray
    paths: dict[int, list[GraphPath]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)


def _rank_of(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """1-based descending rank among ``present`` entries, 0 elsewhere."""
    out = np.zeros(values.shape[0], np.int64)
    idx = np.flatnonzero(present)
    order = idx[np.argsort(-values[idx], kind="stable")]
    out[order] = np.arange(1, order.shape[0] + 1)
    return out


def rank(
    query: str,
    qvec: np.ndarray | None,
    cfg: SearchConfig,
    *,
    lexical_search,
    vectors: VectorIndex,
    graph: GraphArrays,
    rel_ids: dict[str, int],
    allowed: np.ndarray | None,
    extra_seeds: np.ndarray | None = None,
    extra_sources=(),
    priming: np.ndarray | None = None,
    entry_allowed: np.ndarray | None = None,
    seed_allowed: np.ndarray | None = None,
) -> Ranking:
    """Rank nodes for ``query``.  ``allowed`` masks nodes that may be returned as hits
    (they may still carry activation through the graph); ``seed_allowed`` masks entry
    candidates that may seed the graph (``extra_seeds`` are not filtered by it)."""
    import time
    t0 = time.perf_counter()
    timings: dict[str, float] = {}

    def admit(nodes, scores, k):
        if entry_allowed is None or nodes.size == 0:
            return nodes[:k], scores[:k]
        ok = (nodes < entry_allowed.shape[0]) & entry_allowed[np.minimum(nodes, entry_allowed.shape[0] - 1)]
        return nodes[ok][:k], scores[ok][:k]

    over = 1 if entry_allowed is None else 3   # fetch extra so filtering still leaves k candidates
    lex_nodes, lex_scores = admit(*lexical_search(query_terms(query), cfg.lexical_k * over,
                                                  cfg.lexical_budget or None), cfg.lexical_k)
    t1 = time.perf_counter()
    timings["lexical"] = (t1 - t0) * 1000
    # beam and the strategies score every node they visit by query similarity, so they need the
    # full vector; spread, ppr and hybrid-only need it for the entry candidates alone, which on a
    # large corpus an IVF top-k finds without reading the whole matrix
    approx = (cfg.ann_min_nodes and vectors.n >= cfg.ann_min_nodes and cfg.channel in ("spread", "ppr", "none"))
    if qvec is not None and vectors.n and approx:
        dense_nodes, dense_scores = admit(*vectors.ann_top_k(qvec, cfg.dense_k * over, cfg.ann_nprobe), cfg.dense_k)
        qsim = vectors.similarity_of(qvec, np.union1d(lex_nodes, dense_nodes))
    elif qvec is not None and vectors.n:
        qsim = vectors.similarity(qvec)
        dense_nodes, dense_scores = admit(*vectors.top_k(qsim, cfg.dense_k * over), cfg.dense_k)
    else:
        qsim = np.zeros(0, np.float32)
        dense_nodes, dense_scores = np.zeros(0, np.int64), np.zeros(0, np.float32)
    t2 = time.perf_counter()
    timings["dense"] = (t2 - t1) * 1000

    e = fuse(lex_nodes, lex_scores, dense_nodes, dense_scores, qsim, method=cfg.fusion,
             lexical_weight=cfg.lexical_weight, dense_weight=cfg.dense_weight, rrf_k=cfg.rrf_k)

    # sparse seeds: the top-s entry candidates within seed_ratio of the best, activation relative to the best.
    # A clear winner seeds alone; near-ties (the question's hops scoring alike) all seed.
    order = np.argsort(-e.entry, kind="stable")
    if seed_allowed is not None and order.size:
        cand = e.nodes[order]
        order = order[(cand < seed_allowed.shape[0]) & seed_allowed[np.minimum(cand, seed_allowed.shape[0] - 1)]]
    top = order[: cfg.seeds]
    top = top[e.entry[top] > 0]
    if top.size:
        top = top[e.entry[top] >= cfg.seed_ratio * e.entry[top[0]]]
    seeds = e.nodes[top]
    seed_acts = e.entry[top] / (e.entry[top].max() if top.size else 1.0)
    if extra_seeds is not None and extra_seeds.size:
        fresh = extra_seeds[~np.isin(extra_seeds, seeds)]
        seeds = np.concatenate([seeds, fresh])
        seed_acts = np.concatenate([seed_acts, np.full(fresh.shape[0], seed_acts.max() if seed_acts.size else 1.0)])

    # graph channel
    qtypes = [rel_ids[t] for t in cfg.query_types if t in rel_ids]
    if cfg.query_types and not qtypes:
        qtypes = [-2]   # named types that do not exist: every typed edge is off-type
    sig = run_channel(cfg, graph, seeds, seed_acts, qsim, vectors.matrix if vectors.n else None,
                      e.nodes, e.entry, qtypes, extra_sources)
    graph_nodes = sig.nodes if sig is not None else np.zeros(0, np.int64)
    graph_act = sig.score if sig is not None else np.zeros(0)
    t3 = time.perf_counter()
    timings["graph"] = (t3 - t2) * 1000

    # final fusion over the union of entry candidates and graph-reached nodes
    nodes = np.union1d(e.nodes, graph_nodes)
    pos_e = np.searchsorted(e.nodes, nodes)
    in_e = (pos_e < e.nodes.shape[0]) & (e.nodes[np.minimum(pos_e, max(e.nodes.shape[0] - 1, 0))] == nodes) \
        if e.nodes.size else np.zeros(nodes.shape[0], bool)

    def take(arr, fill=0.0):
        out = np.full(nodes.shape[0], fill, dtype=np.asarray(arr).dtype if np.asarray(arr).size else float)
        out[in_e] = arr[pos_e[in_e]]
        return out

    entry = take(e.entry)
    graph_score = np.zeros(nodes.shape[0])
    if graph_nodes.size:
        go = np.argsort(graph_nodes)
        gp = np.searchsorted(graph_nodes[go], nodes)
        gp = np.minimum(gp, graph_nodes.shape[0] - 1)
        hit = graph_nodes[go][gp] == nodes
        graph_score[hit] = graph_act[go][gp[hit]]
    g = cfg.graph_weight if cfg.channel != "none" else 0.0
    final = (1.0 - g) * entry + g * graph_score
    primed = np.zeros(nodes.shape[0])
    if priming is not None and priming.size and cfg.priming_weight:
        # recent successful use primes a node, but only among candidates this query found anyway
        # scope: only the query's own top candidates (what a consumer would be shown), so a source
        # used for one question cannot pull itself into unrelated answers
        scope = np.argsort(-final, kind="stable")[: cfg.priming_scope]
        scope = scope[final[scope] > 0]
        inside = scope[nodes[scope] < priming.shape[0]]
        primed[inside] = priming[nodes[inside]]
        final = final + cfg.priming_weight * primed

    ok = final > 0
    if allowed is not None:
        inside = nodes < allowed.shape[0]
        ok &= inside & allowed[np.minimum(nodes, allowed.shape[0] - 1)]
    keep = np.flatnonzero(ok)
    keep = keep[np.argsort(-final[keep], kind="stable")][: cfg.limit]

    scores = {
        "lexical": take(e.lexical)[keep], "dense": take(e.dense)[keep],
        "entry": entry[keep], "graph": graph_score[keep], "priming": primed[keep], "final": final[keep],
    }
    ranks = {
        "lexical": take(e.lex_rank, 0)[keep], "dense": take(e.dense_rank, 0)[keep],
        "entry": _rank_of(entry, entry > 0)[keep], "graph": _rank_of(graph_score, graph_score > 0)[keep],
        "final": np.arange(1, keep.shape[0] + 1),
    }
    out_nodes = nodes[keep]
    paths: dict[int, list[GraphPath]] = {}
    if sig is not None and cfg.explain_paths:
        for n, gs in zip(out_nodes.tolist(), scores["graph"].tolist()):
            hops = sig.explain(n)
            if hops:
                paths[n] = [GraphPath(nodes=[hops[0].src] + [h.dst for h in hops], edges=[h.eid for h in hops],
                                      weights=[h.weight for h in hops], rel_ids=[h.rel for h in hops], score=gs)]
    timings["fuse"] = (time.perf_counter() - t3) * 1000
    return Ranking(out_nodes, scores, ranks, seeds, paths, timings)
