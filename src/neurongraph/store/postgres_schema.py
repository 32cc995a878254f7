"""The relation schema's tables of :class:`~.postgres.PostgresStore` (``store.schema_tables``).

The SQL is the SQLite store's (:class:`~.sqlite_schema.SQLiteSchemaTables`, one definition for both stores),
run through :class:`~.postgres.QMark` (``?`` sent as psycopg's ``%s``).  Overridden here: what PostgreSQL
spells differently (``ON CONFLICT DO NOTHING`` for ``INSERT OR IGNORE``, booleans and ``<> ALL`` for an
empty exemption list in the rule check, ``meta`` of ``jsonb`` read back as text) and the schema save, which
runs on the store's own transaction.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

from .sqlite_schema import SQLiteSchemaTables

if TYPE_CHECKING:
    from .postgres import PostgresStore, QMark

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

    def __init__(
        self, store: PostgresStore
    ):  # the parent keeps a SQLite handle; this section runs on the PostgreSQL store
        self._pg = store

    @property
    def c(self) -> QMark:
        return self._pg.qmark

    def save_relation_schema(
        self,
        types: list[tuple[str, bool, str | None, float, str]],
        rules: list[tuple[str, str, str]],
        invariants: list[tuple[str, str]],
        mode: str,
        entry_types: list[str],
    ) -> int:
        with self._pg.transaction():
            ids = self._pg.relation_ids(t[0] for t in types)
            self.c.execute("DELETE FROM relation_types")  # rules cascade
            self.c.execute("DELETE FROM invariants")
            self.c.executemany(
                "INSERT INTO relation_types(rel_id, directed, inverse, default_weight, description) VALUES (?,?,?,?,?)",
                [(ids[name], int(directed), inv, w, desc) for name, directed, inv, w, desc in types],
            )
            position: dict[str, int] = {}
            rows = []
            for name, s, d in rules:
                k = position[name] = position.get(name, -1) + 1
                rows.append((ids[name], s, d, k))
            self.c.executemany(
                "INSERT INTO relation_rules(rel_id, src_type, dst_type, position) VALUES (?,?,?,?)", rows
            )
            self.c.executemany(
                "INSERT INTO invariants(name, position, spec) VALUES (?,?,?)",
                [(name, k, spec) for k, (name, spec) in enumerate(invariants)],
            )
            for key, value in (("schema.mode", mode), ("schema.entry_types", json.dumps(list(entry_types)))):
                self.c.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
            gen = self.c.execute(
                "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = 'schema.generation' RETURNING value"
            ).fetchone()
            return int(gen[0])

    def add_alias(self, alias: str, idx: int) -> None:
        self.c.execute(
            "INSERT INTO aliases(alias, node_idx) VALUES (?, ?) ON CONFLICT (alias) DO NOTHING", (alias, idx)
        )

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
