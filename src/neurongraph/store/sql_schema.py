"""The relation schema's tables of a SQL store (``store.schema_tables``), for SQLite and PostgreSQL alike:
parameterised SQL with ``?`` placeholders, run through the store's ``_q``; its dialect says how a long list
of node indices is matched and how edge ``meta`` reads as text.

Relation types and rules, invariants, entity state, aliases, the derived ``superseded`` flag, and the set
queries the write-time validator (schema/validator.py) runs inside a write transaction.  The rules
themselves (what is allowed, what an invariant means) stay in ``schema/``.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

import numpy as np

from .base import SchemaTables
from .sqlite_util import chunks, marks

if TYPE_CHECKING:
    from .sql_store import SQLStore

__all__ = ["SQLSchemaTables"]


# edges that break the rules: an unregistered relation (strict mode only), or a registered
# one with allowed pairs none of which matches (either way round for a symmetric relation)
_RULE_SQL = """
SELECT s.id, r.name, d.id, s.type, d.type FROM edges e
JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN relations r ON r.id = e.rel_id
LEFT JOIN relation_types t ON t.rel_id = e.rel_id
WHERE {scope} AND (
  (t.rel_id IS NULL AND ? = 1 AND {exempt})
  OR (t.rel_id IS NOT NULL AND EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id)
      AND NOT EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id
          AND ((q.src_type IN (s.type, '*') AND q.dst_type IN (d.type, '*'))
            OR (t.directed = 0 AND q.src_type IN (d.type, '*') AND q.dst_type IN (s.type, '*'))))))
