"""The search pipeline: entry retrieval → sparse seeds → graph channel → final fusion.

Everything here works on node indices and numpy arrays; ids, titles and texts
are fetched from the store only for the few hits returned.  Nothing here writes
an edge weight: retrieval never changes what the graph has learned.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import numpy as np

from ..config import SearchConfig
from ..graph.arrays import Expansion, GraphArrays, mask_at
from ..graph.strategies import EdgeSource
from ..index.vectors import VectorIndex
from . import change_groups
from .channels import ChannelInput, GraphSignal, run_channel
from .code_evidence import CodeEvidence
from .fusion import EntryScores, agreed_node, dense_match, fuse, keep_agreed, sorted_union
from .origin import Origin, origin_of
from .priors import PRIORS, Prior, Written
from .priors import values_at as _values_at
from .query import Query
from .reading import Reading, read_query
from .recency import RecencyPrior

if TYPE_CHECKING:
    from ..index.multilingual import LanguageGate

__all__ = ["Ranking", "GraphPath", "RankInputs", "rank"]

Rows = tuple[np.ndarray, np.ndarray]  # (node indices, a value each): candidates best first, or sorted nodes
LexicalSearch = Callable[[list[str], int, int | None], Rows]  # (terms, k, max_postings) -> (nodes, scores)
Blind = Callable[[np.ndarray], np.ndarray | None]  # (candidate nodes) -> mask of those BM25 cannot see, or None


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
    """The pipeline's final order with every channel's scores and ranks, what the engine turns into hits."""

    nodes: np.ndarray  # final order, best first (int64 node indices)
    scores: dict[str, np.ndarray]  # per channel, aligned with nodes
    ranks: dict[str, np.ndarray]  # 1-based per channel, 0 = not ranked by that channel
    seeds: np.ndarray
    paths: dict[int, list[GraphPath]] = field(default_factory=dict)
    timings_ms: dict[str, float] = field(default_factory=dict)
    unknown_files: list[str] = field(default_factory=list)  # set by the engine: `files` without a node
    evidence: dict[int, list[str]] = field(default_factory=dict)  # hit -> code evidence phrases (blame, identifiers)
    changes: change_groups.ChangeLinks | None = None  # each node's change: results.py shows one hit per change
    reading: Reading | None = None  # what the question was read as, when it asks for a beginning or a removal
    # the graph paths of the nodes asked for (``paths_for``): only the hits shown are explained, not the nodes
    # read before grouping by change
    explainer: Callable[[list[int]], dict[int, list[GraphPath]]] | None = None

    def paths_for(self, nodes: list[int]) -> dict[int, list[GraphPath]]:
        """Each of ``nodes``' best graph paths, computed once (kept in ``paths``)."""
        todo = [n for n in nodes if n not in self.paths]
        if todo and self.explainer is not None:
            got = self.explainer(todo)
            self.paths.update({n: got.get(n, []) for n in todo})
        return {n: self.paths.get(n, []) for n in nodes}


def _rank_of(values: np.ndarray, present: np.ndarray) -> np.ndarray:
    """1-based descending rank among ``present`` entries, 0 elsewhere."""
    out = np.zeros(values.shape[0], np.int64)
    idx = np.flatnonzero(present)
    order = idx[np.argsort(-values[idx], kind="stable")]
    out[order] = np.arange(1, order.shape[0] + 1)
    return out


def _add_query_seeds(
    seeds: np.ndarray, seed_acts: np.ndarray, q_nodes: np.ndarray, q_names: np.ndarray, e: EntryScores
) -> Rows:
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


def _merge_seeds(seeds: np.ndarray, seed_acts: np.ndarray, nodes: np.ndarray, acts: np.ndarray) -> Rows:
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


def _add_extra_seeds(
    seeds: np.ndarray, seed_acts: np.ndarray, nodes: np.ndarray, weight: float, scale: np.ndarray | None = None
) -> Rows:
    """Extra seeds (the caller's working files) at ``weight`` × the best seed's activation
    (1.0 when nothing else seeds), times a per-node ``scale`` if given; a node already seeded keeps
    the larger activation."""
    best = (float(seed_acts.max()) if seed_acts.size else 1.0) * weight
    nodes = np.asarray(nodes, np.int64)
    scale = np.ones(nodes.shape[0]) if scale is None else np.asarray(scale, np.float64)
    return _merge_seeds(seeds, seed_acts, nodes, best * scale)


