"""Search filters over the node table: which nodes a search may see, return or seed from.

Why objects: each filter (a time window, sources, metadata equality) owns its reading of the
configuration and its cache, and :class:`Filters` composes them, so a new filter is a class here and
an entry in ``Filters.__init__`` plus its test, never an engine change.  A filter judges only nodes that
carry its field (files and entities usually have no time or source): a node it cannot judge stays.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from ..config import SearchConfig
from ..errors import InvalidArgument
from ..store.base import Store
from .query import Query

__all__ = ["Filters", "NodeColumns", "ResultTypes", "Sources", "TimeWindow", "Where", "file_nodes"]


class NodeColumns(Protocol):
    """The per-node columns the filters read: ``scope.NodeTable`` (a protocol, not the class: scope.py
    composes these filters, so importing it here would be an import cycle)."""

    alive: np.ndarray
    type_of: np.ndarray
    type_ids: dict[str, int]
    event_time: np.ndarray
    source_of: np.ndarray
    source_ids: dict[str, int]
    epoch: int

    @property
    def n(self) -> int: ...

    def type_mask(self, types: tuple[str, ...]) -> np.ndarray: ...


class TimeWindow:
    """``cfg.horizon`` (``as_of``, or ``until``: event time after it is hidden) and ``since``."""

    def keep(self, table: NodeColumns, cfg: SearchConfig) -> np.ndarray | None:
        t = table.event_time
        hi = cfg.horizon
        vis = None
        if hi is not None:
            vis = ~(t > hi)  # NaN (no event time) compares False: always visible
        if cfg.since is not None:
            low = ~(t < cfg.since)
            vis = low if vis is None else vis & low
        return vis


class Sources:
    """``sources``: a node's source (repository / site) is one of these; a sourceless node stays."""

    def keep(self, table: NodeColumns, cfg: SearchConfig) -> np.ndarray | None:
        if not cfg.sources:
            return None
        ids = [table.source_ids[s] for s in cfg.sources if s in table.source_ids]
        return (table.source_of < 0) | np.isin(table.source_of, ids)


class Where:
    """``where``: metadata equality (a store query), its mask cached until nodes change."""

    def __init__(self, store: Store):
        self.store = store
        # (((key, value type, value), ...), epoch, n) -> excluded mask
        self.cache: dict[tuple[tuple[tuple[str, str, object], ...], int, int], np.ndarray] = {}

    def keep(self, table: NodeColumns, cfg: SearchConfig) -> np.ndarray | None:
        return ~self.excluded(table, cfg.where) if cfg.where else None

    def excluded(self, table: NodeColumns, where: tuple[tuple[str, object], ...]) -> np.ndarray:
        """Nodes the filter excludes."""
        key = (tuple((k, type(v).__name__, v) for k, v in where), table.epoch, table.n)
        if self.cache and next(iter(self.cache))[1] != table.epoch:
            self.cache.clear()  # nodes changed: every cached mask is stale
        m = self.cache.get(key)
        if m is None:
            m = np.zeros(table.n, bool)
            failing = self.store.nodes_failing(where)
            m[failing[failing < m.shape[0]]] = True
            if len(self.cache) >= 16:
                self.cache.pop(next(iter(self.cache)))
            self.cache[key] = m
        return m


class Filters:
    """The node filters of a search, composed: the mask of nodes they leave in the graph."""

    def __init__(self, store: Store):
        self.parts = (TimeWindow(), Sources(), Where(store))

    def visible(self, table: NodeColumns, cfg: SearchConfig) -> np.ndarray | None:
        """Nodes the filters leave, as a mask over node indices; ``None`` when they hide no live node
        (then the search is exactly an unfiltered one)."""
        vis = np.ones(table.n, bool)
        for f in self.parts:
            m = f.keep(table, cfg)
            if m is not None:
                vis &= m
        return None if vis[table.alive].all() else vis


