"""Apply an :class:`IngestBatch` to an engine: the one write path of every ingest adapter.

Why one function: "what changed", "what to embed", "which derived edges to retract"
and "what to prune" are the same questions for git, GitHub and Markdown, and they
must be answered inside one transaction so a crash leaves the store as it was or as
the whole batch made it.  Embeddings are computed first, outside the transaction
(they are a cache keyed by content hash, so a crash there writes no node).

Rules (docs/ingest.md, "Incremental sync"):
- a node whose type, title, text, metadata and confidence equal the stored ones is
  not written (so re-running an unchanged source embeds nothing and bumps nothing);
- a placeholder node (``batch.placeholders``) never replaces a real node of its id (only an absent
  one or an older placeholder);
- a node read without its content (``metadata["unreadable"]``: a git commit whose objects are missing) never
  replaces a stored node of its id that was read whole: the stored hunks, line counts, code terms and files
  stand, its edges too, and the summary names it (``kept_stored``, ``skipped_items``);
- when an existing owner node changed, the edges and nodes it owned and no longer
  produces are deleted (retraction), its pending edges are recomputed;
- an edge whose endpoint does not exist yet waits in ``pending_edges`` and is
  written when a node of that id arrives, from any adapter;
- with ``prune`` and a complete batch, the source's nodes missing from it are deleted;
- learned state (plastic weights, ledgers, activation) of surviving nodes and
  edges is kept: updates go through the same upserts as every other write.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..errors import InvalidArgument
from ..index.vector_cache import vector_text
from ..model import Edge, Node
from .batch import KINDS, IngestBatch

__all__ = ["apply_batch", "SyncProgress", "released_on_refusal"]

SyncProgress = Callable[[str, int, int], None]  # (stage, done, total)


@contextmanager
def released_on_refusal(store) -> Iterator[None]:
    """An ingest's writes, undone further when the store refuses one (full disk, I/O error; issue 27):
    the transaction already rolled back, and the vectors this ingest cached (written before it, in their
    own transactions) are deleted and the write-ahead log truncated, so the failed ingest leaves neither
    its partial cache nor a grown log behind and the searches after it can still store their traces."""
    mark = store.vector_mark()
    try:
        yield
    except store.WRITE_REFUSED:
        store.release_vectors_since(mark)
        raise


def _same(row, n: Node) -> bool:
    return (
        row.type == n.type
        and row.title == n.title
        and row.text == n.text
        and row.metadata == n.metadata
        and abs(row.confidence - n.confidence) < 1e-12
    )


def _stamp(batch: IngestBatch) -> list[Node]:
    """The batch's nodes, last duplicate winning, each recording its source and adapter."""
    latest: dict[str, Node] = {}
    for n in batch.nodes:
        md = n.metadata
        if md.get("source") != batch.source or md.get("ingest") != batch.kind:
            n = Node(n.id, n.type, n.title, n.text, {**md, "source": batch.source, "ingest": batch.kind}, n.confidence)
        latest[n.id] = n
    return list(latest.values())


def _check(batch: IngestBatch, prune: bool) -> None:
    if batch.kind not in KINDS:
        raise InvalidArgument(f"unknown ingest kind {batch.kind!r}; expected one of {KINDS}")
    if not isinstance(batch.source, str) or not batch.source.strip():
        raise InvalidArgument("an ingest source needs a non-empty name")
    if prune and not batch.complete:
        what = (
            "a git sync reads only the commits that are new since the last one"
            if batch.kind == "git"
            else "a single file is one page of an export: pass the export folder"
        )
        raise InvalidArgument(f"--prune needs a complete listing of {batch.source!r}; {what}")


