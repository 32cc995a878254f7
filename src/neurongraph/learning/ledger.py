"""The learning ledgers in SQL: stages, receipts, weight changes, outcomes, failures, node stats.

Every method runs on the store's connection and is meant to be called inside
``store.transaction()`` by :mod:`.api`, so a ledger entry and the weights it
changes commit together or not at all.  Parameterised SQL only.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..model import Edge
from ..store.sqlite import SQLiteStore
from .decay import decayed, effective_weight
from .errors import UnknownTrace

__all__ = ["Ledger", "EdgeState", "EdgeBook"]


@dataclass
class EdgeState:
    eid: int
    src: str
    rel: str
    dst: str
    base: float
    plastic: float
    plastic_at: float | None
    dormant: bool
    count: int

    def weight(self, now: float, half_life: float) -> float:
        """Effective weight as a reader sees it at ``now`` (the lazy-decay formula)."""
        return float(
            effective_weight(
                np.float64(self.base),
                np.float64(self.plastic),
                np.float64(np.nan if self.plastic_at is None else self.plastic_at),
                np.float64(self.dormant),
                half_life,
                now,
            )
        )

    def plastic_now(self, now: float, half_life: float) -> float:
        at = np.nan if self.plastic_at is None else self.plastic_at
        return float(decayed(self.plastic, at, now, half_life))


class Ledger:
    def __init__(self, store: SQLiteStore):
        self.store = store

    @property
    def c(self):
        return self.store.conn

    # ------------------------------------------------------------ meta
    def meta_float(self, key: str, default: float) -> float:
        r = self.c.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return float(r[0]) if r else default

    def set_meta(self, key: str, value) -> None:
        self.c.execute(
            "INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            (key, str(value)),
        )

    # ------------------------------------------------------------ traces and stages
    def trace(self, trace_id) -> dict:
        t = self.store.get_trace(trace_id) if isinstance(trace_id, str) else None
        if t is None:
            raise UnknownTrace(f"no trace with id {trace_id!r}", trace_id=trace_id)
        return t

    def stages(self, trace_id: str) -> dict[str, int]:
        return dict(self.c.execute("SELECT node_id, stage FROM trace_stages WHERE trace_id = ?", (trace_id,)))

    def set_stages(self, trace_id: str, stages: dict[str, int], now: float) -> None:
        self.c.executemany(
            "INSERT INTO trace_stages(trace_id, node_id, stage, updated_at) VALUES (?,?,?,?)"
            " ON CONFLICT(trace_id, node_id) DO UPDATE SET stage = excluded.stage, updated_at = excluded.updated_at",
            [(trace_id, n, s, now) for n, s in stages.items()],
        )

    # ------------------------------------------------------------ receipts
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
        return [
            json.loads(r[0])
            for r in self.c.execute(
                "SELECT receipt FROM source_use_receipts WHERE trace_id = ? ORDER BY created_at, rowid", (trace_id,)
            )
        ]

    # ------------------------------------------------------------ weight changes
    def log_changes(self, rows: list[tuple]) -> list[int]:
        """rows: (receipt_id, trace_id, node_id, eid, kind, old, new, at); returns their ids."""
        ids = []
        for r in rows:
            ids.append(
                self.c.execute(
                    "INSERT INTO weight_changes(receipt_id, trace_id, node_id, eid, kind, old_weight, new_weight, at)"
                    " VALUES (?,?,?,?,?,?,?,?) RETURNING id",
                    r,
                ).fetchone()[0]
            )
        return ids

    def changes_for(self, trace_id: str, node_id: str | None = None, kinds=None, unreversed=False) -> list[dict]:
        q = (
            "SELECT id, receipt_id, node_id, eid, kind, old_weight, new_weight, at, reversed_by"
            " FROM weight_changes WHERE trace_id = ?"
        )
        args: list = [trace_id]
        if node_id is not None:
            q += " AND node_id = ?"
            args.append(node_id)
        if kinds:
            q += f" AND kind IN ({','.join('?' * len(kinds))})"
            args += list(kinds)
        if unreversed:
            q += " AND reversed_by IS NULL"
        keys = ("id", "receipt_id", "node_id", "eid", "kind", "old_weight", "new_weight", "at", "reversed_by")
        return [dict(zip(keys, r)) for r in self.c.execute(q + " ORDER BY id", args)]

    def mark_reversed(self, change_ids: list[int], outcome_id: int) -> None:
        self.c.executemany(
            "UPDATE weight_changes SET reversed_by = ? WHERE id = ?", [(outcome_id, i) for i in change_ids]
        )

    # ------------------------------------------------------------ other ledgers
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

    def add_outcome(self, trace_id, node_ids, outcome, summary, external_ref, policy: dict, now: float) -> int:
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

    # ------------------------------------------------------------ node stats
    def count_retrievals(self, batch: int = 500) -> int:
        """Fold traces stored since the last call into ``retrieved_count`` (exactly once: the
        watermark moves in the same transaction).  Retrieval counts never touch a weight."""
        done = int(self.meta_float("learning.retrieval_counted_rowid", 0))
        total = 0
        while True:
            rows = self.c.execute(
                "SELECT rowid, hits FROM traces WHERE rowid > ? ORDER BY rowid LIMIT ?", (done, batch)
            ).fetchall()
            if not rows:
                break
            counts = Counter(h["id"] for _, hits in rows for h in json.loads(hits))
            idx = self.store.lookup_idx(counts)
            self.c.executemany(
                "INSERT INTO node_stats(node_idx, retrieved_count) VALUES (?, ?) ON CONFLICT(node_idx)"
                " DO UPDATE SET retrieved_count = retrieved_count + excluded.retrieved_count",
                [(i, counts[n]) for n, i in idx.items()],
            )
            done = rows[-1][0]
            total += len(rows)
        if total:
            self.set_meta("learning.retrieval_counted_rowid", done)
        return total

    def mark_used(self, idxs: list[int], boost: float, now: float, half_life: float) -> None:
        """used_count += 1 and activation = min(1, decayed activation + boost), as of ``now``."""
        for i in idxs:
            r = self.c.execute("SELECT activation, activation_at FROM node_stats WHERE node_idx = ?", (i,)).fetchone()
            act = 0.0 if r is None else float(decayed(r[0], np.nan if r[1] is None else r[1], now, half_life))
            self.c.execute(
                "INSERT INTO node_stats(node_idx, used_count, activation, activation_at) VALUES (?, 1, ?, ?)"
                " ON CONFLICT(node_idx) DO UPDATE SET used_count = used_count + 1,"
                " activation = excluded.activation, activation_at = excluded.activation_at",
                (i, min(1.0, act + boost), now),
            )

    def node_stats(self, idxs: list[int] | None = None) -> list[tuple]:
        cols = "node_idx, retrieved_count, used_count, activation, activation_at"
        if idxs is None:
            return self.c.execute(f"SELECT {cols} FROM node_stats").fetchall()
        out = []
        for k in range(0, len(idxs), 500):
            part = idxs[k : k + 500]
            out += self.c.execute(
                f"SELECT {cols} FROM node_stats WHERE node_idx IN ({','.join('?' * len(part))})", part
            ).fetchall()
        return out

    def active_nodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = self.c.execute(
            "SELECT node_idx, activation, coalesce(activation_at, 0) FROM node_stats WHERE activation > 0"
        ).fetchall()
        a = np.array(rows, np.float64).reshape(-1, 3)
        return a[:, 0].astype(np.int64), a[:, 1], a[:, 2]

    def used_queries(self) -> list[tuple[str, str]]:
        """(node id, query text) of every active node's uses: what query-conditioned priming compares to."""
        return self.c.execute(
            "SELECT ts.node_id, t.query FROM trace_stages ts JOIN traces t ON t.id = ts.trace_id"
            " JOIN nodes n ON n.id = ts.node_id JOIN node_stats s ON s.node_idx = n.idx"
            " WHERE ts.stage = 3 AND s.activation > 0"
        ).fetchall()

    def decay_activation(self, now: float, half_life: float, floor: float = 1e-6) -> int:
        idx, act, at = self.active_nodes()
        if idx.size == 0:
            return 0
        new = decayed(act, at, now, half_life)
        new[new < floor] = 0.0
        self.c.executemany(
            "UPDATE node_stats SET activation = ?, activation_at = ? WHERE node_idx = ?",
            [(float(v), now if v > 0 else None, int(i)) for i, v in zip(idx, new)],
        )
        return int(idx.size)

    # ------------------------------------------------------------ edges
    def plastic_edges(self) -> tuple[np.ndarray, ...]:
        """(eid, base, plastic, plastic_at, dormant) of every edge with learned state (partial index)."""
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

    def edge_state(self, eid: int) -> EdgeState | None:
        r = self.c.execute(
            "SELECT e.eid, s.id, r.name, d.id, e.weight, e.plastic, e.plastic_at, e.dormant, e.reinforce_count"
            " FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN"
            " relations r ON r.id = e.rel_id"
            " WHERE e.eid = ?",
            (eid,),
        ).fetchone()
        return None if r is None else EdgeState(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8])

    def write_edges(self, states: list[EdgeState], seq: int, now: float) -> None:
        self.c.executemany(
            "UPDATE edges SET plastic = ?, plastic_at = ?, dormant = ?, reinforce_count = ?, updated_at = ?, seq = ?"
            " WHERE eid = ?",
            [(s.plastic, s.plastic_at, int(s.dormant), s.count, now, seq, s.eid) for s in states],
        )

    def decay_edges(self, now: float, half_life: float, seq_fn, floor: float = 1e-9) -> int:
        """Materialise lazy decay: plastic := plastic · factor, plastic_at := now (same value a reader saw)."""
        eid, _, plastic, at, _ = self.plastic_edges()
        live = plastic != 0
        if not live.any():
            return 0
        new = decayed(plastic[live], at[live], now, half_life)
        new[np.abs(new) < floor] = 0.0
        seq = seq_fn()
        self.c.executemany(
            "UPDATE edges SET plastic = ?, plastic_at = ?, seq = ? WHERE eid = ?",
            [(float(v), now if v != 0 else None, seq, int(e)) for e, v in zip(eid[live], new)],
        )
        return int(live.sum())

    def create_edges(self, triples: list[tuple[str, str, str]]) -> None:
        """New association edges go through the normal edge path (validated, seq-stamped) with base weight 0."""
        if triples:
            self.store.upsert_edges([Edge(s, r, d, weight=0.0) for s, r, d in triples])