def _file_neighbours(graph: GraphArrays, files: np.ndarray, n_nodes: int) -> tuple[Expansion, np.ndarray]:
    """One walk step from the working files (``files`` sorted, unique) and each file's specificity,
    the idf of its degree in (0, 1]: log((N+1)/(deg+1)) / log(N+1).  Computed once per search for both
    the seed scaling and the overlap share."""
    exp = graph.expand(files, direction="both")
    deg = (
        np.bincount(exp.src_pos, minlength=files.shape[0]).astype(np.float64) if len(exp) else np.zeros(files.shape[0])
    )
    n = max(int(n_nodes), 2)
    return exp, np.maximum(np.log((n + 1) / (deg + 1)) / np.log(n + 1), 1e-3)


def _structural_seed_scale(
    graph: GraphArrays, structural: np.ndarray, seeds: np.ndarray, acts: np.ndarray
) -> np.ndarray:
    """Entry seeds of a structural type (a file, a directory, a person matched by its name) seed at the
    idf of their degree, as working files do: such a node passes its activation to every change it joins,
    so a file most changes touch would otherwise lift hundreds of changes that do not match the question
    above the ones that do (ovs: `vswitch.xml: ...` seeded `file:vswitchd/vswitch.xml`, whose 700 changes
    then outranked the text's own best match)."""
    hub = mask_at(structural, seeds)
    if not hub.any():
        return acts
    hubs = np.unique(seeds[hub])
    _, spec = _file_neighbours(graph, hubs, graph.n_nodes)
    acts = acts.astype(np.float64).copy()
    acts[hub] *= spec[np.searchsorted(hubs, seeds[hub])]
    return acts


def _visible_steps(exp: Expansion, visible: np.ndarray | None) -> slice | np.ndarray:
    """Which steps of an expansion end at a node the search's filters leave visible (all without filters)."""
    return slice(None) if visible is None else mask_at(visible, exp.dst)


def _file_overlap(exp: Expansion, spec: np.ndarray, visible: np.ndarray | None) -> Rows:
    """(nodes, share): for every neighbour of the working files, the share of the files' total
    specificity it touches, so a change that touched several of them (or the rare ones) stands out."""
    if not len(exp):
        return np.zeros(0, np.int64), np.zeros(0)
    ok = _visible_steps(exp, visible)
    src_pos, dst = exp.src_pos[ok], exp.dst[ok]
    # one contribution per (file, node) pair even if several edges join them
    key = np.unique(np.stack([src_pos, dst]), axis=1)
    nodes, inv = np.unique(key[1], return_inverse=True)
    share = np.zeros(nodes.shape[0])
    np.add.at(share, inv, spec[key[0]])
    return nodes, share / spec.sum()


def _lines_written(exp: Expansion, edge_lines: Callable[[np.ndarray], np.ndarray], visible: np.ndarray | None) -> Rows:
    """(nodes, lines): for every neighbour of the working files, the lines it added to them (summed over
    its edges to them; ``edge_lines`` reads them per edge id, 0 where an edge has none)."""
    if not len(exp):
        return np.zeros(0, np.int64), np.zeros(0)
    ok = _visible_steps(exp, visible)
    dst, eid = exp.dst[ok], exp.eid[ok]
    # an edge walked both ways (or listed twice) counts once
    eid, first = np.unique(eid, return_index=True)
    dst = dst[first]
    lines = np.asarray(edge_lines(eid), np.float64)
    nodes, inv = np.unique(dst[lines > 0], return_inverse=True)
    return nodes, np.bincount(inv, weights=lines[lines > 0], minlength=nodes.shape[0])


def _fetch_visible(search: Callable[[int], Rows], k: int, mask: np.ndarray, first: int = 0) -> Rows:
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


