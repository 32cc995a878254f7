"""The relation schema's tables of :class:`~.postgres.PostgresStore` (``store.schema_tables``).

The SQL is the SQLite store's (:class:`~.sqlite_schema.SQLiteSchemaTables`, one definition for both stores),
run through the store's ``_q`` (here :class:`~.postgres.QMark`: ``?`` sent as psycopg's ``%s``).  Overridden
here: what PostgreSQL spells differently (``ON CONFLICT DO NOTHING`` for ``INSERT OR IGNORE``, booleans and
``<> ALL`` for an empty exemption list in the rule check, ``meta`` of ``jsonb`` read back as text).
"""

from __future__ import annotations

import time
from typing import Any

from .sqlite_schema import SQLiteSchemaTables

__all__ = ["PostgresSchemaTables"]

# edges that break the rules: an unregistered relation (strict mode only), or a registered
# one with allowed pairs none of which matches (either way round for a symmetric relation)
_RULE_SQL = """
SELECT s.id, r.name, d.id, s.type, d.type FROM edges e
JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN relations r ON r.id = e.rel_id
LEFT JOIN relation_types t ON t.rel_id = e.rel_id
WHERE {scope} AND (
  (t.rel_id IS NULL AND ? AND r.name <> ALL(?::text[]))
  OR (t.rel_id IS NOT NULL AND EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id)
      AND NOT EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id
          AND ((q.src_type IN (s.type, '*') AND q.dst_type IN (d.type, '*'))
            OR (t.directed = 0 AND q.src_type IN (d.type, '*') AND q.dst_type IN (s.type, '*'))))))
LIMIT 20"""


class PostgresSchemaTables(SQLiteSchemaTables):
    """The relation-schema tables on PostgreSQL: the SQLite section's logic over the PostgreSQL connection."""

    def mark_superseded(self, seq: int, rel_id: int, now: float | None = None) -> None:
        self.c.execute(
            "INSERT INTO superseded(node_idx, by_idx, at) SELECT dst, src, ? FROM edges WHERE seq = ?"
            " AND rel_id = ? ORDER BY eid ON CONFLICT (node_idx) DO NOTHING",
            (time.time() if now is None else now, seq, rel_id),
        )

    def edges_breaking_rules(
        self, strict: bool, exempt: list[str], *, seq: int | None = None, nodes: list[int] | None = None
    ) -> list[tuple[str, str, str, str, str]]:
        params: list[Any]
        if seq is not None:
            scope, params = "e.seq = ?", [seq]
        elif nodes is not None:
            keys = [int(i) for i in nodes]
            scope, params = "(e.src = ANY(?) OR e.dst = ANY(?))", [keys, keys]
        else:
            scope, params = "TRUE", []
        bad = self.c.execute(_RULE_SQL.format(scope=scope), [*params, bool(strict), list(exempt)]).fetchall()
        return [(a, b, c, d, e) for a, b, c, d, e in bad]

    def neighbor_rows(self, idx: int, walk: str, rel_ids: list[int] | None, include_superseded: bool) -> list[tuple]:
        here, there = ("src", "dst") if walk == "out" else ("dst", "src")
        sql = (
            f"SELECT r.name, o.id, o.type, e.weight, e.plastic, e.factuality, e.polarity, e.meta::text, e.eid"
            f" FROM edges e JOIN relations r ON r.id = e.rel_id JOIN nodes o ON o.idx = e.{there}"
            f" WHERE e.{here} = ?"
        )
        params: list = [idx]
        if rel_ids is not None:
            sql += " AND e.rel_id = ANY(?)"
            params.append([int(r) for r in rel_ids])
        if not include_superseded:
            sql += f" AND NOT EXISTS (SELECT 1 FROM superseded s WHERE s.node_idx = e.{there})"
        sql += " ORDER BY e.eid"
        return self.c.execute(sql, params).fetchall()