class EdgeBook:
    """Working copy of the edges one request touches: sequential edits, one flush, one change log."""

    def __init__(self, ledger: Ledger, now: float, half_life: float):
        self.ledger, self.now, self.hl = ledger, now, half_life
        self.states: dict[int, EdgeState] = {}
        self.log: list[dict] = []

    def get(self, eid: int) -> EdgeState | None:
        if eid not in self.states:
            s = self.ledger.edge_state(eid)
            if s is None:
                return None
            self.states[eid] = s
        return self.states[eid]

    def resolve(self, src: str, rel: str, dst: str) -> int | None:
        """A path hop's stored edge (walks may have crossed an edge backwards)."""
        eid = self.ledger.edge_id(src, rel, dst)
        return eid if eid is not None else self.ledger.edge_id(dst, rel, src)

    def set_weight(
        self,
        eid: int,
        new_w: float,
        node_id: str,
        kind: str,
        count_delta: int = 0,
        dormant: bool = False,
        wake: bool = True,
    ) -> None:
        """Set the effective weight via the plastic part; ``dormant`` silences the edge instead,
        and a reinforcement (``wake``) brings a dormant edge back."""
        s = self.get(eid)
        old_w = s.weight(self.now, self.hl)
        if dormant:
            s.dormant = True
        else:
            s.plastic, s.plastic_at = new_w - s.base, self.now
            s.dormant = s.dormant and not wake
        s.count = max(0, s.count + count_delta)
        new_eff = s.weight(self.now, self.hl)
        if old_w != new_eff or dormant:
            self.log.append(
                {
                    "eid": eid,
                    "src": s.src,
                    "rel": s.rel,
                    "dst": s.dst,
                    "kind": kind,
                    "node_id": node_id,
                    "old_weight": old_w,
                    "new_weight": new_eff,
                }
            )

    def flush(self, receipt_id: str, trace_id: str) -> list[int]:
        if not self.log:
            return []
        changed = {c["eid"] for c in self.log}
        self.ledger.write_edges([self.states[e] for e in changed], self.ledger.store.next_seq(), self.now)
        return self.ledger.log_changes(
            [
                (receipt_id, trace_id, c["node_id"], c["eid"], c["kind"], c["old_weight"], c["new_weight"], self.now)
                for c in self.log
            ]
        )
