"""The search-speed rewrite of ``GraphArrays.expand`` and ``spread`` (issue 18, target 0) computes what the
previous code computed, bit for bit and in the same order (ties between equal contributions pick the same
parent edge, so explanations are unchanged).  The previous code is kept here as the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.graph.arrays import Expansion, GraphArrays, mask_at
from neurongraph.graph.spread import edge_multipliers, spread

# ---------------------------------------------------------------- the previous code (commit f45b9ff)


def _ref_gather(indptr, frontier):
    n = indptr.shape[0] - 1
    valid = (frontier >= 0) & (frontier < n)
    safe = np.where(valid, frontier, 0)
    starts = indptr[safe]
    counts = np.where(valid, indptr[safe + 1] - starts, 0)
    total = int(counts.sum())
    if total == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    src_pos = np.repeat(np.arange(frontier.shape[0], dtype=np.int64), counts)
    offsets = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + offsets, src_pos


def _empty():
    z = np.zeros(0, np.int64)
    return Expansion(z, z, z, np.zeros(0), np.zeros(0), np.zeros(0, np.int32), np.zeros(0, np.int8), z)


def _ref_expand(g: GraphArrays, frontier, reverse=False, direction=None, reverse_weight=1.0) -> Expansion:
    frontier = np.asarray(frontier, np.int64)
    if frontier.size == 0:
        return _empty()
    if direction is not None:
        if direction == "both":
            a, b = _ref_expand(g, frontier), _ref_expand(g, frontier, reverse=True)
            if reverse_weight != 1.0:
                b = Expansion(b.src_pos, b.src, b.dst, b.weight * reverse_weight, b.fact, b.rtype, b.pol, b.eid)
            return Expansion(*(np.concatenate([getattr(a, f), getattr(b, f)]) for f in Expansion.__dataclass_fields__))
        reverse = direction == "in"
    if reverse:
        sources = []
        for blk, rev in g._reverse_blocks():
            sources.append((blk, lambda f, rev=rev: _rev_gather(rev, f), blk.dst, blk.src))
    else:
        sources = [
            (blk, lambda f, blk=blk: _ref_gather(blk.indptr, f), blk.src, blk.dst)
            for blk in (g._base, g._delta_block())
            if blk is not None and blk.n_edges
        ]
    parts = []
    for blk, gather, near, far in sources:
        pos, src_pos = gather(frontier)
        ok = blk.alive[pos]
        if not ok.all():
            pos, src_pos = pos[ok], src_pos[ok]
        if pos.size:
            parts.append((src_pos, near[pos], far[pos], blk, pos))
    if not parts:
        return _empty()
    cat = np.concatenate
    return Expansion(
        cat([p[0] for p in parts]),
        cat([p[1] for p in parts]),
        cat([p[2] for p in parts]),
        cat([p[3].weight[p[4]] for p in parts]),
        cat([p[3].fact[p[4]] for p in parts]),
        cat([p[3].rtype[p[4]] for p in parts]),
        cat([p[3].pol[p[4]] for p in parts]),
        cat([p[3].eid[p[4]] for p in parts]),
    )


def _rev_gather(rev, frontier):
    p, src_pos = _ref_gather(rev.indptr, frontier)
    return rev.pos[p], src_pos


def _ref_spread(
    graph, seeds, seed_acts, max_depth, depth_decay, min_act, query_types, alpha, beta, direction, reverse_weight,
    visible, frontier_cap,
):  # fmt: skip
    seeds = np.asarray(seeds, np.int64)
    seed_acts = np.asarray(seed_acts, np.float64)
    act: dict[int, float] = {}
    depth: dict[int, int] = {}
    for s, a in zip(seeds.tolist(), seed_acts.tolist()):
        if a > act.get(s, 0.0):
            act[s], depth[s] = a, 0
    frontier = np.fromiter(act.keys(), np.int64, len(act))
    front_act = np.fromiter(act.values(), np.float64, len(act))
    hops = []
    for hop in range(1, max_depth + 1):
        if frontier.size == 0:
            break
        if frontier_cap and frontier.size > frontier_cap:
            top = np.lexsort((frontier, -front_act))[:frontier_cap]
            top.sort()
            frontier, front_act = frontier[top], front_act[top]
        exp = _ref_expand(graph, frontier, direction=direction, reverse_weight=reverse_weight)
        if len(exp) == 0:
            break
        contrib = front_act[exp.src_pos] * (exp.weight * exp.fact) * depth_decay
        m = edge_multipliers(exp, query_types, alpha, beta)
        if m is not None:
            contrib = contrib * m
        keep = contrib >= min_act
        if visible is not None:
            keep &= mask_at(visible, exp.dst)
        if not keep.all():
            exp_idx = np.flatnonzero(keep)
            contrib = contrib[exp_idx]
        else:
            exp_idx = np.arange(contrib.shape[0])
        if contrib.size == 0:
            break
        dst = exp.dst[exp_idx]
        order = np.lexsort((-contrib, dst))
        dst_s, c_s, e_s = dst[order], contrib[order], exp_idx[order]
        first = np.ones(dst_s.shape[0], bool)
        first[1:] = dst_s[1:] != dst_s[:-1]
        cand, cval, cedge = dst_s[first], c_s[first], e_s[first]
        current = np.fromiter((act.get(int(n), 0.0) for n in cand), np.float64, cand.shape[0])
        better = cval > current
        if not better.any():
            break
        upd, uval, uedge = cand[better], cval[better], cedge[better]
        for n, v in zip(upd.tolist(), uval.tolist()):
            act[n] = v
            depth[n] = hop
        hops.append((upd, exp.src[uedge], exp.eid[uedge], exp.weight[uedge], exp.rtype[uedge], exp.pol[uedge]))
        frontier, front_act = upd, uval
    nodes = np.fromiter(act.keys(), np.int64, len(act))
    return (
        nodes,
        np.fromiter(act.values(), np.float64, len(act)),
        np.fromiter((depth[int(n)] for n in nodes), np.int32, len(act)),
        hops,
    )


def _ref_path(nodes, depth_arr, hops, node):
    where = np.flatnonzero(nodes == node)
    if where.size == 0:
        return []
    d = int(depth_arr[where[0]])
    out = []
    cur = int(node)
    while d > 0:
        found = None
        for h in range(d, 0, -1):
            upd, srcs, eids, ws, ts = hops[h - 1][:5]
            k = np.flatnonzero(upd == cur)
            if k.size:
                j = k[-1]
                found = (h, int(srcs[j]), int(eids[j]), float(ws[j]), int(ts[j]))
                break
        if found is None:
            break
        h, src, eid, w, t = found
        out.append((src, eid, cur, w, t))
        cur, d = src, h - 1
    out.reverse()
    return out


# ---------------------------------------------------------------- random graphs with a delta and removals

W = st.sampled_from([0.25, 0.5, 0.5, 1.0, 0.8])  # repeated values: equal contributions, ties to break


@st.composite
def graphs(draw):
    n = draw(st.integers(1, 25))
    node = st.integers(0, n - 1)
    m = draw(st.integers(0, 60))
    edges = draw(
        st.lists(st.tuples(node, node, W, st.sampled_from([1.0, 0.5]), st.integers(-1, 2)), min_size=m, max_size=m)
    )
    pol = draw(st.lists(st.sampled_from([1, -1]), min_size=m, max_size=m))
    g = GraphArrays.from_edges(
        n,
        [e[0] for e in edges],
        [e[1] for e in edges],
        [e[2] for e in edges],
        [e[3] for e in edges],
        np.array([e[4] for e in edges], np.int32),
        np.array(pol, np.int8),
        np.arange(m, dtype=np.int64) * 2,
    )
    grow = draw(st.integers(0, 3))  # nodes added after the base was built
    late = draw(st.lists(st.tuples(st.integers(0, n + grow - 1), st.integers(0, n + grow - 1), W), max_size=12))
    if late:
        k = len(late)
        g.upsert_edges(
            [e[0] for e in late],
            [e[1] for e in late],
            [e[2] for e in late],
            np.ones(k),
            np.full(k, -1, np.int32),
            np.ones(k, np.int8),
            np.arange(k, dtype=np.int64) * 2 + 2 * m + 1,  # fresh keys: the delta block
        )
    keys = list(range(0, 2 * m, 2)) + [2 * m + 1 + 2 * i for i in range(len(late))]
    if keys:
        gone = draw(st.lists(st.sampled_from(keys), max_size=6))
        if gone:
            g.remove_edges(gone)
    return g


def _same(a, b):
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@settings(max_examples=300, deadline=None)
@given(g=graphs(), data=st.data())
def test_expand_equals_the_previous_code(g, data):
    n = g.n_nodes
    frontier = np.array(data.draw(st.lists(st.integers(-2, n + 2), max_size=8)), np.int64)
    direction = data.draw(st.sampled_from([None, "out", "in", "both"]))
    reverse = data.draw(st.booleans())
    rw = data.draw(st.sampled_from([1.0, 0.5]))
    got = g.expand(frontier, reverse=reverse, direction=direction, reverse_weight=rw)
    want = _ref_expand(g, frontier, reverse=reverse, direction=direction, reverse_weight=rw)
    for f in Expansion.__dataclass_fields__:
        assert _same(getattr(got, f), getattr(want, f)), f


@settings(max_examples=300, deadline=None)
@given(g=graphs(), data=st.data())
def test_spread_equals_the_previous_code(g, data):
    n = g.n_nodes
    seeds = data.draw(st.lists(st.integers(0, n + 1), min_size=0, max_size=5))
    acts = data.draw(st.lists(st.sampled_from([1.0, 0.5, 0.0, 0.7]), min_size=len(seeds), max_size=len(seeds)))
    kw = dict(
        max_depth=data.draw(st.integers(0, 3)),
        depth_decay=data.draw(st.sampled_from([0.85, 1.0, 0.5])),
        min_act=data.draw(st.sampled_from([0.0, 0.01, 0.3])),
        query_types=data.draw(st.sampled_from([(), (0,), (1, 2)])),
        alpha=0.5,
        beta=0.25,
        direction=data.draw(st.sampled_from(["out", "in", "both"])),
        reverse_weight=data.draw(st.sampled_from([1.0, 0.5])),
        visible=data.draw(st.one_of(st.none(), st.lists(st.booleans(), min_size=n, max_size=n).map(np.array))),
        frontier_cap=data.draw(st.sampled_from([None, 0, 1, 2, 1000])),
    )
    for _ in range(2):  # the second run reuses the graph's buffers: they came back zeroed
        r = spread(g, seeds, acts, **kw)
        nodes, act, depth, hops = _ref_spread(g, seeds, acts, **kw)
        assert _same(r.nodes, nodes) and _same(r.act, act) and _same(r.depth, depth)
        assert len(r.hops) == len(hops)
        for h1, h2 in zip(r.hops, hops):
            assert all(_same(a, b) for a, b in zip(h1, h2))
        for node in [*nodes.tolist(), n + 5]:
            got, want = r.path(node), _ref_path(nodes, depth, hops, node)
            assert got == want and [tuple(map(type, x)) for x in got] == [tuple(map(type, x)) for x in want]


def test_buffers_come_back_zeroed_after_an_error(monkeypatch):
    g = GraphArrays.from_edges(3, [0, 1], [1, 2], [1.0, 1.0])
    expand, calls = g.expand, []

    def failing(*a, **k):  # the second hop fails, after the first one wrote activations
        calls.append(1)
        if len(calls) == 2:
            raise RuntimeError("boom")
        return expand(*a, **k)

    monkeypatch.setattr(g, "expand", failing)
    with pytest.raises(RuntimeError):
        spread(g, [0], [1.0], max_depth=2, depth_decay=1.0, min_act=0.0)
    a, d = g.node_buffers(3)
    assert not a.any() and not d.any()
    g.return_buffers((a, d))
    monkeypatch.undo()
    assert spread(g, [0], [1.0], max_depth=2, depth_decay=1.0, min_act=0.0).as_dict() == {0: 1.0, 1: 1.0, 2: 1.0}


def test_negative_seeds_are_refused():
    g = GraphArrays.from_edges(2, [0], [1], [1.0])
    with pytest.raises(ValueError, match="seeds"):
        spread(g, [-1], [1.0])
