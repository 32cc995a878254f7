"""The write-time validator the store calls from inside its write transactions.

Why it lives on the store: every write path (engine API, ``ngr ingest``, linkers,
other processes' engines) ends in ``SQLiteStore.upsert_nodes/upsert_edges``, so
one hook there enforces the schema everywhere.  The validator reads the schema
from the database and re-reads it only when ``schema.generation`` changes (one
indexed meta read per write), so a schema loaded by another process is enforced
here from its next write on.

Checks run *after* the rows are written, inside the same transaction; raising
rolls the whole write back (see :mod:`.invariants`).  Inside :meth:`deferred`
invariant checks wait until the block ends, so a multi-step change (remove the
blockers, then mark the task done) is judged as one.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from ..store.base import Store
from .errors import ImmutableEntry, InvariantViolation, SchemaViolation
from .invariants import check_invariants
from .registry import BUILTIN_RELATIONS, RelationSchema, read_schema

__all__ = ["Validator", "attach"]

_BUILTIN_NAMES = sorted(BUILTIN_RELATIONS)  # the engine's own relations pass strict mode even if unregistered


@dataclass
class _Compiled:
    generation: int
    schema: RelationSchema
    rel_ids: dict[str, int]
    inv_rel_ids: set[int]
    check_rules: bool


class Validator:
    """The store's write hook (store/base.py ``WriteValidator``) for one relation schema."""

    def __init__(self, store: Store):
        self.store = store
        self._compiled: _Compiled | None = None
        self._defer = 0
        self._pending: set[int] = set()

    # ------------------------------------------------------------ schema cache
    def forget(self) -> None:
        """Drop the cached schema (after a rolled-back schema load)."""
        self._compiled = None

    def compiled(self) -> _Compiled:
        gen = int(self.store.get_meta("schema.generation") or 0)
        if self._compiled is None or self._compiled.generation != gen:
            gen, schema = read_schema(self.store)
            rel_ids = {name: i for i, name in self.store.relation_names().items()}
            self._compiled = _Compiled(
                gen,
                schema,
                rel_ids,
                {rel_ids[i.rel] for i in schema.invariants if i.rel in rel_ids},
                schema.mode == "strict" or any(r.allow for r in schema.relations.values()),
            )
        return self._compiled

    def _rel_id(self, name: str) -> int | None:
        return {n: i for i, n in self.store.relation_names().items()}.get(name)

    # ------------------------------------------------------------ hooks
    def after_edges(self, seq: int) -> None:
        tables = self.store.schema_tables
        sup = self._rel_id("supersedes")  # not cached: a rolled-back write may have created it
        if sup is not None:  # the superseded flag is derived from supersedes edges
            tables.mark_superseded(seq, sup, time.time())
        comp = self.compiled()
        if comp.generation == 0:
            return
        if comp.check_rules:
            self._raise_rules(comp, seq=seq)
        if comp.schema.invariants:
            if any(i.rel not in comp.rel_ids for i in comp.schema.invariants):  # a relation created by this write
                self._compiled = None
                comp = self.compiled()
            touched = {x for s, d, r in tables.edges_stamped(seq) if r in comp.inv_rel_ids for x in (s, d)}
            self._invariants(touched)

    def after_nodes(self, seq: int, existing: dict[str, tuple[int, str]]) -> None:
        comp = self.compiled()
        if comp.generation == 0:
            return
        rows = self.store.schema_tables.nodes_stamped(seq)
        entry_types = set(comp.schema.entry_types)
        if entry_types:
            edited = [nid for idx, nid, t, h in rows if t in entry_types and nid in existing and existing[nid][1] != h]
            if edited:
                raise ImmutableEntry(
                    f"entries are immutable: {', '.join(edited[:5])} already exist(s) with other content; "
                    "use revise_entry() to add a new revision that supersedes it",
                    node_ids=edited[:50],
                )
        old = [idx for idx, nid, _, _ in rows if nid in existing]
        if comp.check_rules and old:  # a changed node type can invalidate the node's existing edges
            self._raise_rules(comp, nodes=old)
        if comp.schema.invariants:
            self._invariants([r[0] for r in rows])

    def after_edge_removal(self, touched: set[int]) -> None:
        sup = self._rel_id("supersedes")
        if sup is not None:
            self.store.schema_tables.unmark_superseded(sorted(touched), sup)
        comp = self.compiled()
        if comp.generation and comp.schema.invariants:
            self._invariants(touched)

    # ------------------------------------------------------------ checks
    def _raise_rules(self, comp: _Compiled, *, seq: int | None = None, nodes: list[int] | None = None) -> None:
        bad = self.store.schema_tables.edges_breaking_rules(
            comp.schema.mode == "strict", _BUILTIN_NAMES, seq=seq, nodes=nodes
        )
        if not bad:
            return
        lines = []
        for s_id, rel, d_id, s_type, d_type in bad[:5]:
            rt = comp.schema.get(rel)
            if rt is None:
                known = ", ".join(sorted(comp.schema.relations))
                lines.append(
                    f"edge ({s_id}, {rel}, {d_id}): relation {rel!r} is not in the schema (strict mode); "
                    f"known relations: {known}"
                )
            else:
                lines.append(
                    f"edge ({s_id}, {rel}, {d_id}): ({s_type}, {rel}, {d_type}) is not allowed; "
                    f"allowed for {rel}: {rt.allowed_text()}"
                )
        more = f" (and more; first {len(bad)} shown in details)" if len(bad) > 5 else ""
        raise SchemaViolation("; ".join(lines) + more, edges=[list(b[:3]) for b in bad], mode=comp.schema.mode)

    def _invariants(self, touched: Iterable[int]) -> None:
        if self._defer:
            self._pending.update(touched)
            return
        self._check(touched)

    def _check(self, touched: Iterable[int]) -> None:
        comp = self.compiled()
        if comp.generation == 0 or not comp.schema.invariants:
            return
        rel_ids = {name: i for i, name in self.store.relation_names().items()}
        bad = check_invariants(self.store, comp.schema.invariants, rel_ids, touched)
        if bad:
            msg = bad[0].message + (f" (and {len(bad) - 1} more violation(s))" if len(bad) > 1 else "")
            raise InvariantViolation(
                msg,
                invariants=sorted({v.invariant for v in bad}),
                node_ids=[v.node_id for v in bad],
                violations=[v.message for v in bad],
            )

    def check_all(self) -> None:
        """Check every stored edge and node against the schema (used when a schema is loaded)."""
        comp = self.compiled()
        tables = self.store.schema_tables
        if comp.check_rules:
            self._raise_rules(comp)
        types = {i.node_type for i in comp.schema.invariants}
        if not comp.schema.invariants:
            return
        if None in types:
            idxs = tables.node_indices()
        else:
            idxs = [i for t in types for i in tables.node_indices(t)]
        self._check(idxs)

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """Postpone invariant checks to the end of the block (call inside a store transaction)."""
        self._defer += 1
        ok = False
        try:
            yield
            ok = True
        finally:
            self._defer -= 1
            if self._defer == 0:
                pending, self._pending = self._pending, set()
                if ok and pending:
                    self._check(pending)


def attach(store: Store) -> Validator:
    """The store's validator, attaching one if none is (idempotent)."""
    v = store.validator
    if not isinstance(v, Validator):
        v = Validator(store)
        store.validator = v
    return v
