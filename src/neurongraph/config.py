"""Search configuration: one frozen dataclass, overridable per call.

Every field is a documented knob with a measured default; there are no policy
flags read by ``getattr``.  ``fingerprint()`` identifies a configuration in traces
so a ranking can be reproduced and compared later.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass

from .errors import InvalidArgument

__all__ = ["SearchConfig", "CHANNELS", "FUSIONS", "BEAM_MODES"]

# upper bounds of the integer options (a beam of depth 1e5 took 5.9 GB; issue 17)
MAXIMA = {
    "limit": 1000,
    "lexical_k": 10_000,
    "dense_k": 10_000,
    "rrf_k": 10_000,
    "seeds": 100,
    "max_depth": 10,
    "explain_paths": 10,
    "beam_width": 256,
    "priming_scope": 10_000,
}

CHANNELS = ("spread", "beam", "ppr", "eager", "mmr", "scored", "none")
BEAM_MODES = ("mean", "min", "last")
FUSIONS = ("linear", "rrf")


@dataclass(frozen=True)
class SearchConfig:
    limit: int = 10  # hits returned
    lexical_k: int = 100  # BM25 candidates
    lexical_budget: int = 10_000  # postings one query may read; most frequent terms dropped first (0 = no limit)
    dense_k: int = 100  # dense candidates
    ann_min_nodes: int = 200_000  # from this many vectors, spread/ppr/none use an IVF top-k (0 = always exact)
    ann_nprobe: int = 48  # IVF clusters scored per query (~5% of them at 1M nodes)
    fusion: str = "linear"  # entry fusion: normalised linear or reciprocal-rank
    lexical_weight: float = 0.3  # defaults measured on musique_train200 (docs/benchmarks.md)
    dense_weight: float = 0.7
    rrf_k: int = 60
    seeds: int = 4  # sparse seeds: pattern separation needs few (at most this many ...
    seed_ratio: float = 0.85  # ... and only those whose entry score is >= ratio x the best: adaptive count
    query_links: bool = True  # titles/entities named in the query become extra seeds (linked corpora)
    channel: str = "spread"  # graph channel ("none" = hybrid entry only)
    max_depth: int = 2
    direction: str = "both"  # graph walks: "both" ways along edges (default) or "out" only
    reverse_weight: float = 0.5  # with "both": weight factor of a step against an edge (measured)
    depth_decay: float = 0.85
    min_act: float = 0.01
    query_types: tuple[str, ...] = ()  # relation names the question is about (empty = layer off)
    alpha: float = 1.0  # attenuation of typed edges outside query_types
    beta: float = 1.0  # attenuation of negative-polarity typed edges
    beam_width: int = 4  # beam channel: paths kept per seed and depth
    beam_mode: str = "mean"  # path score: mean / min / last of per-node query similarity
    beam_min_sim: float = 0.0  # nodes less similar to the query end a path
    ppr_damping: float = 0.5  # ppr channel: restart probability 1 - damping (HippoRAG uses 0.5)
    strategy: object = None  # a traversal Strategy (Eager/Mmr/Scored) for this call; sets the channel
    metadata_edges: tuple = ()  # strategies: ("field", "field") / ("field", "$id") metadata links
    graph_weight: float = 0.7  # final = (1-g)·entry + g·graph
    priming_weight: float = 0.6  # final += w · query-conditioned activation of recently used nodes
    priming_scope: int = 50  # ... applied only within the query's top candidates
    result_types: tuple[str, ...] = ()  # only return nodes of these types (empty = all)
    exclude_types: tuple[str, ...] = ("entity",)  # never hits nor entry seeds: linker entities are bridges, not sources
    entry_types: tuple[str, ...] = ()  # only these types enter by BM25/dense and seed (empty = all)
    include_superseded: bool = False  # also return entry revisions that a newer one supersedes
    explain_paths: int = 1  # best paths kept per hit
    # filters (docs/graph-channels.md, "Search options"): a node a filter excludes is not in the graph for this
    # search: never a hit, an entry candidate or a seed, and activation never flows through it or its edges.
    # A filter judges only nodes that carry its field (files and entities usually have no time or state).
    as_of: float | None = None  # the store as it was at T (epoch s; ISO-8601 accepted): event time > T is hidden
    since: float | None = None  # event time (metadata "time") >= since
    until: float | None = None  # event time <= until
    sources: tuple[str, ...] = ()  # metadata "source" (repository / site) is one of these
    where: tuple = ()  # metadata equality, {"state": "open"} (kept as sorted (key, value) pairs)
    files: tuple[str, ...] = ()  # the agent's working files: existing `file:<path>` nodes become extra seeds
    file_seed_weight: float = 2.0  # their activation relative to the best entry seed (not hits themselves)
    file_overlap_weight: float = 0.5  # graph score += w × the share of the files' specificity a node touches
    file_seed_specificity: bool = True  # scale each file seed by how few nodes touch it (idf): a file every
    # change touches says little about which change the question is about
    # recency prior for nodes with an event time (retrieval/recency.py): final × ((1-w) + w·S(age)), age
    # counted back from as_of/until (else the newest event in the store); S = the share of the store's own
    # observed repair gaps (recency_relations) at least that long, or 0.5^(age/half-life) when fewer than
    # 20 are known.  Timeless nodes are unchanged; no effect on stores without times.
    recency_weight: float = 0.5
    recency_half_life_days: float = 365.0
    recency_relations: tuple[str, ...] = ("fixes", "follows_up", "reverts")

    def __post_init__(self):
        def positive(name):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 0:
                raise InvalidArgument(f"{name} must be a non-negative integer, got {v!r}")

        for name in (
            "limit",
            "lexical_k",
            "dense_k",
            "rrf_k",
            "seeds",
            "max_depth",
            "explain_paths",
            "beam_width",
            "priming_scope",
            "lexical_budget",
            "ann_min_nodes",
            "ann_nprobe",
        ):
            positive(name)
        for name, top in MAXIMA.items():  # documented bounds: a search's memory and time stay bounded
            if getattr(self, name) > top:
                raise InvalidArgument(f"{name} must be at most {top}, got {getattr(self, name)}")
        if self.beam_width == 0:
            raise InvalidArgument("beam_width must be at least 1")
        if (
            not isinstance(self.beam_min_sim, (int, float))
            or isinstance(self.beam_min_sim, bool)
            or not math.isfinite(self.beam_min_sim)
        ):
            raise InvalidArgument(f"beam_min_sim must be a finite number, got {self.beam_min_sim!r}")
        if self.limit == 0:
            raise InvalidArgument("limit must be at least 1")
        if self.ann_nprobe == 0:
            raise InvalidArgument("ann_nprobe must be at least 1")
        if self.fusion not in FUSIONS:
            raise InvalidArgument(f"fusion must be one of {FUSIONS}, got {self.fusion!r}")
        if self.strategy is not None:
            from .graph.strategies import Strategy

            if not isinstance(self.strategy, Strategy):
                raise InvalidArgument(f"strategy must be an Eager, Mmr or Scored instance, got {self.strategy!r}")
            object.__setattr__(self, "channel", type(self.strategy).__name__.lower())
        if self.direction not in ("out", "both"):
            raise InvalidArgument(f"direction must be 'out' or 'both', got {self.direction!r}")
        if self.beam_mode not in BEAM_MODES:
            raise InvalidArgument(f"beam_mode must be one of {BEAM_MODES}, got {self.beam_mode!r}")
        if not 0 <= self.ppr_damping < 1:
            raise InvalidArgument(f"ppr_damping must be within [0, 1), got {self.ppr_damping}")
        object.__setattr__(self, "metadata_edges", tuple(tuple(m) for m in self.metadata_edges))
        for m in self.metadata_edges:
            if len(m) != 2 or not all(isinstance(x, str) and x for x in m):
                raise InvalidArgument(f"metadata_edges entries must be (field, field) pairs, got {m!r}")
        if self.channel not in CHANNELS:
            raise InvalidArgument(f"channel must be one of {CHANNELS}, got {self.channel!r}")
        for name in (
            "lexical_weight",
            "dense_weight",
            "depth_decay",
            "min_act",
            "alpha",
            "beta",
            "graph_weight",
            "reverse_weight",
            "priming_weight",
            "file_overlap_weight",
        ):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
                raise InvalidArgument(f"{name} must be a finite number >= 0, got {v!r}")
        if (
            not isinstance(self.seed_ratio, (int, float))
            or isinstance(self.seed_ratio, bool)
            or not 0 <= self.seed_ratio <= 1
        ):
            raise InvalidArgument(f"seed_ratio must be within 0..1, got {self.seed_ratio!r}")
        if self.graph_weight > 1:
            raise InvalidArgument(f"graph_weight must be within 0..1, got {self.graph_weight}")
        object.__setattr__(self, "recency_relations", tuple(self.recency_relations))
        if not all(isinstance(r, str) and r for r in self.recency_relations):
            raise InvalidArgument(f"recency_relations must be relation names, got {self.recency_relations!r}")
        object.__setattr__(self, "query_types", tuple(self.query_types))
        object.__setattr__(self, "result_types", tuple(self.result_types))
        object.__setattr__(self, "entry_types", tuple(self.entry_types))
        object.__setattr__(self, "exclude_types", tuple(self.exclude_types))
        self._check_filters()

    def _check_filters(self) -> None:
        from .times import to_epoch

        for name in ("as_of", "since", "until"):
            v = getattr(self, name)
            if v is not None:
                try:
                    object.__setattr__(self, name, to_epoch(v))
                except ValueError as exc:
                    raise InvalidArgument(f"{name}: {exc}") from None
        if self.since is not None and self.until is not None and self.since > self.until:
            raise InvalidArgument(f"since ({self.since}) is after until ({self.until}): the range is empty")
        for name in ("sources", "files"):
            v = getattr(self, name)
            if isinstance(v, str):
                v = (v,)  # one name or path
            if not isinstance(v, (list, tuple)):
                raise InvalidArgument(f"{name} must be a list of strings, got {type(v).__name__}")
            for x in v:
                if not isinstance(x, str) or not x.strip():
                    raise InvalidArgument(f"{name} must hold non-empty strings, got {x!r}")
            object.__setattr__(self, name, tuple(v))
        w = self.where
        if isinstance(w, dict):
            w = list(w.items())
        if not isinstance(w, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in w):
            raise InvalidArgument(
                f"where must be a mapping of metadata keys to values, e.g. {{'state': 'open'}}, got {self.where!r}"
            )
        seen = set()
        for key, value in w:
            if not isinstance(key, str) or not key or any(ch in key for ch in '"\\') or not key.isprintable():
                raise InvalidArgument(
                    f"where: a metadata key must be a non-empty printable string without quotes "
                    f"or backslashes, got {key!r}"
                )
            if key in seen:
                raise InvalidArgument(f"where: key {key!r} is given twice")
            seen.add(key)
            ok = isinstance(value, (str, bool)) or (
                isinstance(value, (int, float)) and math.isfinite(value) and abs(value) < 2**63
            )
            if not ok:
                raise InvalidArgument(f"where[{key!r}] must be a string, a finite number or a boolean, got {value!r}")
        object.__setattr__(self, "where", tuple(sorted((k, v) for k, v in w)))
        if (
            not isinstance(self.recency_weight, (int, float))
            or isinstance(self.recency_weight, bool)
            or not 0 <= self.recency_weight <= 1
        ):
            raise InvalidArgument(f"recency_weight must be within 0..1, got {self.recency_weight!r}")
        hl = self.recency_half_life_days
        if not isinstance(hl, (int, float)) or isinstance(hl, bool) or not (hl > 0) or hl == float("inf"):
            raise InvalidArgument(f"recency_half_life_days must be a finite number > 0, got {hl!r}")
        v = self.file_seed_weight
        if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
            raise InvalidArgument(f"file_seed_weight must be a number >= 0, got {v!r}")

    @property
    def filtered(self) -> bool:
        """Whether any node filter (as_of, since, until, sources, where) is set."""
        return (
            self.as_of is not None
            or self.since is not None
            or self.until is not None
            or bool(self.sources)
            or bool(self.where)
        )

    def replace(self, **overrides) -> SearchConfig:
        """A modified copy; unknown names are an error, not silently ignored."""
        names = {f.name for f in dataclasses.fields(self)}
        bad = set(overrides) - names
        if bad:
            raise InvalidArgument(f"unknown search option(s) {sorted(bad)}; known: {sorted(names)}")
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict:
        d = dataclasses.asdict(self)
        d["query_types"] = list(self.query_types)
        d["result_types"] = list(self.result_types)
        d["entry_types"] = list(self.entry_types)
        d["exclude_types"] = list(self.exclude_types)
        d["metadata_edges"] = [list(m) for m in self.metadata_edges]
        d["sources"] = list(self.sources)
        d["where"] = dict(self.where)
        d["files"] = list(self.files)
        d["strategy"] = (
            None
            if self.strategy is None
            else {
                "kind": type(self.strategy).__name__,
                **{k: v for k, v in dataclasses.asdict(self.strategy).items() if not callable(v)},
            }
        )
        return d

    def fingerprint(self, *parts: str) -> str:
        payload = json.dumps([self.to_dict(), *parts], sort_keys=True, default=str)
        return hashlib.blake2b(payload.encode(), digest_size=8).hexdigest()
