"""The one SQL store: every member of the contract (base.py) written once, for SQLite and PostgreSQL.

Statements are written with ``?`` placeholders and run through the store's ``_q`` (SQLite's own connection;
PostgreSQL's :class:`~.postgres.QMark`, which sends each ``?`` as psycopg's ``%s`` on the calling thread's
transaction connection, else a pooled one).  Where the two databases spell a statement differently (IN lists
or arrays, JSON paths, case folding, row order, metadata filters) the store asks its :class:`~.dialects.Dialect`.
What differs beyond the text of a statement is a short list of abstract hooks the two subclasses write:
connections and transactions (``transaction``, ``_snapshot``), the full-text index (``_write_nodes``,
``_unindex_nodes``, ``lexical_search``), vectors, bulk edge writes (``_write_edges``, ``_find_edges``),
relation ids, copies and closing (sqlite.py, postgres.py).  The learning ledgers and the schema tables are
written once the same way (sql_ledgers.py, sql_schema.py)."""

from __future__ import annotations

import json
import time
from abc import abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any

import numpy as np

from ..errors import StoreError, UnknownNode
from ..model import Edge, Node, strict_dumps
from .base import Changes, EdgeArrays, EdgeRecord, NodeRow, Store, check_meta_key, effective_weights
from .dialects import Dialect

__all__ = [
    "SQLStore",
    "check_migrations",
    "edge_arrays",
    "edge_dict",
    "last_of_each_id",
    "unknown_nodes_error",
]


