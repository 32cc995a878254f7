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

from ..model import strict_dumps
from .base import NodeRow, Store

__all__ = ["SharedSQLStore"]


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
