"""The store contract: the durable source of truth every engine process shares.

In-memory indexes (vectors, CSR graph) are *derived* from a store and follow it
through ``changes_since(seq)``: every write transaction takes a new sequence
number, so an engine (this process or another one on the same database) can
catch up by reading only what changed.

This module is the whole contract: every member of a store that code outside
``store/`` uses is declared here, grouped by what it keeps.  ``Store`` is the
sum of five groups — ``ChangeFeed`` (transactions, sequence numbers, what each
wrote), ``NodeTables``, ``EdgeTables``, ``SearchTables`` (lexical index, vector
cache) and ``TraceTables`` (traces, settings, counts) — plus two sections it
holds as objects: ``LedgerTables`` for the learning loop (``store.ledgers``) and
``SchemaTables`` for the relation schema (``store.schema_tables``).  Nothing
outside ``store/`` sees a connection or SQL, so a third backend writes the
abstract members of these seven classes (the SQLite store is the reference, the
PostgreSQL one shares its SQL where the dialects agree) and passes
``tests/test_store_contract.py``.
"""

from __future__ import annotations

import re
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import InvalidArgument, StoreError, UnknownNode
from ..model import Edge, Node, body_of

__all__ = [
    "Store",
    "ChangeFeed",
    "NodeTables",
    "EdgeTables",
    "SearchTables",
    "TraceTables",
    "LedgerTables",
    "SchemaTables",
    "WriteValidator",
    "NodeRow",
    "EdgeArrays",
    "Changes",
    "EdgeRecord",
    "LexicalPostings",
    "check_meta_key",
    "EdgeWeigher",
    "set_edge_weigher",
    "effective_weights",
]

_META_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,63}")
_BARE_SHA = re.compile(r"[0-9a-fA-F]{7,64}")  # a short commit sha given without its "commit:" prefix
_HEX_KEY = re.compile(r"[0-9a-fA-F]{4,64}")  # the key of a short ``commit:abc1`` id


def check_meta_key(key: str) -> str:
    """A metadata key that reads the same in SQLite's JSON path and PostgreSQL's ``->>`` (no quoting needed)."""
    if not isinstance(key, str) or not _META_KEY.fullmatch(key):
        raise InvalidArgument(f"metadata key must be an identifier (letters, digits, _), got {key!r}")
    return key


class EdgeWeigher(Protocol):
    """What a learned edge weighs now, from its stored facts: ``(base, plastic, plastic_at (NaN = never),
    dormant, half_life, now) -> weights`` (arrays).  The formula is the learning loop's (learning/decay.py
    registers it with :func:`set_edge_weigher`): the store keeps the columns, learning decides what they
    weigh, and the store, a lower layer, never imports it."""

    def __call__(self, base, plastic, plastic_at, dormant, half_life: float, now: float) -> np.ndarray: ...


_weighers: list[EdgeWeigher] = []


def set_edge_weigher(weigher: EdgeWeigher) -> None:
    """Register the formula the change feed weighs learned edges with (learning/decay.py, on import)."""
    _weighers[:] = [weigher]


def effective_weights(base, plastic, plastic_at, dormant, half_life: float, now: float) -> np.ndarray:
    """What the change feed reports as edge weights (float arrays; ``plastic_at`` NaN = never): the base
    weights themselves unless some edge carries a learned part or is dormant, else the registered
    :class:`EdgeWeigher`'s answer (a clear error when nothing registered one: importing ``neurongraph``
    imports the engine, hence learning, which registers it)."""
    if not (plastic.any() or dormant.any()):
        return np.array(base, np.float64)
    if not _weighers:
        raise StoreError("no edge weigher registered: import neurongraph.learning (learning/decay.py) first")
    return np.asarray(_weighers[0](base, plastic, plastic_at, dormant, half_life, now), np.float64)


@dataclass
class NodeRow:
    """A stored node as the store returns it (row index, timestamps), not the user's ``Node``."""

    idx: int
    id: str
    type: str
    title: str
    text: str
    metadata: dict
    confidence: float
    content_hash: str
    created_at: float
    updated_at: float

    @property
    def body(self) -> str:
        return body_of(self.title, self.text)

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "text": self.text,
            "metadata": self.metadata,
            "confidence": self.confidence,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }


@dataclass
class EdgeArrays:
    """Edges as parallel arrays, ready for :class:`GraphArrays`."""

    eid: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    rel_id: np.ndarray
    weight: np.ndarray  # effective: base + plastic
    fact: np.ndarray
    pol: np.ndarray

    def __len__(self) -> int:
        return int(self.eid.shape[0])


@dataclass
class Changes:
    """The change feed since a sequence number: what an engine applies to stay in step with other writers."""

    seq: int  # the store's sequence number these changes bring us to
    nodes: list[tuple[int, str, str]]  # (idx, id, content_hash) of inserted/updated nodes
    node_types: list[str]
    edges: EdgeArrays
    deleted_nodes: list[int]
    deleted_edges: list[int]
    node_times: list = field(default_factory=list)  # event time (epoch s) of each node in ``nodes``, or None
    node_sources: list = field(default_factory=list)  # source (metadata "source") of each, or None


@dataclass
class LexicalPostings:
    """Full-text rows as the store's lexical index tokenizes them: term ``terms[i]`` occurs ``tf[j]`` times
    in row ``docs[j]`` for ``j`` in ``ptr[i]:ptr[i+1]`` (docs ascending within a term)."""

    rows: np.ndarray  # int64 node indices that have a full-text row (a row without tokens still counts)
    terms: list[str]
    ptr: np.ndarray  # int64, len(terms) + 1
    docs: np.ndarray  # int64 node index per posting
    tf: np.ndarray  # int64 occurrences per posting (>= 1)


# (eid, src idx, relation name, dst idx, weight, polarity, factuality): an edge as a graph projection copies it
EdgeRecord = tuple[int, int, str, int, float, int, float]


class WriteValidator(Protocol):
    """A write-time hook (the relation schema's validator) the store calls inside its write transactions,
    after the rows are written; raising rolls the whole write back.  Why on the store: every write path
    (engine, ingest, linkers, other processes) ends in the store, so one hook enforces the schema everywhere."""

    def after_nodes(self, seq: int, existing: dict[str, tuple[int, str]]) -> None:
        """Nodes stamped ``seq`` were written; ``existing`` maps updated ids to their (idx, old hash)."""

    def after_edges(self, seq: int) -> None:
        """Edges stamped ``seq`` were written."""

    def after_edge_removal(self, touched: set[int]) -> None:
        """Edges between the node indices ``touched`` were deleted."""