class SQLStore(Store):
    """The :class:`~.base.Store` on a SQL database: the members written once, the dialect for what differs."""

    dialect: Dialect

    _NODE_COLS = "idx, id, type, title, text, metadata, confidence, content_hash, created_at, updated_at"

    @property
    @abstractmethod
    def _q(self) -> Any:
        """A connection-like that takes ``?`` placeholders: ``execute(sql, params)`` -> rows (``fetchone``,
        ``fetchall``, iteration), inside the store's current transaction when there is one."""

    @staticmethod
    def _row(r) -> NodeRow:
        return NodeRow(
            idx=int(r[0]),
            id=r[1],
            type=r[2],
            title=r[3],
            text=r[4],
            metadata=json.loads(r[5]),
            confidence=r[6],
            content_hash=r[7],
            created_at=r[8],
            updated_at=r[9],
        )

    # -------------------------------------------------------------- nodes
    def get_node(self, node_id: str) -> NodeRow | None:
        r = self._q.execute(f"SELECT {self._NODE_COLS} FROM nodes WHERE id = ?", (node_id,)).fetchone()
        return None if r is None else self._row(r)

    def iter_nodes(self, batch: int = 1000) -> Iterator[NodeRow]:
        last = -1
        while True:
            rows = self._q.execute(
                f"SELECT {self._NODE_COLS} FROM nodes WHERE idx > ? ORDER BY idx LIMIT ?", (last, int(batch))
            ).fetchall()
            if not rows:
                return
            for r in rows:
                yield self._row(r)
            last = int(rows[-1][0])

    def relation_names(self) -> dict[int, str]:
        return {int(i): n for i, n in self._q.execute("SELECT id, name FROM relations")}

    def node_type_counts(self) -> dict[str, int]:
        rows = self._q.execute("SELECT type, count(*) FROM nodes GROUP BY type ORDER BY 2 DESC, 1").fetchall()
        return {t: int(n) for t, n in rows}

    def message_grep(self, words: Sequence[str], node_type: str = "commit") -> list[str]:
        if not words:
            return []
        # git's own subject of a merge titled by its PR (metadata ``subject``), its title and its text: the message
        subject = f"coalesce({self.dialect.json_text('metadata', 'subject', text_column=True)}, '')"
        like = " AND ".join([f"lower({subject} || ' ' || title || ' ' || text) LIKE ? ESCAPE '!'"] * len(words))
        pats = ["%" + w.lower().replace("!", "!!").replace("%", "!%").replace("_", "!_") + "%" for w in words]
        rows = self._q.execute(f"SELECT id FROM nodes WHERE type = ? AND {like} ORDER BY id", (node_type, *pats))
        return [r[0] for r in rows.fetchall()]

    # -------------------------------------------------------------- traces
    def save_trace(self, trace: dict) -> None:
        with self.transaction():
            self._q.execute(
                "INSERT INTO traces(id, created_at, query, params, fingerprint, hits) VALUES (?,?,?,?,?,?)",
                (
                    trace["id"],
                    trace["created_at"],
                    trace["query"],
                    trace.get("params_json") or strict_dumps(trace["params"]),
                    trace["fingerprint"],
                    strict_dumps(trace["hits"], ensure_ascii=False),
                ),
            )  # never NaN/Infinity

    def get_trace(self, trace_id: str) -> dict | None:
        r = self._q.execute(
            "SELECT id, created_at, query, params, fingerprint, hits FROM traces WHERE id = ?", (trace_id,)
        ).fetchone()
        if r is None:
            return None
        return {
            "id": r[0],
            "created_at": r[1],
            "query": r[2],
            "params": json.loads(r[3]),
            "fingerprint": r[4],
            "hits": json.loads(r[5]),
        }

    # -------------------------------------------------------------- meta
    def get_meta(self, key: str) -> str | None:
        r = self._q.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if r is None else r[0]

    def set_meta(self, key: str, value: str) -> None:
        with self.transaction():
            self._q.execute(
                "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (key, value),
            )

    # -------------------------------------------------------------- what each database does its own way
    @abstractmethod
    def _snapshot(self) -> AbstractContextManager[None]:
        """One consistent read snapshot for ``changes_since`` (the statements inside run through ``_q``)."""

    @abstractmethod
    def _rel_ids(self, names: Iterable[str]) -> dict[str, int]:
        """Relation ids of ``names``, registering new ones (inside a write transaction)."""

    @abstractmethod
    def _write_nodes(
        self, seq: int, now: float, first: int, new: list[Node], old: list[Node], existing: dict[str, tuple[int, str]]
    ) -> None:
        """Insert ``new`` (indices from ``first``) and update ``old`` nodes, their full text included."""

    @abstractmethod
    def _unindex_nodes(self, keys: list[int]) -> None:
        """Take these nodes' text out of the full-text index (before they are deleted)."""

    @abstractmethod
    def _write_edges(self, edges: list[Edge], idx: dict[str, int], rel: dict[str, int], seq: int, now: float) -> None:
        """Insert or update these (validated) edges, keeping what was learned."""

    @abstractmethod
    def _find_edges(self, triples: list[tuple[str, str, str]]) -> list[tuple[int, int, int]]:
        """``(eid, src idx, dst idx)`` of the stored edges among ``(src id, rel, dst id)`` triples."""

    def _require_transaction(self) -> None:
        """Where a write outside ``transaction()`` must fail rather than commit on its own (PostgreSQL)."""

    # -------------------------------------------------------------- helpers
    def _in(self, sql: str, col: str, values: Iterable[Any], before: Sequence = (), after: Sequence = ()):
        """Rows of ``sql`` (its ``{in}`` selects ``col`` in ``values``), in as many statements as the dialect
        needs (SQLite: chunks of an IN list; PostgreSQL: one array)."""
        for cond, part in self.dialect.where_in(col, values):
            yield from self._q.execute(sql.replace("{in}", cond), [*before, *part, *after])

    def _tombstone(self, seq: int, kind: str, keys: list[int]) -> None:
        if keys:
            self._q.executemany(
                "INSERT INTO tombstones(seq, kind, key) VALUES (?, ?, ?)", [(seq, kind, k) for k in keys]
            )

    def _count(self, table: str) -> int:
        r = self._q.execute(f"SELECT count(*) FROM {table}").fetchone()  # table names are constants
        return int(r[0]) if r else 0

    # -------------------------------------------------------------- sequence numbers and keys
    def current_seq(self) -> int:
        r = self._q.execute("SELECT value FROM meta WHERE key = 'seq'").fetchone()
        return int(r[0]) if r else 0

    @property
    def schema_version(self) -> int:
        return self._count("migrations")

    def next_seq(self) -> int:
        """Take the next change-feed sequence number; call inside :meth:`transaction`."""
        self._require_transaction()
        q = "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'seq' RETURNING value"
        return int(self._q.execute(q).fetchone()[0])

    _KEYS = {("nodes", "idx"), ("edges", "eid")}

    def _take_keys(self, table: str, column: str, count: int) -> int:
        """First of ``count`` fresh keys for ``table``, from a counter that only grows: a deleted node index
        or edge key is never handed out again (SQLite would reuse the highest rowid; a reused key would let
        a tombstone or a learning log entry name a row added later).  Call inside a write transaction."""
        assert (table, column) in self._KEYS  # identifiers are constants, never user input
        self._require_transaction()
        name = f"next_key.{table}"
        r = self._q.execute("SELECT value FROM meta WHERE key = ?", (name,)).fetchone()
        if r:
            start = int(r[0])
        else:
            start = int(self._q.execute(f"SELECT coalesce(max({column}), 0) + 1 FROM {table}").fetchone()[0])
        self._q.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (name, str(start + count)),
        )
        return start

    # -------------------------------------------------------------- node writes
    def upsert_nodes(self, nodes: list[Node]) -> int:
        """Insert or update nodes by id (the last occurrence of a duplicate id wins)."""
        if not nodes:
            return self.current_seq()
        latest = last_of_each_id(nodes)
        now = time.time()
        with self.transaction():
            seq = self.next_seq()
            existing: dict[str, tuple[int, str]] = {
                r[0]: (int(r[1]), r[2])
                for r in self._in("SELECT id, idx, content_hash FROM nodes WHERE {in}", "id", latest)
            }
            new = [n for n in latest.values() if n.id not in existing]
            old = [n for n in latest.values() if n.id in existing]
            first = self._take_keys("nodes", "idx", len(new))
            self._write_nodes(seq, now, first, new, old, existing)
            # schema hook (src/neurongraph/schema): a no-op unless a relation schema validator is attached
            if self.validator is not None:
                self.validator.after_nodes(seq, existing)
        return seq

    def delete_nodes(self, ids: Iterable[str]) -> int:
        """Delete nodes and every edge touching them; returns how many nodes were deleted."""
        ids = list(dict.fromkeys(ids))
        with self.transaction():
            idx = self.lookup_idx(ids)
            if not idx:
                return 0
            seq = self.next_seq()
            keys = list(idx.values())
            eids = {int(r[0]) for r in self._in("SELECT eid FROM edges WHERE {in}", "src", keys)}
            eids.update(int(r[0]) for r in self._in("SELECT eid FROM edges WHERE {in}", "dst", keys))
            self._unindex_nodes(keys)
            for cond, part in self.dialect.where_in("idx", keys):
                self._q.execute(f"DELETE FROM nodes WHERE {cond}", part)  # edges cascade
            self._tombstone(seq, "node", keys)
            self._tombstone(seq, "edge", sorted(eids))
        return len(keys)

    # -------------------------------------------------------------- node reads
    def edge_numbers(self, eids: Iterable[int], key: str) -> dict[int, float]:
        value, test = self.dialect.json_number("meta", check_meta_key(key))
        q = f"SELECT eid, {value} FROM edges WHERE {{in}} AND {test}"
        return {int(e): float(v) for e, v in self._in(q, "eid", [int(e) for e in eids])}

    def node_flags(self, idxs: Iterable[int] | None, key: str) -> set[int]:
        test = self.dialect.json_true("metadata", check_meta_key(key))
        if idxs is None:  # every node: the quoted key's text first (cheap), JSON only where it occurs
            q = f"SELECT idx FROM nodes WHERE {self.dialect.contains('metadata')} AND {test}"
            return {int(r[0]) for r in self._q.execute(q, (f'"{key}"',))}
        return {int(r[0]) for r in self._in(f"SELECT idx FROM nodes WHERE {{in}} AND {test}", "idx", map(int, idxs))}

    def node_meta_values(self, idxs: Iterable[int], keys: Sequence[str]) -> dict[int, dict[str, Any]]:
        keys = [check_meta_key(k) for k in keys]
        if not keys:
            return {}
        d = self.dialect
        cols = ", ".join(d.json_value("metadata", k) for k in keys)  # identifiers only: checked above
        out: dict[int, dict[str, Any]] = {}
        for r in self._in(f"SELECT idx, {cols} FROM nodes WHERE {{in}}", "idx", sorted({int(i) for i in idxs})):
            out[int(r[0])] = {k: v for k, v in zip(keys, map(d.meta_value, r[1:])) if v is not None}
        return out

    def lookup_idx(self, ids: Iterable[str]) -> dict[str, int]:
        return {r[0]: int(r[1]) for r in self._in("SELECT id, idx FROM nodes WHERE {in}", "id", ids)}

    def nodes_by_idx(self, idxs: Iterable[int]) -> dict[int, NodeRow]:
        q = f"SELECT {self._NODE_COLS} FROM nodes WHERE {{in}}"
        return {int(r[0]): self._row(r) for r in self._in(q, "idx", [int(i) for i in idxs])}

    def node_heads(self, idxs: Iterable[int]) -> dict[int, tuple[str, str, str, str]]:
        q = "SELECT idx, id, type, title, text FROM nodes WHERE {in}"
        return {int(r[0]): (r[1], r[2], r[3], r[4]) for r in self._in(q, "idx", [int(i) for i in idxs])}

    def ids_by_idx(self, idxs: Iterable[int]) -> dict[int, str]:
        return {
            int(r[0]): r[1]
            for r in self._in("SELECT idx, id FROM nodes WHERE {in}", "idx", sorted(set(map(int, idxs))))
        }

    def node_types(self, ids: Iterable[str]) -> dict[str, str]:
        return {r[0]: r[1] for r in self._in("SELECT id, type FROM nodes WHERE {in}", "id", dict.fromkeys(ids))}

    def ids_with_prefix(self, prefix: str, limit: int) -> list[tuple[str, str]]:
        q = "SELECT id, type FROM nodes WHERE id >= ? AND id < ? ORDER BY id LIMIT ?"
        return [(r[0], r[1]) for r in self._q.execute(q, (prefix, prefix + "\uffff", int(limit)))]

    def nodes_titled(self, title: str, limit: int) -> list[tuple[str, str]]:
        q = f"SELECT id, type FROM nodes WHERE {self.dialect.nocase_eq('title')} ORDER BY idx LIMIT ?"
        return [(r[0], r[1]) for r in self._q.execute(q, (title, int(limit)))]

    def nodes_failing(self, where: Iterable[tuple[str, object]]) -> np.ndarray:
        """Indices of the nodes a metadata-equality filter excludes (sorted int64): nodes whose metadata
        holds one of the keys with another value (the dialect's ``metadata_filter`` says how)."""
        d = self.dialect
        conds, params = d.metadata_filter(where)
        if not conds:
            return np.zeros(0, np.int64)
        q = f"SELECT idx FROM {d.metadata_rows} WHERE {d.metadata_valid} AND ({' OR '.join(conds)}) ORDER BY idx"
        rows = self._q.execute(q, params).fetchall()
        return np.fromiter((r[0] for r in rows), np.int64, len(rows))

    def owned_nodes(self, owners: Iterable[str]) -> list[str]:
        """Ids of nodes whose ``metadata.owner`` is one of ``owners`` (e.g. the sections of a page)."""
        col = self.dialect.json_text("metadata", "owner", text_column=True)
        return [r[0] for r in self._in("SELECT id FROM nodes WHERE {in}", col, dict.fromkeys(owners))]

    def source_node_ids(self, kind: str, source: str) -> list[str]:
        """Ids of the nodes an ingest adapter ``kind`` wrote for ``source`` (``metadata.ingest`` / ``.source``)."""
        d = self.dialect
        q = (
            f"SELECT id FROM nodes WHERE {d.json_text('metadata', 'source', True)} = ?"
            f" AND {d.json_text('metadata', 'ingest', True)} = ?"
        )
        return [r[0] for r in self._q.execute(q, (source, kind))]

    # -------------------------------------------------------------- edges
    def relation_ids(self, names: Iterable[str]) -> dict[str, int]:
        """Predicate ids of relation names, registering new names (the ids graph arrays carry)."""
        names = list(names)
        with self.transaction():
            ids = self._rel_ids(names)
        return {n: ids[n] for n in names}

    def upsert_edges(self, edges: list[Edge]) -> int:
        """Insert edges or update existing ``(src, rel, dst)`` ones, all or nothing.

        An update sets base weight, polarity and factuality to the given values, merges ``meta`` (new keys
        win) and keeps what was learned (plastic weight, reinforcement count, creation time).  An edge naming
        an unknown node is rejected, naming it; no node is ever fabricated."""
        if not edges:
            return self.current_seq()
        now = time.time()
        with self.transaction():
            idx = self.lookup_idx({e.src for e in edges} | {e.dst for e in edges})
            unknown = sorted({e.src for e in edges if e.src not in idx} | {e.dst for e in edges if e.dst not in idx})
            if unknown:
                raise unknown_nodes_error(unknown)
            rel = self._rel_ids(e.rel for e in edges)
            seq = self.next_seq()
            self._write_edges(edges, idx, rel, seq, now)
            # schema hook (src/neurongraph/schema): a no-op unless a relation schema validator is attached
            if self.validator is not None:
                self.validator.after_edges(seq)
        return seq

    def delete_edges(self, triples: Iterable[tuple[str, str, str]]) -> int:
        """Delete ``(src, rel, dst)`` edges (unknown ones are ignored), leaving tombstones; returns how many."""
        triples = list(dict.fromkeys(triples))
        if not triples:
            return 0
        with self.transaction():
            found = self._find_edges(triples)
            if not found:
                return 0
            seq = self.next_seq()
            eids = [int(r[0]) for r in found]
            for cond, part in self.dialect.where_in("eid", eids):
                self._q.execute(f"DELETE FROM edges WHERE {cond}", part)
            self._tombstone(seq, "edge", eids)
            if self.validator is not None:  # removing an edge can break a "needs at least one" invariant
                self.validator.after_edge_removal({int(x) for r in found for x in (r[1], r[2])})
        return len(found)

    _EDGE_JOIN = (
        " FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN relations r ON r.id = e.rel_id"
    )

    def get_edge(self, src: str, rel: str, dst: str) -> dict | None:
        r = self._q.execute(
            "SELECT e.eid, e.polarity, e.weight, e.plastic, e.factuality, e.meta, e.reinforce_count, e.created_at,"
            " e.updated_at" + self._EDGE_JOIN + " WHERE s.id = ? AND r.name = ? AND d.id = ?",
            (src, rel, dst),
        ).fetchone()
        return None if r is None else edge_dict(r, src, rel, dst, self.dialect.loads(r[5]))

    def edge_count(self) -> int:
        return self._count("edges")

    def edge_pairs(self, rel: str) -> list[tuple[str, str]]:
        return [
            (r[0], r[1]) for r in self._q.execute("SELECT s.id, d.id" + self._EDGE_JOIN + " WHERE r.name = ?", (rel,))
        ]

    def edges_marked(self, meta_key: str) -> list[tuple[str, str, str]]:
        """(src, rel, dst) of every edge whose ``meta`` has ``meta_key`` (e.g. the linker's edges)."""
        if not meta_key.isidentifier():
            raise ValueError(f"bad meta key {meta_key!r}")
        q = "SELECT s.id, r.name, d.id" + self._EDGE_JOIN + " WHERE " + self.dialect.json_has("e.meta", meta_key)
        return [(a, b, c) for a, b, c in self._q.execute(q)]

    def owned_edges(self, owners: Iterable[str], by: str | None = None) -> list[tuple[str, str, str]]:
        """(src, rel, dst) of every edge whose ``meta.owner`` is one of ``owners`` (and ``meta.by`` is ``by``)."""
        d = self.dialect
        q = "SELECT s.id, r.name, d.id" + self._EDGE_JOIN + " WHERE {in}"
        after: tuple = ()
        if by is not None:
            q, after = q + f" AND {d.json_text('e.meta', 'by')} = ?", (by,)
        return [
            (a, b, c) for a, b, c in self._in(q, d.json_text("e.meta", "owner"), dict.fromkeys(owners), after=after)
        ]

    def edges_from(self, src_ids: Iterable[str]) -> set[tuple[str, str, str]]:
        """(src, rel, dst) of every edge leaving one of ``src_ids``."""
        q = "SELECT s.id, r.name, d.id" + self._EDGE_JOIN + " WHERE {in}"
        return {(a, b, c) for a, b, c in self._in(q, "s.id", dict.fromkeys(src_ids))}

    def put_pending_edges(self, rows: list[tuple[str, str, dict]]) -> None:
        """Keep derived edges whose endpoint ``missing`` does not exist yet: (missing, owner, edge dict)."""
        if not rows:
            return
        with self.transaction():
            self._q.executemany(
                "INSERT INTO pending_edges(missing, owner, edge) VALUES (?, ?, ?)",
                [(m, o, self.dialect.dumps(e)) for m, o, e in rows],
            )

    def take_pending_edges(self, ids: Iterable[str]) -> list[dict]:
        """Remove and return the pending edges waiting for any of ``ids`` (call inside a transaction)."""
        ids = list(dict.fromkeys(ids))
        with self.transaction():
            rows = list(self._in("DELETE FROM pending_edges WHERE {in} RETURNING edge", "missing", ids))
        return [json.loads(r[0]) for r in rows]

    def drop_pending_edges(self, owners: Iterable[str]) -> int:
        """Forget the pending edges of ``owners`` (their content changed or they were deleted)."""
        n = 0
        with self.transaction():
            for cond, part in self.dialect.where_in("owner", dict.fromkeys(owners)):
                n += self._q.execute(f"DELETE FROM pending_edges WHERE {cond}", part).rowcount
        return n

    def pending_edge_count(self) -> int:
        return self._count("pending_edges")

    # -------------------------------------------------------------- change feed
    def changes_since(self, seq: int) -> Changes:
        d, q = self.dialect, self._q
        with self._snapshot():  # one consistent snapshot across the reads
            now_seq = self.current_seq()
            nrows = q.execute(
                f"SELECT idx, id, content_hash, type, event_time, source FROM nodes{d.indexed_by('nodes_seq')}"
                f" WHERE seq > ?{d.order(' ORDER BY idx')}",
                (seq,),
            ).fetchall()
            hl = q.execute("SELECT value FROM meta WHERE key = 'learning.plastic_half_life_s'").fetchone()
            rows = q.execute(
                "SELECT eid, src, dst, rel_id, weight, factuality, polarity, plastic, plastic_at, dormant"
                f" FROM edges WHERE seq > ?{d.order(' ORDER BY eid')}",
                (seq,),
            ).fetchall()
            tomb = q.execute(f"SELECT kind, key FROM tombstones WHERE seq > ?{d.order(' ORDER BY seq, key')}", (seq,))
            tomb = tomb.fetchall()
        raw = np.array(rows, dtype=np.float64).reshape(-1, 10)
        ecols = raw[:, :7]
        # what a learned edge weighs now is learning's formula (learning/decay.py, registered in base.py)
        hl_s = float(hl[0]) if hl else np.inf
        ecols[:, 4] = effective_weights(raw[:, 4], raw[:, 7], raw[:, 8], raw[:, 9], hl_s, self.clock())
        return Changes(
            seq=now_seq,
            nodes=[(int(r[0]), r[1], r[2]) for r in nrows],
            node_types=[r[3] for r in nrows],
            node_times=[r[4] for r in nrows],
            node_sources=[r[5] for r in nrows],
            edges=edge_arrays(ecols),
            deleted_nodes=[int(k) for kind, k in tomb if kind == "node"],
            deleted_edges=[int(k) for kind, k in tomb if kind == "edge"],
        )

    def change_count_since(self, seq: int) -> int:
        r = self._q.execute(
            "SELECT (SELECT count(*) FROM nodes WHERE seq > ?) + (SELECT count(*) FROM edges WHERE seq > ?)"
            " + (SELECT count(*) FROM tombstones WHERE seq > ?)",
            (seq, seq, seq),
        ).fetchone()
        return int(r[0]) if r else 0

    def tombstones_between(self, after: int, upto: int) -> list[tuple[str, int]]:
        q = f"SELECT kind, key FROM tombstones WHERE seq > ? AND seq <= ?{self.dialect.order(' ORDER BY seq, key')}"
        return [(kind, int(key)) for kind, key in self._q.execute(q, (after, upto))]

    def node_records(self, after: int, upto: int) -> list[tuple[int, str, str, str, str]]:
        q = "SELECT idx, id, type, title, metadata FROM nodes WHERE seq > ? AND seq <= ?"
        q += self.dialect.order(" ORDER BY idx")
        return [(int(r[0]), r[1], r[2], r[3], r[4]) for r in self._q.execute(q, (after, upto))]

    def edge_records(self, after: int, upto: int) -> list[EdgeRecord]:
        q = (
            "SELECT e.eid, e.src, r.name, e.dst, e.weight, e.polarity, e.factuality FROM edges e"
            " JOIN relations r ON r.id = e.rel_id WHERE e.seq > ? AND e.seq <= ?"
            + self.dialect.order(" ORDER BY e.eid")
        )
        return [
            (int(r[0]), int(r[1]), r[2], int(r[3]), float(r[4]), int(r[5]), float(r[6]))
            for r in self._q.execute(q, (after, upto))
        ]

    # -------------------------------------------------------------- traces, vectors, counts
    def recent_traces(self, limit: int) -> list[dict]:
        d = self.dialect
        rows = self._q.execute(
            f"SELECT id, created_at, query, fingerprint, {d.json_array_length('hits')} FROM traces"
            f" ORDER BY created_at DESC, {d.insertion_order} DESC LIMIT ?",
            (int(limit),),
        ).fetchall()
        return [{"id": r[0], "created_at": r[1], "query": r[2], "fingerprint": r[3], "hits": r[4]} for r in rows]

    def embedding_models(self) -> dict[str, int]:
        """Cached vectors per embedder model id."""
        return {m: int(n) for m, n in self._q.execute("SELECT model, count(*) FROM embeddings GROUP BY model")}

    def stats(self) -> dict:
        return {
            "path": self.path,
            "schema_version": self.schema_version,
            "nodes": self._count("nodes"),
            "edges": self._count("edges"),
            "relations": self._count("relations"),
            "traces": self._count("traces"),
            "cached_vectors": self._count("embeddings"),
            "pending_edges": self._count("pending_edges"),  # derived edges waiting for a node
            "node_types": self.node_type_counts(),
            "edge_relations": {
                n: int(k)
                for n, k in self._q.execute(
                    "SELECT r.name, count(*) FROM edges e JOIN relations r ON r.id = e.rel_id GROUP BY r.name"
                    " ORDER BY 2 DESC, 1"
                )
            },
        }

    def relation_type_pairs(self) -> list[tuple[str, str, str, int]]:
        q = "SELECT r.name, s.type, d.type, count(*)" + self._EDGE_JOIN + " GROUP BY 1, 2, 3 ORDER BY 4 DESC, 1, 2, 3"
        return [(a, b, c, int(n)) for a, b, c, n in self._q.execute(q)]

    def metadata_keys(self, limit: int) -> list[str]:
        return [r[0] for r in self._q.execute(self.dialect.metadata_keys_sql, (int(limit),))]


