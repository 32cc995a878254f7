"""Ingest-time graph construction without an LLM: mentions, references, shared entities, synonyms.

Most corpora arrive as passages with no edges. Spreading activation and beam search need edges that
connect a passage to the passages its *next hop* lives in; the cheapest reliable signals for that are

* **mention** - another node's title or alias occurs in this passage's title/text (Wikipedia-style link);
* **ref** - an explicit ``#123`` reference (or ``issue 123``) to a node whose id is ``issue:123`` /
  ``pr:123`` or whose alias is ``#123``;
* **entity** - a name-like phrase shared by a few passages becomes an ``entity`` node that bridges them
  (passage -has_entity-> entity -entity_in-> passage); a document-frequency cap keeps ubiquitous
  phrases from becoming hubs that connect everything to everything;
* **similarity** - entity nodes whose embeddings are close (``NYC`` / ``New York City``) get ``similar_to``.

All phrase matching runs through Aho-Corasick automata over normalised text (one C pass per passage,
independent of the number of titles), so linking is thousands of passages per second. The same
automata answer :meth:`Linker.link_query`, which turns title/entity mentions in a query into seeds.

Plain data in, plain data out: the caller stores :class:`LinkedEdge` / :class:`EntityNode` however it likes.

Incremental behaviour (:meth:`Linker.link_new`)
    New items are linked to all existing titles, aliases and entities; existing passages get links to
    new titles/aliases (one scan of the stored normalised texts with an automaton of only the new keys);
    phrases that become shared (df reaches ``entity_min_df``) become entities linked to old and new
    passages; edges of touched entities and ambiguous titles are re-emitted with updated weights
    (store them as an upsert). Not incremental: edges are never retracted - a title or entity that
    grows past its df cap stops gaining edges but keeps the old ones, and an item id cannot be
    re-linked with new text. Call :meth:`Linker.fit` on the whole corpus to rebuild exactly.

Defaults (chosen on musique_train200, 3,012 passages; hipporag_* sets untouched): ``entity_max_df=5``
gives ~1 entity and ~5.5 entity edges per passage with mean passage-graph degree 6 (cap 30: degree
42, no better recall); a 1-hop spread from the top-5 hybrid hits lifts a simple hybrid baseline from
R@5 0.58 to 0.73 (mentions alone: 0.70). Similarity threshold 0.88 for MiniLM: 0.8 pairs different
places that share a head noun.
"""

from __future__ import annotations

import math
import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np

from ..checks import check_int, check_number, check_strings
from .entities import KINDS, CaseStats, extract_raw, resolve
from .normalize import REF_RE, STOPWORDS, drop_nested, normalize
from .query import QuerySide, QueryTables, automaton, scan
from .similarity import EmbedFn, similar_pairs, unit_rows

__all__ = ["LinkInput", "LinkedEdge", "EntityNode", "LinkResult", "LinkerConfig", "Linker"]

_PAREN = re.compile(r"\s*\([^)]*\)\s*$")
_CLOSING = {
    "fix": "fixes",
    "fixes": "fixes",
    "fixed": "fixes",
    "close": "closes",
    "closes": "closes",
    "closed": "closes",
    "resolve": "resolves",
    "resolves": "resolves",
    "resolved": "resolves",
}


@dataclass(frozen=True)
class LinkInput:
    """One node to link: its id, title, text and optional aliases (``#12``, abbreviations, old names)."""

    id: str
    title: str
    text: str
    aliases: tuple[str, ...] = ()


@dataclass(frozen=True)
class LinkedEdge:
    """A proposed edge; ``meta["linker"]`` says which linker made it and why (matched phrase, df...)."""

    src: str
    rel: str
    dst: str
    weight: float
    meta: dict


@dataclass(frozen=True)
class EntityNode:
    """A node the entity linker creates, id ``entity:<normalised phrase>``."""

    id: str
    title: str
    text: str
    type: str = "entity"
    metadata: dict = field(default_factory=dict)


@dataclass
class LinkResult:
    """What one linking run made: entity nodes, edges and counts per linker."""

    entities: list[EntityNode]
    edges: list[LinkedEdge]
    stats: dict