class LedgerTables(ABC):
    """The learning loop's ledgers (learning/): per-trace stages, idempotent receipts, the weight-change
    log, outcomes, failures, node use statistics and the learned part of edges.  Every method runs in the
    owning store's current transaction (callers wrap them in ``store.transaction()``), so a ledger entry
    and the weights it changes commit together or not at all."""

    # --- stages and receipts
    @abstractmethod
    def stages(self, trace_id: str) -> dict[str, int]:
        """Stage number of every hit of a trace that advanced (hits never advanced are absent)."""

    @abstractmethod
    def set_stages(self, trace_id: str, stages: dict[str, int], now: float) -> None:
        """Insert or overwrite stages of a trace's hits."""

    @abstractmethod
    def receipt_by_key(self, key: str) -> tuple[str, dict] | None:
        """``(payload hash, receipt)`` saved under an idempotency key: a replay returns the original."""

    @abstractmethod
    def save_receipt(self, receipt: dict, key: str | None, payload_hash: str) -> None:
        """Store a source-use receipt; a second receipt under the same non-null key must be rejected."""

    @abstractmethod
    def receipts(self, trace_id: str) -> list[dict]:
        """Receipts of a trace in the order they were saved."""

    # --- weight-change log
    @abstractmethod
    def log_weight_changes(self, rows: list[tuple]) -> list[int]:
        """Append ``(receipt_id, trace_id, node_id, eid, kind, old, new, at)`` rows; their ids, increasing."""

    @abstractmethod
    def weight_changes(
        self, trace_id: str, node_id: str | None = None, kinds=None, unreversed: bool = False
    ) -> list[dict]:
        """Logged changes of a trace (optionally one node's / some kinds / not yet reversed), by id."""

    @abstractmethod
    def mark_reversed(self, change_ids: list[int], outcome_id: int) -> None:
        """Record that an outcome took these changes back (so it never happens twice)."""

    # --- outcomes and failures
    @abstractmethod
    def add_failure(self, trace_id: str, reason: str, now: float) -> int:
        """Append a retrieval failure; its id."""

    @abstractmethod
    def failures(self, trace_id: str) -> list[dict]:
        """A trace's failures ``{id, reason, created_at}`` by id."""

    @abstractmethod
    def add_outcome(
        self, trace_id: str, node_ids: list[str], outcome: str, summary: str, external_ref, policy: dict, now: float
    ) -> int:
        """Append a delayed outcome; its id."""

    @abstractmethod
    def outcomes(self, trace_id: str) -> list[dict]:
        """A trace's outcomes by id (node_ids and policy decoded)."""

    # --- retention
    @abstractmethod
    def prune_traces(self, before: float) -> tuple[int, int]:
        """Delete traces created before ``before`` that carry no feedback (no stage, receipt, failure or
        outcome); returns (deleted, kept because of feedback).  Searches are stored forever otherwise."""

    # --- node statistics
    @abstractmethod
    def traces_after(self, position: int, limit: int) -> list[tuple[int, list[dict]]]:
        """``(position, hits)`` of up to ``limit`` traces saved after ``position`` (a cursor that only grows),
        oldest first: how retrieval counts are folded in exactly once."""

    @abstractmethod
    def add_retrievals(self, counts: dict[int, int]) -> None:
        """``retrieved_count += n`` per node index."""

    @abstractmethod
    def node_activation(self, idx: int) -> tuple[float, float | None] | None:
        """``(activation, activation_at)`` of a node, None when it has no statistics row."""

    @abstractmethod
    def mark_used(self, idx: int, activation: float, at: float) -> None:
        """``used_count += 1`` and set the node's activation (computed by the caller) as of ``at``."""

    @abstractmethod
    def node_stats(self, idxs: list[int] | None = None) -> list[tuple]:
        """``(idx, retrieved_count, used_count, activation, activation_at)`` rows (all, or of ``idxs``)."""

    @abstractmethod
    def active_nodes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(idx, activation, activation_at or 0) of nodes with activation > 0: what priming reads."""

    @abstractmethod
    def used_queries(self) -> list[tuple[str, str]]:
        """(node id, query text) of every use of an active node: what query-conditioned priming compares to."""

    @abstractmethod
    def learned_edge_queries(self) -> list[tuple[int, str, int, int, str]]:
        """``(eid, kind, credited node idx, edge dst idx, query text)`` of every change not reversed that
        reinforced an edge still carrying a plastic part (kinds path, co_use, confirm), distinct: which
        questions each learned edge was learned for (contextual plasticity, learning/contextual.py)."""

    @abstractmethod
    def set_activations(self, rows: list[tuple[int, float, float | None]]) -> None:
        """Overwrite ``(idx, activation, activation_at)`` (explicit decay)."""

    # --- learned edge state
    @abstractmethod
    def plastic_edges(self) -> tuple[np.ndarray, ...]:
        """(eid, base, plastic, plastic_at, dormant) of every edge with learned state."""

    @abstractmethod
    def edge_id(self, src: str, rel: str, dst: str) -> int | None:
        """Key of the stored edge ``(src, rel, dst)``, None if absent."""

    @abstractmethod
    def edge_state(self, eid: int) -> tuple | None:
        """``(eid, src id, rel, dst id, base, plastic, plastic_at, dormant, reinforce_count)``."""

    @abstractmethod
    def write_learned(self, rows: list[tuple], seq: int, now: float) -> None:
        """Set ``(eid, plastic, plastic_at, dormant, reinforce_count)`` and stamp ``seq`` (the change feed
        then carries the new effective weights)."""

    @abstractmethod
    def set_plastic(self, rows: list[tuple[int, float, float | None]], seq: int) -> None:
        """Set ``(eid, plastic, plastic_at)`` and stamp ``seq`` (explicit decay)."""


class SchemaTables(ABC):
    """The relation schema's tables (schema/, graphdb/): relation types and rules, invariants, entity state,
    aliases, the derived superseded flag, and the set queries the write-time validator needs.  Methods
    run in the owning store's current transaction."""

    # --- the registry
    @abstractmethod
    def save_relation_schema(
        self,
        types: list[tuple[str, bool, str | None, float, str]],
        rules: list[tuple[str, str, str]],
        invariants: list[tuple[str, str]],
        mode: str,
        entry_types: list[str],
    ) -> int:
        """Replace the stored schema (relation types ``(name, directed, inverse, default_weight, description)``,
        allowed ``(name, src_type, dst_type)`` in order, invariants ``(name, spec json)``); the new generation."""

    @abstractmethod
    def relation_schema_rows(self) -> tuple[list[tuple], dict[str, list[tuple[str, str]]], list[str]]:
        """As stored: relation type rows ``(name, directed, inverse, default_weight, description)``, allowed
        pairs per relation name in order, invariant specs in order."""

    # --- aliases and entity state
    @abstractmethod
    def alias_target(self, alias: str) -> tuple[int, str] | None:
        """``(node idx, node id)`` a normalised alias names."""

    @abstractmethod
    def add_alias(self, alias: str, idx: int) -> None:
        """Register a normalised alias of a node (idempotent)."""

    @abstractmethod
    def aliases_of(self, idx: int) -> list[str]:
        """A node's aliases, sorted."""

    @abstractmethod
    def entity_row(self, node_id: str) -> tuple | None:
        """``(idx, id, type, title, state json or None, revision, updated_at)`` of a node, None if no node."""

    @abstractmethod
    def insert_entity_state(self, idx: int, state_json: str, now: float) -> bool:
        """Create a node's entity state at revision 1; False if it already has one."""

    @abstractmethod
    def update_entity_state(self, idx: int, state_json: str, now: float, expected_revision: int) -> bool:
        """Compare-and-set: write the state and bump the revision only if it is ``expected_revision``."""

    @abstractmethod
    def node_states(self, idxs: list[int]) -> list[tuple[int, str, str, str]]:
        """``(idx, id, type, entity state json, else metadata json)``: what invariants judge."""

    # --- revisions (supersedes)
    @abstractmethod
    def superseded_by(self, node_id: str) -> str | None:
        """Id of the revision that supersedes ``node_id``."""

    @abstractmethod
    def supersedes(self, node_id: str) -> str | None:
        """Id of the (oldest) revision that ``node_id`` supersedes."""

    @abstractmethod
    def superseded_nodes(self) -> np.ndarray:
        """Indices of every superseded node (for retrieval to leave out)."""

    @abstractmethod
    def mark_superseded(self, seq: int, rel_id: int, now: float) -> None:
        """Flag the targets of the ``rel_id`` (supersedes) edges stamped ``seq``."""

    @abstractmethod
    def unmark_superseded(self, idxs: list[int], rel_id: int) -> None:
        """Clear the flag of those nodes no ``rel_id`` edge points at any more."""

    # --- validator queries
    @abstractmethod
    def edges_breaking_rules(
        self, strict: bool, exempt: list[str], *, seq: int | None = None, nodes: list[int] | None = None
    ) -> list[tuple[str, str, str, str, str]]:
        """Up to 20 ``(src id, rel, dst id, src type, dst type)`` edges that break the stored rules: an
        unregistered relation (only when ``strict``; ``exempt`` names pass) or a registered one with allowed
        pairs none of which matches (either way round if undirected).  Scope: edges stamped ``seq``, edges
        touching ``nodes``, or all edges."""

    @abstractmethod
    def edges_stamped(self, seq: int) -> list[tuple[int, int, int]]:
        """``(src idx, dst idx, rel id)`` of the edges written by transaction ``seq``."""

    @abstractmethod
    def nodes_stamped(self, seq: int) -> list[tuple[int, str, str, str]]:
        """``(idx, id, type, content_hash)`` of the nodes written by transaction ``seq``."""

    @abstractmethod
    def node_indices(self, node_type: str | None = None) -> list[int]:
        """Indices of all nodes, or of one type."""

    @abstractmethod
    def edge_counts(self, idxs: list[int], rel_id: int, side: str) -> dict[int, int]:
        """Number of ``rel_id`` edges per node, as ``side`` ('src' = outgoing, else incoming)."""

    @abstractmethod
    def neighbor_rows(self, idx: int, walk: str, rel_ids: list[int] | None, include_superseded: bool) -> list[tuple]:
        """Edges of one node (``walk`` 'out': it is the source) ordered by key: ``(rel, other id, other type,
        weight, plastic, factuality, polarity, meta json, eid)``."""


