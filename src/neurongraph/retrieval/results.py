"""Search results: hits that explain themselves, the result a search returns, and how a trace stores them.

Why here and not in the engine: a hit's fields, its ``formula``/``explain`` and the assembly of hits
from a :class:`~neurongraph.retrieval.pipeline.Ranking` (ids, titles, paths, meta read for the few hits
only) are what every interface serialises; the engine only runs the search and records the trace.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import SearchConfig
from ..model import strict_dumps
from ..store.base import Store
from . import change_groups
from .pipeline import GraphPath, Ranking
from .priors import PRIORS

__all__ = ["HIT_META_KEYS", "Hit", "SearchResult", "TraceWriter", "assemble", "trace_hit"]

HIT_META_KEYS = ("sha", "author")  # node metadata a hit shows (Hit.meta; its date comes from the event time)


@dataclass
class Hit:
    """One search result with every score part and the paths that found it, so it can explain itself."""

    id: str
    type: str
    title: str
    text: str
    scores: dict[str, float]
    ranks: dict[str, int | None]
    paths: list[dict[str, Any]] = field(default_factory=list)
    seed: bool = False  # a sparse seed of the graph channel (its graph score is its own activation)
    meta: dict[str, str] = field(default_factory=dict)  # what a reader needs to place it: sha (12), date, author
    config: SearchConfig | None = field(default=None, repr=False, compare=False)  # the search's: explain()'s weights
    evidence: list[str] = field(default_factory=list)  # code evidence: "last changed lines 120–131 of f.c before this"
    refs_not_ingested: list[str] = field(default_factory=list)  # "#7": issues its message names that no node has
    # the change this hit stands for (change_groups.describe): its PR, the commit(s) that landed it, its branch
    # commits and the other ranked nodes folded into this hit; None when the change is this node alone
    change: dict[str, Any] | None = None

    @property
    def score(self) -> float:
        return self.scores["final"]

    def to_dict(self, snippet_chars: int | None = 300) -> dict[str, Any]:
        text = (
            self.text if snippet_chars is None or len(self.text) <= snippet_chars else self.text[:snippet_chars] + "…"
        )
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "text": text,
            "seed": self.seed,
            "meta": self.meta,
            "evidence": self.evidence,
            "refs_not_ingested": self.refs_not_ingested,
            "change": self.change,
            "scores": self.scores,
            "ranks": self.ranks,
            "paths": self.paths,
        }

    def formula(self, cfg: SearchConfig | None = None) -> tuple[str, float]:
        """How ``final`` is formed (retrieval/pipeline.py ``_fuse_step``), with this hit's numbers, and the
        value the formula gives: ``((1-g)·entry + g·graph + p·primed) × recency × authorship × aggregate``
        (raised to ``agreed_floor`` for the node both entry channels rank first, fusion.py ``keep_agreed``; to
        the top for the earliest change a "when did X start" asks for, origin.py),
        plus the code evidence (``best × (blame_weight·blame + code_weight·code)``, best = the ranking's top
        score without it, so its part is read off ``final``)."""
        cfg = cfg or self.config or SearchConfig()
        s = self.scores
        g = cfg.graph_weight if cfg.uses_graph else 0.0
        value = (1.0 - g) * s["entry"] + g * s["graph"]
        text = f"({1.0 - g:.2f}·entry {s['entry']:.3f} + {g:.2f}·graph {s['graph']:.3f}"
        if s.get("priming"):
            value += cfg.priming_weight * s["priming"]
            text += f" + {cfg.priming_weight:.2f}·primed {s['priming']:.3f}"
        text += ")"
        for prior in PRIORS:  # each prior's factor, in the order the pipeline applied them (priors.py)
            term = prior.term(cfg, s)
            if term is not None:
                value *= term[0]
                text += term[1]
        if s.get("agreed_floor"):  # lexical and dense both rank it first: held within the top 3 (fusion.py)
            value = max(value, float(np.nextafter(s["agreed_floor"], np.inf)))
            text = f"max({text}, {s['agreed_floor']:.3f} [lexical and dense rank it first: kept in the top 3])"
        if "blame" in s and "code" in s and (s["blame"] or s["code"]):
            # code evidence, added after the priors in proportion to the search's best score without it (a number
            # of the whole ranking, not of this hit): shown as the part of final it is, with its inputs
            scale, wc = s.get("code_scale", 1.0), s.get("code_weight", cfg.code_weight)
            part = scale * (cfg.blame_weight * s["blame"] + wc * s["code"])
            value += part
            text += (
                f" + {scale:.3f}·({cfg.blame_weight:.2f}·blame {s['blame']:.3f} + {wc:.2f}·code {s['code']:.3f})"
                " [code evidence × the best score without it]"
            )
        if s.get("origin"):  # "when did X start": the topic's earliest change, put first (origin.py)
            value = max(value, s["final"])
            text = f"top({text}) [the earliest change whose subject names the topic asked about: put first]"
        return f"final {s['final']:.3f} = {text}", value

    def explain(self, cfg: SearchConfig | None = None) -> str:
        """Every factor of the final score (so the line adds up), the entry parts and the best graph path."""
        s = self.scores
        cfg = cfg or self.config or SearchConfig()
        parts = [
            self.formula(cfg)[0],
            f"entry {s['entry']:.3f} from lexical {s['lexical']:.3f} and dense {s['dense']:.3f}"
            + (f" ({cfg.fusion} fusion)" if cfg.fusion != "linear" else ""),
        ]
        parts.extend(f"code: {e}" for e in self.evidence)  # "last changed lines 120–131 of f.c before this"
        for p in self.paths:
            hops = " ".join(f"-[{e['rel']} w={e['weight']:.2f}]-> {e['dst']}" for e in p["edges"])
            parts.append(f"path: {p['nodes'][0]} {hops}")
        if not self.paths:
            parts.append(
                "seed: entered by lexical/dense retrieval; the graph spreads from here"
                if self.seed
                else "reached by entry retrieval only (no graph path)"
            )
        return "\n".join(parts)


@dataclass
class SearchResult:
    """A search's hits, the configuration it ran with and its trace id (what interfaces serialise)."""

    trace_id: str
    query: str
    hits: list[Hit]
    config: SearchConfig
    seeds: list[str]
    timings_ms: dict[str, float]
    unknown_files: list[str] = field(default_factory=list)  # paths of `files` with no `file:<path>` node
    # False when the store could not take the trace (a full disk): the hits stand, feedback on them cannot
    trace_saved: bool = True
    warnings: list[str] = field(default_factory=list)
    # what the question was read as when it asks for a beginning, an introduction or a removal (reading.py)
    reading: dict[str, Any] | None = None
    read_as: str = ""  # the same, one line for --explain

    def to_dict(self, snippet_chars: int | None = 300) -> dict[str, Any]:
        d: dict[str, Any] = {
            "trace_id": self.trace_id,
            "query": self.query,
            "seeds": self.seeds,
            "hits": [h.to_dict(snippet_chars) for h in self.hits],
            "timings_ms": self.timings_ms,
        }
        if self.config.files:
            d["unknown_files"] = self.unknown_files
        if not self.trace_saved:
            d["trace_saved"] = False
        if self.warnings:
            d["warnings"] = self.warnings
        if self.reading is not None:
            d["reading"] = self.reading
        return d

    def __iter__(self) -> Iterator[Hit]:
        return iter(self.hits)

    def __len__(self) -> int:
        return len(self.hits)


