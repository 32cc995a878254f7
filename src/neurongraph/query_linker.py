"""The query-side linker an engine keeps: which titles, aliases and entity names a query mentions.

Why an object of its own: its state (a fitted :class:`~neurongraph.link.Linker`, or the tables a
snapshot restored, whether it still equals a fresh fit of the store, which nodes it knows, which new
ones it has yet to take in) changes with the change feed and is saved by snapshots; keeping it here
gives the engine one field instead of five and lets tests look at it through a named API.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import numpy as np

from .link import Linker, LinkerConfig, LinkInput
from .link.query import QueryTables
from .retrieval.query import Query
from .store.base import NodeRow, Store

__all__ = ["QueryLinker", "link_inputs"]


def link_inputs(rows: Iterable[NodeRow]) -> list[LinkInput]:
    """The linker's view of stored nodes (entities themselves are not linked; ``metadata.aliases`` are)."""
    out = []
    for row in rows:
        if row.type == "entity":
            continue
        aliases = row.metadata.get("aliases") if isinstance(row.metadata, dict) else None
        names = tuple(a for a in aliases if isinstance(a, str)) if isinstance(aliases, list) else ()
        out.append(LinkInput(row.id, row.title, row.text, names))
    return out


class QueryLinker:
    """Answers query-side linking for one store: from a snapshot's tables while nothing changed, else a
    linker fitted lazily over the store's nodes (with the stored ``linker_config``), extended with the
    nodes the change feed adds."""

    def __init__(self, store: Store):
        self.store = store
        self.linker: Linker | QueryTables | None = None  # None: not fitted yet (or the corpus was never linked)
        self.exact = False  # the linker equals a fresh fit of the store's current nodes
        self.known: set[str] = set()  # node ids the fitted linker has taken in
        self.pending: list[int] = []  # node indices added since, to take in before the next query

    # ------------------------------------------------------------ state changes
    def fitted(self, linker: Linker, items: list[LinkInput]) -> None:
        """``linker`` was just fitted over ``items`` (the whole store)."""
        self.linker, self.exact = linker, True
        self.known = {it.id for it in items}
        self.pending = []

    def restored(self, tables: QueryTables) -> None:
        """Tables loaded from a snapshot that matches the store and the stored linker config."""
        self.linker, self.exact = tables, True

    def changed(self, added: np.ndarray | None) -> None:
        """Nodes were added (``added``) or deleted: added ones are taken in incrementally; the linker no
        longer equals a fresh fit, so its tables are not snapshotted; tables from a snapshot describe the
        older corpus and give way to a refit on the next query."""
        if self.linker is None:
            return
        self.exact = False
        if isinstance(self.linker, QueryTables):
            self.linker = None
        elif added is not None:
            self.pending.extend(added.tolist())

    def tables(self) -> QueryTables | None:
        """Tables to snapshot: only those of a linker equal to a fresh fit of the store now."""
        if self.linker is None or not self.exact:
            return None
        return self.linker if isinstance(self.linker, QueryTables) else self.linker.query_tables()

    # ------------------------------------------------------------ queries
    def get(self) -> Linker | QueryTables | None:
        """The linker that answers query-side linking, fitted or extended as needed; None for a corpus
        never linked (nothing to match against)."""
        if self.linker is None:
            raw = self.store.get_meta("linker_config")
            if raw is None:
                return None
            fields: dict[str, Any] = {k: tuple(v) if isinstance(v, list) else v for k, v in json.loads(raw).items()}
            cfg = LinkerConfig(**fields)
            items = link_inputs(self.store.iter_nodes())
            linker = Linker(cfg)
            linker.fit(items)
            self.fitted(linker, items)
        if self.pending:  # new nodes from the change feed; edits and deletions need link() again
            rows = self.store.nodes_by_idx(self.pending)
            fresh = [it for it in link_inputs(rows.values()) if it.id not in self.known]
            if fresh and isinstance(self.linker, Linker):
                self.linker.link_new(fresh)
                self.known.update(it.id for it in fresh)
            self.pending = []
        return self.linker

    def seeds(self, query: Query | str) -> tuple[np.ndarray, np.ndarray] | None:
        """Nodes whose title, alias or entity name the query mentions (linked corpora only), with one id
        per matched name so the targets of an ambiguous name can be told apart.  The linker matches names
        in the text itself (its own tables: link/query.py)."""
        linker = self.get()
        if linker is None:
            return None
        pairs = linker.link_query(Query.of(query).text)
        if not pairs:
            return None
        idx = self.store.lookup_idx([n for n, _ in pairs])
        name_id: dict[str, int] = {}
        found = [(idx[n], name_id.setdefault(k, len(name_id))) for n, k in pairs if n in idx]
        if not found:
            return None
        return np.array([n for n, _ in found], np.int64), np.array([k for _, k in found], np.int64)