@dataclass
class RankInputs:
    """What a ranking reads besides the query, its vector and the configuration (built by the engine).

    ``allowed`` masks nodes that may be returned as hits (they may still carry activation through the
    graph); ``entry_allowed`` masks nodes that may enter by BM25/dense; ``seed_allowed`` masks entry
    candidates that may seed the graph.  ``query_seeds`` are ``(nodes, name ids)`` the question names
    (query-side linking; not filtered by ``seed_allowed``): nodes sharing a name id are the targets of
    one ambiguous name.  ``visible`` (search filters such as ``as_of``): nodes outside it are not in the
    graph for this search: never entry candidates, seeds or hits, and no graph channel walks into them.
    ``extra_seeds`` (the caller's working files) seed the graph at ``cfg.working_files.seed_weight`` × the best
    seed's activation.  With neither, nothing differs from an unfiltered search."""

    lexical_search: LexicalSearch  # (terms, k, max_postings) -> (nodes, scores), best first
    vectors: VectorIndex
    graph: GraphArrays
    rel_ids: dict[str, int]
    allowed: np.ndarray | None = None
    query_seeds: tuple[np.ndarray, np.ndarray] | None = None
    extra_sources: Sequence[EdgeSource] = ()
    priming: np.ndarray | None = None
    entry_allowed: np.ndarray | None = None
    seed_allowed: np.ndarray | None = None
    visible: np.ndarray | None = None
    extra_seeds: np.ndarray | None = None
    structural: np.ndarray | None = None  # files, directories, people: entry seeds among them seed at their idf
    event_time: np.ndarray | None = None
    recency: RecencyPrior | None = None
    # (edge ids) -> lines each edge's change added (authorship prior)
    edge_lines: Callable[[np.ndarray], np.ndarray] | None = None
    # (node indices) -> bool mask: marked `aggregate` (the aggregate prior)
    aggregate: Callable[[np.ndarray], np.ndarray] | None = None
    # (node indices) -> bool mask: a git reader's placeholders (pr:N, issue:N without text), folded into the change
    # that names them (change_groups.py); None: every node without out-edges may be one
    placeholder: Callable[[np.ndarray], np.ndarray] | None = None
    code: CodeEvidence | None = None  # blame of the working set's lines and identifier matches (code_evidence.py)
    # the question's languages on a store that reads CJK (index/multilingual.py LanguageGate): which candidates
    # BM25 cannot see (another script) and the lexical trust ramp; None = weights as configured, nothing blind
    lexical_trust: LanguageGate | None = None
    # (node indices) -> {node: subject}: "when did X start" reads subjects (origin.py)
    titles: Callable[[list[int]], dict[int, str]] | None = None

    @property
    def overfetch(self) -> int:
        """Candidates fetched per one wanted: extra when ``entry_allowed`` filters them afterwards, so
        filtering still leaves k."""
        return 1 if self.entry_allowed is None else 3


@dataclass
class _EntryStep:
    """Entry retrieval's result: the fused candidates and the query's similarity signals."""

    e: EntryScores  # fused entry candidates (sorted nodes)
    qsim: np.ndarray  # query similarity (every row, or the candidates' rows under the IVF)
    dense_nodes: np.ndarray
    dense_scores: np.ndarray
    floor: float | None  # the query's typical similarity (the dense match's zero)
    approx: bool  # the dense top-k came from the IVF: qsim holds the candidates' rows only
    t_dense: float  # perf_counter() when the dense candidates were in hand (the graph step's timing starts)


@dataclass
class _Union:
    """The union of entry candidates and graph-reached nodes, and where each is an entry candidate."""

    nodes: np.ndarray
    pos_e: np.ndarray  # position of each node in the entry candidates ...
    in_e: np.ndarray  # ... where it is one

    @classmethod
    def of(cls, entry_nodes: np.ndarray, graph_nodes: np.ndarray) -> _Union:
        nodes = sorted_union(entry_nodes, graph_nodes)
        pos_e = np.searchsorted(entry_nodes, nodes)
        in_e = (
            (pos_e < entry_nodes.shape[0]) & (entry_nodes[np.minimum(pos_e, max(entry_nodes.shape[0] - 1, 0))] == nodes)
            if entry_nodes.size
            else np.zeros(nodes.shape[0], bool)
        )
        return cls(nodes, pos_e, in_e)

    def take(self, arr: np.ndarray, fill: float = 0.0, at: np.ndarray | None = None) -> np.ndarray:
        """An entry-candidate array spread over ``nodes`` (``fill`` for graph-only nodes); with ``at``, only
        at those positions of ``nodes`` (``take(arr, fill)[at]`` without the full-length array)."""
        in_e, pos_e = (self.in_e, self.pos_e) if at is None else (self.in_e[at], self.pos_e[at])
        out = np.full(in_e.shape[0], fill, dtype=np.asarray(arr).dtype if np.asarray(arr).size else float)
        out[in_e] = arr[pos_e[in_e]]
        return out


@dataclass
class _Fused:
    """The final fusion's per-node arrays, aligned with ``u.nodes``."""

    u: _Union
    entry: np.ndarray
    dense: np.ndarray
    graph_score: np.ndarray
    primed: np.ndarray
    final: np.ndarray
    priors: list[tuple[Prior, np.ndarray]]  # the priors that applied, each with its per-node value (priors.py)
    blame: np.ndarray | None = None  # share of the working set's changed lines each node last touched
    code: np.ndarray | None = None  # identifier match (the question's and the diff's identifiers)
    code_scale: tuple[float, float] = (1.0, 0.0)  # (the best score without code evidence, the code weight used)
    agreed: np.ndarray | None = None  # the floor the entry channels' common first node was raised from (or None)
    origin: np.ndarray | None = None  # 1.0 at the earliest change of the topic a "when did X start" asks for