# ----------------------------------------------------------------------------- pure helpers of both stores
def check_migrations(path: str, done: set[str], known: list[tuple[str, str]]) -> None:
    """Refuse a database written by a newer release (it holds migrations this one does not know)."""
    unknown = done - {name for name, _ in known}
    if unknown:
        raise StoreError(f"{path} was written by a newer neurongraph (unknown migrations {sorted(unknown)})")


def last_of_each_id(nodes: list[Node]) -> dict[str, Node]:
    """One node per id, the last occurrence winning (an upsert of a batch that repeats an id)."""
    latest: dict[str, Node] = {}
    for n in nodes:
        latest[n.id] = n
    return latest


def unknown_nodes_error(unknown: list[str]) -> UnknownNode:
    shown = ", ".join(repr(u) for u in unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
    return UnknownNode(f"edge refers to unknown node(s): {shown}; add the nodes first", node_ids=unknown[:50])


def edge_arrays(ecols: np.ndarray) -> EdgeArrays:
    """The change feed's edges from its float matrix ``(eid, src, dst, rel, weight, fact, pol)``."""
    return EdgeArrays(
        eid=ecols[:, 0].astype(np.int64),
        src=ecols[:, 1].astype(np.int64),
        dst=ecols[:, 2].astype(np.int64),
        rel_id=ecols[:, 3].astype(np.int32),
        weight=ecols[:, 4].copy(),
        fact=ecols[:, 5].copy(),
        pol=ecols[:, 6].astype(np.int8),
    )


def edge_dict(r, src: str, rel: str, dst: str, meta: dict) -> dict:
    """``get_edge``'s answer from ``(eid, polarity, weight, plastic, factuality, meta, reinforce_count,
    created_at, updated_at)`` (``meta`` already decoded: the drivers differ there)."""
    return {
        "eid": int(r[0]),
        "src": src,
        "rel": rel,
        "dst": dst,
        "polarity": r[1],
        "weight": r[2],
        "plastic": r[3],
        "factuality": r[4],
        "meta": meta,
        "reinforce_count": r[6],
        "created_at": r[7],
        "updated_at": r[8],
    }