@dataclass(frozen=True)
class LinkerConfig:
    """Thresholds of the linkers. Defaults were chosen on musique_train200 (module docstring)."""

    mentions: bool = True
    refs: bool = True
    entities: bool = True
    # opt-in: on the three QA benchmarks it changed nothing measurable (docs/benchmarks.md) while
    # costing an embedding pass over every entity name at link time; also needs an embed function
    similarity: bool = False
    # mention linker
    min_title_chars: int = 3  # shorter normalised titles are too ambiguous to match in free text
    max_title_targets: int = 8  # a title shared by more nodes than this is skipped, else weight 1/n
    # a title found in more passages than this is too common to mean the node (absolute, not a ratio:
    # what hurts spreading is a hub's degree, and a ratio would either bite small corpora or never bite)
    title_max_df: int = 50
    strip_title_parenthetical: bool = True  # "The Game (1997 film)" is also matched as "The Game"
    same_title_links: bool = False  # link a passage to other passages with the same title
    # ref linker: node ids "<prefix>:<n>" get the aliases "#<n>" and "<prefix> <n>"
    ref_prefixes: tuple[str, ...] = ("issue", "issues", "pr", "pull", "pulls", "mr", "ticket", "bug", "task")
    # entity linker
    entity_kinds: tuple[str, ...] = ("name", "quantity", "quoted", "ref", "code")
    min_entity_chars: int = 2
    entity_min_df: int = 2
    entity_max_df: int = 5  # a phrase in more passages is a hub, not a bridge (absolute, see title_max_df)
    entity_inverse: bool = True  # also emit entity -entity_in-> passage
    # similarity linker (entity <-> entity)
    similarity_threshold: float = 0.88  # MiniLM: 0.8 still pairs "Moscow Oblast"/"Kirov Oblast"
    similarity_k: int = 3
    similarity_kinds: tuple[str, ...] = ("name", "quoted")  # numbers, refs and code are exact, not fuzzy

    def __post_init__(self) -> None:
        object.__setattr__(self, "entity_kinds", check_strings("entity_kinds", self.entity_kinds, allowed=KINDS))
        object.__setattr__(self, "similarity_kinds", check_strings("similarity_kinds", self.similarity_kinds))
        object.__setattr__(self, "ref_prefixes", check_strings("ref_prefixes", self.ref_prefixes))
        for name in (
            "min_title_chars",
            "max_title_targets",
            "title_max_df",
            "min_entity_chars",
            "entity_min_df",
            "entity_max_df",
            "similarity_k",
        ):
            check_int(name, getattr(self, name), hi=2**62)
        check_number("similarity_threshold", self.similarity_threshold, lo=-1, hi=1)


_NUMERAL = re.compile(r"^(?:\d+|[IVXLCDM]{2,})$")


_Hits = dict[int, list[tuple[int, int, str]]]  # doc -> (start, end, key) matches


@contextmanager
def _timed(timings: dict[str, float], name: str) -> Iterator[None]:
    """Add the block's wall time to ``timings[name]`` (seconds)."""
    t = time.perf_counter()
    try:
        yield
    finally:
        timings[name] = time.perf_counter() - t


def _numbers(title: str) -> frozenset[str]:
    """Digit and (upper-case) roman-numeral tokens of a phrase; synonyms must agree on them."""
    return frozenset(t for t in re.split(r"[\W_]+", title) if _NUMERAL.match(t))


