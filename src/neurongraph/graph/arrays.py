"""In-memory graph as CSR arrays, derived from the store and kept in step with it.

Why CSR: every graph channel (spread, beam, PPR, strategies) is a sequence of
"expand this frontier" steps.  With compressed rows that is a handful of numpy
gathers, independent of corpus size.  Why a *delta*: rebuilding CSR on every
``add_edges`` would cost O(E log E) per write; new edges go to a small side
buffer that ``expand`` reads too, and are merged into the base arrays only once
the buffer grows past a fraction of the base (amortised O(1) per edge).

Node indices are the store's integer node keys, so no id remapping is needed;
arrays are sized ``n_nodes = max index + 1`` and holes are inactive nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InvalidArgument

__all__ = ["Expansion", "GraphArrays", "mask_at"]

_MERGE_MIN = 4096  # delta edges tolerated regardless of base size
_MERGE_FRACTION = 0.05  # ... or this fraction of the base


@dataclass(frozen=True)
class Expansion:
    """All live out-edges of a frontier, flattened (one row per edge).

    ``src_pos`` indexes the frontier array that was expanded, so callers can
    carry per-frontier state (activation, path score) along with a gather.
    """

    src_pos: np.ndarray  # int64, position in the frontier
    src: np.ndarray  # int64 node index
    dst: np.ndarray  # int64 node index
    weight: np.ndarray  # float64 effective weight (base + plastic)
    fact: np.ndarray  # float64 factuality
    rtype: np.ndarray  # int32 predicate type id, -1 = untyped
    pol: np.ndarray  # int8 polarity, +1 / -1
    eid: np.ndarray  # int64 store edge key

    def __len__(self) -> int:
        return int(self.dst.shape[0])


def mask_at(mask: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``mask[nodes]``, False for nodes outside the mask (a node-visibility lookup that never raises)."""
    nodes = np.asarray(nodes, np.int64)
    if mask.shape[0] == 0:
        return np.zeros(nodes.shape[0], bool)
    return (nodes >= 0) & (nodes < mask.shape[0]) & mask[np.clip(nodes, 0, mask.shape[0] - 1)]


def _empty_expansion() -> Expansion:
    z64 = np.zeros(0, np.int64)
    return Expansion(z64, z64, z64, np.zeros(0), np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int8), z64)


