"""The spread's per-hop frontier cap (issue 18 target 4): only the top-M frontier nodes by activation
propagate at each hop.  Where the cap is not reached the result is bit-identical to the uncapped one;
where it is, the work is bounded and the strongest paths still win."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.config import FRONTIER_CAP, SearchConfig
from neurongraph.errors import InvalidArgument
from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.spread import spread


def _same(a, b) -> None:
    """Bit-identical results: nodes, activations, depths and every hop's parent record."""
    assert a.nodes.tobytes() == b.nodes.tobytes()
    assert a.act.tobytes() == b.act.tobytes()
    assert a.depth.tobytes() == b.depth.tobytes()
    assert len(a.hops) == len(b.hops)
    for x, y in zip(a.hops, b.hops):
        assert all(u.tobytes() == v.tobytes() for u, v in zip(x, y))


def _random_graph(rng: np.random.Generator, n: int, m: int) -> GraphArrays:
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    return GraphArrays.from_edges(
        n, src, dst, rng.random(m), rng.random(m), rng.integers(-1, 3, m).astype(np.int32), None, np.arange(m)
    )


def test_default_cap_is_configured_and_validated():
    assert SearchConfig().frontier_cap == FRONTIER_CAP > 0
    assert SearchConfig(frontier_cap=0).frontier_cap == 0  # 0: no cap
    for bad in (-1, 1.5, True, "10"):
        with pytest.raises(InvalidArgument, match="frontier_cap"):
            SearchConfig(frontier_cap=bad)
    assert SearchConfig.from_options(frontier_cap=5).frontier_cap == 5


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 60), m=st.integers(0, 300), depth=st.integers(1, 4))
def test_cap_not_reached_is_bit_identical(seed, n, m, depth):
    """A cap at least the largest frontier (here: the node count) changes nothing, bit for bit, in every
    direction and with typed-edge attenuation; so does the default cap on these small graphs."""
    rng = np.random.default_rng(seed)
    g = _random_graph(rng, n, m)
    seeds = rng.integers(0, n, 3)
    acts = rng.random(3) + 0.1
    for direction in ("out", "in", "both"):
        kw = dict(
            max_depth=depth, depth_decay=0.8, min_act=0.001, direction=direction, query_types=[1], alpha=0.5, beta=0.5
        )
        ref = spread(g, seeds, acts, frontier_cap=None, **kw)
        _same(spread(g, seeds, acts, frontier_cap=n, **kw), ref)
        _same(spread(g, seeds, acts, frontier_cap=0, **kw), ref)
        _same(spread(g, seeds, acts, **kw), ref)  # the default cap (1000) is not reached


def _hub_graph(fanout: int = 5000, tail: int = 20) -> tuple[GraphArrays, int, int]:
    """Seed 0 -> hub 1 -> `fanout` leaves, each with an out-edge to its own second-level node; the
    hub's edges to leaves 2..11 are strong (0.9), the rest weak (0.1).  One of the strong leaves leads
    to a node with a strong edge (the answer)."""
    src, dst, w = [0], [1], [1.0]
    leaves = list(range(2, 2 + fanout))
    for k, leaf in enumerate(leaves):
        src.append(1)
        dst.append(leaf)
        w.append(0.9 if k < 10 else 0.1)
    nxt = 2 + fanout
    for k, leaf in enumerate(leaves[: tail + 10]):
        src.append(leaf)
        dst.append(nxt + k)
        w.append(1.0)
    n = nxt + tail + 10
    g = GraphArrays.from_edges(n, src, dst, w, None, None, None, np.arange(len(src)))
    return g, n, nxt


def test_cap_bounds_the_work_on_a_hub():
    """A hub among the frontier: uncapped, hop 3 expands all 5,000 leaves; capped at 64 it expands 64,
    the strongest ones, and every node it does reach keeps the activation of its best path."""
    g, n, nxt = _hub_graph()
    kw = dict(max_depth=3, depth_decay=1.0, min_act=0.0, direction="out")
    full = spread(g, [0], [1.0], frontier_cap=None, **kw)
    capped = spread(g, [0], [1.0], frontier_cap=64, **kw)
    assert full.hops[2][0].size == 30  # all 30 leaves with an out-edge propagate uncapped
    assert capped.hops[2][0].size <= 64
    # hop 3 starts from at most 64 of the 5,000 leaves: the 10 strong ones are among them
    reached = set(capped.nodes.tolist())
    strong = set(range(nxt, nxt + 10))  # second-level nodes behind the strong leaves
    assert strong <= reached
    f, c = full.as_dict(), capped.as_dict()
    for node, a in c.items():
        assert a == f[node]  # no activation is made up; a capped node can only miss paths
    # hop 2 (the leaves themselves) is untouched: the cap applies to what propagates, not to what is reached
    assert all(leaf in c for leaf in range(2, 2 + 5000))


def test_top_results_on_a_hub_heavy_graph_stay_sensible():
    """Random graph with a few hubs: the top-20 by activation with the cap equal the uncapped top-20
    in this setting (the strongest paths run through the strongest frontier nodes)."""
    rng = np.random.default_rng(7)
    n, m = 20_000, 60_000
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    hubs = rng.integers(0, n, 5)
    hub_src = np.repeat(hubs, 2_000)
    hub_dst = rng.integers(0, n, hub_src.shape[0])
    s, d = np.concatenate([src, hub_src, hub_dst]), np.concatenate([dst, hub_dst, hub_src])
    w = rng.random(s.shape[0])
    g = GraphArrays.from_edges(n, s, d, w, None, None, None, np.arange(s.shape[0]))
    seeds = np.concatenate([hubs[:2], rng.integers(0, n, 2)])
    acts = np.array([1.0, 0.95, 0.9, 0.86])
    kw = dict(max_depth=2, depth_decay=0.85, min_act=0.01, direction="both", reverse_weight=0.5)
    full = spread(g, seeds, acts, frontier_cap=None, **kw)
    capped = spread(g, seeds, acts, frontier_cap=500, **kw)
    top = lambda r: [int(x) for x in r.nodes[np.lexsort((r.nodes, -r.act))][:20]]  # noqa: E731
    assert top(capped) == top(full)
    assert capped.hops[1][0].size < full.hops[1][0].size  # and the cap was reached
