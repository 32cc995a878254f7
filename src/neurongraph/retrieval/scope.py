"""The search scope: the per-node columns searches filter and weigh by, and one search's masks over them.

Why one table: liveness, type, event time, source and the ingest's marks (``aggregate``) are grown and
updated together from the store's change feed, so every column always has one row per node index and
a filter or prior (``filters.py``, ``priors.py``) reads them without knowing how they are kept in step.
The engine calls :meth:`NodeTable.apply` once per catch-up and hands the changed rows to its derived
indexes (vectors, BM25, code history, query linker).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from ..config import SearchConfig
from ..store.base import Changes, Store
from .filters import Filters, ResultTypes, file_nodes
from .query import Query

__all__ = ["FlagMarks", "NodeChange", "NodeTable", "SearchScope"]


@dataclass
class NodeChange:
    """The rows one catch-up touched: changed (inserted or updated) and deleted node indices, or None."""

    changed: np.ndarray | None
    deleted: np.ndarray | None


class FlagMarks:
    """Which nodes an ingest marked with a boolean metadata key (``aggregate: true``), read lazily.

    A node's mark is read the first time a search weighs it (the candidates' metadata only: reading every
    node's on first use was 0.03-0.06 s, two thirds of a cold search's ranking on mypy's 28k nodes, whose
    commits carry their hunks), kept, and read again after the change feed brings the node."""

    def __init__(self, store: Store, key: str):
        self.store, self.key = store, key
        self.marks = np.zeros(0, bool)  # possibly longer than the table (nodes not synced yet)
        self.known = np.zeros(0, bool)  # whose mark has been read since the node last changed

    def grow(self, n: int) -> None:
        if n > self.marks.shape[0]:
            pad = np.zeros(n - self.marks.shape[0], bool)
            self.marks, self.known = np.concatenate([self.marks, pad]), np.concatenate([self.known, pad])

    def changed(self, idx: np.ndarray) -> None:
        """Changed nodes: their marks are read again when next weighed."""
        idx = idx[idx < self.known.shape[0]]
        self.known[idx] = False
        self.marks[idx] = False

    def mask(self, nodes: np.ndarray, n_rows: int) -> np.ndarray:
        """Which of ``nodes`` carry the mark (``n_rows``: the table's length)."""
        nodes = np.asarray(nodes, np.int64)
        self.grow(max(n_rows, int(nodes.max()) + 1 if nodes.size else 0))
        todo = np.unique(nodes[~self.known[nodes]])
        if todo.size:
            flagged = self.store.node_flags(todo.tolist(), self.key)
            if flagged:
                self.marks[np.fromiter(flagged, np.int64)] = True
            self.known[todo] = True
        out: np.ndarray = self.marks[nodes]
        return out


class NodeTable:
    """Per-node columns indexed by store node index: ``alive``, ``type_of`` (ids in ``type_ids``),
    ``event_time`` (NaN = none), ``source_of`` (ids in ``source_ids``, -1 = none) and the ``aggregate``
    marks.  ``epoch`` is bumped whenever nodes change: it keys masks cached over the table."""

    def __init__(self, store: Store):
        self.alive = np.zeros(0, bool)
        self.type_of = np.zeros(0, np.int32)
        self.type_ids: dict[str, int] = {}
        self.event_time = np.zeros(0, np.float64)
        self.source_of = np.zeros(0, np.int32)
        self.source_ids: dict[str, int] = {}
        self.aggregate = FlagMarks(store, "aggregate")
        self.placeholder = FlagMarks(store, "placeholder")  # a git reader's pr:N / issue:N without text
        self.epoch = 0

    @property
    def n(self) -> int:
        return int(self.alive.shape[0])

    def grow(self, n: int) -> None:
        """Make room for node indices below ``n`` (new rows: dead, untyped, timeless, sourceless)."""
        if n > self.n:
            extra = n - self.n
            self.alive = np.concatenate([self.alive, np.zeros(extra, bool)])
            self.type_of = np.concatenate([self.type_of, np.full(extra, -1, np.int32)])
            self.event_time = np.concatenate([self.event_time, np.full(extra, np.nan)])
            self.source_of = np.concatenate([self.source_of, np.full(extra, -1, np.int32)])
        self.aggregate.grow(n)
        self.placeholder.grow(n)

    def apply(self, ch: Changes) -> NodeChange:
        """Apply the node part of a change feed batch to every column; returns the rows it touched."""
        idx = dead = None
        if ch.nodes:
            idx = np.fromiter((r[0] for r in ch.nodes), np.int64, len(ch.nodes))
            self.grow(int(idx.max()) + 1)
            self.alive[idx] = True
            for i, t in zip(idx.tolist(), ch.node_types):
                self.type_of[i] = self.type_ids.setdefault(t, len(self.type_ids))
            if len(ch.node_times) == len(ch.nodes):  # a store that reports event times and sources
                self.event_time[idx] = np.array([np.nan if t is None else t for t in ch.node_times], np.float64)
                self.source_of[idx] = np.fromiter(
                    (-1 if s is None else self.source_ids.setdefault(s, len(self.source_ids)) for s in ch.node_sources),
                    np.int32,
                    len(ch.nodes),
                )
            self.aggregate.changed(idx)
            self.placeholder.changed(idx)
        if ch.deleted_nodes:
            dead = np.asarray(ch.deleted_nodes, np.int64)
            dead = dead[dead < self.n]
            self.alive[dead] = False
        if idx is not None or dead is not None:
            self.epoch += 1
        return NodeChange(idx, dead)

    def restore(
        self,
        alive: np.ndarray,
        type_of: np.ndarray,
        type_names: Iterable[str],
        event_time: np.ndarray,
        source_of: np.ndarray,
        source_names: Iterable[str],
    ) -> None:
        """Columns loaded from a snapshot (snapshot.py); the marks are read again on first use."""
        self.alive, self.type_of, self.event_time, self.source_of = alive, type_of, event_time, source_of
        self.type_ids = {name: i for i, name in enumerate(type_names)}
        self.source_ids = {name: i for i, name in enumerate(source_names)}
        self.epoch += 1

    def type_names(self) -> list[str]:
        return sorted(self.type_ids, key=self.type_ids.__getitem__)

    def source_names(self) -> list[str]:
        return sorted(self.source_ids, key=self.source_ids.__getitem__)

    def type_mask(self, types: tuple[str, ...]) -> np.ndarray:
        """Live nodes of the given types (all live nodes when ``types`` is empty)."""
        if not types:
            return self.alive
        ids = [self.type_ids[t] for t in types if t in self.type_ids]
        return self.alive & np.isin(self.type_of, ids)

    def known(self, rows: np.ndarray) -> np.ndarray:
        """Which node indices the table holds as live nodes (a mask over ``rows``)."""
        ok = (rows >= 0) & (rows < self.n)
        ok[ok] = self.alive[rows[ok]]
        return ok


@dataclass
class SearchScope:
    """Which nodes one search may return (``allowed``), enter by (``entry_allowed``), seed from
    (``seed_allowed``) and see at all (``visible``, the filters; None = no node hidden), and the working
    files that seed it (``file_idx``; ``unknown_files``: the paths without a node).  See ``RankInputs``."""

    allowed: np.ndarray
    result_ok: np.ndarray  # the result types' mask alone (before filters and files)
    visible: np.ndarray | None
    entry_allowed: np.ndarray | None
    seed_allowed: np.ndarray | None
    file_idx: np.ndarray | None
    unknown_files: list[str]
    structural: np.ndarray | None = None  # nodes of the structural types (files, people): hub seeds

    @classmethod
    def build(
        cls,
        table: NodeTable,
        store: Store,
        filters: Filters,
        result_types: ResultTypes,
        superseded: Callable[[int], np.ndarray],
        query: Query | str,
        cfg: SearchConfig,
    ) -> SearchScope:
        """The masks of ``query`` under ``cfg``; ``superseded(n)`` marks entry revisions a newer one replaced."""
        allowed = result_ok = result_types.mask(table, query, cfg)
        visible = filters.visible(table, cfg) if cfg.filtered else None
        if visible is not None:  # filtered nodes are not in the graph at all: no hit, seed or bridge
            allowed = allowed & visible
        ws = cfg.changes
        files = tuple(dict.fromkeys(cfg.files + (ws.paths if ws is not None else ())))
        file_idx, unknown = file_nodes(store, table, files) if files else (None, [])
        if file_idx is not None and file_idx.size:
            allowed = allowed.copy()
            allowed[file_idx] = False  # the agent's own files seed the search; they are not news to it
        seed_allowed = None
        if cfg.exclude_types:
            hidden = [table.type_ids[t] for t in cfg.exclude_types if t in table.type_ids]
            if hidden:
                seed_allowed = ~np.isin(table.type_of, hidden)  # bridges carry activation, they do not seed it
                allowed = allowed & seed_allowed
        entry_allowed = table.type_mask(cfg.entry_types) if cfg.entry_types else None
        if not cfg.include_superseded:  # old revisions of entries stay for history, out of normal retrieval
            old = superseded(table.n)
            if old.any():
                allowed = allowed & ~old
                entry_allowed = (table.alive if entry_allowed is None else entry_allowed) & ~old
        structural = result_types.structural(table, cfg) if cfg.structural_specificity else None
        return cls(allowed, result_ok, visible, entry_allowed, seed_allowed, file_idx, unknown, structural)

    def admit(self, nodes: np.ndarray, table: NodeTable) -> None:
        """Let ``nodes`` be hits although the filters hide them (when the result types allow them)."""
        nodes = nodes[nodes < self.allowed.shape[0]]
        ok = self.result_ok[nodes] & table.alive[nodes]
        self.allowed = self.allowed.copy()
        self.allowed[nodes[ok]] = True