class _Csr:
    """One immutable-shape CSR block (edge attributes may be edited in place)."""

    def __init__(self, n_nodes: int, src, dst, weight, fact, rtype, pol, eid):
        src = np.asarray(src, np.int64)
        order = np.argsort(src, kind="stable")
        self.indptr = np.zeros(n_nodes + 1, np.int64)
        if src.size:
            np.cumsum(np.bincount(src, minlength=n_nodes), out=self.indptr[1:])
        self.src = src[order]
        self.dst = np.asarray(dst, np.int64)[order]
        self.weight = np.asarray(weight, np.float64)[order]
        self.fact = np.asarray(fact, np.float64)[order]
        self.rtype = np.asarray(rtype, np.int32)[order]
        self.pol = np.asarray(pol, np.int8)[order]
        self.eid = np.asarray(eid, np.int64)[order]
        self.alive = np.ones(self.dst.shape[0], bool)

    @property
    def n_edges(self) -> int:
        return int(self.dst.shape[0])

    def gather(self, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return _gather(self.indptr, frontier)


def _gather(indptr: np.ndarray, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Positions of every entry in the rows ``frontier`` of a CSR ``indptr``, and the frontier
    position of each.  Entries outside the row range (a node with no edges yet) simply have
    no entries; positions keep referring to the caller's frontier array.  (A frontier is a few
    dozen nodes on a search: this runs as few numpy calls as it can, each costs more than its work.)"""
    n = indptr.shape[0] - 1
    if frontier.shape[0] and frontier.min() >= 0 and frontier.max() < n:  # the common case: every row exists
        starts = indptr[frontier]
        counts = indptr[frontier + 1] - starts
    else:
        valid = (frontier >= 0) & (frontier < n)
        safe = np.where(valid, frontier, 0)
        starts = indptr[safe]
        counts = np.where(valid, indptr[safe + 1] - starts, 0)
    ends = np.cumsum(counts)
    total = int(ends[-1]) if ends.shape[0] else 0
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    src_pos = np.repeat(np.arange(frontier.shape[0], dtype=np.int64), counts)
    # position of each entry = start of its row + offset inside the row (= entry number - entries before the row)
    pos = (starts - (ends - counts))[src_pos] + np.arange(total, dtype=np.int64)
    return pos, src_pos


class _Rev:
    """Reverse adjacency of one block: the block's edge *positions* grouped by destination.

    It holds no edge attributes, so in-place edits of the block (learned weights, removals)
    are never stale; it is rebuilt only when the block itself is replaced."""

    def __init__(self, blk: _Csr):
        dst = blk.dst
        n = int(dst.max()) + 1 if dst.size else 0
        self.pos = np.argsort(dst, kind="stable")
        self.indptr = np.zeros(n + 1, np.int64)
        if dst.size:
            np.cumsum(np.bincount(dst, minlength=n), out=self.indptr[1:])

    def gather(self, frontier: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        p, src_pos = _gather(self.indptr, frontier)
        return self.pos[p], src_pos


@dataclass(frozen=True)
class _Steps:
    """The walk steps one block gives a frontier in one direction: edge positions in ``blk``, the
    frontier position of each, the column holding the node each step reaches."""

    src_pos: np.ndarray
    far: np.ndarray  # blk.dst forward, blk.src backward
    blk: _Csr
    pos: np.ndarray
    reverse: bool


def _expansion(frontier: np.ndarray, parts: list[_Steps], reverse_weight: float) -> Expansion:
    """The steps of ``parts`` flattened in order into one :class:`Expansion` (backward steps' weights
    × ``reverse_weight``).  Parts of one block are gathered with one take per column."""
    if not parts:
        return _empty_expansion()
    src_pos = parts[0].src_pos if len(parts) == 1 else np.concatenate([p.src_pos for p in parts])
    src = frontier[src_pos]  # the near end of every step is its frontier node
    dst = parts[0].far[parts[0].pos] if len(parts) == 1 else np.concatenate([p.far[p.pos] for p in parts])
    blk = parts[0].blk
    if all(p.blk is blk for p in parts):
        pos = parts[0].pos if len(parts) == 1 else np.concatenate([p.pos for p in parts])
        weight, fact, rtype, pol, eid = blk.weight[pos], blk.fact[pos], blk.rtype[pos], blk.pol[pos], blk.eid[pos]
    else:
        cat = np.concatenate
        weight = cat([p.blk.weight[p.pos] for p in parts])
        fact = cat([p.blk.fact[p.pos] for p in parts])
        rtype = cat([p.blk.rtype[p.pos] for p in parts])
        pol = cat([p.blk.pol[p.pos] for p in parts])
        eid = cat([p.blk.eid[p.pos] for p in parts])
    if reverse_weight != 1.0:
        at = 0
        for p in parts:
            if p.reverse:
                weight[at : at + p.pos.shape[0]] *= reverse_weight
            at += p.pos.shape[0]
    return Expansion(src_pos, src, dst, weight, fact, rtype, pol, eid)


class GraphArrays:
    """Typed, weighted directed graph over integer node indices.

    Symmetric relations are materialised by the caller as two directed edges;
    ``reverse=True`` expansions walk edges backwards (dst -> src) for queries
    that go "both ways along an edge".
    """

    def __init__(self, n_nodes: int = 0):
        self.n_nodes = int(n_nodes)
        self._base = _Csr(self.n_nodes, [], [], [], [], [], [], [])
        self._base_rev: _Rev | None = None  # reverse index of the base block (until compaction)
        self._delta_rev: _Rev | None = None
        self._delta: dict[str, list] = {k: [] for k in ("src", "dst", "weight", "fact", "rtype", "pol", "eid")}
        self._delta_csr: _Csr | None = None
        self._delta_pos: dict[int, int] = {}  # store edge id -> delta position (the delta is small)
        self._base_order: np.ndarray | None = None  # argsort of base eids, for vectorised lookups
        self._base_sorted: np.ndarray | None = None
        self._base_max: int | None = None  # largest base edge key (cached; the base block is replaced, never grown)
        self._n_live: int | None = None  # live edge count, cached until the next change (read on every search)
        self._base_alive_all: bool | None = None  # no removed edge in the base block (cached like _n_live)
        self.version = 0  # bumped on every change; lets callers cache derived matrices
        self._scratch: list[tuple[np.ndarray, np.ndarray]] = []  # per-node buffers for walks (node_buffers)

    # ------------------------------------------------------------------ build
    @classmethod
    def from_edges(cls, n_nodes: int, src, dst, weight, fact=None, rtype=None, pol=None, eid=None) -> GraphArrays:
        g = cls(n_nodes)
        m = len(src)
        if m and (min(np.min(src), np.min(dst)) < 0 or max(np.max(src), np.max(dst)) >= n_nodes):
            raise ValueError(f"edge endpoints must lie in 0..{n_nodes - 1}")
        fact = np.ones(m) if fact is None else fact
        rtype = np.full(m, -1, np.int32) if rtype is None else rtype
        pol = np.ones(m, np.int8) if pol is None else pol
        eid = np.arange(m, dtype=np.int64) if eid is None else eid
        g._base = _Csr(g.n_nodes, src, dst, weight, fact, rtype, pol, eid)
        g._base_order = None
        g._base_max = None
        g._n_live = None
        return g

    def ensure_nodes(self, n_nodes: int) -> None:
        """Grow the node range (new nodes have no edges yet)."""
        if n_nodes <= self.n_nodes:
            return
        extra = n_nodes - self.n_nodes
        last = self._base.indptr[-1]
        self._base.indptr = np.concatenate([self._base.indptr, np.full(extra, last, np.int64)])
        self.n_nodes = n_nodes
        self._delta_csr = None
        self._delta_rev = None
        self.version += 1

    # ------------------------------------------------------------ mutation
    def _base_positions(self, eids: np.ndarray) -> np.ndarray:
        """Base-block position of each store edge id, -1 where absent (vectorised)."""
        b = self._base
        if b.n_edges == 0 or eids.size == 0:
            return np.full(eids.shape[0], -1, np.int64)
        if self._base_order is None or self._base_sorted is None:
            self._base_order = np.argsort(b.eid, kind="stable")
            self._base_sorted = b.eid[self._base_order]
        order, keys = self._base_order, self._base_sorted
        i = np.searchsorted(keys, eids)
        i = np.minimum(i, keys.shape[0] - 1)
        found = keys[i] == eids
        pos = np.where(found, order[i], -1)
        pos[pos >= 0] = np.where(b.alive[pos[pos >= 0]], pos[pos >= 0], -1)  # a removed edge's key is gone
        return pos

    def upsert_edges(self, src, dst, weight, fact, rtype, pol, eid) -> None:
        """Insert new edges or update the attributes of known ones (keyed by store edge id).

        Vectorised for bulk loads: store edge keys only grow, so an id above every base key is looked up
        in the (small) delta only, and new edges are appended to it column by column."""
        eid = np.asarray(eid, np.int64)
        if eid.size == 0:
            return
        src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
        weight, fact = np.asarray(weight, np.float64), np.asarray(fact, np.float64)
        rtype, pol = np.asarray(rtype, np.int32), np.asarray(pol, np.int8)
        self.ensure_nodes(int(max(src.max(), dst.max())) + 1)
        b = self._base
        old = eid <= self._base_max_eid()  # fresh keys are above every base key: no base lookup for them
        pos = np.full(eid.shape[0], -1, np.int64)
        if old.any():
            pos[old] = self._base_positions(eid[old])
        inb = pos >= 0
        if inb.any():
            p = pos[inb]
            b.weight[p], b.fact[p], b.rtype[p], b.pol[p], b.alive[p] = (
                weight[inb],
                fact[inb],
                rtype[inb],
                pol[inb],
                True,
            )
        rest = np.flatnonzero(~inb)
        d, dpos = self._delta, self._delta_pos
        keys = eid[rest].tolist()
        seen = [k in dpos for k in keys]
        if any(seen):  # an edge already in the delta: update it in place
            for k, e, s in zip(rest.tolist(), keys, seen):
                if s:
                    dp = dpos[e]
                    d["weight"][dp], d["fact"][dp] = float(weight[k]), float(fact[k])
                    d["rtype"][dp], d["pol"][dp] = int(rtype[k]), int(pol[k])
            rest = rest[~np.asarray(seen)]
        if rest.size:  # new edges: append (a key repeated inside this call keeps its last attributes)
            new_keys = eid[rest]
            _, last = np.unique(new_keys[::-1], return_index=True)
            rest = rest[np.sort(rest.size - 1 - last)]
            start = len(d["eid"])
            dpos.update(zip(eid[rest].tolist(), range(start, start + rest.size)))
            for name, col in (
                ("src", src),
                ("dst", dst),
                ("eid", eid),
                ("weight", weight),
                ("fact", fact),
                ("rtype", rtype),
                ("pol", pol),
            ):
                d[name].extend(col[rest].tolist())
        self._changed()
        if len(d["eid"]) > max(_MERGE_MIN, _MERGE_FRACTION * self._base.n_edges):
            self.compact()

    def _base_max_eid(self) -> int:
        """Largest store edge key in the base block (-1 when empty)."""
        b = self._base
        if self._base_max is None:
            self._base_max = int(b.eid.max()) if b.n_edges else -1
        return self._base_max

    def set_weights(self, eids, weights) -> None:
        """Update effective weights of known edges in place (learning, decay)."""
        eids = np.asarray(eids, np.int64)
        weights = np.asarray(weights, np.float64)
        pos = self._base_positions(eids)
        inb = pos >= 0
        self._base.weight[pos[inb]] = weights[inb]
        for k in np.flatnonzero(~inb):
            dp = self._delta_pos.get(int(eids[k]))
            if dp is not None:
                self._delta["weight"][dp] = float(weights[k])
        self._changed()

    def remove_edges(self, eids) -> None:
        eids = np.asarray(eids, np.int64)
        pos = self._base_positions(eids)
        self._base.alive[pos[pos >= 0]] = False
        for k in np.flatnonzero(pos < 0):
            dp = self._delta_pos.pop(int(eids[k]), None)
            if dp is not None:
                self._delta["weight"][dp] = 0.0
                self._delta["eid"][dp] = -1  # tombstone; dropped on compaction
        self._changed()

    def _changed(self) -> None:
        self._delta_csr = None
        self._delta_rev = None
        self._n_live = None
        self._base_alive_all = None
        self.version += 1

    def compact(self) -> None:
        """Merge the delta into the base CSR and drop removed edges."""
        b = self._base
        keep = b.alive
        d = self._delta
        d_eid = np.asarray(d["eid"], np.int64)
        d_keep = d_eid >= 0

        def cat(a, key, dt):
            return np.concatenate([a[keep], np.asarray(d[key], dt)[d_keep]])

        self._base = _Csr(
            self.n_nodes,
            cat(b.src, "src", np.int64),
            cat(b.dst, "dst", np.int64),
            cat(b.weight, "weight", np.float64),
            cat(b.fact, "fact", np.float64),
            cat(b.rtype, "rtype", np.int32),
            cat(b.pol, "pol", np.int8),
            cat(b.eid, "eid", np.int64),
        )
        self._delta = {k: [] for k in self._delta}
        self._delta_pos = {}
        self._base_order = None
        self._base_max = None
        self._base_rev = None
        self._changed()

    def node_buffers(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Per-node work buffers of at least ``n`` entries, all zero: (float64, int32).  A walk takes them
        instead of allocating node-sized arrays per query (or dictionaries per visited node), and must
        hand them back with :meth:`return_buffers` **zeroed again** (it zeroes only what it wrote).  Each
        taker gets its own pair (a concurrent or nested walk gets a fresh one)."""
        pool = self._scratch
        try:
            a, d = pool.pop()
        except IndexError:
            a, d = np.zeros(0), np.zeros(0, np.int32)
        if a.shape[0] < n:
            size = max(n, self.n_nodes)
            a, d = np.zeros(size), np.zeros(size, np.int32)
        return a, d

    def return_buffers(self, bufs: tuple[np.ndarray, np.ndarray]) -> None:
        if len(self._scratch) < 2:
            self._scratch.append(bufs)

    # ------------------------------------------------------------- reading
    @property
    def n_edges(self) -> int:
        """Live edges; O(1) between changes (counting is O(E): ~20 ms at 10M edges with a full delta)."""
        if self._n_live is None:
            d = self._delta_block()
            self._n_live = int(np.count_nonzero(self._base.alive)) + (
                int(np.count_nonzero(d.alive)) if d is not None else 0
            )
        return self._n_live

    def _delta_block(self) -> _Csr | None:
        if not self._delta["eid"]:
            return None
        if self._delta_csr is None:
            d = self._delta
            self._delta_csr = _Csr(
                self.n_nodes, d["src"], d["dst"], d["weight"], d["fact"], d["rtype"], d["pol"], d["eid"]
            )
            self._delta_csr.alive = self._delta_csr.eid >= 0
        return self._delta_csr

    def _reverse_blocks(self) -> list[tuple[_Csr, _Rev]]:
        out = []
        if self._base.n_edges:
            if self._base_rev is None:
                self._base_rev = _Rev(self._base)
            out.append((self._base, self._base_rev))
        d = self._delta_block()
        if d is not None:
            if self._delta_rev is None:
                self._delta_rev = _Rev(d)
            out.append((d, self._delta_rev))
        return out

    def expand(
        self, frontier, reverse: bool = False, direction: str | None = None, reverse_weight: float = 1.0
    ) -> Expansion:
        """One walk step from the frontier: every live edge leaving it (or, with
        ``reverse``, entering it).  ``src`` is always the frontier node and ``dst``
        the node the step reaches; for a reverse step the stored edge points
        ``dst -> src`` (its weight, type and id are those of the stored edge).
        ``direction`` ("out", "in", "both") overrides ``reverse``; "both" walks
        every edge either way, which is how queries follow edges in both directions
        (the forward steps first, then the backward ones);
        ``reverse_weight`` scales the weight of the backward steps of a "both" walk."""
        frontier = np.asarray(frontier, np.int64)
        if frontier.size == 0:
            return _empty_expansion()
        if direction is not None:
            if direction == "both":
                parts = self._steps(frontier, False) + self._steps(frontier, True)
                return _expansion(frontier, parts, reverse_weight)
            if direction not in ("out", "in"):
                raise InvalidArgument(f"direction must be 'out', 'in' or 'both', got {direction!r}")
            reverse = direction == "in"
        return _expansion(frontier, self._steps(frontier, reverse), 1.0)

    def _steps(self, frontier: np.ndarray, reverse: bool) -> list[_Steps]:
        """The live edges of ``frontier`` in each block, one way (block order: base, then delta)."""
        if reverse:  # a backward step: the frontier is the stored edge's dst, the step reaches its src
            sources = [(blk, rev.gather, blk.src) for blk, rev in self._reverse_blocks()]
        else:
            sources = [
                (blk, blk.gather, blk.dst)
                for blk in (self._base, self._delta_block())
                if blk is not None and blk.n_edges
            ]
        parts = []
        for blk, gather, far in sources:
            pos, src_pos = gather(frontier)
            if pos.size and not (blk is self._base and self._base_all_alive()):
                ok = blk.alive[pos]
                if not ok.all():
                    pos, src_pos = pos[ok], src_pos[ok]
            if pos.size:
                parts.append(_Steps(src_pos, far, blk, pos, reverse))
        return parts

    def _base_all_alive(self) -> bool:
        """No removed edge in the base block (cached until the next change)."""
        if self._base_alive_all is None:
            self._base_alive_all = bool(self._base.alive.all())
        return self._base_alive_all

    def all_edges(self) -> Expansion:
        """Every live edge (for whole-graph algorithms such as PageRank)."""
        parts = []
        for blk in (self._base, self._delta_block()):
            if blk is None or blk.n_edges == 0:
                continue
            idx = np.flatnonzero(blk.alive)
            parts.append((blk, idx))
        if not parts:
            return _empty_expansion()
        cat = np.concatenate
        src = cat([b.src[i] for b, i in parts])
        return Expansion(
            np.arange(src.shape[0], dtype=np.int64),
            src,
            cat([b.dst[i] for b, i in parts]),
            cat([b.weight[i] for b, i in parts]),
            cat([b.fact[i] for b, i in parts]),
            cat([b.rtype[i] for b, i in parts]),
            cat([b.pol[i] for b, i in parts]),
            cat([b.eid[i] for b, i in parts]),
        )

    def edge_attrs(self, eids) -> tuple[np.ndarray, np.ndarray]:
        """(effective weight, type id) of store edge ids; NaN / -1 where unknown.  For explanations."""
        eids = np.asarray(eids, np.int64)
        w = np.full(eids.shape[0], np.nan)
        t = np.full(eids.shape[0], -1, np.int32)
        pos = self._base_positions(eids)
        ok = pos >= 0
        w[ok], t[ok] = self._base.weight[pos[ok]], self._base.rtype[pos[ok]]
        for k in np.flatnonzero(~ok):
            dp = self._delta_pos.get(int(eids[k]))
            if dp is not None:
                w[k], t[k] = self._delta["weight"][dp], self._delta["rtype"][dp]
        return w, t
