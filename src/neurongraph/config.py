"""Search configuration: one frozen dataclass, overridable per call.

Every field is a documented knob with a measured default; there are no policy
flags read by ``getattr``.  ``fingerprint()`` identifies a configuration in traces
so a ranking can be reproduced and compared later.

``SearchConfig`` holds what every search has (limits, entry fusion, seeds, weights, filters) and one
graph-channel object, ``channel`` (``channels.py``: ``Spread`` / ``Beam`` / ``Ppr`` / ``NoGraph``, or a
traversal strategy ``Eager`` / ``Mmr`` / ``Scored``), which carries that channel's own parameters.

Compatibility: the flat option names of earlier versions (``max_depth``, ``direction``,
``reverse_weight``, ``depth_decay``, ``min_act``, ``beam_width``, ``beam_mode``, ``beam_min_sim``,
``ppr_damping``, ``strategy``; and the spread's ``fan_ref``, ``fan_power``) keep working in
:meth:`SearchConfig.from_options` and :meth:`SearchConfig.replace` (so in ``Engine.search(**overrides)``, the
CLI and the MCP server):

* ``channel="beam"`` (a kind name) selects that channel; flat options the new channel shares with the
  current one (``max_depth``) carry over, as they did when they were flat fields;
* a flat option sets that parameter of the selected channel; one that the selected channel does not
  have is still validated (``beam_width=0`` is an error whatever the channel) and has no effect;
* ``strategy=Mmr(...)`` is the old spelling of ``channel=Mmr(...)``: it *is* the channel.  Given
  together with a ``channel`` of another kind it is an error, never a silent rewrite.

The priors' parameters are grouped the same way (``working_files``, ``authorship``, ``recency``,
``aggregate``: ``WorkingFileOptions`` ... ``AggregateOptions``); their flat names (``file_seed_weight``,
``authorship_weight``, ``recency_weight``, ``repair_weight``, ``aggregate_weight``, ...; ``PRIOR_OPTIONS``)
set a field of their group in :meth:`SearchConfig.from_options` and :meth:`SearchConfig.replace`.

``to_dict()`` (trace ``params``, ``fingerprint()``) keeps the flat form, so traces stay comparable.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, get_args

from .channels import BEAM_MODES, CHANNELS, PARAMETRISED, Channel, NoGraph, OptionGroup, Spread
from .checks import MAXIMA, check_choice, check_int, check_number, check_strings
from .errors import InvalidArgument
from .times import to_epoch

__all__ = [
    "SearchConfig",
    "CHANNELS",
    "FUSIONS",
    "BEAM_MODES",
    "MAXIMA",
    "LEGACY_OPTIONS",
    "PRIOR_OPTIONS",
    "FRONTIER_CAP",
    "AggregateOptions",
    "AuthorshipOptions",
    "RecencyOptions",
    "WorkingFileOptions",
]

# spread: frontier nodes that propagate per hop, highest activation first (graph/spread.py).  Not reached
# on the QA sets nor at 1M nodes / 10M edges with 4 seeds (~80 nodes at hop 2); it bounds a hub seed's hop.
FRONTIER_CAP = 1000
BLAME_SOURCES = ("hunks", "git")  # where line provenance comes from (SearchConfig.blame_source)

Fusion = Literal["linear", "rrf"]
FUSIONS: tuple[str, ...] = get_args(Fusion)

# flat option names of the channel parameters (from_options / replace) -> the channel class owning them
LEGACY_OPTIONS: dict[str, type[Channel]] = {
    flat: cls for cls in reversed(PARAMETRISED) for flat in cls.LEGACY
}  # "max_depth" -> Spread (the default channel) though Beam has it too
_LEGACY_ORDER = (
    "channel",
    "max_depth",
    "direction",
    "reverse_weight",
    "depth_decay",
    "min_act",
    "fan_ref",
    "fan_power",
)
_LEGACY_ORDER_2 = ("beam_width", "beam_mode", "beam_min_sim", "ppr_damping", "strategy")

_TYPE_LISTS = ("query_types", "result_types", "entry_types", "exclude_types", "structural_types")
_COUNTS = ("limit", "lexical_k", "dense_k", "rrf_k", "seeds", "explain_paths", "priming_scope")
_WEIGHTS = ("lexical_weight", "dense_weight", "alpha", "beta", "graph_weight", "priming_weight")


# ------------------------------------------------------------------ the priors' parameters, grouped
# Each group is one field of SearchConfig; its flat option names (LEGACY) keep working in from_options and
# replace, and to_dict() writes them flat, in the order they had as fields, so traces stay comparable.
@dataclass(frozen=True)
class WorkingFileOptions(OptionGroup):
    """How the agent's working files (``files``) seed and score: their seeds' activation relative to the
    best entry seed, the overlap share added to the graph score, and the idf scaling of each file seed (a
    file every change touches says little about which change the question is about)."""

    LEGACY: ClassVar[dict[str, str]] = {
        "file_seed_weight": "seed_weight",
        "file_overlap_weight": "overlap_weight",
        "file_seed_specificity": "specificity",
    }
    seed_weight: float = 2.0
    overlap_weight: float = 0.4
    specificity: bool = True

    def __post_init__(self) -> None:
        check_number("file_seed_weight", self.seed_weight, lo=0)
        check_number("file_overlap_weight", self.overlap_weight, lo=0)


@dataclass(frozen=True)
class AuthorshipOptions(OptionGroup):
    """The authorship prior (retrieval/priors.py): final × (1 + a·ln(1 + lines)), lines = how many lines a node
    added to the working files (numeric ``added`` on its edges to them: git ingest's ``touches``)."""

    LEGACY: ClassVar[dict[str, str]] = {"authorship_weight": "weight"}
    weight: float = 0.3

    def __post_init__(self) -> None:
        check_number("authorship_weight", self.weight, lo=0, hi=10)


@dataclass(frozen=True)
class RecencyOptions(OptionGroup):
    """The recency and repair priors (retrieval/recency.py): final × ((1-w) + w·S(age)^g) × (1 + r·ln(1 + k)).
    Age counts back from as_of/until (else the newest event in the store); S = the share of the store's own
    observed repair gaps (``relations``) at least that long, or 0.5^(age/half-life) when fewer than 20 are
    known; k = how many repair edges made before "now" name the node.  No effect on stores without times."""

    LEGACY: ClassVar[dict[str, str]] = {
        "recency_weight": "weight",
        "recency_exponent": "exponent",
        "recency_half_life_days": "half_life_days",
        "repair_weight": "repair_weight",
        "recency_relations": "relations",
    }
    weight: float = 0.6
    exponent: float = 0.6  # g < 1 tempers S, which is ~0 for every age past the bulk of the gaps
    half_life_days: float = 365.0
    repair_weight: float = 0.3
    relations: tuple[str, ...] = ("fixes", "follows_up", "reverts")

    def __post_init__(self) -> None:
        check_number("recency_weight", self.weight, lo=0, hi=1)
        check_number("recency_exponent", self.exponent, lo=0.01, hi=10)
        check_number("repair_weight", self.repair_weight, lo=0, hi=10)
        hl = self.half_life_days
        if not isinstance(hl, (int, float)) or isinstance(hl, bool) or not (hl > 0) or hl == math.inf:
            raise InvalidArgument(f"recency_half_life_days must be a finite number > 0, got {hl!r}")
        object.__setattr__(self, "relations", check_strings("recency_relations", self.relations))


@dataclass(frozen=True)
class AggregateOptions(OptionGroup):
    """The aggregate prior (retrieval/priors.py): final × w for nodes an ingest marked ``aggregate: true``: a
    merge commit that merged no pull request repeats the commits it merges, which are nodes of their own,
    and on files every merge touches it crowds them out (docs/benchmarks.md, "Real history"); 1 = off."""

    LEGACY: ClassVar[dict[str, str]] = {"aggregate_weight": "weight"}
    weight: float = 0.5

    def __post_init__(self) -> None:
        check_number("aggregate_weight", self.weight, lo=0, hi=1)


_PRIOR_GROUPS: dict[str, type[OptionGroup]] = {
    "working_files": WorkingFileOptions,
    "authorship": AuthorshipOptions,
    "recency": RecencyOptions,
    "aggregate": AggregateOptions,
}
# flat option names of the priors' parameters (from_options / replace) -> the SearchConfig field of their group
PRIOR_OPTIONS: dict[str, str] = {flat: group for group, cls in _PRIOR_GROUPS.items() for flat in cls.LEGACY}


@dataclass(frozen=True)
class SearchConfig:
    """Every knob of one search, frozen and validated once, so a trace can record exactly what ran."""

    limit: int = 10  # hits returned
    lexical_k: int = 100  # BM25 candidates
    lexical_budget: int = 10_000  # postings one query may read; most frequent terms dropped first (0 = no limit)
    dense_k: int = 100  # dense candidates
    ann_min_nodes: int = 200_000  # from this many vectors, spread/ppr/none use an IVF top-k (0 = always exact)
    ann_nprobe: int = 48  # IVF clusters scored per query (~5% of them at 1M nodes)
    frontier_cap: int = FRONTIER_CAP  # spread: at most this many frontier nodes propagate per hop (0 = no cap)
    fusion: Fusion = "linear"  # entry fusion: normalised linear or reciprocal-rank
    lexical_weight: float = 0.3  # defaults measured on musique_train200 (docs/benchmarks.md)
    dense_weight: float = 0.7
    rrf_k: int = 60
    seeds: int = 4  # sparse seeds: pattern separation needs few (at most this many ...
    seed_ratio: float = 0.85  # ... and only those whose entry score is >= ratio x the best: adaptive count
    lexical_seed: bool = (
        True  # the best lexical match seeds too, wherever the fused entry ranks it (a user's own words)
    )
    structural_specificity: bool = True  # an entry seed that is not a hit (a file) seeds at the idf of its degree
    query_links: bool = True  # titles/entities named in the query become extra seeds (linked corpora)
    # the graph channel and its own parameters (channels.py); a kind name ("beam") selects its defaults
    channel: Channel = Spread()
    # typed-edge attenuation, for every channel that walks typed edges (spread, beam, ppr)
    query_types: tuple[str, ...] = ()  # relation names the question is about (empty = layer off)
    alpha: float = 1.0  # attenuation of typed edges outside query_types
    beta: float = 1.0  # attenuation of negative-polarity typed edges
    metadata_edges: tuple = ()  # strategies: ("field", "field") / ("field", "$id") metadata links
    graph_weight: float = 0.7  # final = (1-g)·entry + g·graph
    priming_weight: float = 0.6  # final += w · query-conditioned activation of recently used nodes
    priming_scope: int = 50  # ... applied only within the query's top candidates
    result_types: tuple[str, ...] = ()  # only return nodes of these types (empty = all)
    exclude_types: tuple[str, ...] = ("entity",)  # never hits nor entry seeds: linker entities are bridges, not sources
    # structural nodes carry activation, seed and explain, but are hits only when result_types asks for them or
    # the query names one exactly (its path or title): a question about a change wants the change, not every
    # file it touched (issue 25).  Empty = every type may be a hit.  (Linker entities are in exclude_types.)
    structural_types: tuple[str, ...] = ("file", "directory", "person", "author", "tag")
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
    # the priors' parameters, one group each (flat names: file_seed_weight, authorship_weight, recency_weight, ...)
    working_files: WorkingFileOptions = WorkingFileOptions()  # how the files seed and score (not hits themselves)
    authorship: AuthorshipOptions = AuthorshipOptions()  # the change that wrote the working files' code
    recency: RecencyOptions = RecencyOptions()  # older changes weigh less, repaired ones more
    aggregate: AggregateOptions = AggregateOptions()  # merges that repeat ingested commits weigh less
    # code evidence (retrieval/code_evidence.py, issue 24): the working set (retrieval/changes.py WorkingSet: the
    # files and old-side lines the agent changes, or its diff) and the identifiers the question names.
    # final += blame_weight × the share of the changed lines a commit last touched as of the search's time
    # (blame) + code_weight × the idf-weighted share of the named identifiers a commit added or removed; the
    # blamed commits also seed the graph at blame_seed_weight × share × the best seed's activation.
    changes: Any = None  # a WorkingSet (or None); its paths seed the graph like `files`
    # "hunks": the stored hunks (no git process; exact along first parents, approximate for lines a branch merge
    # brought); "git": the repository's own `git blame` when it is still on disk (exact; ~280 ms p50 a search at
    # ovs size against ~25 ms, docs/code-history.md), else the stored hunks
    blame_source: str = "hunks"
    blame_weight: float = 2.0  # chosen leave-one-repository-out (docs/code-history.md)
    blame_seed_weight: float = 0.5
    code_weight: float = 0.5
    code_intent_weight: float = 2.0  # code_weight for a question that asks which change introduced / removed X
    # recency among the blamed commits (a regression is usually recent): a blamed commit's share is multiplied
    # by (1 - r) + r * (d + gap of the newest blamed) / (d + its gap), gap = days from it to the lines' commit;
    # r = 1, d = 30 chosen leave-one-repository-out (docs/code-history.md, issue 46)
    blame_recency: float = 1.0
    blame_recency_days: float = 30.0  # d above

    def __post_init__(self) -> None:
        if isinstance(self.channel, str):  # a kind name: that channel with its defaults
            object.__setattr__(self, "channel", Channel.named(self.channel))
        if not isinstance(self.channel, Channel):
            raise InvalidArgument(
                f"channel must be one of {CHANNELS} or a channel object (Spread, Beam, Ppr, Eager, Mmr, Scored), "
                f"got {self.channel!r}"
            )
        self._check_counts()
        self._check_weights()
        check_choice("fusion", self.fusion, FUSIONS)
        object.__setattr__(self, "metadata_edges", tuple(tuple(m) for m in self.metadata_edges))
        for m in self.metadata_edges:
            if len(m) != 2 or not all(isinstance(x, str) and x for x in m):
                raise InvalidArgument(f"metadata_edges entries must be (field, field) pairs, got {m!r}")
        for name in _TYPE_LISTS:
            object.__setattr__(self, name, check_strings(name, getattr(self, name)))
        self._check_times()
        for name in ("sources", "files"):
            object.__setattr__(self, name, check_strings(name, getattr(self, name)))
        object.__setattr__(self, "where", _check_where(self.where))

    def _check_counts(self) -> None:
        for name in _COUNTS:
            check_int(name, getattr(self, name), lo=1 if name == "limit" else 0)
        check_int("lexical_budget", self.lexical_budget, hi=2**62)
        check_int("ann_min_nodes", self.ann_min_nodes, hi=2**62)
        check_int("ann_nprobe", self.ann_nprobe, lo=1, hi=2**62)
        check_int("frontier_cap", self.frontier_cap, hi=2**62)

    def _check_weights(self) -> None:
        for name in _WEIGHTS:
            check_number(name, getattr(self, name), lo=0)
        check_number("seed_ratio", self.seed_ratio, lo=0, hi=1)
        if not isinstance(self.structural_specificity, bool):
            raise InvalidArgument(f"structural_specificity must be true or false, got {self.structural_specificity!r}")
        check_number("graph_weight", self.graph_weight, lo=0, hi=1)
        check_choice("blame_source", self.blame_source, BLAME_SOURCES)
        for name in ("blame_weight", "blame_seed_weight", "code_weight", "code_intent_weight"):
            check_number(name, getattr(self, name), lo=0, hi=100)
        check_number("blame_recency_days", self.blame_recency_days, lo=0, hi=100_000)
        check_number("blame_recency", self.blame_recency, lo=0, hi=1)
        if self.changes is not None and not hasattr(self.changes, "to_dict"):
            raise InvalidArgument("changes must be a WorkingSet (neurongraph.retrieval.changes), or None")
        for name, cls in _PRIOR_GROUPS.items():
            if not isinstance(getattr(self, name), cls):
                raise InvalidArgument(f"{name} must be a {cls.__name__}, got {getattr(self, name)!r}")

    def _check_times(self) -> None:
        for name in ("as_of", "since", "until"):
            v = getattr(self, name)
            if v is not None:
                try:
                    object.__setattr__(self, name, to_epoch(v))
                except ValueError as exc:
                    raise InvalidArgument(f"{name}: {exc}") from None
        hi = self.horizon
        if self.since is not None and hi is not None and self.since > hi:
            name = "until" if hi == self.until else "as_of"
            raise InvalidArgument(f"since ({self.since}) is after {name} ({hi}): the range is empty")

    @property
    def horizon(self) -> float | None:
        """The search's time limit: event time after it is hidden, and it is "now" for the priors and blame.
        ``as_of`` and ``until`` are the same filter (the request model knows ``until`` only as a deprecated
        name of ``as_of``); given both, the earlier.  None: no limit."""
        if self.until is None:
            return self.as_of
        return self.until if self.as_of is None else min(self.as_of, self.until)

    # ------------------------------------------------------------ compatibility with the flat options
    @classmethod
    def from_options(cls, **options: Any) -> SearchConfig:
        """A configuration from option names, the flat channel options of earlier versions included
        (``SearchConfig.from_options(channel="beam", beam_width=8, max_depth=3)``)."""
        return cls().replace(**options)

    def _resolve_channel(self, channel: Any, flat: dict[str, Any]) -> Channel:
        """The channel of a ``replace``: ``channel`` (object or kind name, or None = the current one) with
        the flat options applied; see the module docstring for the rules."""
        strategy = flat.pop("strategy", None)
        for name, v in flat.items():  # every flat option is valid for its owner, even if unused here
            owner = LEGACY_OPTIONS[name]
            owner().with_legacy({name: v})
        if strategy is not None:
            if not isinstance(strategy, Channel) or not strategy.is_strategy or not strategy.kind:
                raise InvalidArgument(f"strategy must be an Eager, Mmr or Scored instance, got {strategy!r}")
            named = channel.kind if isinstance(channel, Channel) else channel
            if named is not None and named != strategy.kind:
                raise InvalidArgument(
                    f"strategy {type(strategy).__name__} and channel {named!r} disagree; give one of them "
                    "(a strategy is the graph channel)"
                )
            return strategy.with_legacy(flat)
        if isinstance(channel, str):
            carried = {**self.channel.legacy_params(), **flat}  # shared flat options carry over
            return Channel.named(channel).with_legacy(carried)
        base = self.channel if channel is None else channel
        if not isinstance(base, Channel):
            raise InvalidArgument(f"channel must be one of {CHANNELS} or a channel object, got {base!r}")
        return base.with_legacy(flat)

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

    @property
    def uses_graph(self) -> bool:
        """Whether this search has a graph step (``channel`` is not ``"none"``)."""
        return not isinstance(self.channel, NoGraph)

    def replace(self, **overrides: Any) -> SearchConfig:
        """A modified copy; unknown names are an error, not silently ignored.  The flat channel options
        of earlier versions are accepted (module docstring)."""
        names = {f.name for f in dataclasses.fields(self)}
        bad = set(overrides) - names - set(LEGACY_OPTIONS) - set(PRIOR_OPTIONS) - {"strategy"}
        if bad:
            known = sorted(names | set(LEGACY_OPTIONS) | set(PRIOR_OPTIONS) | {"strategy"})
            raise InvalidArgument(f"unknown search option(s) {sorted(bad)}; known: {known}")
        flat = {k: overrides.pop(k) for k in list(overrides) if k in LEGACY_OPTIONS or k == "strategy"}
        if flat or "channel" in overrides:
            overrides["channel"] = self._resolve_channel(overrides.get("channel"), flat)
        for group in {PRIOR_OPTIONS[k] for k in overrides if k in PRIOR_OPTIONS}:  # flat prior options
            mine = {k: overrides.pop(k) for k in list(overrides) if PRIOR_OPTIONS.get(k) == group}
            base = overrides.get(group, getattr(self, group))
            if not isinstance(base, _PRIOR_GROUPS[group]):
                raise InvalidArgument(f"{group} must be a {_PRIOR_GROUPS[group].__name__}, got {base!r}")
            overrides[group] = base.with_legacy(mine)
        return dataclasses.replace(self, **overrides)

    def to_dict(self) -> dict:
        """The flat form (as in earlier versions): trace ``params`` and ``fingerprint`` stay comparable.
        Computed once per (immutable) configuration: every recorded search needs it twice."""
        flat = self.__dict__.get("_flat")
        if flat is None:
            flat = self._flat_dict()
            object.__setattr__(self, "_flat", flat)
        out = {k: (list(v) if isinstance(v, list) else dict(v) if isinstance(v, dict) else v) for k, v in flat.items()}
        out["metadata_edges"] = [list(m) for m in flat["metadata_edges"]]
        return out

    def _flat_dict(self) -> dict:
        d: dict[str, Any] = {}
        order = []
        for f in dataclasses.fields(self):
            if f.name == "channel":
                d.update(self._legacy_channel())
                order.append(f.name)
            elif f.name in _PRIOR_GROUPS:  # a prior's group: its flat names, in place of the field
                d.update(getattr(self, f.name).legacy_params())
                order.extend(_PRIOR_GROUPS[f.name].LEGACY)
            else:
                d[f.name] = getattr(self, f.name)
                order.append(f.name)
        for name in (*_TYPE_LISTS, "sources", "files"):
            d[name] = list(d[name])
        d["metadata_edges"] = [list(m) for m in self.metadata_edges]
        d["where"] = dict(self.where)
        d["changes"] = self.changes.to_dict() if self.changes is not None else None
        at = order.index("channel")
        order[at : at + 1] = list(_LEGACY_ORDER)
        at = order.index("beta") + 1
        order[at:at] = list(_LEGACY_ORDER_2)
        return {k: d[k] for k in order}

    def _legacy_channel(self) -> dict[str, Any]:
        """``channel`` (kind), every flat channel option (this channel's values, defaults for the rest)
        and ``strategy`` (None unless the channel is a strategy with its own knobs)."""
        d: dict[str, Any] = {"channel": self.channel.kind, "strategy": None}
        for cls in PARAMETRISED:
            d.update(cls().legacy_params())
        d.update(self.channel.legacy_params())
        return d

    def fingerprint(self, *parts: str) -> str:
        memo = self.__dict__.setdefault("_fingerprints", {})
        if parts not in memo:
            payload = json.dumps([self.to_dict(), *parts], sort_keys=True, default=str)
            memo[parts] = hashlib.blake2b(payload.encode(), digest_size=8).hexdigest()
        return memo[parts]


def _check_where(where: Any) -> tuple:
    """``where`` (a mapping or (key, value) pairs) as sorted pairs; keys printable without quotes or
    backslashes, values strings, finite numbers or booleans."""
    w = list(where.items()) if isinstance(where, dict) else where
    if not isinstance(w, (list, tuple)) or not all(isinstance(p, (list, tuple)) and len(p) == 2 for p in w):
        raise InvalidArgument(
            f"where must be a mapping of metadata keys to values, e.g. {{'state': 'open'}}, got {where!r}"
        )
    seen = set()
    for key, value in w:
        if not isinstance(key, str) or not key or any(ch in key for ch in '"\\') or not key.isprintable():
            raise InvalidArgument(
                f"where: a metadata key must be a non-empty printable string without quotes or backslashes, got {key!r}"
            )
        if key in seen:
            raise InvalidArgument(f"where: key {key!r} is given twice")
        seen.add(key)
        ok = isinstance(value, (str, bool)) or (
            isinstance(value, (int, float)) and math.isfinite(value) and abs(value) < 2**63
        )
        if not ok:
            raise InvalidArgument(f"where[{key!r}] must be a string, a finite number or a boolean, got {value!r}")
    return tuple(sorted((k, v) for k, v in w))