LIMIT 20"""


class SQLSchemaTables(SchemaTables):
    """The relation-schema tables (relations, invariants, entities) on a SQL store."""

    def __init__(self, store: SQLStore):
        self._store = store

    @property
    def c(self):
        return self._store._q  # the store's statements' connection: ``?`` placeholders on either database

    # ------------------------------------------------------------ the registry
    def save_relation_schema(
        self,
        types: list[tuple[str, bool, str | None, float, str]],
        rules: list[tuple[str, str, str]],
        invariants: list[tuple[str, str]],
        mode: str,
        entry_types: list[str],
    ) -> int:
        with self._store.transaction():
            c = self.c
            ids = self._store.relation_ids(t[0] for t in types)
            c.execute("DELETE FROM relation_types")  # rules cascade
            c.execute("DELETE FROM invariants")
            c.executemany(
                "INSERT INTO relation_types(rel_id, directed, inverse, default_weight, description) VALUES (?,?,?,?,?)",
                [(ids[name], int(directed), inv, w, desc) for name, directed, inv, w, desc in types],
            )
            position: dict[str, int] = {}
            rows = []
            for name, s, d in rules:
                k = position[name] = position.get(name, -1) + 1
                rows.append((ids[name], s, d, k))
            c.executemany("INSERT INTO relation_rules(rel_id, src_type, dst_type, position) VALUES (?,?,?,?)", rows)
            c.executemany(
                "INSERT INTO invariants(name, position, spec) VALUES (?,?,?)",
                [(name, k, spec) for k, (name, spec) in enumerate(invariants)],
            )
            for key, value in (("schema.mode", mode), ("schema.entry_types", json.dumps(list(entry_types)))):
                c.execute(
                    "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                    (key, value),
                )
            gen = c.execute(
                "UPDATE meta SET value = CAST(CAST(value AS BIGINT) + 1 AS TEXT) WHERE key = 'schema.generation'"
                " RETURNING value"
            ).fetchone()
            return int(gen[0])

    def relation_schema_rows(self) -> tuple[list[tuple], dict[str, list[tuple[str, str]]], list[str]]:
        c = self.c
        rules: dict[str, list[tuple[str, str]]] = {}
        for name, s, d in c.execute(
            "SELECT r.name, q.src_type, q.dst_type FROM relation_rules q JOIN relations r ON r.id = q.rel_id"
            " ORDER BY q.rel_id, q.position"
        ):
            rules.setdefault(name, []).append((s, d))
        types = c.execute(
            "SELECT r.name, t.directed, t.inverse, t.default_weight, t.description"
            " FROM relation_types t JOIN relations r ON r.id = t.rel_id"
        ).fetchall()
        specs = [r[0] for r in c.execute("SELECT spec FROM invariants ORDER BY position")]
        return [(n, bool(d), inv, float(w), desc) for n, d, inv, w, desc in types], rules, specs

    # ------------------------------------------------------------ aliases and entity state
    def alias_target(self, alias: str) -> tuple[int, str] | None:
        r = self.c.execute(
            "SELECT a.node_idx, n.id FROM aliases a JOIN nodes n ON n.idx = a.node_idx WHERE a.alias = ?", (alias,)
        ).fetchone()
        return None if r is None else (int(r[0]), r[1])

    def add_alias(self, alias: str, idx: int) -> None:
        self.c.execute(
            "INSERT INTO aliases(alias, node_idx) VALUES (?, ?) ON CONFLICT (alias) DO NOTHING", (alias, idx)
        )

    def aliases_of(self, idx: int) -> list[str]:
        return [r[0] for r in self.c.execute("SELECT alias FROM aliases WHERE node_idx = ? ORDER BY alias", (idx,))]

    def entity_row(self, node_id: str) -> tuple | None:
        r = self.c.execute(
            "SELECT n.idx, n.id, n.type, n.title, es.state, es.revision, es.updated_at FROM nodes n"
            " LEFT JOIN entity_state es ON es.node_idx = n.idx WHERE n.id = ?",
            (node_id,),
        ).fetchone()
        return None if r is None else tuple(r)

    def insert_entity_state(self, idx: int, state_json: str, now: float) -> bool:
        if self.c.execute("SELECT 1 FROM entity_state WHERE node_idx = ?", (idx,)).fetchone():
            return False
        self.c.execute(
            "INSERT INTO entity_state(node_idx, state, revision, updated_at) VALUES (?, ?, 1, ?)",
            (idx, state_json, now),
        )
        return True

    def update_entity_state(self, idx: int, state_json: str, now: float, expected_revision: int) -> bool:
        done = self.c.execute(
            "UPDATE entity_state SET state = ?, revision = revision + 1, updated_at = ?"
            " WHERE node_idx = ? AND revision = ?",
            (state_json, now, idx, expected_revision),
        ).rowcount
        return done == 1

    def node_states(self, idxs: list[int]) -> list[tuple[int, str, str, str]]:
        out = []
        for part in chunks(idxs):
            out += self.c.execute(
                "SELECT n.idx, n.id, n.type, COALESCE(es.state, n.metadata) FROM nodes n"
                f" LEFT JOIN entity_state es ON es.node_idx = n.idx WHERE n.idx IN ({marks(len(part))})",
                part,
            ).fetchall()
        return out

    # ------------------------------------------------------------ revisions
    def superseded_by(self, node_id: str) -> str | None:
        r = self.c.execute(
            "SELECT b.id FROM superseded s JOIN nodes n ON n.idx = s.node_idx JOIN nodes b ON b.idx = s.by_idx"
            " WHERE n.id = ?",
            (node_id,),
        ).fetchone()
        return None if r is None else r[0]

    def supersedes(self, node_id: str) -> str | None:
        r = self.c.execute(
            "SELECT n.id FROM superseded s JOIN nodes n ON n.idx = s.node_idx JOIN nodes b ON b.idx = s.by_idx"
            " WHERE b.id = ? ORDER BY s.at LIMIT 1",
            (node_id,),
        ).fetchone()
        return None if r is None else r[0]

    def superseded_nodes(self) -> np.ndarray:
        return np.fromiter((r[0] for r in self.c.execute("SELECT node_idx FROM superseded")), np.int64)

    def mark_superseded(self, seq: int, rel_id: int, now: float | None = None) -> None:
        self.c.execute(
            "INSERT INTO superseded(node_idx, by_idx, at) SELECT dst, src, ? FROM edges WHERE seq = ?"
            " AND rel_id = ? ORDER BY eid ON CONFLICT (node_idx) DO NOTHING",
            (time.time() if now is None else now, seq, rel_id),
        )

    def unmark_superseded(self, idxs: list[int], rel_id: int) -> None:
        for chunk in chunks(sorted(idxs)):
            self.c.execute(
                f"DELETE FROM superseded WHERE node_idx IN ({marks(len(chunk))}) AND NOT EXISTS"
                " (SELECT 1 FROM edges e WHERE e.dst = superseded.node_idx AND e.rel_id = ?)",
                [*chunk, rel_id],
            )

    # ------------------------------------------------------------ validator queries
    def edges_breaking_rules(
        self, strict: bool, exempt: list[str], *, seq: int | None = None, nodes: list[int] | None = None
    ) -> list[tuple[str, str, str, str, str]]:
        d = self._store.dialect
        if seq is not None:
            scopes: list[tuple[str, list]] = [("e.seq = ?", [seq])]
        elif nodes is not None:
            scopes = [
                (f"({src} OR {dst})", [*ps, *pd])
                for (src, ps), (dst, pd) in zip(d.where_in("e.src", nodes), d.where_in("e.dst", nodes))
            ]
        else:
            scopes = [("1 = 1", [])]
        exempt_sql = f"r.name NOT IN ({marks(len(exempt))})" if exempt else "1 = 1"  # NOT IN () is SQLite's only
        for scope, params in scopes:
            sql = _RULE_SQL.format(scope=scope, exempt=exempt_sql)
            bad = self.c.execute(sql, [*params, int(strict), *exempt]).fetchall()
            if bad:
                return [(a, b, c, d_, e) for a, b, c, d_, e in bad]
        return []

    def edges_stamped(self, seq: int) -> list[tuple[int, int, int]]:
        return self.c.execute("SELECT src, dst, rel_id FROM edges WHERE seq = ?", (seq,)).fetchall()

    def nodes_stamped(self, seq: int) -> list[tuple[int, str, str, str]]:
        return self.c.execute("SELECT idx, id, type, content_hash FROM nodes WHERE seq = ?", (seq,)).fetchall()

    def node_indices(self, node_type: str | None = None) -> list[int]:
        if node_type is None:
            return [r[0] for r in self.c.execute("SELECT idx FROM nodes")]
        return [r[0] for r in self.c.execute("SELECT idx FROM nodes WHERE type = ?", (node_type,))]

    def edge_counts(self, idxs: list[int], rel_id: int, side: str) -> dict[int, int]:
        col = "src" if side == "src" else "dst"
        out: dict[int, int] = {}
        for part in chunks(idxs):
            out.update(
                self.c.execute(
                    f"SELECT {col}, count(*) FROM edges WHERE {col} IN ({marks(len(part))})"
                    f" AND rel_id = ? GROUP BY {col}",
                    [*part, rel_id],
                ).fetchall()
            )
        return out

    def neighbor_rows(self, idx: int, walk: str, rel_ids: list[int] | None, include_superseded: bool) -> list[tuple]:
        here, there = ("src", "dst") if walk == "out" else ("dst", "src")
        sql = (
            f"SELECT r.name, o.id, o.type, e.weight, e.plastic, e.factuality, e.polarity,"
            f" {self._store.dialect.json_as_text('e.meta')}, e.eid"
            f" FROM edges e JOIN relations r ON r.id = e.rel_id JOIN nodes o ON o.idx = e.{there}"
            f" WHERE e.{here} = ?"
        )
        params: list = [idx]
        if rel_ids is not None:
            if not rel_ids:
                return []  # no relation named: no edge (``IN ()`` is SQLite's only)
            sql += f" AND e.rel_id IN ({marks(len(rel_ids))})"
            params += list(rel_ids)
        if not include_superseded:
            sql += f" AND NOT EXISTS (SELECT 1 FROM superseded s WHERE s.node_idx = e.{there})"
        sql += " ORDER BY e.eid"
        return self.c.execute(sql, params).fetchall()