class Linker(QuerySide):
    """Builds edges and entity nodes for a corpus; keeps the automata so queries and new items reuse them."""

    def __init__(self, config: LinkerConfig | None = None, embed: EmbedFn | None = None):
        self.config = config or LinkerConfig()
        self.embed = embed
        self._reset()

    # ------------------------------------------------------------------ state
    def _reset(self) -> None:
        self._ids: list[str] = []
        self._pos: dict[str, int] = {}
        self._norm: list[str] = []  # "<norm title> \n <norm text>" per item
        self._tlen: list[int] = []  # length of the title part
        self._own: list[frozenset[str]] = []  # the item's own title/alias keys
        self._title_targets: dict[str, set[str]] = {}
        self._title_kind: dict[str, str] = {}  # "mention" | "ref"
        self._title_docs: dict[str, set[int]] = {}
        self._title_auto = automaton(())
        self._case = CaseStats()
        self._raw_docs: dict[str, set[int]] = {}  # candidate key -> docs it occurs in (nested matches too)
        self._ent_docs: dict[str, set[int]] = {}  # viable key -> docs after longest-match resolution
        self._surface: dict[str, Counter] = {}
        self._kind: dict[str, str] = {}
        self._cand_auto = automaton(())
        self._entities: dict[str, EntityNode] = {}
        self._entity_auto = automaton(())
        self._vec_keys: list[str] = []
        self._vecs: np.ndarray | None = None

    # ------------------------------------------------------------------ public API
    def fit(self, items: Sequence[LinkInput]) -> LinkResult:
        """Link a whole corpus from scratch (forgets any earlier state)."""
        self._reset()
        return self._ingest(items)

    def link_new(self, items: Sequence[LinkInput]) -> LinkResult:
        """Link items added after :meth:`fit`; returns new entities and new or re-weighted edges."""
        return self._ingest(items)

    # query side (the rule itself is QuerySide.link_query, shared with snapshot-loaded tables)
    def _title_targets_for(self, key: str, named: set[str]) -> list[str]:
        if self._title_kind[key] == "mention" and (
            len(self._title_docs.get(key, ())) > self._title_cap() or (self._common_word(key) and key not in named)
        ):
            return []
        return sorted(self._title_targets[key])

    def _entity_target(self, key: str) -> str:
        return self._entities[key].id

    def query_tables(self) -> QueryTables:
        """The query side of this linker as plain tables (for an engine snapshot)."""
        keys = list(self._title_targets)
        cap = self._title_cap()
        return QueryTables(
            keys,
            [self._title_kind[k] for k in keys],
            [sorted(self._title_targets[k]) for k in keys],
            [len(self._title_docs.get(k, ())) > cap for k in keys],
            [self._common_word(k) for k in keys],
            list(self._entities),
            [e.id for e in self._entities.values()],
        )

    @property
    def entities(self) -> list[EntityNode]:
        return list(self._entities.values())

    # ------------------------------------------------------------------ keys
    def _title_keys(self, item: LinkInput) -> list[tuple[str, str]]:
        """(key, kind) under which other text may refer to ``item``."""
        cfg = self.config
        keys: list[tuple[str, str]] = []
        if cfg.mentions:
            names = [item.title] + [a for a in item.aliases if not REF_RE.match(normalize(a))]
            if cfg.strip_title_parenthetical and _PAREN.search(item.title):
                names.append(_PAREN.sub("", item.title))
            for nm in names:
                k = normalize(nm)
                if len(k) >= cfg.min_title_chars and k not in STOPWORDS and not k.replace(" ", "").isdigit():
                    keys.append((k, "mention"))
        if cfg.refs:
            for a in item.aliases:
                k = normalize(a)
                if REF_RE.match(k):
                    keys.append((k, "ref"))
            prefix, sep, num = item.id.partition(":")
            num = num.lstrip("#")
            if sep and num.isdigit() and prefix.casefold() in cfg.ref_prefixes:
                keys.append(("#" + num, "ref"))
                keys.append((normalize(prefix) + " " + num, "ref"))
        return keys

    def _title_scan(self, auto, d: int) -> list[tuple[int, int, str]]:
        """Longest title matches in passage ``d``, ignoring its own keys so they shadow nothing:
        in "The Collegian (Houston Baptist University)" the own full title must not hide "Houston
        Baptist University"."""
        own = self._own[d]
        hits = scan(auto, self._norm[d], longest=False)
        if own and not self.config.same_title_links:
            hits = [h for h in hits if h[2] not in own]
        return drop_nested(hits)

    def _common_word(self, key: str) -> bool:
        """A one-word title the corpus mostly writes lower-case ("Collaboration") is not a mention."""
        return " " not in key and self._case.looks_common(key)

    def _title_cap(self) -> int:
        return self.config.title_max_df

    def _entity_cap(self) -> int:
        return self.config.entity_max_df

    # ------------------------------------------------------------------ the work
    def _ingest(self, items: Sequence[LinkInput]) -> LinkResult:
        """Link ``items`` against themselves and everything linked before, in six steps."""
        t0 = time.perf_counter()
        timings: dict[str, float] = {}
        first = len(self._ids)
        ids = [it.id for it in items]
        dup = [i for i, c in Counter(ids).items() if c > 1] + [i for i in ids if i in self._pos]
        if dup:
            raise ValueError(f"item ids already linked or repeated: {sorted(set(dup))[:5]} (re-linking needs fit())")
        edges: dict[tuple[str, str, str], LinkedEdge] = {}
        changed_titles = self._register(items)  # 1
        timings["normalize"] = time.perf_counter() - t0
        with _timed(timings, "extract"):
            new_cands = self._candidates(items)  # 2
        with _timed(timings, "scan"):
            title_hits, cand_hits = self._scan(first, changed_titles, new_cands)  # 3
        with _timed(timings, "mentions"):
            n_skipped_df = self._mention_edges(title_hits, edges)  # 4
        new_entities: list[EntityNode] = []
        n_capped = 0
        with _timed(timings, "entities"):
            if self.config.entities:
                new_entities, n_capped = self._entity_edges(self._entity_docs(cand_hits, first), edges)  # 5
        with _timed(timings, "similarity"):
            self._similarity_edges(new_entities, edges)  # 6
        out = list(edges.values())
        stats = {
            "items": len(items),
            "total_items": len(self._ids),
            "entities_new": len(new_entities),
            "entities_total": len(self._entities),
            "edges": len(out),
            "edges_by_linker": dict(Counter(e.meta["linker"] for e in out)),
            "title_keys": len(self._title_targets),
            "title_mentions_skipped_df": n_skipped_df,
            "title_df_cap": self._title_cap(),
            "entity_candidates": len(self._surface),
            "entity_df_cap": self._entity_cap(),
            "entities_over_cap": n_capped,
            "seconds": {k: round(v, 4) for k, v in timings.items()} | {"total": round(time.perf_counter() - t0, 4)},
        }
        return LinkResult(new_entities, out, stats)

    def _register(self, items: Sequence[LinkInput]) -> set[str]:
        """Step 1: normalise the items and register their title keys; returns the keys that changed."""
        changed_titles: set[str] = set()
        for it in items:
            d = len(self._ids)
            self._ids.append(it.id)
            self._pos[it.id] = d
            nt = normalize(it.title)
            self._norm.append(nt + " \n " + normalize(it.text))
            self._tlen.append(len(nt))
            own = self._title_keys(it)
            self._own.append(frozenset(k for k, _ in own))
            for k, kind in own:
                tg = self._title_targets.setdefault(k, set())
                if it.id not in tg:
                    tg.add(it.id)
                    changed_titles.add(k)
                # a key that is both a ref and a title keeps "ref": explicit references win
                if self._title_kind.get(k) != "ref":
                    self._title_kind[k] = kind
        return changed_titles

    def _candidates(self, items: Sequence[LinkInput]) -> set[str]:
        """Step 2: entity candidates of the new items (also feeds the corpus case statistics first);
        returns the candidate keys seen for the first time."""
        cfg = self.config
        new_cands: set[str] = set()
        # case statistics are needed by the mention linker too (single-word titles), so always scan
        kinds = frozenset(cfg.entity_kinds) if cfg.entities else frozenset()
        raws = [extract_raw(it.title + ".\n" + it.text, self._case, kinds) for it in items]
        if not cfg.entities:
            return new_cands
        for raw in raws:
            for key, (surface, kind) in resolve(raw, self._case, cfg.min_entity_chars).items():
                if self._title_kind.get(key) == "ref":
                    continue  # "#12" that names a node is a ref edge, not a shared entity
                if key not in self._surface:
                    self._surface[key] = Counter()
                    self._kind[key] = kind
                    self._raw_docs[key] = set()
                    new_cands.add(key)
                self._surface[key][surface] += 1
        return new_cands

    def _scan(self, first: int, changed_titles: set[str], new_cands: set[str]) -> tuple[_Hits, _Hits]:
        """Step 3: title and candidate matches per doc: new docs against every key, old docs against only
        the keys that changed."""
        if changed_titles:
            self._title_auto = automaton(self._title_targets)
        if new_cands:
            self._cand_auto = automaton(self._surface)
        title_hits: _Hits = {}
        cand_hits: _Hits = {}
        for d in range(first, len(self._ids)):
            title_hits[d] = self._title_scan(self._title_auto, d)
            cand_hits[d] = scan(self._cand_auto, self._norm[d], longest=False)
        if first and (changed_titles or new_cands):
            ta, ca = automaton(changed_titles), automaton(new_cands)
            for d in range(0, first):
                th = self._title_scan(ta, d)
                ch = scan(ca, self._norm[d], longest=False)
                if th:
                    title_hits[d] = th
                if ch:
                    cand_hits[d] = ch
        return title_hits, cand_hits

    def _mention_edges(self, title_hits: _Hits, edges: dict[tuple[str, str, str], LinkedEdge]) -> int:
        """Step 4: mention / ref edges into ``edges``; returns the mentions skipped by the df cap."""
        cfg = self.config
        n_skipped_df = 0
        for d, hits in title_hits.items():
            for _, _, k in hits:
                self._title_docs.setdefault(k, set()).add(d)
        tcap = self._title_cap()
        for d, hits in title_hits.items():
            src = self._ids[d]
            for s, _e, k in hits:
                kind = self._title_kind[k]
                if k in self._own[d] and not (kind == "mention" and cfg.same_title_links):
                    continue
                if kind == "mention" and (len(self._title_docs[k]) > tcap or self._common_word(k)):
                    n_skipped_df += 1
                    continue
                targets = self._title_targets[k]
                if len(targets) > cfg.max_title_targets:
                    continue
                w = 1.0 / len(targets)
                rel = "references" if kind == "ref" else "mentions"
                meta = {"linker": kind, "phrase": k, "targets": len(targets), "in_title": s < self._tlen[d]}
                if kind == "ref":
                    prev = self._norm[d][:s].rsplit(" ", 2)
                    kw = _CLOSING.get(prev[-2] if len(prev) >= 2 else "")
                    if kw:
                        meta["keyword"] = kw
                for t in targets:
                    key = (src, rel, t)
                    if t != src and (key not in edges or edges[key].weight < w):
                        edges[key] = LinkedEdge(src, rel, t, w, meta)
        return n_skipped_df

    def _entity_docs(self, cand_hits: _Hits, first: int) -> set[str]:
        """Step 5a, viability: candidate df over raw matches, then longest match among the viable keys per
        doc; returns the entity keys whose documents changed."""
        min_df = self.config.entity_min_df
        before = {k: len(self._raw_docs[k]) for hits in cand_hits.values() for _, _, k in hits}
        for d, hits in cand_hits.items():
            for _, _, k in hits:
                self._raw_docs[k].add(d)
        touched: set[str] = set()
        # a phrase that only now became shared also links the old passages it was seen in
        for k, n_before in before.items():
            if n_before < min_df <= len(self._raw_docs[k]):
                old = [d for d in self._raw_docs[k] if d < first and d not in cand_hits]
                if old:
                    self._ent_docs.setdefault(k, set()).update(old)
                    touched.add(k)
        for d, hits in cand_hits.items():
            viable = [h for h in hits if len(self._raw_docs[h[2]]) >= min_df]
            for _, _, k in drop_nested(viable):
                docs = self._ent_docs.setdefault(k, set())
                if d not in docs:
                    docs.add(d)
                    touched.add(k)
        return touched

    def _entity_edges(
        self, touched: set[str], edges: dict[tuple[str, str, str], LinkedEdge]
    ) -> tuple[list[EntityNode], int]:
        """Step 5b: entity nodes and has_entity / entity_in edges of the touched keys within the df range;
        returns the new entities and the count over the df cap."""
        cfg = self.config
        new_entities: list[EntityNode] = []
        n_capped = 0
        ecap = self._entity_cap()
        for k in sorted(touched):
            docs = self._ent_docs[k]
            df = len(docs)
            if df < cfg.entity_min_df:
                continue
            if df > ecap:
                n_capped += 1
                continue
            ent = self._entities.get(k)
            surfaces = self._surface[k].most_common(3)
            meta = {"key": k, "kind": self._kind[k], "df": df, "surfaces": [s for s, _ in surfaces]}
            if ent is None:
                ent = EntityNode("entity:" + k, surfaces[0][0], surfaces[0][0], "entity", meta)
                self._entities[k] = ent
                new_entities.append(ent)
            else:
                ent.metadata.update(meta)
            w = 1.0 / math.log2(df) if df > 1 else 1.0
            emeta = {"linker": "entity", "phrase": k, "df": df}
            for d in sorted(docs):
                p = self._ids[d]
                edges[(p, "has_entity", ent.id)] = LinkedEdge(p, "has_entity", ent.id, w, emeta)
                if cfg.entity_inverse:
                    edges[(ent.id, "entity_in", p)] = LinkedEdge(ent.id, "entity_in", p, w, emeta)
        if new_entities:
            self._entity_auto = automaton(self._entities)
        return new_entities, n_capped

    def _similarity_edges(self, new_entities: list[EntityNode], edges: dict[tuple[str, str, str], LinkedEdge]) -> None:
        """Step 6: similar_to edges between entities (the new ones against all), opt-in."""
        cfg = self.config
        sim_new = [e for e in new_entities if e.metadata["kind"] in cfg.similarity_kinds]
        if not (cfg.similarity and self.embed is not None and sim_new):
            return
        vecs = unit_rows(self.embed([e.title for e in sim_new]))
        offset = len(self._vec_keys)
        self._vecs = vecs if self._vecs is None else np.vstack([self._vecs, vecs])
        self._vec_keys.extend(e.id for e in sim_new)
        titles = {e.id: e.title for e in self._entities.values()}
        for i, j, c in similar_pairs(vecs, self._vecs, cfg.similarity_threshold, cfg.similarity_k, offset):
            a, b = self._vec_keys[i], self._vec_keys[j]
            if _numbers(titles[a]) != _numbers(titles[b]):
                continue  # "Super Bowl XXXIX" vs "Super Bowl XXXVI": close vectors, different things
            meta = {"linker": "similarity", "cosine": round(c, 4)}
            for s, t in ((a, b), (b, a)):
                if (s, "similar_to", t) not in edges:
                    edges[(s, "similar_to", t)] = LinkedEdge(s, "similar_to", t, c, meta)