class ChangeFeed(ABC):
    """Transactions, the sequence numbers that stamp them, and the feed of what each one wrote: how
    every derived index (vectors, CSR graph, code history, graph projection) follows the store."""

    @abstractmethod
    def transaction(self) -> AbstractContextManager[Any]:
        """One atomic unit of work; nested calls are savepoints; an exception rolls back everything inside."""

    @property
    @abstractmethod
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` (callers then defer catching up through the change feed)."""

    @abstractmethod
    def next_seq(self) -> int:
        """Take the next change-feed number inside a transaction (a write that stamps rows itself)."""

    @abstractmethod
    def current_seq(self) -> int:
        """The newest committed sequence number: one cheap read before every search."""

    @property
    @abstractmethod
    def schema_version(self) -> int:
        """How many migrations the database has (reported by ``stats``)."""

    @abstractmethod
    def close(self) -> None:
        """Release the handle (the database stays)."""

    @abstractmethod
    def copy_to(self, path: str | Path) -> None:
        """A consistent copy of the whole database (e.g. to try feedback on a scratch copy)."""

    @abstractmethod
    def changes_since(self, seq: int) -> Changes:
        """Everything written after ``seq`` (one consistent snapshot): how in-memory indexes follow the store."""

    @abstractmethod
    def change_count_since(self, seq: int) -> int:
        """Node, edge and tombstone rows written after ``seq`` (to choose patching over rebuilding)."""

    @abstractmethod
    def tombstones_between(self, after: int, upto: int) -> list[tuple[str, int]]:
        """``(kind 'node'|'edge', key)`` deleted by transactions ``after < seq <= upto``."""

    @abstractmethod
    def node_records(self, after: int, upto: int) -> list[tuple[int, str, str, str, str]]:
        """``(idx, id, type, title, metadata json)`` of nodes written by ``after < seq <= upto``."""

    @abstractmethod
    def edge_records(self, after: int, upto: int) -> list[EdgeRecord]:
        """Edges written by ``after < seq <= upto`` (base weight, as a graph projection copies them)."""


class NodeTables(ABC):
    """Nodes by id and by index (an index is never reused), their metadata read as columns, id lookups."""

    @abstractmethod
    def upsert_nodes(self, nodes: list[Node]) -> int:
        """Insert or update by id (a node keeps its index for life); the transaction's sequence number."""

    @abstractmethod
    def delete_nodes(self, ids: Iterable[str]) -> int:
        """Delete nodes and their edges, leaving tombstones; an index is never reused."""

    @abstractmethod
    def get_node(self, node_id: str) -> NodeRow | None:
        """One node by id (None if absent)."""

    @abstractmethod
    def nodes_by_idx(self, idxs: Iterable[int]) -> dict[int, NodeRow]:
        """Whole rows of existing node indices: how ranked array positions become hits."""

    def node_heads(self, idxs: Iterable[int]) -> dict[int, tuple[str, str, str, str]]:
        """``(id, type, title, text)`` of existing node indices: what a search hit shows, read once per search
        (``nodes_by_idx`` without the metadata and bookkeeping columns; a store may read just these)."""
        return {i: (r.id, r.type, r.title, r.text) for i, r in self.nodes_by_idx(idxs).items()}

    @abstractmethod
    def edge_numbers(self, eids: Iterable[int], key: str) -> dict[int, float]:
        """Numeric ``meta[key]`` of the given edges (edges where it is missing or not a number are absent).
        Why: the authorship prior reads how many lines a change added to a file (the git ingest's
        ``touches`` meta), for the edges of the agent's working files only."""

    @abstractmethod
    def node_flags(self, idxs: Iterable[int] | None, key: str) -> set[int]:
        """Which node indices carry ``metadata[key] == true`` (JSON true, nothing else): of ``idxs``, or of
        every node with ``None``.  Why: the aggregate prior reads which nodes an ingest marked ``aggregate`` (a
        merge commit that only repeats the commits it merges): all of them once per engine, then the changed."""

    @abstractmethod
    def node_meta_values(self, idxs: Iterable[int], keys: Sequence[str]) -> dict[int, dict[str, Any]]:
        """``{idx: {key: value}}`` of the given metadata keys (scalars; a key a node lacks is absent) for the
        given nodes only.  Why: a search shows each hit's sha and author without reading whole metadata."""

    def resolve_node_id(self, text: str, candidates: int = 5) -> str:
        """The node id ``text`` names: the id itself; else, for a short sha (``commit:abc123``, at least 4
        hex digits after the type, or a bare ``abc1234``, at least 7, read as ``commit:abc1234``), the one node
        whose id starts with it.  No such node is ``UnknownNode``; several are ``InvalidArgument`` naming up
        to ``candidates`` of them.  Why: people copy the short shas git prints."""
        if not isinstance(text, str) or not text.strip():
            raise InvalidArgument("a node id must be a non-empty string")
        text = text.strip()
        if self.lookup_idx([text]):
            return text
        kind, sep, key = text.partition(":")
        if not sep and _BARE_SHA.fullmatch(text):
            prefix = "commit:" + text.lower()
        elif sep and kind and _HEX_KEY.fullmatch(key):
            prefix = f"{kind}:{key.lower()}"
        else:
            raise UnknownNode(f"no node with id {text!r}", node_id=text)
        rows = self.ids_with_prefix(prefix, candidates + 1)
        if not rows:
            raise UnknownNode(f"no node with id {text!r} (nor one starting with {prefix!r})", node_id=text)
        if len(rows) > 1:
            shown = [r[0] for r in rows[:candidates]]
            more = " and more" if len(rows) > candidates else ""
            raise InvalidArgument(
                f"{text!r} is ambiguous: {', '.join(shown)}{more}; give more of the id",
                candidates=shown,
            )
        return rows[0][0]

    @abstractmethod
    def lookup_idx(self, ids: Iterable[str]) -> dict[str, int]:
        """Node index of each existing id (missing ids are absent)."""

    @abstractmethod
    def ids_by_idx(self, idxs: Iterable[int]) -> dict[int, str]:
        """Node id of each existing index (cheaper than whole rows, for explanations)."""

    @abstractmethod
    def node_types(self, ids: Iterable[str]) -> dict[str, str]:
        """Type of each existing id (missing ids are absent): also the existence check for many ids."""

    @abstractmethod
    def ids_with_prefix(self, prefix: str, limit: int) -> list[tuple[str, str]]:
        """``(id, type)`` of up to ``limit`` nodes whose id starts with ``prefix`` (a short commit sha)."""

    @abstractmethod
    def nodes_titled(self, title: str, limit: int) -> list[tuple[str, str]]:
        """``(id, type)`` of up to ``limit`` nodes with this title, ASCII case ignored."""

    @abstractmethod
    def iter_nodes(self, batch: int = 1000) -> Iterator[NodeRow]:
        """Every node in index order, read in batches."""

    @abstractmethod
    def nodes_failing(self, where: Iterable[tuple[str, object]]) -> np.ndarray:
        """Sorted indices of nodes a metadata-equality search filter excludes."""

    @abstractmethod
    def owned_nodes(self, owners: Iterable[str]) -> list[str]:
        """Ids of nodes whose ``metadata.owner`` is one of ``owners`` (ingest)."""

    @abstractmethod
    def source_node_ids(self, kind: str, source: str) -> list[str]:
        """Ids of the nodes an ingest adapter ``kind`` wrote for ``source``."""


class EdgeTables(ABC):
    """Typed, weighted edges (one row per source, relation and target), and pending edges that wait for
    an endpoint a later ingest brings."""

    @abstractmethod
    def upsert_edges(self, edges: list[Edge]) -> int:
        """Insert or update ``(src, rel, dst)`` edges, keeping what was learned; unknown endpoints reject all."""

    def upsert_edge_columns(
        self,
        src: list[str],
        rel: list[str],
        dst: list[str],
        weight: np.ndarray,
        polarity: np.ndarray,
        factuality: np.ndarray,
    ) -> tuple[int, EdgeArrays | None]:
        """The bulk form of :meth:`upsert_edges`: already validated columns, no ``meta``; the same
        semantics (one transaction, all or nothing; unknown endpoints reject the whole batch with
        :class:`~neurongraph.errors.UnknownNode`; a repeated ``(src, rel, dst)`` keeps its last values).

        Returns the sequence number and, where the store can give them cheaply, the written edges as
        :meth:`changes_since` would report them (effective weights), so an engine that was in step can
        apply them without reading them back; ``None`` means "read the change feed".  This default goes
        through :meth:`upsert_edges` (what the PostgreSQL store uses); the SQLite store overrides it."""
        edges = [
            Edge(s, r, d, weight=float(w), polarity=int(p), factuality=float(f))
            for s, r, d, w, p, f in zip(src, rel, dst, weight.tolist(), polarity.tolist(), factuality.tolist())
        ]
        return self.upsert_edges(edges), None

    @abstractmethod
    def delete_edges(self, triples: Iterable[tuple[str, str, str]]) -> int:
        """Delete edges (unknown ones ignored), leaving tombstones; an edge key is never reused."""

    @abstractmethod
    def get_edge(self, src: str, rel: str, dst: str) -> dict | None:
        """One edge with its learned state (eid, weight, plastic, factuality, meta, reinforce_count, times)."""

    @abstractmethod
    def relation_names(self) -> dict[int, str]:
        """Predicate id -> relation name (ids are what graph arrays carry)."""

    @abstractmethod
    def relation_ids(self, names: Iterable[str]) -> dict[str, int]:
        """Predicate ids of relation names, registering new names."""

    @abstractmethod
    def edges_marked(self, meta_key: str) -> list[tuple[str, str, str]]:
        """(src, rel, dst) of every edge whose meta has ``meta_key`` (e.g. the linker's)."""

    @abstractmethod
    def owned_edges(self, owners: Iterable[str], by: str | None = None) -> list[tuple[str, str, str]]:
        """(src, rel, dst) of every edge whose ``meta.owner`` is one of ``owners`` (ingest); with ``by``, only
        those the named reader derived (``meta.by``)."""

    @abstractmethod
    def edges_from(self, src_ids: Iterable[str]) -> set[tuple[str, str, str]]:
        """(src, rel, dst) of every edge leaving one of ``src_ids``."""

    @abstractmethod
    def edge_count(self) -> int:
        """How many edges the store holds (cheap; to size a rebuild against a patch)."""

    @abstractmethod
    def edge_pairs(self, rel: str) -> list[tuple[str, str]]:
        """(src id, dst id) of every edge of one relation."""

    @abstractmethod
    def put_pending_edges(self, rows: list[tuple[str, str, dict]]) -> None:
        """Keep ``(missing node id, owner, edge dict)``: an edge to add once its endpoint exists."""

    @abstractmethod
    def take_pending_edges(self, ids: Iterable[str]) -> list[dict]:
        """Remove and return the pending edges waiting for any of ``ids`` (inside the writer's transaction)."""

    @abstractmethod
    def drop_pending_edges(self, owners: Iterable[str]) -> int:
        """Forget the pending edges of ``owners`` (their source changed or went away); how many."""

    @abstractmethod
    def pending_edge_count(self) -> int:
        """How many edges are waiting for an endpoint (reported by ingest and stats)."""


class SearchTables(ABC):
    """The lexical index and the vector cache (vectors by embedder model and text hash)."""

    @abstractmethod
    def lexical_search(
        self, terms: list[str], k: int, max_postings: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k BM25 node indices and scores (higher = better) of the OR of ``terms``."""

    def lexical_tokens(self, texts: list[str]) -> list[list[str]] | None:
        """The tokens ``lexical_search`` makes of each text (same tokenizer, same stemming), or ``None``
        when the store cannot say.  Why: an in-memory BM25 index (index/bm25.py) ranks exactly like
        ``lexical_search`` only with the store's own tokens; ``None`` keeps the engine on ``lexical_search``."""
        return None

    def lexical_postings(self, nodes: list[int] | None = None) -> LexicalPostings | None:
        """The full-text rows of ``nodes`` (all rows when ``None``) as ``lexical_search`` ranks them, or
        ``None`` when the store cannot say (see ``lexical_tokens``).  Nodes without a row are left out."""
        return None

    @abstractmethod
    def get_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        """Cached embeddings by (content hash, model): nothing is ever embedded twice."""

    @abstractmethod
    def put_vectors(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        """Cache ``(content hash, vector)`` pairs of one model (computed before the node transaction)."""

    @abstractmethod
    def all_node_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(node indices, matrix) of every node with a cached vector: one scan for an engine's first load."""

    @abstractmethod
    def embedding_models(self) -> dict[str, int]:
        """Cached vectors per embedder model id (to explain a re-embed)."""

    def vector_mark(self) -> int:
        """A point in the vector cache's history (``release_vectors_since`` forgets what came after it);
        -1 when the store keeps no such order (then releasing does nothing)."""
        return -1

    def release_vectors_since(self, mark: int) -> int:
        """After a failed write (issue 27: a full disk): delete the cached vectors added since ``mark`` that
        no node uses, and hand the write-ahead log back to the disk.  Best effort, returns how many rows went."""
        return 0


class TraceTables(ABC):
    """Search traces (what feedback refers to), small shared settings, and the counts behind ``ngr stats``
    and the graph schema."""

    @abstractmethod
    def save_trace(self, trace: dict) -> None:
        """Store a search trace (id, query, params, fingerprint, hits with paths): what feedback refers to.
        An optional ``params_json`` is ``params`` already serialised (``strict_dumps``): stored as is."""

    @abstractmethod
    def get_trace(self, trace_id: str) -> dict | None:
        """A stored trace as saved (None if absent)."""

    @abstractmethod
    def recent_traces(self, limit: int) -> list[dict]:
        """``{id, created_at, query, fingerprint, hits}`` of the newest ``limit`` stored traces, newest first
        (``hits``: how many): a trace list for people (web page, ``ngr traces list``), made by any process."""

    @abstractmethod
    def get_meta(self, key: str) -> str | None:
        """A small shared setting (linker config, schema generation, snapshot token, ...)."""

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None:
        """Insert or overwrite a setting (joins the caller's transaction)."""

    @abstractmethod
    def stats(self) -> dict:
        """Counts for ``ngr stats``: nodes, edges, relations, traces, cached vectors, per type and relation."""

    @abstractmethod
    def node_type_counts(self) -> dict[str, int]:
        """Nodes per type, most frequent first (graph schema for query generation)."""

    @abstractmethod
    def message_grep(self, words: Sequence[str], node_type: str = "commit") -> list[str]:
        """Ids of the ``node_type`` nodes whose title or text holds every one of ``words`` as a substring, any
        case: what ``git log -i --grep`` finds (one pattern, or ``--all-match`` for several), sorted."""

    @abstractmethod
    def relation_type_pairs(self) -> list[tuple[str, str, str, int]]:
        """(relation, src type, dst type, edges) observed, most frequent first."""

    @abstractmethod
    def metadata_keys(self, limit: int) -> list[str]:
        """The ``limit`` most frequent scalar/list metadata keys of nodes, most frequent first."""


class Store(ChangeFeed, NodeTables, EdgeTables, SearchTables, TraceTables):
    """Durable nodes, typed edges, lexical index, vector cache, traces, the change feed, and two sections
    (``ledgers``, ``schema_tables``).  Each write method is one atomic transaction, or joins the caller's
    ``transaction()``; every write transaction takes the next sequence number and stamps what it touches."""

    path: str  # where the store lives (a snapshot file sits beside it); ":memory:" for a private one
    ledgers: LedgerTables
    schema_tables: SchemaTables
    validator: WriteValidator | None = None  # the schema hook, attached by schema/validator.py
    clock: Callable[[], float] = staticmethod(time.time)  # "now" for lazy decay; tests may set it per instance

    # errors that mean "this store cannot take a write now" (full disk, read-only file, I/O error, a lock
    # held past the timeout), not "the store is broken for reads": each store names its driver's
    WRITE_REFUSED: tuple[type[Exception], ...] = (StoreError,)

    def try_save_trace(self, trace: dict) -> str | None:
        """:meth:`save_trace` for a read that must answer anyway (issue 27: on a full disk every search
        failed because it could not store its trace): None when stored, else why not (the write rolled
        back, nothing half-written).  Inside a caller's transaction the error stands: swallowing it there
        would leave that transaction in an unknown state."""
        if self.in_transaction:
            self.save_trace(trace)
            return None
        try:
            self.save_trace(trace)
        except self.WRITE_REFUSED as exc:
            return str(exc) or type(exc).__name__
        return None