def folded_hits(hits: list[Hit]) -> list[dict[str, Any]]:
    """The nodes a shown hit stands for (its change's PR, commits and folded results), stored after the shown
    hits with that hit's rank and ``folded_into``: an agent that reads one of them and reports it used is
    reporting a hit of this trace."""
    seen = {h.id for h in hits}
    out: list[dict[str, Any]] = []
    for k, h in enumerate(hits):
        ch = h.change or {}
        for member in [
            ch.get("pr"),
            *(ch.get("landed_by") or []),
            *(ch.get("commits") or []),
            *(ch.get("folded") or []),
        ]:
            if isinstance(member, str) and member not in seen:
                seen.add(member)
                out.append(
                    {"rank": k + 1, "id": member, "folded_into": h.id, "scores": {"final": h.scores.get("final")}}
                )
    return out


def trace_hit(rank: int, h: Hit) -> dict[str, Any]:
    """A hit as a trace stores it: ``Hit.to_dict()`` without the text, after its rank (same keys, same order)."""
    return {
        "rank": rank,
        "id": h.id,
        "type": h.type,
        "title": h.title,
        "seed": h.seed,
        "meta": h.meta,
        "evidence": h.evidence,
        "refs_not_ingested": h.refs_not_ingested,
        "change": h.change,
        "scores": h.scores,
        "ranks": h.ranks,
        "paths": h.paths,
    }


def rel_name(rel: int | str, names: dict[int, str]) -> str:
    """A path hop's relation: a name already (metadata links), or a predicate id to name."""
    return rel if isinstance(rel, str) else names.get(rel, str(rel))


