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
- when an existing owner node changed, the edges and nodes it owned and no longer
  produces are deleted (retraction), its pending edges are recomputed;
- an edge whose endpoint does not exist yet waits in ``pending_edges`` and is
  written when a node of that id arrives, from any adapter;
- with ``prune`` and a complete batch, the source's nodes missing from it are deleted;
- learned state (plastic weights, ledgers, activation) of surviving nodes and
  edges is kept: updates go through the same upserts as every other write.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from ..errors import InvalidArgument
from ..model import Edge, Node
from .batch import KINDS, IngestBatch

__all__ = ["apply_batch", "SyncProgress"]

SyncProgress = Callable[[str, int, int], None]  # (stage, done, total)


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


def apply_batch(engine, batch: IngestBatch, *, prune: bool = False, progress: SyncProgress | None = None) -> dict:
    """Write ``batch`` into ``engine``'s store (one transaction) and bring the engine up to date.

    Returns a summary: nodes new/updated/unchanged, embedded, edges written/retracted/pending,
    nodes pruned, skipped items and the adapter's own counts."""
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
    t0 = time.perf_counter()
    if not batch.nodes and not batch.edges and not prune:  # e.g. a git sync with no new commit
        for k, v in batch.state.items():
            if engine.store.get_meta(k) != v:
                engine.store.set_meta(k, v)
        return _summary(batch, t0)
    store = engine.store
    nodes = _stamp(batch)
    ids = [n.id for n in nodes]
    idx = store.lookup_idx(ids)
    rows = {r.id: r for r in store.nodes_by_idx(idx.values()).values()} if idx else {}
    write: list[Node] = []
    n_new = n_updated = n_placeholder_kept = 0
    changed_owners: set[str] = set()
    for n in nodes:
        row = rows.get(n.id)
        if row is None:
            write.append(n)
            n_new += 1
        elif n.id in batch.placeholders and not row.metadata.get("placeholder"):
            n_placeholder_kept += 1  # a richer node (e.g. the PR from a GitHub export) is already there
        elif not _same(row, n):
            write.append(n)
            n_updated += 1
            changed_owners.add(n.id)
    fresh = {n.id for n in write if n.id not in rows}
    owners = set(ids) if batch.owners is None else set(batch.owners)

    # 1. embeddings first, outside the transaction: only text whose (hash, model) is not cached
    def on_embed(done: int, total: int) -> None:
        if progress:
            progress("embedding", done, total)

    t_embed = time.perf_counter()
    engine.vectors_for([n.body for n in write], on_embed if progress else None)
    embedded = engine.last_embedded if write else 0
    t_embed = time.perf_counter() - t_embed

    in_batch = set(ids)
    known = in_batch | set(idx)
    by_owner: dict[str, list[Edge]] = {}
    for e in batch.edges:
        if e.src == e.dst:
            continue
        by_owner.setdefault(str(e.meta.get("owner", e.src)), []).append(e)
    edge_set = {(e.src, e.rel, e.dst) for es in by_owner.values() for e in es}

    retracted = pruned = pending_new = pending_resolved = 0
    with store.transaction():
        if progress:
            progress("writing", 0, 1)
        if write:
            store.upsert_nodes(write)
        # 2. retraction: owners whose content changed produce their derived edges and nodes anew
        if changed_owners:
            stale = [t for t in store.owned_edges(changed_owners) if t not in edge_set]
            retracted += store.delete_edges(stale)
            store.drop_pending_edges(changed_owners)
            orphans = [i for i in store.owned_nodes(changed_owners) if i not in in_batch]
            if orphans:
                store.drop_pending_edges(orphans)
                pruned += store.delete_nodes(orphans)
        # 3. prune what the source no longer has (only a complete listing can say that)
        if prune:
            gone = [i for i in store.source_node_ids(batch.kind, batch.source) if i not in in_batch]
            if gone:
                stale = store.owned_edges(gone)
                retracted += store.delete_edges([t for t in stale if t[0] not in gone and t[2] not in gone])
                store.drop_pending_edges(gone)
                pruned += store.delete_nodes(gone)
                known -= set(gone)
        # 4. edges: write what is new (or re-derived by a changed/new owner); park what waits for a node
        recompute = changed_owners | fresh
        unchanged_srcs = {e.src for o, es in by_owner.items() if o not in recompute for e in es}
        have = store.edges_from(unchanged_srcs) if unchanged_srcs else set()
        outside = {x for t in edge_set for x in (t[0], t[2]) if x not in known}
        if outside:
            known |= set(store.lookup_idx(outside))
        ready, parked = [], []
        for o, es in by_owner.items():
            if o not in owners:
                continue
            for e in es:
                missing = [x for x in (e.src, e.dst) if x not in known]
                if missing:
                    if o in recompute:  # an unchanged owner's pending edges are already parked
                        parked.append((missing[0], o, e.to_dict()))
                elif o in recompute or (e.src, e.rel, e.dst) not in have:
                    ready.append(e)
        # edges that were waiting for the nodes this batch creates
        waiting = store.take_pending_edges(fresh) if fresh else []
        if waiting:
            wait_ids = {x for d in waiting for x in (d["src"], d["dst"])} - known
            known |= set(store.lookup_idx(wait_ids))
            for d in waiting:
                missing = [x for x in (d["src"], d["dst"]) if x not in known]
                owner = str(d.get("meta", {}).get("owner", d["src"]))
                if missing:
                    parked.append((missing[0], owner, d))
                else:
                    ready.append(Edge.from_dict(d))
                    pending_resolved += 1
        if ready:
            store.upsert_edges(ready)
        if parked:
            store.put_pending_edges(parked)
            pending_new = len(parked)
        for k, v in batch.state.items():
            store.set_meta(k, v)
    engine.refresh()
    if progress:
        progress("writing", 1, 1)
    return _summary(
        batch,
        t0,
        nodes=len(nodes),
        new_nodes=n_new,
        updated_nodes=n_updated,
        unchanged_nodes=len(nodes) - n_new - n_updated - n_placeholder_kept,
        placeholders_kept=n_placeholder_kept,
        embedded=embedded,
        edges=len(edge_set),
        edges_written=len(ready),
        edges_retracted=retracted,
        edges_pending=pending_new,
        pending_resolved=pending_resolved,
        nodes_pruned=pruned,
        written_node_types=dict(Counter(n.type for n in write).most_common()),
        written_edge_relations=dict(Counter(e.rel for e in ready).most_common()),
        embed_seconds=round(t_embed, 3),
    )


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
        "embedded": 0,
        "edges": 0,
        "edges_written": 0,
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
