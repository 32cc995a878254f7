"""Edge sources for traversal strategies: the typed graph and metadata fields.

``GraphEdges`` reads :class:`GraphArrays` through ``expand`` (no second adjacency
structure).  ``MetadataEdges`` links nodes through metadata values, after seed
002's ``edges=[("habitat", "habitat")]``: spec ``(out, in)`` links node *u* to
every node whose field ``in`` holds a value found in *u*'s field ``out`` (list
values count element-wise); the pseudo-field ``"$id"`` stands for the node's
caller id, so ``("cites", "$id")`` follows citations and ``("$id", "cites")``
finds the citing nodes.  The index (value -> nodes, node -> values) is built
once, as CSR arrays, so a query only gathers.

Both sources return, per expanded node and per spec, the ``k`` unseen neighbours
with the highest ``qsim`` (already-discovered neighbours do not use up ``k``).
A very common value costs per query in proportion to how many nodes share it.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence

import numpy as np

from ...errors import InvalidArgument
from ..arrays import GraphArrays
from .base import Adjacent, EdgeRef

__all__ = ["GraphEdges", "MetadataEdges", "top_k_per_group"]

_EMPTY = np.zeros(0, np.int64)


def top_k_per_group(group: np.ndarray, score: np.ndarray, tie: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` best rows per group, ordered by (group, -score, tie)."""
    if group.size == 0 or k <= 0:
        return _EMPTY
    o = np.lexsort((tie, -score, group))
    g = group[o]
    first = np.ones(g.shape[0], bool)
    first[1:] = g[1:] != g[:-1]
    ar = np.arange(g.shape[0])
    rank = ar - np.maximum.accumulate(np.where(first, ar, 0))
    return o[rank < k]


