"""What an ingest adapter hands to the sync step: one source's nodes and derived edges.

Adapters (git, GitHub exports, Markdown folders) only *read* their source and
describe it as an :class:`IngestBatch`; they never write.  ``sync.apply_batch``
is the one place that compares a batch with the store, embeds what is new,
retracts derived edges that the source no longer supports and commits it all
in one transaction.  Conventions every adapter follows (docs/ingest.md):

- every node's ``metadata["source"]`` is the source name (a repository, a site,
  a folder) and ``metadata["ingest"]`` the adapter kind (``git``, ``github``,
  ``markdown``); ``metadata["time"]`` is the item's event time in epoch seconds
  (commit time, creation time) when it has one;
- every derived edge's ``meta`` has ``by`` (the adapter kind), ``owner`` (the id
  of the node whose content produced it: when that node changes or disappears,
  the edges it owned are retracted) and, where text was matched, ``evidence``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..errors import InvalidArgument
from ..model import Edge, Node

__all__ = ["IngestBatch", "EdgeSet", "derived_edge", "KINDS"]

KINDS = ("git", "github", "markdown")


def derived_edge(
    src: str,
    rel: str,
    dst: str,
    *,
    by: str,
    owner: str | None = None,
    evidence: str | None = None,
    weight: float = 1.0,
    **meta,
) -> Edge:
    """An edge read from a source's content, owned by ``owner`` (default: ``src``)."""
    m = {"by": by, "owner": owner or src}
    if evidence:
        m["evidence"] = evidence[:300]
    m.update(meta)
    return Edge(src, rel, dst, weight=weight, meta=m)


class EdgeSet:
    """The derived edges one read produces, first evidence kept: a (src, rel, dst) is written once."""

    def __init__(self, kind: str):
        self.kind = kind
        self._edges: dict[tuple[str, str, str], Edge] = {}

    def add(self, src: str, rel: str, dst: str, owner: str, evidence: str, **meta) -> None:
        if src != dst and (src, rel, dst) not in self._edges:
            self._edges[(src, rel, dst)] = derived_edge(
                src, rel, dst, by=self.kind, owner=owner, evidence=evidence, **meta
            )

    def edges(self) -> list[Edge]:
        return list(self._edges.values())

    def __len__(self) -> int:
        return len(self._edges)

    def truncate(self, n: int) -> None:
        """Forget every edge added after the first ``n`` (an item that could not be taken)."""
        for key in list(self._edges)[n:]:
            del self._edges[key]

    def drop_touching(self, ids: set[str]) -> None:
        """Forget the edges from or to ``ids`` (nodes that were refused: nothing may point at them)."""
        for key in [k for k in self._edges if k[0] in ids or k[2] in ids]:
            del self._edges[key]

    def counts(self) -> dict[str, int]:
        """Edges per relation, for the summary."""
        out: dict[str, int] = {}
        for _, rel, _ in self._edges:
            out[rel] = out.get(rel, 0) + 1
        return out


@dataclass
class IngestBatch:
    """One source's read, handed to ``apply_batch``: adapters describe, the sync step writes."""

    kind: str  # adapter kind, one of KINDS
    source: str  # source name recorded on every node (metadata["source"])
    nodes: list[Node] = field(default_factory=list)
    edges: list[Edge] = field(default_factory=list)  # derived edges (meta: by, owner, evidence)
    # ids of placeholder nodes (e.g. pr:N known only from a merge message): written only when the
    # store has no node of that id yet, so a richer node from another adapter is never overwritten
    placeholders: set[str] = field(default_factory=set)
    # True when the batch lists every item the source has now (a folder, an export): only then may
    # --prune delete the source's nodes that are missing from it
    complete: bool = True
    # owners whose derived edges are recomputed in full by this batch (default: every node in it)
    owners: set[str] | None = None
    state: dict[str, str] = field(default_factory=dict)  # store meta written in the same transaction
    # ids the source says no longer exist although the batch is not a complete listing (a deleted git tag):
    # deleted with the edges they own, in the same transaction
    gone: set[str] = field(default_factory=set)
    skipped: list[dict] = field(default_factory=list)  # {"item": ..., "reason": ...}, reported, not written
    stats: dict = field(default_factory=dict)  # adapter-specific counts for the summary

    def skip(self, item: str, reason: str) -> None:
        self.skipped.append({"item": item, "reason": reason})

    def take(self, item: str, add: Callable[[], object], *, strict: bool, edges: EdgeSet | None = None) -> bool:
        """Run ``add`` (which appends one item's nodes and edges); True when it could be taken.

        Why: one item over a limit (a 10 MB commit message, 1.4 MB of front matter) used to abort the
        whole sync with nothing written.  An item whose node fails validation (``InvalidArgument``:
        the message names the field, its size and the variable that raises the limit) is skipped and
        named, with everything it had added so far, and the rest is written; ``strict`` keeps the
        all-or-nothing behaviour (the error propagates)."""
        n_nodes, n_edges = len(self.nodes), len(edges) if edges is not None else len(self.edges)
        try:
            add()
        except InvalidArgument as exc:
            if strict:
                raise
            del self.nodes[n_nodes:]
            if edges is not None:
                edges.truncate(n_edges)
            else:
                del self.edges[n_edges:]
            self.skip(item, f"not written: {exc}")
            return False
        return True