def _paths_of(
    graph_paths: list[GraphPath], rows: dict[int, tuple[str, str, str, str]], rel_names: dict[int, str]
) -> list[dict[str, Any]]:
    """A hit's graph paths with node ids and relation names (a node deleted meanwhile: its index)."""
    paths = []
    for p in graph_paths:
        ids = [rows[x][0] if x in rows else str(x) for x in p.nodes]
        paths.append(
            {
                "nodes": ids,
                "edges": [
                    {"src": ids[k], "dst": ids[k + 1], "weight": p.weights[k], "rel": rel_name(p.rel_ids[k], rel_names)}
                    for k in range(p.hops)
                ],
                "score": p.score,
            }
        )
    return paths


def assemble(
    store: Store,
    event_time: np.ndarray,
    rel_ids: dict[str, int],
    query: str,
    cfg: SearchConfig,
    r: Ranking,
    placeholders: Callable[[list[int]], set[int]] | None = None,
) -> SearchResult:
    """The result of a ranking: heads, paths and meta read from the store for the hits shown and the seeds only
    (a search grouped by change ranks more nodes than it shows; ``placeholders``: which of them are a git
    reader's placeholders, from the engine's in-memory marks; else read from the store)."""
    t0 = time.perf_counter()
    nodes = r.nodes.tolist()
    if r.changes is not None:  # (a node deleted by another process since the ranking is left out below)
        flags = placeholders or (lambda ns: store.node_flags(ns, "placeholder"))
        shown = _by_change(store, r, nodes, cfg.limit, flags)
    else:
        shown = [(i, None) for i in range(len(nodes))]
    paths = r.paths_for([nodes[i] for i, _ in shown])
    want = {nodes[i] for i, _ in shown} | set(r.seeds.tolist())
    want |= {x for ps in paths.values() for p in ps for x in p.nodes}
    if r.reading is not None and r.reading.node is not None:
        want.add(r.reading.node)
    rows = store.node_heads(want)  # (id, type, title, text)
    rel_names = {v: k for k, v in rel_ids.items()}
    seed_set = set(r.seeds.tolist())
    score_cols = {k: v.tolist() for k, v in r.scores.items()}  # Python numbers once, not per hit and key
    rank_cols = {k: v.tolist() for k, v in r.ranks.items()}
    hits: list[Hit] = []
    for i, change in shown:
        n = nodes[i]
        head = rows.get(n)
        if head is None:  # deleted by another process between ranking and reading
            continue
        ranks = {k: (int(v[i]) or None) for k, v in rank_cols.items()}
        if r.changes is not None:  # its final rank among the hits shown, one per change
            ranks["final"] = len(hits) + 1
        hits.append(
            Hit(
                id=head[0],
                type=head[1],
                title=head[2],
                text=head[3],
                scores={k: float(v[i]) for k, v in score_cols.items()},
                ranks=ranks,
                paths=_paths_of(paths[n], rows, rel_names),
                seed=n in seed_set,
                evidence=r.evidence.get(n, []),
                config=cfg,
                change=change,
            )
        )
    _hit_meta(store, event_time, hits, [nodes[i] for i, _ in shown if nodes[i] in rows])
    seeds = [rows[s][0] for s in r.seeds.tolist() if s in rows]
    ids = {n: head[0] for n, head in rows.items()}
    r.timings_ms["explain"] = (time.perf_counter() - t0) * 1000
    return SearchResult(
        trace_id="tr_" + uuid.uuid4().hex[:20],
        query=query,
        hits=hits,
        config=cfg,
        seeds=seeds,
        timings_ms={k: round(v, 3) for k, v in r.timings_ms.items()},
        unknown_files=list(r.unknown_files),
        reading=r.reading.to_dict(ids) if r.reading is not None else None,
        read_as=r.reading.line(ids) if r.reading is not None else "",
    )


def _by_change(
    store: Store, r: Ranking, nodes: list[int], limit: int, placeholders: Callable[[list[int]], set[int]]
) -> list[tuple[int, dict[str, Any] | None]]:
    """The positions of the hits shown, one per change (change_groups.py), at most ``limit``, each with its
    ``change``.  Reads the ids of the shown changes' members, nothing else (``placeholders``: the flags)."""
    links = r.changes
    assert links is not None
    groups = change_groups.collapse(nodes, links, placeholders(nodes) if nodes else set(), limit)
    want: set[int] = set()
    for k, _, m in groups:  # only a change of several nodes, or a PR's, names its members (describe)
        if len(m) > 1 or k in links.landing:
            want.update(nodes[i] for i in m)
            want.update((k, *links.landing.get(k, ()), *links.branch.get(k, ())))
    ids = store.ids_by_idx(want) if want else {}
    return [(shown, change_groups.describe(k, members, nodes, links, ids, shown)) for k, shown, members in groups]