def apply_batch(engine, batch: IngestBatch, *, prune: bool = False, progress: SyncProgress | None = None) -> dict:
    """Write ``batch`` into ``engine``'s store (one transaction) and bring the engine up to date.

    Returns a summary: nodes new/updated/unchanged, embedded, edges written/retracted/pending,
    nodes pruned, skipped items and the adapter's own counts."""
    _check(batch, prune)
    batch.stats.setdefault("nul_replaced", _nul_replaced(engine.store, batch))
    t0 = time.perf_counter()
    if not batch.nodes and not batch.edges and not batch.gone and not prune:  # e.g. a git sync, no new commit
        for k, v in batch.state.items():
            if engine.store.get_meta(k) != v:
                engine.store.set_meta(k, v)
        return _summary(batch, t0)
    with released_on_refusal(engine.store):
        return _Sync(engine, batch, prune, progress).run(t0)


class _Sync:
    """One batch's sync, in the order the module docstring gives: diff the nodes with the store, embed
    what is new, then in one transaction write nodes, retract, prune, write edges and resolve pending ones."""

    def __init__(self, engine, batch: IngestBatch, prune: bool, progress: SyncProgress | None):
        self.engine, self.store, self.batch, self.prune, self.progress = engine, engine.store, batch, prune, progress
        self.nodes = _stamp(batch)
        self.ids = [n.id for n in self.nodes]
        self.in_batch = set(self.ids)
        self.idx: dict[str, int] = {}
        self.known: set[str] = set()
        self.kept: set[str] = set()  # nodes read without their content whose stored whole node stays
        self.by_owner: dict[str, list[Edge]] = {}
        for e in batch.edges:
            if e.src != e.dst:
                self.by_owner.setdefault(str(e.meta.get("owner", e.src)), []).append(e)
        self.edge_set = {(e.src, e.rel, e.dst) for es in self.by_owner.values() for e in es}
        self.counts = Counter[str]()
        self.ready: list[Edge] = []
        self.parked: list[tuple[str, str, dict]] = []

    def _stage(self, stage: str, done: int, total: int) -> None:
        if self.progress:
            self.progress(stage, done, total)

    def _diff(self) -> tuple[list[Node], set[str], set[str]]:
        """(nodes to write, owners whose content changed, ids that are new to the store)."""
        self.counts.clear()
        self.kept = set()
        self.idx = self.store.lookup_idx(self.ids)
        self.known = self.in_batch | set(self.idx)
        rows = {r.id: r for r in self.store.nodes_by_idx(self.idx.values()).values()} if self.idx else {}
        write: list[Node] = []
        changed: set[str] = set()
        for n in self.nodes:
            row = rows.get(n.id)
            if row is None:
                write.append(n)
                self.counts["new_nodes"] += 1
            elif n.id in self.batch.placeholders and not row.metadata.get("placeholder"):
                self.counts["placeholders_kept"] += 1  # a richer node (e.g. the PR from a GitHub export) is there
            elif n.metadata.get("unreadable") and not row.metadata.get("unreadable") and row.type == n.type:
                self.kept.add(n.id)  # a missing object never overwrites what was read whole (issue 40)
            elif not _same(row, n):
                write.append(n)
                self.counts["updated_nodes"] += 1
                changed.add(n.id)
        return write, changed, {n.id for n in write if n.id not in rows}

    def run(self, t0: float) -> dict:
        seen_seq = self.store.current_seq()
        write, changed, fresh = self._diff()
        # 1. embeddings first, outside the transaction: only text whose (hash, model) is not cached
        t_embed = time.perf_counter()
        on_embed = (lambda done, total: self._stage("embedding", done, total)) if self.progress else None
        texts = [vector_text(n.metadata, n.title, n.text) for n in write]  # placeholders: index/vector_cache.py
        self.engine.vectors_for(texts, on_embed)
        embedded = self.engine.last_embedded if write else 0
        t_embed = time.perf_counter() - t_embed
        with self.store.transaction():
            self._stage("writing", 0, 1)
            if self.store.current_seq() != seen_seq:
                # another process wrote since the diff: diff again under the write lock, so what is
                # written and counted is exact (a node that needs a vector it lacks gets it at refresh)
                write, changed, fresh = self._diff()
            if write:
                self.store.upsert_nodes(write)
            if changed:
                self._retract(changed)
            if self.batch.stats.get("full_reread"):
                self._retract_rederived((self.in_batch & set(self.idx)) - changed - self.kept)
            if self.prune:
                self._prune()
            if self.batch.gone:
                self._drop(self.batch.gone - self.in_batch)
            self._edges(changed | fresh)
            if fresh:
                self._resolve_pending(fresh)
            if self.ready:
                self.store.upsert_edges(self.ready)
            if self.parked:
                self.store.put_pending_edges(self.parked)
            for k, v in self.batch.state.items():
                self.store.set_meta(k, v)
        self.engine.refresh()
        self._stage("writing", 1, 1)
        for i in sorted(self.kept):
            self.batch.skip(i, "read without its diff now: the stored node, read whole before, is kept")
        c = self.counts
        return _summary(
            self.batch,
            t0,
            nodes=len(self.nodes),
            new_nodes=c["new_nodes"],
            updated_nodes=c["updated_nodes"],
            unchanged_nodes=len(self.nodes)
            - c["new_nodes"]
            - c["updated_nodes"]
            - c["placeholders_kept"]
            - len(self.kept),
            placeholders_kept=c["placeholders_kept"],
            kept_stored=len(self.kept),
            embedded=embedded,
            edges=len(self.edge_set),
            # what the store holds from this write: one edge per (src, rel, dst); a repeat (two owners deriving the
            # same edge, a resolved pending edge the batch also has) is merged by the upsert, and counted as such
            edges_written=len({(e.src, e.rel, e.dst) for e in self.ready}),
            edges_merged=len(self.ready) - len({(e.src, e.rel, e.dst) for e in self.ready}),
            edges_retracted=c["edges_retracted"],
            edges_pending=len(self.parked),
            pending_resolved=c["pending_resolved"],
            nodes_pruned=c["nodes_pruned"],
            written_node_types=dict(Counter(n.type for n in write).most_common()),
            written_edge_relations=dict(
                Counter(r for _, r, _ in {(e.src, e.rel, e.dst) for e in self.ready}).most_common()
            ),
            embed_seconds=round(t_embed, 3),
        )

    def _retract(self, changed: set[str]) -> None:
        """Owners whose content changed produce their derived edges and nodes anew: drop what they no longer do."""
        store = self.store
        stale = [t for t in store.owned_edges(changed) if t not in self.edge_set]
        self.counts["edges_retracted"] += store.delete_edges(stale)
        store.drop_pending_edges(changed)
        orphans = [i for i in store.owned_nodes(changed) if i not in self.in_batch]
        if orphans:
            store.drop_pending_edges(orphans)
            self.counts["nodes_pruned"] += store.delete_nodes(orphans)

    def _retract_rederived(self, owners: set[str]) -> None:
        """A full re-read (a new reader version, ``--full``): the edges an unchanged owner no longer yields
        under this reader are dropped too, so an upgraded store holds what a fresh ingest would (ovs's
        ``Revert commit 74622b44b …`` kept reader 7's follows_up edge next to reader 8's reverts edge).
        Only the reader's own edges (``meta.by`` = the source kind); the others, and learned weights, stay."""
        if not owners:
            return
        stale = [t for t in self.store.owned_edges(owners, by=self.batch.kind) if t not in self.edge_set]
        self.counts["edges_retracted"] += self.store.delete_edges(stale)

    def _prune(self) -> None:
        """Delete what the source no longer has (only a complete listing can say that)."""
        store = self.store
        gone = [i for i in store.source_node_ids(self.batch.kind, self.batch.source) if i not in self.in_batch]
        if gone:
            stale = store.owned_edges(gone)
            self.counts["edges_retracted"] += store.delete_edges(
                [t for t in stale if t[0] not in gone and t[2] not in gone]
            )
            store.drop_pending_edges(gone)
            self.counts["nodes_pruned"] += store.delete_nodes(gone)
            self.known -= set(gone)

    def _drop(self, ids: set[str]) -> None:
        """Delete the nodes the source says are gone (``batch.gone``), the edges they own and their pending edges."""
        gone = list(self.store.lookup_idx(ids))
        if gone:
            stale = [t for t in self.store.owned_edges(gone) if t[0] not in ids and t[2] not in ids]
            self.counts["edges_retracted"] += self.store.delete_edges(stale)
            self.store.drop_pending_edges(gone)
            self.counts["nodes_pruned"] += self.store.delete_nodes(gone)
            self.known -= set(gone)

    def _edges(self, recompute: set[str]) -> None:
        """Write what is new (or re-derived by a changed/new owner); park what waits for a node."""
        owners = self.in_batch if self.batch.owners is None else set(self.batch.owners)
        unchanged_srcs = {e.src for o, es in self.by_owner.items() if o not in recompute for e in es}
        have = self.store.edges_from(unchanged_srcs) if unchanged_srcs else set()
        outside = {x for t in self.edge_set for x in (t[0], t[2]) if x not in self.known}
        if outside:
            self.known |= set(self.store.lookup_idx(outside))
        for o, es in self.by_owner.items():
            if o not in owners:
                continue
            for e in es:
                missing = [x for x in (e.src, e.dst) if x not in self.known]
                if missing:
                    if o in recompute:  # an unchanged owner's pending edges are already parked
                        self.parked.append((missing[0], o, e.to_dict()))
                elif o in recompute or (e.src, e.rel, e.dst) not in have:
                    self.ready.append(e)

    def _resolve_pending(self, fresh: set[str]) -> None:
        """Edges that were waiting for the nodes this batch creates: written now, or parked again."""
        waiting = self.store.take_pending_edges(fresh)
        if not waiting:
            return
        wait_ids = {x for d in waiting for x in (d["src"], d["dst"])} - self.known
        self.known |= set(self.store.lookup_idx(wait_ids))
        for d in waiting:
            missing = [x for x in (d["src"], d["dst"]) if x not in self.known]
            owner = str(d.get("meta", {}).get("owner", d["src"]))
            if missing:
                self.parked.append((missing[0], owner, d))
            else:
                self.ready.append(Edge.from_dict(d))
                self.counts["pending_resolved"] += 1


