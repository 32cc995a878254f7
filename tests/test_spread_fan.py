"""spread()'s fan-out damping: a hub reached by the graph passes on (fan_ref / edges)^fan_power of its
activation from the second hop on; seeds' own edges and small fan-outs are untouched."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.channels import Spread
from neurongraph.config import SearchConfig
from neurongraph.errors import InvalidArgument
from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.spread import spread


def hub_graph(fan: int) -> GraphArrays:
    """0 (a seed) -> 1 (a hub file) -> 2..fan+1 (changes touching it); 0 -> fan+2 -> fan+3 (a small file)."""
    src = [0] + [1] * fan + [0, fan + 2]
    dst = [1] + list(range(2, fan + 2)) + [fan + 2, fan + 3]
    return GraphArrays.from_edges(fan + 4, src, dst, [1.0] * len(src))


def test_a_hub_passes_on_a_damped_share():
    g = hub_graph(40)
    r = spread(g, [0], [1.0], max_depth=2, depth_decay=0.5, min_act=0.0, fan_ref=10.0, fan_power=0.5).as_dict()
    assert r[1] == 0.5  # the seed's own edge: never damped
    assert r[2] == pytest.approx(0.25 * math.sqrt(10 / 40))  # through the hub: x (10/40)^0.5
    assert r[43] == 0.25  # through a node of one edge: untouched


def test_off_by_default_and_at_zero():
    g = hub_graph(40)
    plain = spread(g, [0], [1.0], max_depth=2, depth_decay=0.5, min_act=0.0).as_dict()
    assert plain[2] == 0.25
    assert spread(g, [0], [1.0], max_depth=2, depth_decay=0.5, min_act=0.0, fan_ref=0.0).as_dict() == plain


def test_the_damped_path_still_explains_itself():
    g = hub_graph(40)
    r = spread(g, [0], [1.0], max_depth=2, depth_decay=0.5, min_act=0.0, fan_ref=10.0)
    assert [(s, d) for s, _, d, _, _ in r.path(2)] == [(0, 1), (1, 2)]


edge_st = st.tuples(st.integers(0, 11), st.integers(0, 11), st.floats(0.0, 1.0, allow_nan=False))


@settings(max_examples=150, deadline=None)
@given(
    edges=st.lists(edge_st, max_size=50, unique_by=lambda e: (e[0], e[1])),
    seeds=st.lists(st.tuples(st.integers(0, 11), st.floats(0.01, 1.0, allow_nan=False)), min_size=1, max_size=3),
    fan_ref=st.floats(0.5, 8.0, allow_nan=False),
    fan_power=st.floats(0.1, 2.0, allow_nan=False),
    direction=st.sampled_from(["out", "both"]),
)
def test_damping_only_lowers_and_never_touches_the_first_hop(edges, seeds, fan_ref, fan_power, direction):
    g = GraphArrays.from_edges(12, [e[0] for e in edges], [e[1] for e in edges], [e[2] for e in edges])
    s, a = [x[0] for x in seeds], [x[1] for x in seeds]
    kw = dict(max_depth=3, depth_decay=0.8, min_act=0.0, direction=direction, reverse_weight=0.5)
    plain = spread(g, s, a, **kw)
    damped = spread(g, s, a, fan_ref=fan_ref, fan_power=fan_power, **kw)
    p, d = plain.as_dict(), damped.as_dict()
    assert set(d) <= set(p)
    for node, act in d.items():
        assert act <= p[node] * (1 + 1e-12)
    one_hop = spread(g, s, a, **{**kw, "max_depth": 1}).as_dict()
    for node, act in one_hop.items():  # the best single hop from a seed is never damped
        assert d[node] >= act * (1 - 1e-12)


def test_the_default_channel_damps_hubs_and_the_flat_option_sets_it():
    assert Spread().fan_ref == 20.0 and Spread().fan_power == 0.5
    cfg = SearchConfig().replace(fan_ref=0)
    assert cfg.channel.fan_ref == 0 and cfg.to_dict()["fan_ref"] == 0
    with pytest.raises(InvalidArgument):
        Spread(fan_ref=-1.0)
