"""Relation queries in both directions: neighbours, effective blockers, k-hop paths, evidence chains.

Why two back ends: a one-hop question about one node (``neighbors``, the few
``blocked_by``/``resolves_to`` hops of ``effective_blockers``) is answered by the
store's two edge indexes — ``UNIQUE(src, rel_id, dst)`` outgoing and
``edges_dst(dst, rel_id)`` incoming — which also returns each edge's ``meta`` and is
exact even while another process writes.  Multi-hop questions fan out, so
``paths`` walks the engine's CSR arrays with :meth:`GraphArrays.expand` (numpy
gathers per hop, filtered by predicate type id), as every graph channel does.

Relation names may be inverse names (``blocks`` = ``blocked_by`` read from its dst)
and symmetric relations are followed both ways whatever their stored direction.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument
from ..store.base import Store
from .entities import node_idx, resolve
from .registry import RelationSchema

__all__ = ["Hop", "neighbors", "effective_blockers", "find_paths", "hops_from"]

DIRECTIONS = ("out", "in", "both")
_FLIP = {"out": "in", "in": "out", "both": "both"}


def _check_direction(direction: str) -> str:
    if direction not in DIRECTIONS:
        raise InvalidArgument(f"direction must be one of {list(DIRECTIONS)}, got {direction!r}")
    return direction


def _rel_list(rels: str | Iterable[str] | None) -> list[str] | None:
    if rels is None:
        return None
    rels = [rels] if isinstance(rels, str) else list(rels)
    for r in rels:
        if not isinstance(r, str) or not r:
            raise InvalidArgument(f"a relation name must be a non-empty string, got {r!r}")
    return rels or None


def plan(schema: RelationSchema, rels: list[str] | None, direction: str) -> dict[str, list[tuple[str, str]]]:
    """Per walk direction ('out'/'in'), the stored relations to follow and the name each was asked by.

    ``{"out": [(stored, asked), ...], "in": [...]}``; ``None`` relations = every relation.
    """
    out: dict[str, list[tuple[str, str]]] = {"out": [], "in": []}
    if rels is None:
        return {d: [("*", "*")] for d in (("out", "in") if direction == "both" else (direction,))}
    for asked in rels:
        stored, flipped = schema.resolve(asked)
        rt = schema.get(stored)
        d = "both" if rt is not None and not rt.directed else (_FLIP[direction] if flipped else direction)
        for dd in ("out", "in") if d == "both" else (d,):
            out[dd].append((stored, asked))
    return {d: v for d, v in out.items() if v}


# ------------------------------------------------------------------ one hop, from the store
def neighbors(
    store: Store,
    schema: RelationSchema,
    node: str,
    rels=None,
    direction: str = "both",
    include_superseded: bool = True,
    limit: int | None = None,
) -> list[dict]:
    """Edges of one node, by relation and direction, read from the store's src/dst indexes.

    Each result: ``node`` (the other end), ``type``, ``direction`` (``out``: node -> other
    in the stored edge, ``in``: other -> node), ``rel`` (the name asked for, e.g. an
    inverse name), ``edge`` (the stored ``[src, rel, dst]``), weight, factuality,
    polarity and meta.
    """
    direction = _check_direction(direction)
    rels = _rel_list(rels)
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
        raise InvalidArgument(f"limit must be a positive integer, got {limit!r}")
    node = resolve(store, node)
    idx = node_idx(store, node)
    ids = {name: i for i, name in store.relation_names().items()}
    results: list[dict] = []
    for walk, pairs in plan(schema, rels, direction).items():
        asked_by = {}
        if pairs[0][0] != "*":
            known = [(ids[s], a) for s, a in pairs if s in ids]
            if not known:
                continue
            asked_by = {rid: a for rid, a in known}
        rows = store.schema_tables.neighbor_rows(idx, walk, list(asked_by) if asked_by else None, include_superseded)
        for rel, other, otype, w, plastic, fact, pol, meta, eid in rows:
            src, dst = (node, other) if walk == "out" else (other, node)
            asked = asked_by.get(ids.get(rel, -1), rel) if asked_by else rel
            results.append(
                {
                    "node": other,
                    "type": otype,
                    "direction": walk,
                    "rel": asked,
                    "edge": [src, rel, dst],
                    "weight": w,
                    "plastic": plastic,
                    "factuality": fact,
                    "polarity": pol,
                    "meta": json.loads(meta),
                    "eid": eid,
                }
            )
    results.sort(key=lambda r: r["eid"])
    return results[:limit] if limit else results


def effective_blockers(
    store: Store,
    schema: RelationSchema,
    task: str,
    blocked_by: str = "blocked_by",
    resolves_to: str = "resolves_to",
    max_depth: int = 8,
) -> list[dict]:
    """What really blocks ``task``: its ``blocked_by`` targets, a target with ``resolves_to``
    edges replaced by what it resolves to (transitively, cycle-safe, up to ``max_depth``).

    Each result: ``id``, ``type``, ``via`` (task, the blocker named, ..., the effective one)
    and ``resolved`` (True when reached through ``resolves_to``).
    """
    task = resolve(store, task)
    direct = [r["node"] for r in neighbors(store, schema, task, blocked_by, "out")]
    out: dict[str, dict] = {}
    for b in direct:
        stack = [(b, [task, b])]
        while stack:
            cur, via = stack.pop()
            nxt = (
                [r["node"] for r in neighbors(store, schema, cur, resolves_to, "out")] if len(via) <= max_depth else []
            )
            nxt = [n for n in nxt if n not in via]  # a resolves_to cycle ends where it closes
            if not nxt:
                if cur not in out or len(via) < len(out[cur]["via"]):
                    out[cur] = {"id": cur, "via": via, "resolved": len(via) > 2}
                continue
            for n in reversed(nxt):
                stack.append((n, via + [n]))
    types = store.node_types(list(out))
    return [{**v, "type": types.get(k)} for k, v in out.items()]


# ------------------------------------------------------------------ k hops, over CSR arrays
@dataclass(frozen=True)
class Hop:
    """One step of a path pattern: relations to follow (None = any) and the direction."""

    rels: tuple[str, ...] | None = None
    direction: str = "out"


def hops_from(k: int | None, rels=None, direction: str = "out", hops: Sequence | None = None) -> list[Hop]:
    """A hop list from either ``hops`` (Hop or (rels, direction) items) or ``k`` identical hops."""
    if hops is not None:
        out = []
        for h in hops:
            if isinstance(h, Hop):
                out.append(Hop(tuple(_rel_list(h.rels) or ()) if h.rels else None, _check_direction(h.direction)))
            elif isinstance(h, (tuple, list)) and len(h) == 2:
                r = _rel_list(h[0])
                out.append(Hop(tuple(r) if r else None, _check_direction(h[1])))
            else:
                raise InvalidArgument(f"a hop must be a Hop or a (rels, direction) pair, got {h!r}")
        if not out:
            raise InvalidArgument("hops must not be empty")
        return out
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= 8:
        raise InvalidArgument(f"k must be an integer in 1..8, got {k!r}")
    r = _rel_list(rels)
    return [Hop(tuple(r) if r else None, _check_direction(direction))] * k


def find_paths(
    graph,
    schema: RelationSchema,
    rel_ids: dict[str, int],
    start: int,
    hops: list[Hop],
    end: int | None = None,
    exclude: np.ndarray | None = None,
    max_paths: int = 10_000,
) -> dict:
    """Simple paths from ``start`` following ``hops`` over CSR arrays (no node visited twice).

    Without ``end``: every path of exactly ``len(hops)`` hops.  With ``end``: every
    path reaching ``end`` within ``len(hops)`` hops (a path stops where it reaches it).
    ``exclude`` (bool per node index) drops paths through those nodes.  At most
    ``max_paths`` partial paths are kept per hop (``truncated`` says when more existed).

    Returns arrays: ``nodes`` (P x h+1), ``eids``/``rtypes``/``dirs`` (P x h; dir +1 =
    along the stored edge, -1 = against it), per found path length.
    """
    nodes = np.array([[start]], np.int64)
    eids = np.zeros((1, 0), np.int64)
    rtypes = np.zeros((1, 0), np.int32)
    dirs = np.zeros((1, 0), np.int8)
    found: list[tuple] = []
    truncated = False
    for _h, hop in enumerate(hops):
        if nodes.shape[0] == 0:
            break
        last = nodes[:, -1]
        uniq, inv = np.unique(last, return_inverse=True)
        parts = []
        for walk, pairs in plan(schema, list(hop.rels) if hop.rels else None, hop.direction).items():
            ex = graph.expand(uniq, direction=walk)
            keep = np.ones(len(ex), bool)
            if pairs[0][0] != "*":
                want = np.array([rel_ids[s] for s, _ in pairs if s in rel_ids], np.int32)
                keep = np.isin(ex.rtype, want)
            if exclude is not None and len(ex):
                d = ex.dst
                inside = d < exclude.shape[0]
                keep &= ~np.where(inside, exclude[np.where(inside, d, 0)], False)
            if keep.any():
                parts.append(
                    (
                        ex.src_pos[keep],
                        ex.dst[keep],
                        ex.eid[keep],
                        ex.rtype[keep],
                        np.full(int(keep.sum()), 1 if walk == "out" else -1, np.int8),
                    )
                )
        if not parts:
            nodes = nodes[:0]
            break
        spos, dst, eid, rt, dr = (np.concatenate([p[k] for p in parts]) for k in range(5))
        order = np.argsort(spos, kind="stable")
        spos, dst, eid, rt, dr = spos[order], dst[order], eid[order], rt[order], dr[order]
        counts = np.bincount(spos, minlength=uniq.shape[0])
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        per_path = counts[inv]
        rows = np.repeat(np.arange(nodes.shape[0]), per_path)
        offs = np.arange(rows.shape[0]) - np.repeat(np.cumsum(per_path) - per_path, per_path)
        epos = starts[inv][rows] + offs
        new = dst[epos]
        simple = ~(nodes[rows] == new[:, None]).any(axis=1)
        rows, epos, new = rows[simple], epos[simple], new[simple]
        if rows.shape[0] > max_paths:
            truncated = True
            rows, epos, new = rows[:max_paths], epos[:max_paths], new[:max_paths]
        nodes = np.concatenate([nodes[rows], new[:, None]], axis=1)
        eids = np.concatenate([eids[rows], eid[epos][:, None]], axis=1)
        rtypes = np.concatenate([rtypes[rows], rt[epos][:, None]], axis=1)
        dirs = np.concatenate([dirs[rows], dr[epos][:, None]], axis=1)
        if end is not None:
            hit = nodes[:, -1] == end
            if hit.any():
                found.append((nodes[hit], eids[hit], rtypes[hit], dirs[hit]))
            nodes, eids, rtypes, dirs = nodes[~hit], eids[~hit], rtypes[~hit], dirs[~hit]
    if end is None and nodes.shape[1] == len(hops) + 1 and nodes.shape[0]:
        found.append((nodes, eids, rtypes, dirs))
    return {"found": found, "truncated": truncated}


def paths_to_dicts(store: Store, found: list[tuple], rel_names: dict[int, str], limit: int | None = None) -> list[dict]:
    """Readable paths: node ids and per-hop ``{src, rel, dst, direction}`` (stored edge orientation)."""
    flat = [(n, e, r, d) for block in found for n, e, r, d in zip(*block)]
    if limit is not None:
        flat = flat[:limit]
    want = sorted({int(x) for n, _, _, _ in flat for x in n})
    ids = store.ids_by_idx(want)
    out = []
    for n, e, r, d in flat:
        names = [ids.get(int(x), str(int(x))) for x in n]
        edges = []
        for k in range(len(e)):
            a, b = names[k], names[k + 1]
            src, dst = (a, b) if d[k] > 0 else (b, a)
            edges.append(
                {
                    "src": src,
                    "rel": rel_names.get(int(r[k]), str(int(r[k]))),
                    "dst": dst,
                    "direction": "out" if d[k] > 0 else "in",
                    "eid": int(e[k]),
                }
            )
        out.append({"nodes": names, "edges": edges})
    return out