def _nul_replaced(store, batch: IngestBatch) -> list[str]:
    """The ids of the batch's nodes whose strings hold a NUL character, where the store writes a stand-in for it
    (``Store.NUL_STAND_IN``: PostgreSQL text cannot hold NUL; SQLite keeps it): said in the summary."""
    if not getattr(store, "NUL_STAND_IN", None):
        return []
    out = []
    for n in batch.nodes:
        if "\x00" in n.id or "\x00" in n.title or "\x00" in n.text or "\\u0000" in json.dumps(n.metadata):
            out.append(n.id.replace("\x00", store.NUL_STAND_IN))
    return out[:200]


def _summary(batch: IngestBatch, t0: float, **counts) -> dict:
    """The sync summary (every key present, zero when nothing of that kind happened)."""
    out = {
        "kind": batch.kind,
        "source": batch.source,
        "nodes": 0,
        "new_nodes": 0,
        "updated_nodes": 0,
        "unchanged_nodes": 0,
        "placeholders_kept": 0,
        "kept_stored": 0,
        "embedded": 0,
        "edges": 0,
        "edges_written": 0,
        "edges_merged": 0,
        "edges_retracted": 0,
        "edges_pending": 0,
        "pending_resolved": 0,
        "nodes_pruned": 0,
        "written_node_types": {},
        "written_edge_relations": {},
    }
    out.update(counts)
    out.update(
        {
            "skipped": len(batch.skipped),
            "skipped_items": batch.skipped[:200],
            "adapter": batch.stats,
            "seconds": round(time.perf_counter() - t0, 3),
            "embed_seconds": counts.get("embed_seconds", 0.0),
        }
    )
    return out
