"""The relation schema's service, ``Schema``: owned by :class:`~neurongraph.engine.Engine` as ``eng.schema``
and usable over a bare store (``Schema(store)``, what ``ngr schema`` does: no embedder, no engine).

Every write method is one store transaction with invariant checks deferred to its end, so a rejected
write leaves nothing behind; the owner's derived state then follows through ``refresh`` (skipped
inside :meth:`Schema.atomic`, which calls it once when the outermost block commits).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from ..errors import InvalidArgument
from ..graph.arrays import GraphArrays
from ..model import Edge, Node, edge_fields
from ..store.base import Store
from . import entities as ent
from .queries import Hop, effective_blockers, find_paths, hops_from, neighbors, paths_to_dicts
from .registry import RelationSchema, read_schema, save_schema
from .validator import attach

__all__ = ["Schema", "StoreGraph"]


class StoreGraph:
    """The CSR graph of a bare store, rebuilt from its change feed when the store moved on: what
    :class:`Schema` walks for path queries when no engine (with its own live graph) owns it."""

    def __init__(self, store: Store):
        self.store = store
        self._graph = GraphArrays(0)
        self._seq = -1

    def __call__(self) -> GraphArrays:
        seq = self.store.current_seq()
        if seq != self._seq:
            ch = self.store.changes_since(0)
            n = max((r[0] for r in ch.nodes), default=-1) + 1
            e = ch.edges
            self._graph = GraphArrays.from_edges(n, e.src, e.dst, e.weight, e.fact, e.rel_id, e.pol, e.eid)
            self._seq = seq
        return self._graph


class Schema:
    """Relation schema (strict/permissive, invariants), entities, aliases, entry revisions, events,
    and relation queries in both directions, over one store.

    Dependencies, all declared here:

    * ``store`` — the source of truth; the schema's write-time validator is attached to it here;
    * ``graph`` — the CSR graph path queries walk (default: :class:`StoreGraph`, built from the store);
    * ``embed`` — text -> vectors through the store's cache, so new nodes are embedded before their
      transaction (default: none; an engine opening the store later embeds them);
    * ``refresh`` — brings the owner's derived state up to date with the store (the engine's ``refresh``):
      called after a write and before a path query walks ``graph``.
    """

    def __init__(
        self,
        store: Store,
        *,
        graph: Callable[[], GraphArrays] | None = None,
        embed: Callable[[Sequence[str]], object] | None = None,
        refresh: Callable[[], object] | None = None,
    ):
        self.store = store
        self._graph = graph if graph is not None else StoreGraph(store)
        self._embed = embed
        self._refresh = refresh or (lambda: None)
        self._superseded_cache: tuple | None = None  # (store seq, superseded node indices)
        attach(store)  # a loaded relation schema is enforced on every write, from now on

    # ------------------------------------------------------------ plumbing
    @contextmanager
    def atomic(self) -> Iterator[None]:
        """One transaction for several schema writes; invariants are checked once, at its end.

        Use the schema write methods inside (``relate``, ``unrelate``, ``update_entity``, ...);
        the owner's derived state catches up when the outermost block commits.
        """
        v = attach(self.store)
        with self.store.transaction():
            with v.deferred():
                yield
        self._after_write()

    def _after_write(self) -> None:
        if not self.store.in_transaction:
            self._refresh()

    def _schema(self) -> RelationSchema:
        return attach(self.store).compiled().schema

    # ------------------------------------------------------------ the schema
    def relation_schema(self) -> RelationSchema:
        """The stored schema (built-in relations only when none was loaded)."""
        return read_schema(self.store)[1]

    def load_schema(
        self, schema: RelationSchema | dict | str | Path, *, mode: str | None = None, check_existing: bool = True
    ) -> dict:
        """Replace the stored schema (a RelationSchema, a dict, or a .toml/.json file path).

        With ``check_existing`` every stored edge and node is checked against it and the
        load is rejected (nothing changes) if any breaks it.
        """
        if isinstance(schema, (str, Path)):
            schema = RelationSchema.from_file(schema)
        elif isinstance(schema, dict):
            schema = RelationSchema.from_dict(schema)
        elif not isinstance(schema, RelationSchema):
            raise InvalidArgument(
                f"schema must be a RelationSchema, a dict or a file path, got {type(schema).__name__}"
            )
        if mode is not None:
            schema = RelationSchema(schema.relations, schema.invariants, mode, schema.entry_types)
        v = attach(self.store)
        try:
            with self.store.transaction():
                gen = save_schema(self.store, schema)
                if check_existing:
                    v.check_all()
                self.store.next_seq()  # engines re-read relation names (new predicate ids)
        finally:
            v.forget()  # the cache may hold the rolled-back schema under a generation number reused later
        self._after_write()
        return {
            "generation": gen,
            "mode": schema.mode,
            "relations": len(schema.relations),
            "invariants": len(schema.invariants),
            "entry_types": list(schema.entry_types),
        }

    def set_schema_mode(self, mode: str, check_existing: bool = True) -> dict:
        s = self.relation_schema()
        return self.load_schema(
            RelationSchema(s.relations, s.invariants, mode, s.entry_types), check_existing=check_existing
        )

    # ------------------------------------------------------------ typed edges
    def _typed_edges(self, edges: Iterable) -> list[Edge]:
        schema = self._schema()
        out = []
        for e in edges:
            d = edge_fields(e)
            for k in ("src", "rel", "dst"):
                if k not in d:
                    raise InvalidArgument(f"edge is missing {k!r}")
            stored, flipped = schema.resolve(d["rel"])
            src, dst = ent.resolve(self.store, d["src"]), ent.resolve(self.store, d["dst"])
            d["src"], d["rel"], d["dst"] = (dst, stored, src) if flipped else (src, stored, dst)
            if d.get("weight") is None:
                rt = schema.get(stored)
                d["weight"] = rt.default_weight if rt else 1.0
            out.append(Edge.from_dict(d))
        return out

    def relate(self, src: str, rel: str, dst: str, weight: float | None = None, **attrs) -> dict:
        """Add one typed edge: aliases resolve, an inverse name is stored as its relation, the
        relation's default weight applies when ``weight`` is None; checked against the schema."""
        return self.relate_many([{"src": src, "rel": rel, "dst": dst, "weight": weight, **attrs}])

    def relate_many(self, edges: Iterable) -> dict:
        edges = self._typed_edges(edges)
        with self.atomic():
            self.store.upsert_edges(edges)
        return {"edges": len(edges), "stored": [[e.src, e.rel, e.dst] for e in edges]}

    def unrelate(self, src: str, rel: str, dst: str) -> int:
        """Remove one edge (inverse names and aliases accepted); returns 1 if it existed."""
        schema = self._schema()
        stored, flipped = schema.resolve(rel)
        s, d = ent.resolve(self.store, src), ent.resolve(self.store, dst)
        if flipped:
            s, d = d, s
        rt = schema.get(stored)
        triples = [(s, stored, d)] + ([(d, stored, s)] if rt is not None and not rt.directed else [])
        with self.atomic():
            n = self.store.delete_edges(triples)
        return n

    # ------------------------------------------------------------ entities
    def _new_nodes(self, nodes: list[Node]) -> None:
        if self._embed is not None:
            self._embed([n.body for n in nodes])  # embedded (and cached) before the transaction
        self.store.upsert_nodes(nodes)

    def create_entity(
        self,
        id: str,
        type: str = "entity",
        title: str = "",
        state: dict | None = None,
        aliases: Iterable[str] = (),
        text: str = "",
        metadata: dict | None = None,
    ) -> dict:
        """Create a mutable entity (a node + state at revision 1 + aliases), atomically."""
        node = Node(id, type, title, text, metadata or {})
        with self.atomic():
            if self.store.get_node(id) is None:
                self._new_nodes([node])
            ent.create_entity_state(self.store, id, state or {})
            ent.add_aliases(self.store, id, list(aliases))
        return self.get_entity(id)

    def get_entity(self, id: str) -> dict:
        """``{id, type, title, state, revision, updated_at, aliases}``; ``id`` may be an alias."""
        return ent.get_entity(self.store, ent.resolve(self.store, id))

    def update_entity(
        self, id: str, *, expected_revision: int, state: dict | None = None, patch: dict | None = None
    ) -> dict:
        """Compare-and-set the entity's state: rejected with ``stale_revision`` unless
        ``expected_revision`` is current, and with ``invariant_violation`` if the new state
        breaks an invariant (nothing changes either way)."""
        with self.atomic():
            nid = ent.resolve(self.store, id)
            idx, _, _ = ent.update_entity_state(self.store, nid, expected_revision, state, patch)
            attach(self.store)._invariants([idx])
        return self.get_entity(nid)

    def add_aliases(self, id: str, aliases: Iterable[str]) -> list[str]:
        if isinstance(aliases, str):
            aliases = [aliases]
        with self.atomic():
            return ent.add_aliases(self.store, id, list(aliases))

    def resolve(self, name: str) -> str:
        """The node id a node id or alias names (raises ``unknown_node``)."""
        return ent.resolve(self.store, name)

    # ------------------------------------------------------------ entries and events
    def revise_entry(
        self,
        id: str,
        *,
        title: str | None = None,
        text: str | None = None,
        metadata: dict | None = None,
        new_id: str | None = None,
    ) -> dict:
        """Edit an immutable entry: a new revision node ``new -supersedes-> old``.

        Unchanged fields are copied; the old revision stays (history) but is marked
        superseded, so normal retrieval leaves it out.  Only the latest revision can be
        revised.  ``new_id`` defaults to ``<first id>@r<n>``.
        """
        ent.check_revisable(self.store, id)
        old = self.store.get_node(id)
        assert old is not None  # check_revisable raised unknown_node otherwise
        chain = ent.revision_chain(self.store, id)
        new_id = new_id or f"{chain[0]}@r{len(chain) + 1}"
        if self.store.get_node(new_id) is not None:
            raise InvalidArgument(f"node {new_id!r} already exists; pass another new_id")
        node = Node(
            new_id,
            old.type,
            old.title if title is None else title,
            old.text if text is None else text,
            old.metadata if metadata is None else metadata,
            old.confidence,
        )
        with self.atomic():
            self._new_nodes([node])
            self.store.upsert_edges([Edge(new_id, "supersedes", id)])
        return {"id": new_id, "supersedes": id, "revision": len(chain) + 1}

    def entry_history(self, id: str) -> list[dict]:
        """All revisions of the entry, oldest first, each with ``superseded_by`` (None = current)."""
        chain = ent.revision_chain(self.store, ent.resolve(self.store, id))
        return [
            {"id": x, "revision": k + 1, "superseded_by": chain[k + 1] if k + 1 < len(chain) else None}
            for k, x in enumerate(chain)
        ]

    def record_event(
        self,
        id: str,
        type: str = "event",
        title: str = "",
        produced: Iterable[str] = (),
        text: str = "",
        metadata: dict | None = None,
    ) -> dict:
        """An event node (ingest run, session) linked ``event -source_of-> product``, atomically."""
        produced = list(produced)
        with self.atomic():
            if self.store.get_node(id) is None:
                self._new_nodes([Node(id, type, title, text, metadata or {})])
            self.store.upsert_edges([Edge(id, "source_of", ent.resolve(self.store, p)) for p in produced])
        return {"id": id, "produced": produced}

    def superseded_mask(self, n: int | None = None) -> np.ndarray:
        """Bool per node index: True for superseded entry revisions (for retrieval to leave out).

        ``n`` sizes the mask (e.g. the engine's node count); by default it covers the graph's
        node range.  Cached until the store's sequence number moves (every write takes one).
        """
        seq = self.store.current_seq()
        if self._superseded_cache is None or self._superseded_cache[0] != seq:
            self._superseded_cache = (seq, self.store.schema_tables.superseded_nodes())
        idx = self._superseded_cache[1]
        if n is None:
            n = max(int(idx.max()) + 1 if idx.size else 0, self._graph().n_nodes)
        mask = np.zeros(n, bool)
        mask[idx[idx < n]] = True
        return mask

    # ------------------------------------------------------------ queries
    def neighbors(
        self,
        node: str,
        rel: str | Iterable[str] | None = None,
        direction: str = "both",
        include_superseded: bool = True,
        limit: int | None = None,
    ) -> list[dict]:
        """Edges of ``node`` (id or alias) by relation and direction ('out', 'in', 'both')."""
        return neighbors(self.store, self._schema(), node, rel, direction, include_superseded, limit)

    def effective_blockers(
        self, task: str, blocked_by: str = "blocked_by", resolves_to: str = "resolves_to"
    ) -> list[dict]:
        """``task``'s blockers with conditions expanded along ``resolves_to`` (see queries.py)."""
        return effective_blockers(self.store, self._schema(), task, blocked_by, resolves_to)

    def find_paths(
        self,
        start: str,
        k: int | None = 2,
        rels=None,
        direction: str = "out",
        *,
        hops=None,
        end: str | None = None,
        include_superseded: bool = True,
        max_paths: int = 10_000,
        limit: int | None = 1000,
    ) -> dict:
        """k-hop simple paths from ``start`` over the CSR arrays, filtered by relation and direction.

        ``hops`` (a list of ``Hop(rels, direction)`` or ``(rels, direction)`` pairs) gives a
        per-hop pattern instead of ``k`` identical hops.  With ``end``: paths reaching it
        within the hops.  Returns ``{"paths": [{nodes, edges}], "count", "truncated"}``.
        """
        st = self.store
        hop_list = hops_from(k, rels, direction, hops)
        if not st.in_transaction:
            self._refresh()
        s = ent.node_idx(st, ent.resolve(st, start))
        e = ent.node_idx(st, ent.resolve(st, end)) if end is not None else None
        rel_ids = {n: i for i, n in st.relation_names().items()}
        res = find_paths(
            self._graph(),
            self._schema(),
            rel_ids,
            s,
            hop_list,
            e,
            None if include_superseded else self.superseded_mask(),
            max_paths,
        )
        total = sum(len(b[0]) for b in res["found"])
        return {
            "paths": paths_to_dicts(st, res["found"], {i: n for n, i in rel_ids.items()}, limit),
            "count": total,
            "truncated": res["truncated"],
        }

    def evidence_chain(self, entry: str, rel: str = "evidence_of", include_superseded: bool = False) -> list[dict]:
        """entry -evidence_of-> entity <-evidence_of- other entry (the entry itself excluded).

        Each result: ``entity``, ``entry`` (the other entry) and the 2-hop ``path``.
        Superseded entry revisions are left out unless ``include_superseded``.
        """
        res = self.find_paths(
            entry, hops=[Hop((rel,), "out"), Hop((rel,), "in")], include_superseded=include_superseded, limit=None
        )
        return [{"entity": p["nodes"][1], "entry": p["nodes"][2], "path": p} for p in res["paths"]]
