"""GraphArrays: base + delta CSR and the position-based reverse index agree with a plain model under mutation."""

from __future__ import annotations

import time

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.graph.arrays import GraphArrays

op = st.one_of(
    st.tuples(st.just("add"), st.integers(0, 9), st.integers(0, 9), st.floats(0, 2, allow_nan=False)),
    st.tuples(st.just("weight"), st.integers(0, 60), st.floats(0, 2, allow_nan=False)),
    st.tuples(st.just("remove"), st.integers(0, 60)),
    st.tuples(
        st.just("compact"),
    ),
)


def walk(g, node, direction):
    e = g.expand([node], direction=direction)
    return sorted(zip(e.src.tolist(), e.dst.tolist(), e.eid.tolist(), e.weight.tolist()))


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 9), st.floats(0, 2, allow_nan=False)), max_size=20),
    st.lists(op, max_size=30),
)
def test_expansions_match_a_plain_model(initial, ops):
    model = {i: (s, d, w) for i, (s, d, w) in enumerate(initial)}  # eid -> (src, dst, weight)
    g = GraphArrays.from_edges(
        10, [e[0] for e in initial], [e[1] for e in initial], [e[2] for e in initial], eid=np.arange(len(initial))
    )
    next_eid = len(initial)
    for o in ops:
        if o[0] == "add":
            g.upsert_edges([o[1]], [o[2]], [o[3]], [1.0], [-1], [1], [next_eid])
            model[next_eid] = (o[1], o[2], o[3])
            next_eid += 1
        elif o[0] == "weight" and o[1] in model:
            g.set_weights([o[1]], [o[2]])
            s, d, _ = model[o[1]]
            model[o[1]] = (s, d, o[2])
        elif o[0] == "remove" and o[1] in model:
            g.remove_edges([o[1]])
            del model[o[1]]
        elif o[0] == "compact":
            g.compact()
        for n in range(10):
            out = sorted((s, d, e, w) for e, (s, d, w) in model.items() if s == n)
            inn = sorted((d, s, e, w) for e, (s, d, w) in model.items() if d == n)
            assert walk(g, n, "out") == out
            assert walk(g, n, "in") == inn
            assert walk(g, n, "both") == sorted(out + inn)


def test_a_write_does_not_rebuild_the_reverse_index():
    """Backward walks after a small write cost what the write touched, not O(E) (was a full rebuild)."""
    rng = np.random.default_rng(0)
    n, m = 200_000, 1_000_000
    g = GraphArrays.from_edges(n, rng.integers(0, n, m), rng.integers(0, n, m), rng.random(m))
    g.expand([1], reverse=True)  # build once
    g.upsert_edges([5], [7], [1.0], [1.0], [-1], [1], [m + 1])
    g.set_weights([3], [0.5])
    t = time.perf_counter()
    e = g.expand([7], reverse=True)
    assert time.perf_counter() - t < 0.02
    assert 5 in e.dst.tolist()