def _admit(x: RankInputs, nodes: np.ndarray, scores: np.ndarray, k: int) -> Rows:
    """The top ``k`` of a candidate list that ``entry_allowed`` admits."""
    ea = x.entry_allowed
    if ea is None or nodes.size == 0:
        return nodes[:k], scores[:k]
    ok = (nodes < ea.shape[0]) & ea[np.minimum(nodes, ea.shape[0] - 1)]
    return nodes[ok][:k], scores[ok][:k]


def _entry_mask(x: RankInputs) -> np.ndarray | None:
    """Nodes that may enter under the search filters (None without filters)."""
    if x.visible is None:
        return None
    if x.entry_allowed is None:
        return x.visible
    m = min(x.visible.shape[0], x.entry_allowed.shape[0])
    both: np.ndarray = x.visible[:m] & x.entry_allowed[:m]
    return both


def _lexical(q: Query, cfg: SearchConfig, x: RankInputs, vis_entry: np.ndarray | None) -> Rows:
    """BM25 candidates (FTS5) of the query's terms (``Query.terms``)."""
    terms = list(q.terms)
    if vis_entry is not None:
        # (reading rows back costs more than FTS5's scoring: ask for what the mask's density needs)
        return _fetch_visible(
            lambda kk: x.lexical_search(terms, kk, cfg.lexical_budget or None), cfg.lexical_k, vis_entry
        )
    nodes, scores = x.lexical_search(terms, cfg.lexical_k * x.overfetch, cfg.lexical_budget or None)
    return _admit(x, nodes, scores, cfg.lexical_k)


