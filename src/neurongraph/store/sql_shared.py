"""What the SQLite and PostgreSQL stores do with the same statements: meta, traces and node reads, written once
with ``?`` placeholders and run through the store's ``_q`` (SQLite's own connection; PostgreSQL's
:class:`~.postgres.QMark`, which sends each ``?`` as psycopg's ``%s`` on the calling thread's transaction
connection, else a pooled one).  The learning ledgers share their SQL the same way (postgres_ledgers.py).
Everything whose SQL differs between the two stays in the store's own module."""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Iterator
from typing import Any

import numpy as np

from ..errors import StoreError, UnknownNode
from ..model import Node, strict_dumps
from .base import EdgeArrays, NodeRow, Store

__all__ = [
    "SharedSQLStore",
    "check_migrations",
    "edge_arrays",
    "edge_dict",
    "last_of_each_id",
    "unknown_nodes_error",
]


class SharedSQLStore(Store):
    """The :class:`~.base.Store` members both SQL stores implement with one statement."""

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
