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

from .errors import ImmutableEntry, InvariantViolation, SchemaViolation
from .invariants import check_invariants
from .registry import BUILTIN_RELATIONS, RelationSchema, read_schema

__all__ = ["Validator", "attach"]

_CHUNK = 500

# edges that break the rules: an unregistered relation (strict mode only), or a registered
# one with allowed pairs none of which matches (either way round for a symmetric relation)
_RULE_SQL = """
SELECT s.id, r.name, d.id, s.type, d.type FROM edges e
JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN relations r ON r.id = e.rel_id
LEFT JOIN relation_types t ON t.rel_id = e.rel_id
WHERE {scope} AND (
  (t.rel_id IS NULL AND ? AND r.name NOT IN ({builtins}))
  OR (t.rel_id IS NOT NULL AND EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id)
      AND NOT EXISTS (SELECT 1 FROM relation_rules q WHERE q.rel_id = e.rel_id
          AND ((q.src_type IN (s.type, '*') AND q.dst_type IN (d.type, '*'))
            OR (t.directed = 0 AND q.src_type IN (d.type, '*') AND q.dst_type IN (s.type, '*'))))))
LIMIT 20"""
_BUILTIN_NAMES = sorted(BUILTIN_RELATIONS)  # the engine's own relations pass strict mode even if unregistered


@dataclass
class _Compiled:
    generation: int
    schema: RelationSchema
    rel_ids: dict[str, int]
    inv_rel_ids: set[int]
    check_rules: bool


class Validator:
    def __init__(self, store):
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
            rel_ids = dict(self.store.conn.execute("SELECT name, id FROM relations"))
            self._compiled = _Compiled(
                gen,
                schema,
                rel_ids,
                {rel_ids[i.rel] for i in schema.invariants if i.rel in rel_ids},
                schema.mode == "strict" or any(r.allow for r in schema.relations.values()),
            )
        return self._compiled

    def _rel_id(self, c, name: str) -> int | None:
        r = c.execute("SELECT id FROM relations WHERE name = ?", (name,)).fetchone()
        return None if r is None else int(r[0])

    # ------------------------------------------------------------ hooks
    def after_edges(self, c, seq: int) -> None:
        sup = self._rel_id(c, "supersedes")  # not cached: a rolled-back write may have created it
        if sup is not None:  # the superseded flag is derived from supersedes edges
            c.execute(
                "INSERT OR IGNORE INTO superseded(node_idx, by_idx, at)"
                " SELECT dst, src, ? FROM edges WHERE seq = ? AND rel_id = ?",
                (time.time(), seq, sup),
            )
        comp = self.compiled()
        if comp.generation == 0:
            return
        if comp.check_rules:
            self._raise_rules(c, "e.seq = ?", [seq], comp)
        if comp.schema.invariants:
            if any(i.rel not in comp.rel_ids for i in comp.schema.invariants):  # a relation created by this write
                self._compiled = None
                comp = self.compiled()
            touched = {
                x
                for s, d, r in c.execute("SELECT src, dst, rel_id FROM edges WHERE seq = ?", (seq,))
                if r in comp.inv_rel_ids
                for x in (s, d)
            }
            self._invariants(c, touched)

    def after_nodes(self, c, seq: int, existing: dict[str, tuple[int, str]]) -> None:
        comp = self.compiled()
        if comp.generation == 0:
            return
        rows = c.execute("SELECT idx, id, type, content_hash FROM nodes WHERE seq = ?", (seq,)).fetchall()
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
            for i in range(0, len(old), _CHUNK):
                part = old[i : i + _CHUNK]
                marks = ",".join("?" * len(part))
                self._raise_rules(c, f"(e.src IN ({marks}) OR e.dst IN ({marks}))", part + part, comp)
        if comp.schema.invariants:
            self._invariants(c, [r[0] for r in rows])

    def after_edge_removal(self, c, touched: set[int]) -> None:
        sup = self._rel_id(c, "supersedes")
        if sup is not None:
            part = sorted(touched)
            for i in range(0, len(part), _CHUNK):
                chunk = part[i : i + _CHUNK]
                c.execute(
                    f"DELETE FROM superseded WHERE node_idx IN ({','.join('?' * len(chunk))}) AND NOT EXISTS"
                    " (SELECT 1 FROM edges e WHERE e.dst = superseded.node_idx AND e.rel_id = ?)",
                    [*chunk, sup],
                )
        comp = self.compiled()
        if comp.generation and comp.schema.invariants:
            self._invariants(c, touched)

    # ------------------------------------------------------------ checks
    def _raise_rules(self, c, scope: str, params: list, comp: _Compiled) -> None:
        sql = _RULE_SQL.format(scope=scope, builtins=",".join("?" * len(_BUILTIN_NAMES)))
        bad = c.execute(sql, [*params, int(comp.schema.mode == "strict"), *_BUILTIN_NAMES]).fetchall()
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

    def _invariants(self, c, touched: Iterable[int]) -> None:
        if self._defer:
            self._pending.update(touched)
            return
        self._check(c, touched)

    def _check(self, c, touched: Iterable[int]) -> None:
        comp = self.compiled()
        if comp.generation == 0 or not comp.schema.invariants:
            return
        rel_ids = dict(c.execute("SELECT name, id FROM relations"))
        bad = check_invariants(c, comp.schema.invariants, rel_ids, touched)
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
        c = self.store.conn
        if comp.check_rules:
            self._raise_rules(c, "1", [], comp)
        types = {i.node_type for i in comp.schema.invariants}
        if not comp.schema.invariants:
            return
        if None in types:
            idxs = [r[0] for r in c.execute("SELECT idx FROM nodes")]
        else:
            idxs = [r[0] for t in types for r in c.execute("SELECT idx FROM nodes WHERE type = ?", (t,))]
        self._check(c, idxs)

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
                    self._check(self.store.conn, pending)


def attach(store) -> Validator:
    """The store's validator, attaching one if none is (idempotent)."""
    v = getattr(store, "validator", None)
    if not isinstance(v, Validator):
        v = Validator(store)
        store.validator = v
    return v
