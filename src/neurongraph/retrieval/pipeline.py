"""The search pipeline: entry retrieval → sparse seeds → graph channel → final fusion.

Everything here works on node indices and numpy arrays; ids, titles and texts
are fetched from the store only for the few hits returned.  Nothing here writes
an edge weight: retrieval never changes what the graph has learned.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..config import SearchConfig
from ..graph.arrays import GraphArrays, mask_at
from ..index.tokenize import query_terms
from ..index.vectors import VectorIndex
from .channels import run_channel
from .fusion import dense_match, fuse
from .recency import RecencyPrior

__all__ = ["Ranking", "GraphPath", "rank"]


@dataclass
class GraphPath:
    """How the graph reached a node: seed first, hit last."""

    nodes: list[int]
    edges: list[int]  # store edge keys, one per hop (-1 for a metadata link)
    weights: list[float]
    rel_ids: list[int | str]  # predicate type ids, or labels of metadata links
    score: float

    @property
    def hops(self) -> int:
        return len(self.edges)


@dataclass
class Ranking:
    nodes: np.ndarray  # final order, best first (int64 node indices)
    scores: dict[str, np.ndarray]  # per channel, aligned with nodes
    ranks: dict[str, np.ndarray]  # 1-based per channel, 0 = not ranked by that channel
    seeds: np.ndarray
    paths: dict[int, list[GraphPath]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    unknown_files: list[str] = field(default_factory=list)  # set by the engine: `files` without a node


def _rank_of(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """1-based descending rank among ``present`` entries, 0 elsewhere."""
    out = np.zeros(values.shape[0], np.int64)
    idx = np.flatnonzero(present)
    order = idx[np.argsort(-values[idx], kind="stable")]
    out[order] = np.arange(1, order.shape[0] + 1)
    return out


def _add_query_seeds(seeds, seed_acts, q_nodes, q_names, e):
    """Seeds the question names, at the activation of the best entry seed.

    An ambiguous name ("Scott Howell": the footballer and the consultant) shares that
    activation among its targets by their own entry score: the best-matching reading
    keeps it all, the others get their fraction (none when they did not enter at all,
    unless no reading did).  A node already seeded by entry keeps the larger activation."""
    top_act = float(seed_acts.max()) if seed_acts.size else 1.0
    score = np.zeros(q_nodes.shape[0])
    if e.nodes.size:
        pos = np.minimum(np.searchsorted(e.nodes, q_nodes), e.nodes.shape[0] - 1)
        hit = e.nodes[pos] == q_nodes
        score[hit] = e.entry[pos[hit]]
    rel = np.ones(q_nodes.shape[0])
    for name in np.unique(q_names):
        same = q_names == name
        best = score[same].max()
        if same.sum() > 1 and best > 0:
            rel[same] = score[same] / best
    ok = rel > 0
    return _merge_seeds(seeds, seed_acts, q_nodes[ok], top_act * rel[ok])


def _merge_seeds(seeds, seed_acts, nodes, acts):
    """``seeds`` plus ``nodes`` at ``acts``; a node already seeded keeps the larger activation."""
    seeds, seed_acts = seeds.copy(), seed_acts.astype(np.float64).copy()
    for n, a in zip(np.asarray(nodes, np.int64).tolist(), np.asarray(acts, np.float64).tolist()):
        at = np.flatnonzero(seeds == n)
        if at.size:
            seed_acts[at[0]] = max(seed_acts[at[0]], a)
        else:
            seeds = np.append(seeds, n)
            seed_acts = np.append(seed_acts, a)
    return seeds, seed_acts


def _add_extra_seeds(seeds, seed_acts, nodes, weight, scale=None):
    """Extra seeds (the caller's working files) at ``weight`` × the best seed's activation
    (1.0 when nothing else seeds), times a per-node ``scale`` if given; a node already seeded keeps
    the larger activation."""
    best = (float(seed_acts.max()) if seed_acts.size else 1.0) * weight
    nodes = np.asarray(nodes, np.int64)
    scale = np.ones(nodes.shape[0]) if scale is None else np.asarray(scale, np.float64)
    return _merge_seeds(seeds, seed_acts, nodes, best * scale)


def _file_neighbours(graph: GraphArrays, files: np.ndarray, n_nodes: int):
    """One walk step from the working files (``files`` sorted, unique) and each file's specificity,
    the idf of its degree in (0, 1]: log((N+1)/(deg+1)) / log(N+1).  Computed once per search for both
    the seed scaling and the overlap share."""
    exp = graph.expand(files, direction="both")
    deg = (
        np.bincount(exp.src_pos, minlength=files.shape[0]).astype(np.float64) if len(exp) else np.zeros(files.shape[0])
    )
    n = max(int(n_nodes), 2)
    return exp, np.maximum(np.log((n + 1) / (deg + 1)) / np.log(n + 1), 1e-3)


def _file_overlap(exp, spec: np.ndarray, visible) -> tuple[np.ndarray, np.ndarray]:
    """(nodes, share): for every neighbour of the working files, the share of the files' total
    specificity it touches, so a change that touched several of them (or the rare ones) stands out."""
    if not len(exp):
        return np.zeros(0, np.int64), np.zeros(0)
    src_pos, dst = exp.src_pos, exp.dst
    if visible is not None:
        ok = mask_at(visible, dst)
        src_pos, dst = src_pos[ok], dst[ok]
    # one contribution per (file, node) pair even if several edges join them
    key = np.unique(np.stack([src_pos, dst]), axis=1)
    nodes, inv = np.unique(key[1], return_inverse=True)
    share = np.zeros(nodes.shape[0])
    np.add.at(share, inv, spec[key[0]])
    return nodes, share / spec.sum()


def _values_at(keys: np.ndarray, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``values`` of sorted ``keys`` looked up at ``nodes`` (0 where a node is not a key)."""
    out = np.zeros(nodes.shape[0])
    if keys.size:
        pos = np.minimum(np.searchsorted(keys, nodes), keys.shape[0] - 1)
        hit = keys[pos] == nodes
        out[hit] = values[pos[hit]]
    return out


def _fetch_visible(search, k: int, mask: np.ndarray, first: int = 0):
    """The top ``k`` of ``search(kk)`` (nodes, scores; best first) that lie inside ``mask``: asks for
    enough rows to expect ``k`` visible ones at twice the mask's density (at least ``first``), and
    four times more until it has them or the candidates run out (a filter that hides most of the
    corpus still gets ``k``).  Measured on a 26k-node history under ``as_of``: fetching the whole
    postings budget (10k rows) cost ~40 ms a query, the density-sized first pass ~5 ms."""
    if k <= 0:
        return np.zeros(0, np.int64), np.zeros(0)
    cap = max(int(mask.shape[0]), k)
    share = float(mask.mean()) if mask.size else 0.0
    kk = min(cap, max(k * 4, first, int(np.ceil(k * 2 / max(share, 1e-9)))))
    while True:
        nodes, scores = search(kk)
        ok = mask_at(mask, nodes)
        if int(ok.sum()) >= k or nodes.shape[0] < kk or kk >= cap:
            return nodes[ok][:k], scores[ok][:k]
        kk = min(cap, kk * 4)


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
    query_seeds: tuple[np.ndarray, np.ndarray] | None = None,
    extra_sources=(),
    priming: np.ndarray | None = None,
    entry_allowed: np.ndarray | None = None,
    seed_allowed: np.ndarray | None = None,
    visible: np.ndarray | None = None,
    extra_seeds: np.ndarray | None = None,
    event_time: np.ndarray | None = None,
    recency: RecencyPrior | None = None,
) -> Ranking:
    """Rank nodes for ``query``.  ``allowed`` masks nodes that may be returned as hits
    (they may still carry activation through the graph); ``seed_allowed`` masks entry
    candidates that may seed the graph.  ``query_seeds`` are ``(nodes, name ids)`` the
    question names (query-side linking; not filtered by ``seed_allowed``): nodes sharing
    a name id are the targets of one ambiguous name.

    ``visible`` (search filters such as ``as_of``): nodes outside it are not in the graph for this
    search: never entry candidates, seeds or hits, and no graph channel walks into them.
    ``extra_seeds`` (the caller's working files) seed the graph at ``cfg.file_seed_weight`` × the
    best seed's activation.  With neither, nothing here differs from an unfiltered search."""
    import time

    t0 = time.perf_counter()
    timings: dict[str, float] = {}

    def admit(nodes, scores, k):
        if entry_allowed is None or nodes.size == 0:
            return nodes[:k], scores[:k]
        ok = (nodes < entry_allowed.shape[0]) & entry_allowed[np.minimum(nodes, entry_allowed.shape[0] - 1)]
        return nodes[ok][:k], scores[ok][:k]

    over = 1 if entry_allowed is None else 3  # fetch extra so filtering still leaves k candidates
    vis_entry = None
    if visible is not None:
        vis_entry = visible
        if entry_allowed is not None:
            m = min(visible.shape[0], entry_allowed.shape[0])
            vis_entry = visible[:m] & entry_allowed[:m]
        terms = query_terms(query)
        # (reading rows back costs more than FTS5's scoring: ask for what the mask's density needs)
        lex_nodes, lex_scores = _fetch_visible(
            lambda kk: lexical_search(terms, kk, cfg.lexical_budget or None), cfg.lexical_k, vis_entry
        )
    else:
        lex_nodes, lex_scores = admit(
            *lexical_search(query_terms(query), cfg.lexical_k * over, cfg.lexical_budget or None), cfg.lexical_k
        )
    t1 = time.perf_counter()
    timings["lexical"] = (t1 - t0) * 1000
    # beam and the strategies score every node they visit by query similarity, so they need the
    # full vector; spread, ppr and hybrid-only need it for the entry candidates alone, which on a
    # large corpus an IVF top-k finds without reading the whole matrix
    approx = cfg.ann_min_nodes and vectors.n >= cfg.ann_min_nodes and cfg.channel in ("spread", "ppr", "none")
    if qvec is not None and vectors.n and approx:
        shown = np.flatnonzero(vis_entry[: vectors.n]) if vis_entry is not None else None
        if shown is not None and shown.shape[0] < cfg.ann_min_nodes:
            # a filter left few enough rows to score them all exactly: cheaper and better than the IVF
            sims = vectors.similarity_of(qvec, shown)[shown]
            sims = np.where(vectors.present[shown], sims, -np.inf)
            top = np.argsort(-sims, kind="stable")[: cfg.dense_k]
            top = top[np.isfinite(sims[top])]
            dense_nodes, dense_scores = shown[top].astype(np.int64), sims[top]
        elif vis_entry is not None:
            dense_nodes, dense_scores = _fetch_visible(
                lambda kk: vectors.ann_top_k(qvec, kk, cfg.ann_nprobe), cfg.dense_k, vis_entry
            )
        else:
            dense_nodes, dense_scores = admit(*vectors.ann_top_k(qvec, cfg.dense_k * over, cfg.ann_nprobe), cfg.dense_k)
        qsim = vectors.similarity_of(qvec, np.union1d(lex_nodes, dense_nodes))
    elif qvec is not None and vectors.n:
        qsim = vectors.similarity(qvec)
        if vis_entry is not None:  # exact: hidden rows never compete for the top k
            shown = mask_at(vis_entry, np.arange(qsim.shape[0]))
            dense_nodes, dense_scores = vectors.top_k(np.where(shown, qsim, -np.inf), cfg.dense_k)
            fin = np.isfinite(dense_scores)
            dense_nodes, dense_scores = dense_nodes[fin], dense_scores[fin]
        else:
            dense_nodes, dense_scores = admit(*vectors.top_k(qsim, cfg.dense_k * over), cfg.dense_k)
    else:
        qsim = np.zeros(0, np.float32)
        dense_nodes, dense_scores = np.zeros(0, np.int64), np.zeros(0, np.float32)
    t2 = time.perf_counter()
    timings["dense"] = (t2 - t1) * 1000

    floor = vectors.typical_similarity(qvec) if qvec is not None and vectors.n else None
    e = fuse(
        lex_nodes,
        lex_scores,
        dense_nodes,
        dense_scores,
        qsim,
        method=cfg.fusion,
        lexical_weight=cfg.lexical_weight,
        dense_weight=cfg.dense_weight,
        rrf_k=cfg.rrf_k,
        dense_floor=floor,
    )

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
    if query_seeds is not None and visible is not None:
        shown = mask_at(visible, query_seeds[0])
        query_seeds = (query_seeds[0][shown], query_seeds[1][shown])
    if query_seeds is not None and query_seeds[0].size:
        seeds, seed_acts = _add_query_seeds(seeds, seed_acts, *query_seeds, e)
    if extra_seeds is not None and visible is not None:
        extra_seeds = extra_seeds[mask_at(visible, extra_seeds)]
    overlap = None
    if extra_seeds is not None and extra_seeds.size:
        extra_seeds = np.unique(extra_seeds)
        use_seeds, use_overlap = cfg.file_seed_weight > 0, cfg.file_overlap_weight > 0
        if (use_seeds and cfg.file_seed_specificity) or use_overlap:
            file_exp, file_spec = _file_neighbours(graph, extra_seeds, graph.n_nodes)
        if use_seeds:
            scale = file_spec if cfg.file_seed_specificity else None
            seeds, seed_acts = _add_extra_seeds(seeds, seed_acts, extra_seeds, cfg.file_seed_weight, scale)
        if use_overlap:
            overlap = _file_overlap(file_exp, file_spec, visible)

    # graph channel
    qtypes = [rel_ids[t] for t in cfg.query_types if t in rel_ids]
    if cfg.query_types and not qtypes:
        qtypes = [-2]  # named types that do not exist: every typed edge is off-type
    sig = run_channel(
        cfg,
        graph,
        seeds,
        seed_acts,
        qsim,
        vectors.matrix if vectors.n else None,
        e.nodes,
        e.entry,
        qtypes,
        extra_sources,
        visible=visible,
    )
    graph_nodes = sig.nodes if sig is not None else np.zeros(0, np.int64)
    graph_act = sig.score if sig is not None else np.zeros(0)
    t3 = time.perf_counter()
    timings["graph"] = (t3 - t2) * 1000

    # final fusion over the union of entry candidates and graph-reached nodes
    nodes = np.union1d(e.nodes, graph_nodes)
    pos_e = np.searchsorted(e.nodes, nodes)
    in_e = (
        (pos_e < e.nodes.shape[0]) & (e.nodes[np.minimum(pos_e, max(e.nodes.shape[0] - 1, 0))] == nodes)
        if e.nodes.size
        else np.zeros(nodes.shape[0], bool)
    )

    def take(arr, fill=0.0):
        out = np.full(nodes.shape[0], fill, dtype=np.asarray(arr).dtype if np.asarray(arr).size else float)
        out[in_e] = arr[pos_e[in_e]]
        return out

    entry = take(e.match)  # the final ranking uses the corpus-anchored query match
    dense = take(e.dense_abs)
    if floor is not None and cfg.fusion == "linear" and dense_nodes.size and not in_e.all():
        # graph-reached nodes outside the candidate lists keep their dense query match instead of 0
        out = np.flatnonzero(~in_e)
        sims = vectors.similarity_of(qvec, nodes[out])[nodes[out]] if approx else qsim[nodes[out]]
        dense[out] = dense_match(sims, float(dense_scores[0]), floor)
        entry[out] = cfg.dense_weight / (cfg.lexical_weight + cfg.dense_weight or 1.0) * dense[out]
    go = np.argsort(graph_nodes)
    graph_score = _values_at(graph_nodes[go], graph_act[go], nodes)
    if overlap is not None and overlap[0].size:
        graph_score = graph_score + cfg.file_overlap_weight * _values_at(*overlap, nodes)
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

    rec = None
    if recency is not None and event_time is not None and nodes.size:
        # the recency prior (retrieval/recency.py): older nodes with an event time weigh less
        t = np.full(nodes.shape[0], np.nan)
        inside = nodes < event_time.shape[0]
        t[inside] = event_time[nodes[inside]]
        if not np.isnan(t).all():
            rec = recency.factor(t)
            final = final * rec

    ok = final > 0
    if allowed is not None:
        inside = nodes < allowed.shape[0]
        ok &= inside & allowed[np.minimum(nodes, allowed.shape[0] - 1)]
    keep = np.flatnonzero(ok)
    keep = keep[np.argsort(-final[keep], kind="stable")][: cfg.limit]

    scores = {
        "lexical": take(e.lexical)[keep],
        "dense": dense[keep],
        "entry": entry[keep],
        "seed_score": take(e.entry)[keep],
        "graph": graph_score[keep],
        "priming": primed[keep],
        "final": final[keep],
    }
    if rec is not None:
        scores["recency"] = rec[keep]
    ranks = {
        "lexical": take(e.lex_rank, 0)[keep],
        "dense": take(e.dense_rank, 0)[keep],
        "entry": _rank_of(entry, entry > 0)[keep],
        "graph": _rank_of(graph_score, graph_score > 0)[keep],
        "final": np.arange(1, keep.shape[0] + 1),
    }
    out_nodes = nodes[keep]
    paths: dict[int, list[GraphPath]] = {}
    if sig is not None and cfg.explain_paths:
        for n, gs in zip(out_nodes.tolist(), scores["graph"].tolist()):
            hops = sig.explain(n)
            if hops:
                paths[n] = [
                    GraphPath(
                        nodes=[hops[0].src] + [h.dst for h in hops],
                        edges=[h.eid for h in hops],
                        weights=[h.weight for h in hops],
                        rel_ids=[h.rel for h in hops],
                        score=gs,
                    )
                ]
    timings["fuse"] = (time.perf_counter() - t3) * 1000
    return Ranking(out_nodes, scores, ranks, seeds, paths, timings)