def _dense_approx(
    qvec: np.ndarray, cfg: SearchConfig, x: RankInputs, vis_entry: np.ndarray | None, lex_nodes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense candidates from the IVF (a large corpus); qsim only for the candidates' rows."""
    vectors = x.vectors
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
        dense_nodes, dense_scores = _admit(
            x, *vectors.ann_top_k(qvec, cfg.dense_k * x.overfetch, cfg.ann_nprobe), cfg.dense_k
        )
    qsim = vectors.similarity_of(qvec, np.union1d(lex_nodes, dense_nodes))
    return qsim, dense_nodes, dense_scores


def _dense_exact(
    qvec: np.ndarray, cfg: SearchConfig, x: RankInputs, vis_entry: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Dense candidates from the similarity of every row."""
    vectors = x.vectors
    qsim = vectors.similarity(qvec)
    if vis_entry is not None:  # exact: hidden rows never compete for the top k
        shown = mask_at(vis_entry, np.arange(qsim.shape[0]))
        dense_nodes, dense_scores = vectors.top_k(np.where(shown, qsim, -np.inf), cfg.dense_k)
        fin = np.isfinite(dense_scores)
        return qsim, dense_nodes[fin], dense_scores[fin]
    dense_nodes, dense_scores = _admit(x, *vectors.top_k(qsim, cfg.dense_k * x.overfetch), cfg.dense_k)
    return qsim, dense_nodes, dense_scores


def _language_gate(
    cfg: SearchConfig,
    x: RankInputs,
    qsim: np.ndarray,
    lex_nodes: np.ndarray,
    dense_nodes: np.ndarray,
    dense_scores: np.ndarray,
    floor: float | None,
) -> tuple[float, Blind | None]:
    """The lexical weight of this question and the mask of candidates BM25 cannot see (or None), from the
    question's :class:`LanguageGate` (issue 29): the trust ramp applies when the dense channel's best
    candidate (``gate.decider``) is one BM25 cannot see (or when a row's script is unknown); outside that
    case a CJK question has nothing blind (``gate.blind_in_own_script``)."""
    gate, lexical_weight = x.lexical_trust, cfg.lexical_weight
    if gate is None or not dense_scores.size or cfg.dense_weight <= 0:
        return lexical_weight, None
    rows, present = x.vectors.matrix, x.vectors.present

    def blind(nodes: np.ndarray) -> np.ndarray | None:
        ok = nodes < rows.shape[0]
        got = gate.blind(rows, nodes[ok], present)
        if got is None or ok.all():
            return got
        out = np.zeros(nodes.shape[0], bool)
        out[ok] = got
        return out

    best = gate.decider(dense_nodes, x.allowed)
    top_blind = blind(best)
    cross = top_blind is None or (bool(top_blind[0]) and not (lex_nodes == best[0]).any())
    if cross and floor is not None and lex_nodes.size:
        top = float(qsim[lex_nodes[0]]) if lex_nodes[0] < qsim.shape[0] else floor
        lexical_weight *= gate.trust(float(dense_match(top, float(dense_scores[0]), floor)))
    keep = top_blind is not None and (cross or gate.blind_in_own_script())
    return lexical_weight, (blind if keep else None)


def _entry_step(
    q: Query, qvec: np.ndarray | None, cfg: SearchConfig, x: RankInputs, timings: dict[str, float]
) -> _EntryStep:
    """Step 1, entry: BM25 and dense candidates, fused (normalised linear or RRF)."""
    t0 = time.perf_counter()
    vis_entry = _entry_mask(x)
    lex_nodes, lex_scores = _lexical(q, cfg, x, vis_entry)
    t1 = time.perf_counter()
    timings["lexical"] = (t1 - t0) * 1000
    vectors = x.vectors
    # beam and the strategies score every node they visit by query similarity, so they need the
    # full vector; spread, ppr and hybrid-only need it for the entry candidates alone, which on a
    # large corpus an IVF top-k finds without reading the whole matrix
    approx = bool(cfg.ann_min_nodes and vectors.n >= cfg.ann_min_nodes and not cfg.channel.needs_all_similarities)
    if qvec is not None and vectors.n and approx:
        qsim, dense_nodes, dense_scores = _dense_approx(qvec, cfg, x, vis_entry, lex_nodes)
    elif qvec is not None and vectors.n:
        qsim, dense_nodes, dense_scores = _dense_exact(qvec, cfg, x, vis_entry)
    else:
        qsim = np.zeros(0, np.float32)
        dense_nodes, dense_scores = np.zeros(0, np.int64), np.zeros(0, np.float32)
    t2 = time.perf_counter()
    timings["dense"] = (t2 - t1) * 1000
    floor = vectors.typical_similarity(qvec) if qvec is not None and vectors.n else None
    lexical_weight, blind = _language_gate(cfg, x, qsim, lex_nodes, dense_nodes, dense_scores, floor)
    e = fuse(
        lex_nodes,
        lex_scores,
        dense_nodes,
        dense_scores,
        qsim,
        method=cfg.fusion,
        lexical_weight=lexical_weight,
        dense_weight=cfg.dense_weight,
        rrf_k=cfg.rrf_k,
        dense_floor=floor,
        lexical_blind=blind,
    )
    return _EntryStep(e, qsim, dense_nodes, dense_scores, floor, approx, t2)


def _with_lexical_best(top: np.ndarray, order: np.ndarray, e: EntryScores) -> np.ndarray:
    """``top`` and the best lexical candidate among ``order`` when it is not in ``top`` already.  Why: the fused
    entry score can rank the one change whose text holds most of the question's words below four that only
    read alike (the dense channel's near-ties), and then the graph, which scores seeds and their neighbours,
    buries it; seeding it keeps it in play at its own entry score (docs/benchmarks.md, "What helped" 10)."""
    lexical = e.lexical[order]
    if not lexical.size or lexical.max() <= 0:
        return top
    best = order[int(np.argmax(lexical))]  # the first of equal scores in entry order
    return top if (top == best).any() else np.append(top, best)


def _seed_step(cfg: SearchConfig, x: RankInputs, e: EntryScores) -> tuple[np.ndarray, np.ndarray, Rows | None, Written]:
    """Step 2, seeds: the sparse entry seeds, the nodes the query names, the working files; and the
    files' overlap share and the lines each neighbour wrote in them (None without files)."""
    # sparse seeds: the top-s entry candidates within seed_ratio of the best, activation relative to the best.
    # A clear winner seeds alone; near-ties (the question's hops scoring alike) all seed.
    order = np.argsort(-e.entry, kind="stable")
    sa = x.seed_allowed
    if sa is not None and order.size:
        cand = e.nodes[order]
        order = order[(cand < sa.shape[0]) & sa[np.minimum(cand, sa.shape[0] - 1)]]
    top = order[: cfg.seeds]
    top = top[e.entry[top] > 0]
    if top.size:
        top = top[e.entry[top] >= cfg.seed_ratio * e.entry[top[0]]]
        if cfg.lexical_seed:
            top = _with_lexical_best(top, order, e)
    seeds = e.nodes[top]
    seed_acts = e.entry[top] / (e.entry[top].max() if top.size else 1.0)
    if cfg.structural_specificity and x.structural is not None and seeds.size:
        seed_acts = _structural_seed_scale(x.graph, x.structural, seeds, seed_acts)
    query_seeds = x.query_seeds
    if query_seeds is not None and x.visible is not None:
        shown = mask_at(x.visible, query_seeds[0])
        query_seeds = (query_seeds[0][shown], query_seeds[1][shown])
    if query_seeds is not None and query_seeds[0].size:
        seeds, seed_acts = _add_query_seeds(seeds, seed_acts, *query_seeds, e)
    extra = x.extra_seeds
    if extra is not None and x.visible is not None:
        extra = extra[mask_at(x.visible, extra)]
    overlap = written = None
    if extra is not None and extra.size:
        extra = np.unique(extra)
        use_seeds, use_overlap = cfg.working_files.seed_weight > 0, cfg.working_files.overlap_weight > 0
        edge_lines = x.edge_lines if cfg.authorship.weight > 0 else None
        use_lines = edge_lines is not None
        if (use_seeds and cfg.working_files.specificity) or use_overlap or use_lines:
            file_exp, file_spec = _file_neighbours(x.graph, extra, x.graph.n_nodes)
        if use_seeds:
            scale = file_spec if cfg.working_files.specificity else None
            seeds, seed_acts = _add_extra_seeds(seeds, seed_acts, extra, cfg.working_files.seed_weight, scale)
        if use_overlap:
            overlap = _file_overlap(file_exp, file_spec, x.visible)
        if edge_lines is not None:
            written = _lines_written(file_exp, edge_lines, x.visible)
    code = x.code
    if code is not None and cfg.blame_seed_weight > 0 and code.blame.any():
        # the commits that last touched the changed lines seed the graph (their PRs, the issues they fix)
        on = code.blame > 0
        seeds, seed_acts = _add_extra_seeds(seeds, seed_acts, code.nodes[on], cfg.blame_seed_weight, code.blame[on])
    return seeds, seed_acts, overlap, written


def _graph_step(
    cfg: SearchConfig, x: RankInputs, seeds: np.ndarray, seed_acts: np.ndarray, qsim: np.ndarray
) -> GraphSignal | None:
    """Step 3, graph: the configured channel from the seeds."""
    qtypes = [x.rel_ids[t] for t in cfg.query_types if t in x.rel_ids]
    if cfg.query_types and not qtypes:
        qtypes = [-2]  # named types that do not exist: every typed edge is off-type
    vectors = x.vectors
    return run_channel(
        ChannelInput(
            cfg,
            x.graph,
            seeds,
            seed_acts,
            qsim,
            vectors.matrix if vectors.n else None,
            qtypes,
            x.extra_sources,
            visible=x.visible,
        )
    )


def _fuse_step(
    qvec: np.ndarray | None,
    cfg: SearchConfig,
    x: RankInputs,
    ent: _EntryStep,
    sig: GraphSignal | None,
    overlap: Rows | None,
    written: Written = None,
    origin: int | None = None,
) -> _Fused:
    """Step 4, fuse: final = (1 - g)·entry + g·graph, then priming, the priors (priors.py), code evidence."""
    e = ent.e
    graph_nodes = sig.nodes if sig is not None else np.zeros(0, np.int64)
    graph_act = sig.score if sig is not None else np.zeros(0)
    code = x.code
    reached = sorted_union(graph_nodes, code.nodes) if code is not None else graph_nodes
    if origin is not None:  # the topic's earliest change is a hit even when no channel reached it
        reached = sorted_union(reached, np.array([origin], np.int64))
    u = _Union.of(e.nodes, reached)
    nodes, in_e = u.nodes, u.in_e
    entry = u.take(e.match)  # the final ranking uses the corpus-anchored query match
    dense = u.take(e.dense_abs)
    if ent.floor is not None and cfg.fusion == "linear" and ent.dense_nodes.size and not in_e.all():
        # graph-reached nodes outside the candidate lists keep their dense query match instead of 0 (dense
        # candidates mean the query had a vector)
        assert qvec is not None
        out = np.flatnonzero(~in_e)
        sims = x.vectors.similarity_of(qvec, nodes[out])[nodes[out]] if ent.approx else ent.qsim[nodes[out]]
        dense[out] = dense_match(sims, float(ent.dense_scores[0]), ent.floor)
        entry[out] = cfg.dense_weight / (cfg.lexical_weight + cfg.dense_weight or 1.0) * dense[out]
    go = np.argsort(graph_nodes)
    graph_score = _values_at(graph_nodes[go], graph_act[go], nodes)
    if overlap is not None and overlap[0].size:
        graph_score = graph_score + cfg.working_files.overlap_weight * _values_at(overlap[0], overlap[1], nodes)
    g = cfg.graph_weight if cfg.uses_graph else 0.0
    final = (1.0 - g) * entry + g * graph_score
    if e.blind is not None and g > 0:  # (issue 29) text in another script than the question: its lexical and
        # graph scores are unknown, not low (no BM25 term, no similarity link across scripts): never below its entry
        blind = u.take(e.blind, False)
        final = np.where(blind, np.maximum(final, entry), final)
    primed = np.zeros(nodes.shape[0])
    if x.priming is not None and x.priming.size and cfg.priming_weight:
        # recent successful use primes a node, but only among candidates this query found anyway
        # scope: only the query's own top candidates (what a consumer would be shown), so a source
        # used for one question cannot pull itself into unrelated answers
        scope = np.argsort(-final, kind="stable")[: cfg.priming_scope]
        scope = scope[final[scope] > 0]
        inside = scope[nodes[scope] < x.priming.shape[0]]
        primed[inside] = x.priming[nodes[inside]]
        final = final + cfg.priming_weight * primed
    applied = []
    for prior in PRIORS:  # recency, authorship, aggregate (priors.py): final × each one's factor
        got = prior.weigh(cfg, x, nodes, written)
        if got is not None:
            final = final * got[0]
            applied.append((prior, got[1]))
    # graph evidence and the priors may lift others beside the entry channels' common first node, not bury it
    agreed = _hold_agreed(x, e, u, final) if g > 0 or applied or primed.any() else None
    blame = code_score = None
    scale = (1.0, 0.0)
    if code is not None:
        # code evidence is added after the priors: the commit that wrote the changed lines is the likely
        # subject however old it is (SZZ), and the text/graph score orders the blamed commits among themselves
        # Both parts are relative to the best score without them, so they weigh the same against a prior that
        # multiplies (a commit that wrote a whole working file has authorship x3) as against a plain match.
        blame = _values_at(code.nodes, code.blame, nodes)
        code_score = _values_at(code.nodes, code.code, nodes)
        ref = float(final.max()) if final.size and final.max() > 0 else 1.0
        # a question asking which change introduced / removed an identifier is answered by its history first
        cw = cfg.code_intent_weight if code.intent else cfg.code_weight
        final = final + ref * (cfg.blame_weight * blame + cw * code_score)
        scale = (ref, cw)
    first = None
    if origin is not None:  # "when did X start": its earliest change first, the matches after it
        first = (nodes == origin).astype(np.float64)
        at = int(np.flatnonzero(first)[0])
        final[at] = np.nextafter(max(float(final.max()), 1e-9), np.inf)
    return _Fused(u, entry, dense, graph_score, primed, final, applied, blame, code_score, scale, agreed, first)


def _origin(q: Query, x: RankInputs) -> Origin | None:
    """The earliest change of the topic a "when did X start" question asks for (``Query.asks_origin``), among
    what this search shows (its filters and result types; never a file, a directory or a person); None when
    the code history answers (an identifier's introduction: code_evidence.py) or the engine gave no subjects."""
    if x.titles is None or x.code is not None and x.code.intent or not q.asks_origin:
        return None

    def shown(rows: np.ndarray) -> np.ndarray:
        ok = np.ones(rows.shape[0], bool)
        for mask in (x.visible, x.allowed):
            if mask is not None:
                ok &= mask_at(mask, rows)
        if x.structural is not None:
            ok &= ~mask_at(x.structural, rows)
        return ok

    search = lambda terms, k: x.lexical_search(terms, k, None)  # noqa: E731
    return origin_of(q.text, search, x.graph.n_nodes, x.event_time, shown, x.titles)


def _hold_agreed(x: RankInputs, e: EntryScores, u: _Union, final: np.ndarray) -> np.ndarray | None:
    """The graph never buries the node both entry channels rank first: ``final`` (in place) keeps it within
    ``fusion.AGREED_TOP`` of the nodes that may be hits; the column of the floor it was raised from (None)."""
    n = agreed_node(e)
    if n is None:
        return None
    eligible = final > 0
    if x.allowed is not None:
        eligible &= mask_at(x.allowed, u.nodes)
    at = int(np.searchsorted(u.nodes, n))
    floor = keep_agreed(final, at, eligible)
    if not floor:
        return None
    col = np.zeros(final.shape[0])
    col[at] = floor
    return col


def _keep(cfg: SearchConfig, x: RankInputs, f: _Fused) -> tuple[np.ndarray, np.ndarray]:
    """Positions (into ``f.u.nodes``) of the hits, best first: positive, allowed, at most ``limit`` (times
    ``change_groups.OVERFETCH`` when the hits are grouped by change afterwards); and the mask of the allowed."""
    nodes, ok = f.u.nodes, f.final > 0
    if x.allowed is not None:
        inside = nodes < x.allowed.shape[0]
        ok &= inside & x.allowed[np.minimum(nodes, x.allowed.shape[0] - 1)]
    keep = np.flatnonzero(ok)
    return keep[np.argsort(-f.final[keep], kind="stable")][: change_groups.pool_size(cfg, x.rel_ids)], ok


def _explain_step(
    sig: GraphSignal | None, cfg: SearchConfig, nodes: np.ndarray, graph_scores: np.ndarray
) -> dict[int, list[GraphPath]]:
    """Step 5, explain: each hit's best graph path (seed first)."""
    paths: dict[int, list[GraphPath]] = {}
    if sig is None or not cfg.explain_paths:
        return paths
    for n, gs in zip(nodes.tolist(), graph_scores.tolist()):
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
    return paths


def rank(query: Query | str, qvec: np.ndarray | None, cfg: SearchConfig, x: RankInputs) -> Ranking:
    """Rank nodes for ``query`` (read once: retrieval/query.py): entry → seeds → graph → fuse → explain
    (:class:`RankInputs` says what each mask means)."""
    q = Query.of(query)
    if q.looks_back and x.recency is not None:  # a question about a beginning does not prefer recent changes
        x = replace(x, recency=x.recency.looking_back())
    timings: dict[str, float] = {}
    ent = _entry_step(q, qvec, cfg, x, timings)
    seeds, seed_acts, overlap, written = _seed_step(cfg, x, ent.e)
    sig = _graph_step(cfg, x, seeds, seed_acts, ent.qsim)
    t3 = time.perf_counter()
    timings["graph"] = (t3 - ent.t_dense) * 1000
    origin = _origin(q, x)
    f = _fuse_step(qvec, cfg, x, ent, sig, overlap, written, origin.node if origin is not None else None)
    keep, eligible = _keep(cfg, x, f)
    links = None
    if change_groups.groups_changes(cfg, x.rel_ids):  # the nodes of one change become one hit (results.py)
        keep, links = change_groups.gather(x.graph, x.rel_ids, f.u.nodes, f.final, eligible, keep, x.placeholder)
    e, u = ent.e, f.u
    scores = {
        "lexical": u.take(e.lexical, at=keep),
        "dense": f.dense[keep],
        "entry": f.entry[keep],
        "seed_score": u.take(e.entry, at=keep),
        "graph": f.graph_score[keep],
        "priming": f.primed[keep],
        "final": f.final[keep],
    }
    if f.agreed is not None:  # the entry channels' common first node, raised to the top 3 (fusion.keep_agreed)
        scores["agreed_floor"] = f.agreed[keep]
    if f.origin is not None:  # the earliest change of the topic a "when did X start" asks for (origin.py)
        scores["origin"] = f.origin[keep]
    for prior, value in f.priors:  # each prior's columns: recency (+ repairs), lines_written, aggregate
        scores.update(prior.columns(cfg, x, value[keep], u.nodes[keep]))
    if f.blame is not None and f.code is not None:  # code evidence (added to final: blame_weight, code_weight)
        scores["blame"] = f.blame[keep]
        scores["code"] = f.code[keep]
        scores["code_scale"] = np.full(keep.shape[0], f.code_scale[0])  # final += scale·(wb·blame + wc·code)
        scores["code_weight"] = np.full(keep.shape[0], f.code_scale[1])  # wc: code_weight, or code_intent_weight
    ranks = {
        "lexical": u.take(e.lex_rank, 0, at=keep),
        "dense": u.take(e.dense_rank, 0, at=keep),
        "entry": _rank_of(f.entry, f.entry > 0)[keep],
        "graph": _rank_of(f.graph_score, f.graph_score > 0)[keep],
        "final": np.arange(1, keep.shape[0] + 1),
    }
    out_nodes = u.nodes[keep]
    graph_of = dict(zip(out_nodes.tolist(), scores["graph"].tolist()))

    def explainer(ns: list[int]) -> dict[int, list[GraphPath]]:
        return _explain_step(sig, cfg, np.asarray(ns, np.int64), np.array([graph_of.get(n, 0.0) for n in ns]))

    timings["fuse"] = (time.perf_counter() - t3) * 1000
    evidence = {}
    if x.code is not None and x.code.why:
        evidence = {n: x.code.why[n] for n in out_nodes.tolist() if n in x.code.why}
    reading = read_query(q, origin, x.code)
    return Ranking(
        out_nodes,
        scores,
        ranks,
        seeds,
        {},
        timings,
        evidence=evidence,
        changes=links,
        reading=reading,
        explainer=explainer,
    )