def _first_pair(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Indices of the first occurrence of each (a, b) pair, in original order."""
    o = np.lexsort((b, a))
    first = np.ones(o.shape[0], bool)
    first[1:] = (a[o][1:] != a[o][:-1]) | (b[o][1:] != b[o][:-1])
    return np.sort(o[first])


def _finish(pos, dst, spec, key, qsim, k, seen, nodes) -> Adjacent:
    """Drop self links and seen nodes, dedupe, cut to top-k per (node, spec)."""
    ok = (dst != nodes[pos]) & ~seen[dst]
    pos, dst, spec, key = pos[ok], dst[ok], spec[ok], key[ok]
    i = _first_pair(pos * (int(spec.max(initial=0)) + 1) + spec, dst)
    pos, dst, spec, key = pos[i], dst[i], spec[i], key[i]
    grp = pos * (int(spec.max(initial=0)) + 1) + spec
    sel = top_k_per_group(grp, qsim[dst], dst, k)
    return Adjacent(pos[sel], dst[sel], spec[sel], key[sel])


class GraphEdges:
    """Neighbours along typed graph edges, optionally only some relation types."""

    def __init__(self, graph: GraphArrays, rtypes: Iterable[int] | None = None, direction: str = "out"):
        if direction not in ("out", "in", "both"):
            raise InvalidArgument("direction must be 'out', 'in' or 'both'")
        self.graph = graph
        self.rtypes = None if rtypes is None else np.asarray(sorted(set(rtypes)), np.int32)
        self.direction = direction

    def neighbors(self, nodes, qsim, k, seen) -> Adjacent:
        pos, dst, key = [], [], []
        live = np.flatnonzero(nodes < self.graph.n_nodes)  # expand() renumbers past out-of-range nodes
        for rev in (False, True):
            if (rev and self.direction == "out") or (not rev and self.direction == "in"):
                continue
            e = self.graph.expand(nodes[live], reverse=rev)
            keep = np.isin(e.rtype, self.rtypes) if self.rtypes is not None else slice(None)
            sp = live[e.src_pos]
            cur = nodes[sp]
            far = np.where(e.src == cur, e.dst, e.src) if rev else e.dst  # robust to orientation
            pos.append(sp[keep])
            dst.append(far[keep])
            key.append(e.eid[keep])
        p, d, kk = np.concatenate(pos), np.concatenate(dst), np.concatenate(key)
        return _finish(p, d, np.zeros(p.shape[0], np.int64), kk, qsim, k, seen, nodes)

    def edge_ref(self, src: int, spec: int, key: int) -> EdgeRef:
        return EdgeRef(src, "graph", key)


def _values(v) -> list:
    """Metadata value(s) as hashable keys; lists count element-wise."""
    if v is None:
        return []
    items = list(v) if isinstance(v, (list, tuple, set, frozenset)) else [v]
    return [x if isinstance(x, Hashable) else repr(x) for x in items if x is not None]


def _csr(rows: np.ndarray, cols: np.ndarray, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    o = np.argsort(rows, kind="stable")
    indptr = np.zeros(n_rows + 1, np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return indptr, cols[o]


def _gather(indptr: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of every entry of ``rows`` in a CSR, and the row position of each."""
    valid = (rows >= 0) & (rows < indptr.shape[0] - 1)  # nodes without metadata: no entries
    r = np.where(valid, rows, 0)
    starts = indptr[r]
    counts = np.where(valid, indptr[r + 1] - starts, 0)
    total = int(counts.sum())
    if total == 0:
        return _EMPTY, _EMPTY
    rpos = np.repeat(np.arange(rows.shape[0], dtype=np.int64), counts)
    off = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + off, rpos


class _SpecIndex:
    """One ``(out, in)`` spec: node -> value ids and value id -> nodes, as CSR."""

    def __init__(self, items: Sequence[tuple[int, Mapping]], out_f: str, in_f: str, id_of: dict[int, Hashable], n: int):
        self.label = f"{out_f}->{in_f}"
        self.vocab: dict[Hashable, int] = {}
        self.values: list[Hashable] = []

        def vid(x):
            i = self.vocab.get(x)
            if i is None:
                i = self.vocab[x] = len(self.values)
                self.values.append(x)
            return i

        def pairs(field):
            a, b = [], []
            for idx, md in items:
                vals = ([id_of[idx]] if idx in id_of else []) if field == "$id" else _values(md.get(field))
                for x in vals:
                    a.append(idx)
                    b.append(vid(x))
            return np.asarray(a, np.int64), np.asarray(b, np.int64)

        on, ov = pairs(out_f)
        inn, iv = pairs(in_f)
        self.out_ptr, self.out_val = _csr(on, ov, n)
        self.in_ptr, self.in_node = _csr(iv, inn, len(self.values))

    def nodes_with(self, value) -> np.ndarray:
        i = self.vocab.get(value)
        if i is None:
            return _EMPTY
        return self.in_node[self.in_ptr[i] : self.in_ptr[i + 1]]

    def links(self, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        vpos, npos = _gather(self.out_ptr, nodes)
        vals = self.out_val[vpos]
        tpos, vrow = _gather(self.in_ptr, vals)
        return npos[vrow], self.in_node[tpos], vals[vrow]


class MetadataEdges:
    """Edges implied by shared metadata values (see module docstring)."""

    def __init__(
        self,
        items: Iterable[tuple[int, Mapping]],
        specs: Sequence[tuple[str, str]],
        ids: Mapping[Hashable, int] | None = None,
    ):
        items = [(int(i), md or {}) for i, md in items]
        id_of = {int(v): k for k, v in (ids or {}).items()}
        n = 1 + max([i for i, _ in items] + list(id_of), default=-1)
        if any("$id" in s for s in specs) and ids is None:
            raise InvalidArgument('a "$id" spec needs the ids mapping (caller id -> node index)')
        self.specs = [_SpecIndex(items, o, i, id_of, n) for o, i in specs]

    def nodes_with(self, value, spec: int = 0) -> np.ndarray:
        """Nodes whose ``in`` field holds ``value`` (the inverted index, for callers)."""
        return self.specs[spec].nodes_with(value)

    def neighbors(self, nodes, qsim, k, seen) -> Adjacent:
        pos, dst, spec, key = [], [], [], []
        for s, ix in enumerate(self.specs):
            p, d, v = ix.links(nodes)
            pos.append(p)
            dst.append(d)
            key.append(v)
            spec.append(np.full(p.shape[0], s, np.int64))
        if not pos:
            return Adjacent(_EMPTY, _EMPTY, _EMPTY, _EMPTY)
        cat = np.concatenate
        return _finish(cat(pos), cat(dst), cat(spec), cat(key), qsim, k, seen, nodes)

    def edge_ref(self, src: int, spec: int, key: int) -> EdgeRef:
        ix = self.specs[spec]
        return EdgeRef(src, ix.label, ix.values[key])