class ResultTypes:
    """Which live nodes may be hits: of ``result_types`` when given; else every type but the structural
    ones (``structural_types``: files, directories, people), except a structural node the query names."""

    def __init__(self, store: Store):
        self.store = store
        # (key, nodes of the structural types, live nodes of the others): computed once per node change
        self._memo: tuple[tuple[tuple[int, ...], int, int], np.ndarray, np.ndarray] | None = None

    def _masks(self, table: NodeColumns, cfg: SearchConfig) -> tuple[np.ndarray, np.ndarray] | None:
        ids = tuple(table.type_ids[t] for t in cfg.structural_types if t in table.type_ids)
        if not ids:
            return None
        key = (ids, table.epoch, table.n)
        memo = self._memo
        if memo is None or memo[0] != key:
            structural = np.isin(table.type_of, ids)
            memo = self._memo = (key, structural, table.alive & ~structural)
        return memo[1], memo[2]

    def mask(self, table: NodeColumns, query: Query | str, cfg: SearchConfig) -> np.ndarray:
        if cfg.result_types or not cfg.structural_types:
            return table.type_mask(cfg.result_types)
        masks = self._masks(table, cfg)
        if masks is None:
            return table.alive
        named = self.named_structural(table, query, cfg.structural_types)
        if not named.size:
            return masks[1]
        mask = masks[1].copy()
        mask[named] = table.alive[named]
        return mask

    def structural(self, table: NodeColumns, cfg: SearchConfig) -> np.ndarray | None:
        """Nodes of ``cfg.structural_types`` (None when the store holds none): they pass activation to every
        change they join, so the seed step weighs them by how many that is."""
        masks = self._masks(table, cfg)
        return None if masks is None else masks[0]

    def named_structural(self, table: NodeColumns, query: Query | str, types: tuple[str, ...]) -> np.ndarray:
        """Indices of structural nodes the query names exactly: ``<type>:<word>`` ids of its words (a path
        ``src/x/app.py`` names ``file:src/x/app.py``) and quoted phrases equal to a node's title
        (``Query.keys``, ``Query.quoted``)."""
        q = Query.of(query)
        present = [t for t in types if t in table.type_ids]
        if not q.keys or not present:
            return np.zeros(0, np.int64)
        found = set(self.store.lookup_idx([f"{t}:{w}" for t in present for w in q.keys]).values())
        for phrase in q.quoted:
            if phrase.strip():
                hits = self.store.nodes_titled(phrase.strip(), 20)
                found.update(self.store.lookup_idx([i for i, t in hits if t in present]).values())
        idx = np.fromiter(found, np.int64, len(found))
        return idx[idx < table.n]

    def check(self, table: NodeColumns, types: tuple[str, ...]) -> None:
        """A ``result_types`` naming no type the store holds would find nothing, silently: an error that
        lists the store's types instead (``--type pr`` where the type is ``pull_request``)."""
        if not types or not table.type_ids or any(t in table.type_ids for t in types):
            return
        counts = self.store.node_type_counts()
        listed = ", ".join(f"{t} ({n})" for t, n in counts.items())
        raise InvalidArgument(
            f"no node of type {', '.join(repr(t) for t in types)} in this store; its types: {listed or 'none'}",
            types=list(types),
            store_types=sorted(counts),
        )


def file_nodes(store: Store, table: NodeColumns, files: tuple[str, ...]) -> tuple[np.ndarray, list[str]]:
    """Live ``file:<path>`` nodes of the given repository-relative paths (a leading ``./`` is ignored),
    and the paths that have none."""
    want: dict[str, str] = {}
    for p in files:
        q = p.strip()
        while q.startswith("./"):
            q = q[2:]
        want.setdefault("file:" + q, p)
    found = store.lookup_idx(list(want))
    idx = np.array(sorted({found[i] for i in want if i in found}), np.int64)
    n = table.n
    idx = idx[(idx < n) & table.alive[np.minimum(idx, max(n - 1, 0))]] if idx.size else idx
    return idx, [p for i, p in want.items() if i not in found]
