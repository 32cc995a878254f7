"""The store contract: the durable source of truth every engine process shares.

In-memory indexes (vectors, CSR graph) are *derived* from a store and follow it
through ``changes_since(seq)``: every write transaction takes a new sequence
number, so an engine (this process or another one on the same database) can
catch up by reading only what changed.  A PostgreSQL implementation satisfies
the same contract.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from ..model import Edge, Node, body_of

__all__ = ["Store", "NodeRow", "EdgeArrays", "Changes"]


@dataclass
class NodeRow:
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
    seq: int  # the store's sequence number these changes bring us to
    nodes: list[tuple[int, str, str]]  # (idx, id, content_hash) of inserted/updated nodes
    node_types: list[str]
    edges: EdgeArrays
    deleted_nodes: list[int]
    deleted_edges: list[int]
    node_times: list = field(default_factory=list)  # event time (epoch s) of each node in ``nodes``, or None
    node_sources: list = field(default_factory=list)  # source (metadata "source") of each, or None


class Store(ABC):
    """Durable nodes, typed edges, lexical index, vector cache and traces."""

    # --- writes (each call is one atomic transaction) ---------------------
    @abstractmethod
    def upsert_nodes(self, nodes: list[Node]) -> int: ...

    @abstractmethod
    def upsert_edges(self, edges: list[Edge]) -> int: ...

    @abstractmethod
    def delete_nodes(self, ids: Iterable[str]) -> int: ...

    @abstractmethod
    def put_vectors(self, model: str, items: list[tuple[str, np.ndarray]]) -> None: ...

    @abstractmethod
    def save_trace(self, trace: dict) -> None: ...

    # --- reads -------------------------------------------------------------
    @abstractmethod
    def get_node(self, node_id: str) -> NodeRow | None: ...

    @abstractmethod
    def nodes_by_idx(self, idxs: Iterable[int]) -> dict[int, NodeRow]: ...

    @abstractmethod
    def lookup_idx(self, ids: Iterable[str]) -> dict[str, int]: ...

    @abstractmethod
    def lexical_search(
        self, terms: list[str], k: int, max_postings: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]: ...

    @abstractmethod
    def get_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]: ...

    @abstractmethod
    def changes_since(self, seq: int) -> Changes: ...

    @abstractmethod
    def current_seq(self) -> int: ...

    @abstractmethod
    def relation_names(self) -> dict[int, str]: ...

    @abstractmethod
    def get_trace(self, trace_id: str) -> dict | None: ...

    @abstractmethod
    def get_meta(self, key: str) -> str | None: ...

    @abstractmethod
    def set_meta(self, key: str, value: str) -> None: ...

    @abstractmethod
    def iter_nodes(self, batch: int = 1000): ...

    @abstractmethod
    def stats(self) -> dict: ...

    @abstractmethod
    def close(self) -> None: ...
