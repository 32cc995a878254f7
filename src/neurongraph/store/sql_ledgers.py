"""The learning ledgers of a SQL store (``store.ledgers``), for SQLite and PostgreSQL alike: parameterised SQL
with ``?`` placeholders, run through the store's ``_q``; the one difference (the column that keeps insertion
order: SQLite's ``rowid``, PostgreSQL's ``pos``) is the store's dialect's.

Every method runs on the store's connection inside the caller's ``store.transaction()``, so a ledger
entry and the weights it changes commit together.  The arithmetic (decay, reinforcement) stays in
``learning/``; these methods only read and write rows.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import numpy as np

from .base import LedgerTables
from .sqlite_util import chunks, marks

if TYPE_CHECKING:
    from .sql_store import SQLStore

__all__ = ["SQLLedgers"]


class SQLLedgers(LedgerTables):
    """The learning ledgers (source use, outcomes, failures, weight changes) on a SQL store."""

    def __init__(self, store: SQLStore):
        self._store = store

    @property
    def c(self):
        return self._store._q  # the store's statements' connection: ``?`` placeholders on either database

    # ------------------------------------------------------------ stages and receipts
    def stages(self, trace_id: str) -> dict[str, int]:
        return dict(self.c.execute("SELECT node_id, stage FROM trace_stages WHERE trace_id = ?", (trace_id,)))

    def set_stages(self, trace_id: str, stages: dict[str, int], now: float) -> None:
        self.c.executemany(
            "INSERT INTO trace_stages(trace_id, node_id, stage, updated_at) VALUES (?,?,?,?)"
            " ON CONFLICT(trace_id, node_id) DO UPDATE SET stage = excluded.stage, updated_at = excluded.updated_at",
            [(trace_id, n, s, now) for n, s in stages.items()],
        )

    def receipt_by_key(self, key: str) -> tuple[str, dict] | None:
        r = self.c.execute(
            "SELECT payload_hash, receipt FROM source_use_receipts WHERE idempotency_key = ?", (key,)
        ).fetchone()
        return None if r is None else (r[0], json.loads(r[1]))

    def save_receipt(self, receipt: dict, key: str | None, payload_hash: str) -> None:
        self.c.execute(
            "INSERT INTO source_use_receipts(receipt_id, trace_id, idempotency_key, payload_hash, receipt,"
            " created_at) VALUES (?,?,?,?,?,?)",
            (
                receipt["receipt_id"],
                receipt["trace_id"],
                key,
                payload_hash,
                json.dumps(receipt, ensure_ascii=False),
                receipt["created_at"],
            ),
        )

    def receipts(self, trace_id: str) -> list[dict]:
        order = self._store.dialect.insertion_order
        q = f"SELECT receipt FROM source_use_receipts WHERE trace_id = ? ORDER BY created_at, {order}"
        return [json.loads(r[0]) for r in self.c.execute(q, (trace_id,))]

    # ------------------------------------------------------------ weight changes
    def log_weight_changes(self, rows: list[tuple]) -> list[int]:
        return [
            self.c.execute(
                "INSERT INTO weight_changes(receipt_id, trace_id, node_id, eid, kind, old_weight, new_weight, at)"
                " VALUES (?,?,?,?,?,?,?,?) RETURNING id",
                r,
            ).fetchone()[0]
            for r in rows
        ]

    def weight_changes(
        self, trace_id: str, node_id: str | None = None, kinds=None, unreversed: bool = False
    ) -> list[dict]:
        q = (
            "SELECT id, receipt_id, node_id, eid, kind, old_weight, new_weight, at, reversed_by"
            " FROM weight_changes WHERE trace_id = ?"
        )
        args: list = [trace_id]
        if node_id is not None:
            q += " AND node_id = ?"
            args.append(node_id)
        if kinds:
            q += f" AND kind IN ({marks(len(kinds))})"
            args += list(kinds)
        if unreversed:
            q += " AND reversed_by IS NULL"
        keys = ("id", "receipt_id", "node_id", "eid", "kind", "old_weight", "new_weight", "at", "reversed_by")
        return [dict(zip(keys, r)) for r in self.c.execute(q + " ORDER BY id", args)]

    def mark_reversed(self, change_ids: list[int], outcome_id: int) -> None:
        self.c.executemany(
            "UPDATE weight_changes SET reversed_by = ? WHERE id = ?", [(outcome_id, i) for i in change_ids]
        )

    # ------------------------------------------------------------ outcomes and failures
    def add_failure(self, trace_id: str, reason: str, now: float) -> int:
        return self.c.execute(
            "INSERT INTO retrieval_failures(trace_id, reason, created_at) VALUES (?,?,?) RETURNING id",
            (trace_id, reason, now),
        ).fetchone()[0]

    def failures(self, trace_id: str) -> list[dict]:
        return [
            {"id": r[0], "reason": r[1], "created_at": r[2]}
            for r in self.c.execute(
                "SELECT id, reason, created_at FROM retrieval_failures WHERE trace_id = ? ORDER BY id", (trace_id,)
            )
        ]

    def add_outcome(
        self, trace_id: str, node_ids: list[str], outcome: str, summary: str, external_ref, policy: dict, now: float
    ) -> int:
        return self.c.execute(
            "INSERT INTO outcomes(trace_id, node_ids, outcome, summary, external_ref, policy, created_at)"
            " VALUES (?,?,?,?,?,?,?) RETURNING id",
            (
                trace_id,
                json.dumps(node_ids, ensure_ascii=False),
                outcome,
                summary,
                external_ref,
                json.dumps(policy),
                now,
            ),
        ).fetchone()[0]

    def outcomes(self, trace_id: str) -> list[dict]:
        keys = ("id", "node_ids", "outcome", "summary", "external_ref", "policy", "created_at")
        out = []
        for r in self.c.execute(
            "SELECT id, node_ids, outcome, summary, external_ref, policy, created_at FROM outcomes"
            " WHERE trace_id = ? ORDER BY id",
            (trace_id,),
        ):
            d = dict(zip(keys, r))
            d["node_ids"], d["policy"] = json.loads(d["node_ids"]), json.loads(d["policy"])
            out.append(d)
        return out

    # ------------------------------------------------------------ node statistics
    _FEEDBACK = (
        "EXISTS (SELECT 1 FROM trace_stages s WHERE s.trace_id = t.id)"
        " OR EXISTS (SELECT 1 FROM source_use_receipts r WHERE r.trace_id = t.id)"
        " OR EXISTS (SELECT 1 FROM retrieval_failures f WHERE f.trace_id = t.id)"
        " OR EXISTS (SELECT 1 FROM outcomes o WHERE o.trace_id = t.id)"
    )

    def prune_traces(self, before: float) -> tuple[int, int]:
        kept = self.c.execute(
            f"SELECT count(*) FROM traces t WHERE t.created_at < ? AND ({self._FEEDBACK})", (before,)
        ).fetchone()[0]
        deleted = self.c.execute(
            "DELETE FROM traces WHERE id IN"
            f" (SELECT t.id FROM traces t WHERE t.created_at < ? AND NOT ({self._FEEDBACK}))",
            (before,),
        ).rowcount
        return int(deleted), int(kept)

    def traces_after(self, position: int, limit: int) -> list[tuple[int, list[dict]]]:
        p = self._store.dialect.insertion_order
        rows = self.c.execute(f"SELECT {p}, hits FROM traces WHERE {p} > ? ORDER BY {p} LIMIT ?", (position, limit))
        return [(int(r[0]), json.loads(r[1])) for r in rows.fetchall()]

    def add_retrievals(self, counts: dict[int, int]) -> None:
        self.c.executemany(
            "INSERT INTO node_stats(node_idx, retrieved_count) VALUES (?, ?) ON CONFLICT(node_idx)"
            " DO UPDATE SET retrieved_count = node_stats.retrieved_count + excluded.retrieved_count",
            list(counts.items()),
        )

    def node_activation(self, idx: int) -> tuple[float, float | None] | None:
        r = self.c.execute("SELECT activation, activation_at FROM node_stats WHERE node_idx = ?", (idx,)).fetchone()
        return None if r is None else (r[0], r[1])

    def mark_used(self, idx: int, activation: float, at: float) -> None:
        self.c.execute(
            "INSERT INTO node_stats(node_idx, used_count, activation, activation_at) VALUES (?, 1, ?, ?)"
            " ON CONFLICT(node_idx) DO UPDATE SET used_count = node_stats.used_count + 1,"
            " activation = excluded.activation, activation_at = excluded.activation_at",
            (idx, activation, at),
        )

    def node_stats(self, idxs: list[int] | None = None) -> list[tuple]:
        cols = "node_idx, retrieved_count, used_count, activation, activation_at"
        if idxs is None:
            return self.c.execute(f"SELECT {cols} FROM node_stats").fetchall()
        out = []
        for part in chunks(idxs):
            out += self.c.execute(
                f"SELECT {cols} FROM node_stats WHERE node_idx IN ({marks(len(part))})", part
            ).fetchall()
        return out

    def active_nodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = self.c.execute(
            "SELECT node_idx, activation, coalesce(activation_at, 0) FROM node_stats WHERE activation > 0"
        ).fetchall()
        a = np.array(rows, np.float64).reshape(-1, 3)
        return a[:, 0].astype(np.int64), a[:, 1], a[:, 2]

    def used_queries(self) -> list[tuple[str, str]]:
        return self.c.execute(
            "SELECT ts.node_id, t.query FROM trace_stages ts JOIN traces t ON t.id = ts.trace_id"
            " JOIN nodes n ON n.id = ts.node_id JOIN node_stats s ON s.node_idx = n.idx"
            " WHERE ts.stage = 3 AND s.activation > 0"
        ).fetchall()

    def learned_edge_queries(self) -> list[tuple[int, str, int, int, str]]:
        return self.c.execute(
            "SELECT DISTINCT w.eid, w.kind, n.idx, e.dst, t.query FROM weight_changes w"
            " JOIN traces t ON t.id = w.trace_id JOIN edges e ON e.eid = w.eid JOIN nodes n ON n.id = w.node_id"
            " WHERE w.kind IN ('path', 'co_use', 'confirm') AND w.reversed_by IS NULL AND e.plastic != 0"
            " ORDER BY w.eid, n.idx, t.query"
        ).fetchall()

    def set_activations(self, rows: list[tuple[int, float, float | None]]) -> None:
        self.c.executemany(
            "UPDATE node_stats SET activation = ?, activation_at = ? WHERE node_idx = ?",
            [(act, at, idx) for idx, act, at in rows],
        )

    # ------------------------------------------------------------ learned edge state
    def plastic_edges(self) -> tuple[np.ndarray, ...]:
        rows = self.c.execute(
            "SELECT eid, weight, plastic, plastic_at, dormant FROM edges WHERE plastic != 0 OR dormant != 0"
        ).fetchall()
        a = np.array(rows, np.float64).reshape(-1, 5)
        return a[:, 0].astype(np.int64), a[:, 1], a[:, 2], a[:, 3], a[:, 4]

    def edge_id(self, src: str, rel: str, dst: str) -> int | None:
        r = self.c.execute(
            "SELECT e.eid FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst"
            " JOIN relations r ON r.id = e.rel_id WHERE s.id = ? AND r.name = ? AND d.id = ?",
            (src, rel, dst),
        ).fetchone()
        return None if r is None else int(r[0])

    def edge_state(self, eid: int) -> tuple | None:
        r = self.c.execute(
            "SELECT e.eid, s.id, r.name, d.id, e.weight, e.plastic, e.plastic_at, e.dormant, e.reinforce_count"
            " FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN"
            " relations r ON r.id = e.rel_id"
            " WHERE e.eid = ?",
            (eid,),
        ).fetchone()
        return None if r is None else tuple(r)

    def write_learned(self, rows: list[tuple], seq: int, now: float) -> None:
        self.c.executemany(
            "UPDATE edges SET plastic = ?, plastic_at = ?, dormant = ?, reinforce_count = ?, updated_at = ?, seq = ?"
            " WHERE eid = ?",
            [(plastic, at, int(dormant), count, now, seq, eid) for eid, plastic, at, dormant, count in rows],
        )

    def set_plastic(self, rows: list[tuple[int, float, float | None]], seq: int) -> None:
        self.c.executemany(
            "UPDATE edges SET plastic = ?, plastic_at = ?, seq = ? WHERE eid = ?",
            [(plastic, at, seq, eid) for eid, plastic, at in rows],
        )
