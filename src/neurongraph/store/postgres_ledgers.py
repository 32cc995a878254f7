"""The learning ledgers of :class:`~.postgres.PostgresStore` (``store.ledgers``).

The SQL is the SQLite store's (:class:`~.sqlite_ledgers.SQLiteLedgers`, one definition for both stores):
its statements are standard SQL with ``?`` placeholders, run through the store's ``_q`` (here
:class:`~.postgres.QMark`, which sends them as psycopg's ``%s``).  Only the statements that differ in
PostgreSQL are overridden: the insertion order SQLite reads from ``rowid`` is the ``pos`` column here, and an
upsert's ``SET`` names the table of the column it increments.
"""

from __future__ import annotations

import json

from .sqlite_ledgers import SQLiteLedgers

__all__ = ["PostgresLedgers"]


class PostgresLedgers(SQLiteLedgers):
    """The learning ledgers on PostgreSQL: the SQLite section's logic over the PostgreSQL connection."""

    def receipts(self, trace_id: str) -> list[dict]:
        return [
            json.loads(r[0])
            for r in self.c.execute(
                "SELECT receipt FROM source_use_receipts WHERE trace_id = ? ORDER BY created_at, pos", (trace_id,)
            )
        ]

    def traces_after(self, position: int, limit: int) -> list[tuple[int, list[dict]]]:
        rows = self.c.execute(
            "SELECT pos, hits FROM traces WHERE pos > ? ORDER BY pos LIMIT ?", (position, limit)
        ).fetchall()
        return [(int(r[0]), json.loads(r[1])) for r in rows]

    def add_retrievals(self, counts: dict[int, int]) -> None:
        self.c.executemany(
            "INSERT INTO node_stats(node_idx, retrieved_count) VALUES (?, ?) ON CONFLICT(node_idx)"
            " DO UPDATE SET retrieved_count = node_stats.retrieved_count + excluded.retrieved_count",
            list(counts.items()),
        )

    def mark_used(self, idx: int, activation: float, at: float) -> None:
        self.c.execute(
            "INSERT INTO node_stats(node_idx, used_count, activation, activation_at) VALUES (?, 1, ?, ?)"
            " ON CONFLICT(node_idx) DO UPDATE SET used_count = node_stats.used_count + 1,"
            " activation = excluded.activation, activation_at = excluded.activation_at",
            (idx, activation, at),
        )
