"""The learning ledgers: stages, receipts, weight changes, outcomes, failures, node stats.

The rows live in the store (``store.ledgers``, store/base.py ``LedgerTables``); this module keeps the
arithmetic (decay of activation and plastic weight, counting retrievals) and the per-request working
copy of edges (``EdgeBook``).  Everything is meant to be called inside ``store.transaction()`` by
:mod:`.api`, so a ledger entry and the weights it changes commit together or not at all.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np

from ..errors import StoreError
from ..model import Edge
from ..store.base import Store
from .decay import decayed, effective_weight
from .errors import UnknownTrace

__all__ = ["Ledger", "EdgeState", "EdgeBook"]


@dataclass
class EdgeState:
    """An edge's learned state as the ledger reads and writes it (base weight, learned plastic part and when it was
    set, dormancy, use count)."""

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
    """What the learning loop computes over the store's ledgers: retrieval counting, activation and
    plastic-weight decay, typed edge state.  Plain rows are read and written through ``store.ledgers``
    (store/base.py ``LedgerTables``) directly.  Call inside ``store.transaction()``."""

    def __init__(self, store: Store):
        self.store = store
        self.rows = store.ledgers

    # ------------------------------------------------------------ meta
    def meta_float(self, key: str, default: float) -> float:
        r = self.store.get_meta(key)
        return float(r) if r is not None else default

    def set_meta(self, key: str, value) -> None:
        self.store.set_meta(key, str(value))

    # ------------------------------------------------------------ traces
    def trace(self, trace_id) -> dict:
        t = self.store.get_trace(trace_id) if isinstance(trace_id, str) else None
        if t is None:
            raise UnknownTrace(f"no trace with id {trace_id!r}", trace_id=trace_id)
        return t

    # ------------------------------------------------------------ node stats
    def count_retrievals(self, batch: int = 500) -> int:
        """Fold traces stored since the last call into ``retrieved_count`` (exactly once: the
        watermark moves in the same transaction).  Retrieval counts never touch a weight."""
        done = int(self.meta_float("learning.retrieval_counted_rowid", 0))
        total = 0
        while True:
            rows = self.rows.traces_after(done, batch)
            if not rows:
                break
            counts = Counter(h["id"] for _, hits in rows for h in hits)
            idx = self.store.lookup_idx(counts)
            self.rows.add_retrievals({i: counts[n] for n, i in idx.items()})
            done = rows[-1][0]
            total += len(rows)
        if total:
            self.set_meta("learning.retrieval_counted_rowid", done)
        return total

    def mark_used(self, idxs: list[int], boost: float, now: float, half_life: float) -> None:
        """used_count += 1 and activation = min(1, decayed activation + boost), as of ``now``."""
        for i in idxs:
            r = self.rows.node_activation(i)
            act = 0.0 if r is None else float(decayed(r[0], np.nan if r[1] is None else r[1], now, half_life))
            self.rows.mark_used(i, min(1.0, act + boost), now)

    def decay_activation(self, now: float, half_life: float, floor: float = 1e-6) -> int:
        idx, act, at = self.rows.active_nodes()
        if idx.size == 0:
            return 0
        new = decayed(act, at, now, half_life)
        new[new < floor] = 0.0
        self.rows.set_activations([(int(i), float(v), now if v > 0 else None) for i, v in zip(idx, new)])
        return int(idx.size)

    # ------------------------------------------------------------ edges
    def edge_state(self, eid: int) -> EdgeState | None:
        r = self.rows.edge_state(eid)
        return None if r is None else EdgeState(r[0], r[1], r[2], r[3], r[4], r[5], r[6], bool(r[7]), r[8])

    def write_edges(self, states: list[EdgeState], seq: int, now: float) -> None:
        self.rows.write_learned([(s.eid, s.plastic, s.plastic_at, s.dormant, s.count) for s in states], seq, now)

    def decay_edges(self, now: float, half_life: float, seq_fn, floor: float = 1e-9) -> int:
        """Materialise lazy decay: plastic := plastic · factor, plastic_at := now (same value a reader saw)."""
        eid, _, plastic, at, _ = self.rows.plastic_edges()
        live = plastic != 0
        if not live.any():
            return 0
        new = decayed(plastic[live], at[live], now, half_life)
        new[np.abs(new) < floor] = 0.0
        seq = seq_fn()
        self.rows.set_plastic([(int(e), float(v), now if v != 0 else None) for e, v in zip(eid[live], new)], seq)
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

    def state(self, eid: int) -> EdgeState:
        """The working copy of an edge this request knows exists (found, or created, in its transaction)."""
        s = self.get(eid)
        if s is None:
            raise StoreError(f"edge {eid} is not in the store", eid=eid)
        return s

    def resolve_exact(self, src: str, rel: str, dst: str) -> int:
        """The key of an edge this request created or found in its transaction, in its stored direction."""
        eid = self.ledger.rows.edge_id(src, rel, dst)
        if eid is None:
            raise StoreError(f"edge ({src}, {rel}, {dst}) is not in the store", edge=[src, rel, dst])
        return eid

    def resolve(self, src: str, rel: str, dst: str) -> int | None:
        """A path hop's stored edge (walks may have crossed an edge backwards)."""
        eid = self.ledger.rows.edge_id(src, rel, dst)
        return eid if eid is not None else self.ledger.rows.edge_id(dst, rel, src)

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
        s = self.state(eid)
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
        return self.ledger.rows.log_weight_changes(
            [
                (receipt_id, trace_id, c["node_id"], c["eid"], c["kind"], c["old_weight"], c["new_weight"], self.now)
                for c in self.log
            ]
        )