def _hit_meta(store: Store, t: np.ndarray, hits: list[Hit], idx: list[int]) -> None:
    """Each hit's short sha (12), ISO date (its event time ``t``, UTC) and author, where the node has them:
    the date from the in-memory event times, sha and author read from the store for these nodes only."""
    values = store.node_meta_values(idx, (*HIT_META_KEYS, "refs")) if idx else {}
    for h, n in zip(hits, idx):
        m: dict[str, str] = {}
        v = values.get(n, {})
        if isinstance(v.get("sha"), str) and v["sha"]:
            m["sha"] = v["sha"][:12]
        if n < t.shape[0] and not np.isnan(t[n]):
            try:
                m["date"] = time.strftime("%Y-%m-%d", time.gmtime(float(t[n])))
            except (OverflowError, OSError, ValueError):  # a time past what the platform can print
                pass
        if isinstance(v.get("author"), str) and v["author"]:
            m["author"] = v["author"]
        h.meta = m
    _unresolved_refs(store, hits, [values.get(n, {}).get("refs") for n in idx])


def _unresolved_refs(store: Store, hits: list[Hit], refs: list[object]) -> None:
    """``Hit.refs_not_ingested`` (``["#7", "#12"]``): issue numbers a hit's message names ("Fixes #7") with neither
    an ``issue:N`` (other than the git reader's placeholder) nor a ``pr:N`` node, so the reader knows the
    issue's text waits for an issue export instead of seeing nothing; one id lookup for all hits."""
    nums: list[list[str]] = []
    for r in refs:
        if isinstance(r, str):
            try:
                r = json.loads(r)
            except ValueError:
                r = None
        got = r.get("issues") if isinstance(r, dict) else None
        nums.append([str(n) for n in got if str(n).isdigit()] if isinstance(got, list) else [])
    wanted = {f"{k}:{n}" for ns in nums for n in ns for k in ("issue", "pr")}
    if not wanted:
        return
    known = store.lookup_idx(wanted)
    # an issue:N the git reader wrote as a placeholder (a number no PR has) is still not ingested
    issues = {i: k for i, k in known.items() if i.startswith("issue:")}
    held = store.node_meta_values(issues.values(), ["placeholder"]) if issues else {}
    known = {i: k for i, k in known.items() if not held.get(k, {}).get("placeholder")}
    for h, ns in zip(hits, nums):
        missing = [n for n in ns if f"issue:{n}" not in known and f"pr:{n}" not in known]
        h.refs_not_ingested = ["#" + n for n in missing]


class TraceWriter:
    """Records searches as traces (what ``explain``, feedback and learning read back later)."""

    def __init__(self, store: Store, model_id: str):
        self.store, self.model_id = store, model_id
        self._params: tuple[SearchConfig, dict[str, Any], str] | None = None  # (config, its flat form, that as JSON)

    def params_of(self, cfg: SearchConfig) -> tuple[dict[str, Any], str]:
        """A trace's ``params`` and their JSON, computed once per configuration object (the default one
        serves most searches) instead of once per recorded search."""
        memo = self._params
        if memo is None or memo[0] is not cfg:
            params = cfg.to_dict()
            memo = self._params = (cfg, params, strict_dumps(params))
        return memo[1], memo[2]

    def record(self, res: SearchResult) -> None:
        """Store the trace of ``res``; a store that refuses it (full disk, read-only file) leaves the result
        answered, with ``trace_saved`` False and a warning."""
        params, params_json = self.params_of(res.config)
        refused = self.store.try_save_trace(
            {
                "id": res.trace_id,
                "created_at": self.store.clock(),  # the store's "now", as the ledgers and retention use
                "query": res.query,
                "params": params,
                "params_json": params_json,
                "fingerprint": res.config.fingerprint(self.model_id),
                "hits": [trace_hit(k + 1, h) for k, h in enumerate(res.hits)] + folded_hits(res.hits),
            }
        )
        if refused is not None:  # the store is full or read-only: answer anyway, and say so
            res.trace_saved = False
            res.warnings.append(f"the trace was not stored ({refused}): feedback on this search cannot be recorded")
