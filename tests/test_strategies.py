"""Traversal strategies: BFS order, MMR diversity, scoring, caps, edge sources, overrides."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.errors import InvalidArgument
from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.strategies import Eager, EdgeRef, GraphEdges, MetadataEdges, Mmr, Scored, Strategy, traverse


def tree():
    # 0 -> 1, 2 ; 1 -> 3, 4 ; 2 -> 5 ; 3 -> 6
    src, dst = [0, 0, 1, 1, 2, 3], [1, 2, 3, 4, 5, 6]
    return GraphArrays.from_edges(7, src, dst, np.ones(6))


Q7 = np.array([1.0, 0.5, 0.9, 0.3, 0.8, 0.7, 0.6])


def test_eager_is_bfs_order_with_provenance():
    r = traverse(Eager(select_k=10, start_k=1), [0], [1.0], Q7, None, [GraphEdges(tree())])
    # level 0; level 1 (neighbours by qsim: 2 before 1); level 2 in frontier order (2's, then 1's)
    assert r.nodes.tolist() == [0, 2, 1, 5, 4, 3, 6]
    assert [h.depth for h in r.hits] == [0, 1, 1, 2, 2, 2, 3]
    h = {x.node: x for x in r.hits}
    assert h[0].edge is None
    assert h[5].edge == EdgeRef(2, "graph", 4)
    assert h[6].edge == EdgeRef(3, "graph", 5)
    assert all(x.score == x.sim == Q7[x.node] for x in r.hits)


def test_eager_stops_when_select_k_is_filled():
    r = traverse(Eager(select_k=3, start_k=1), [0], [1.0], Q7, None, [GraphEdges(tree())])
    assert r.nodes.tolist() == [0, 2, 1]
    assert r.expanded.tolist() == [0]  # level 1 filled select_k: nothing more expanded


def test_start_k_takes_the_best_entry_scores():
    r = traverse(Eager(select_k=10, start_k=2, max_depth=0), [4, 5, 6], [0.1, 0.9, 0.5], Q7, None, [GraphEdges(tree())])
    assert r.nodes.tolist() == [5, 6]
    assert r.n_expanded == 0


def test_max_depth_is_enforced():
    g = GraphEdges(tree())
    for md in range(4):
        r = traverse(Eager(select_k=100, start_k=1, max_depth=md), [0], [1.0], Q7, None, [g])
        assert max(x.depth for x in r.hits) == md
        assert all(r_ in {x.node for x in r.hits if x.depth < md} for r_ in r.expanded.tolist())
    for S in (Mmr(select_k=100, max_depth=1), Scored(select_k=100, max_depth=1)):
        r = traverse(S, [0], [1.0], Q7, np.eye(7, dtype=np.float32), [g])
        assert sorted(r.nodes.tolist()) == [0, 1, 2] and r.expanded.tolist() == [0]


def test_max_traverse_is_enforced():
    g = GraphEdges(tree())
    V = np.eye(7, dtype=np.float32)
    for S in (Eager, Mmr, Scored):
        free = traverse(S(select_k=100, start_k=1), [0], [1.0], Q7, V, [g])
        assert free.n_expanded == 7 and len(free.hits) == 7
        for cap in range(4):
            r = traverse(S(select_k=100, start_k=1, max_traverse=cap), [0], [1.0], Q7, V, [g])
            assert r.n_expanded == cap
            # only expanded nodes can have discovered anything
            assert {x.edge.src for x in r.hits if x.edge} <= set(r.expanded.tolist())
    # Eager with a budget of 2 expands the first two nodes of BFS order
    r = traverse(Eager(select_k=100, start_k=1, max_traverse=2), [0], [1.0], Q7, None, [g])
    assert r.expanded.tolist() == [0, 2] and r.nodes.tolist() == [0, 2, 1, 5]


def test_adjacent_k_takes_the_top_neighbours_by_similarity():
    g = GraphArrays.from_edges(6, [0] * 5, [1, 2, 3, 4, 5], np.ones(5))
    q = np.array([1.0, 0.1, 0.5, 0.3, 0.9, 0.2])
    r = traverse(Eager(select_k=10, start_k=1, adjacent_k=2), [0], [1.0], q, None, [GraphEdges(g)])
    assert r.nodes.tolist() == [0, 4, 2]


def test_graph_edges_filter_relation_types_and_direction():
    g = GraphArrays.from_edges(4, [0, 0, 3], [1, 2, 0], np.ones(3), rtype=np.array([1, 2, 1], np.int32))
    q = np.full(4, 0.5)

    def run(src):
        return traverse(Eager(select_k=10, start_k=1), [0], [1.0], q, None, [src]).nodes.tolist()

    assert sorted(run(GraphEdges(g))) == [0, 1, 2]
    assert sorted(run(GraphEdges(g, rtypes=[2]))) == [0, 2]
    assert sorted(run(GraphEdges(g, direction="in"))) == [0, 3]
    assert sorted(run(GraphEdges(g, rtypes=[1], direction="both"))) == [0, 1, 3]
    h = traverse(Eager(select_k=10, start_k=1), [0], [1.0], q, None, [GraphEdges(g, direction="in")]).hits
    assert h[1].edge == EdgeRef(0, "graph", 2)


# seed 002: capybara and its South American neighbours
CAPY, ALPACA, LLAMA, JAGUAR, ANACONDA, HIPPO = range(6)
ANIMALS = [
    (CAPY, {"origin": "south america", "habitat": ["wetland", "grassland"]}),
    (ALPACA, {"origin": "south america", "habitat": "highland"}),
    (LLAMA, {"origin": "south america", "habitat": ["highland", "grassland"]}),
    (JAGUAR, {"origin": "south america", "habitat": "rainforest"}),
    (ANACONDA, {"origin": "south america", "habitat": ["wetland", "rainforest"]}),
    (HIPPO, {"origin": "africa", "habitat": ["wetland"]}),
]
QA = np.array([0.92, 0.80, 0.78, 0.70, 0.50, 0.60])


def animal_vectors():
    def unit(v):
        v = np.asarray(v, np.float32)
        return v / np.linalg.norm(v)

    return np.stack(
        [
            unit([1.0, 0.0, 0.0]),  # capybara
            unit([0.95, 0.3, 0.0]),  # alpaca: near capybara
            unit([0.93, 0.35, 0.0]),  # llama: near capybara and alpaca
            unit([0.1, 0.0, 1.0]),  # jaguar: different
            unit([0.5, 0.0, 0.85]),  # anaconda: near jaguar
            unit([0.6, 0.8, 0.0]),  # hippo
        ]
    )


def test_mmr_picks_the_diverse_node():
    edges = MetadataEdges(ANIMALS, [("origin", "origin")])
    V = animal_vectors()
    mmr = traverse(Mmr(select_k=3, start_k=1, lambda_mult=0.5), [CAPY], [0.92], QA, V, [edges])
    eager = traverse(Eager(select_k=3, start_k=1), [CAPY], [0.92], QA, None, [edges])
    assert eager.nodes.tolist() == [CAPY, ALPACA, LLAMA]  # BFS by similarity: redundant
    assert mmr.nodes.tolist()[:2] == [CAPY, JAGUAR]  # MMR: jaguar beats alpaca
    s_alp = 0.5 * QA[ALPACA] - 0.5 * float(V[ALPACA] @ V[CAPY])
    s_jag = 0.5 * QA[JAGUAR] - 0.5 * float(V[JAGUAR] @ V[CAPY])
    assert s_jag > s_alp
    assert mmr.hits[1].score == pytest.approx(s_jag)
    # step 3 uses max redundancy over {capybara, jaguar}
    third = mmr.hits[2].node
    cands = [ALPACA, LLAMA, ANACONDA]
    expect = max(cands, key=lambda d: 0.5 * QA[d] - 0.5 * max(V[d] @ V[CAPY], V[d] @ V[JAGUAR]))
    assert third == expect == ALPACA
    # lambda = 1 degenerates to pure relevance
    rel = traverse(Mmr(select_k=3, start_k=1, lambda_mult=1.0), [CAPY], [0.92], QA, V, [edges])
    assert rel.nodes.tolist() == [CAPY, ALPACA, LLAMA]


def test_mmr_min_score_stops_selection():
    edges = MetadataEdges(ANIMALS, [("origin", "origin")])
    r = traverse(Mmr(select_k=6, start_k=1, min_mmr_score=0.0), [CAPY], [0.92], QA, animal_vectors(), [edges])
    assert all(h.score > 0.0 for h in r.hits)
    assert len(r.hits) < 6


def test_mmr_requires_vectors():
    with pytest.raises(InvalidArgument):
        traverse(Mmr(), [0], [1.0], Q7, None, [GraphEdges(tree())])


def test_scored_default_is_similarity_best_first():
    r = traverse(Scored(select_k=4, start_k=1), [0], [1.0], Q7, None, [GraphEdges(tree())])
    # best-first: 0 -> {1:.5, 2:.9} pick 2 -> {5:.8} pick 5 -> pick 1 -> {3:.3, 4:.8}
    assert r.expanded.tolist() == [0, 2, 5, 1]
    assert r.nodes.tolist() == [0, 2, 5, 1]
    assert [h.score for h in r.hits] == sorted((h.score for h in r.hits), reverse=True)


def test_scored_with_custom_function():
    calls = []

    def prefer_deep_low_sim(nodes, depths, qsim):
        calls.append(nodes.copy())
        return depths - qsim[nodes]

    r = traverse(
        Scored(select_k=3, start_k=1, score_fn=prefer_deep_low_sim), [0], [1.0], Q7, None, [GraphEdges(tree())]
    )
    # 0 (score -1) -> {1: 0.5, 2: 0.1} pick 1 -> {3: 1.7, 4: 1.2} pick 3 -> ...
    assert r.expanded.tolist() == [0, 1, 3]
    assert r.nodes.tolist() == [3, 1, 0]  # returned best score first
    assert [h.score for h in r.hits] == pytest.approx([2 - 0.3, 1 - 0.5, -1.0])
    assert all(c.ndim == 1 for c in calls)  # called on batches


def test_metadata_edges_share_values_element_wise():
    m = MetadataEdges(ANIMALS, [("habitat", "habitat")])
    assert sorted(m.nodes_with("wetland").tolist()) == [CAPY, ANACONDA, HIPPO]
    assert sorted(m.nodes_with("grassland").tolist()) == [CAPY, LLAMA]
    assert m.nodes_with("desert").size == 0
    r = traverse(Eager(select_k=10, start_k=1, max_depth=1), [CAPY], [1.0], QA, None, [m])
    assert r.nodes.tolist() == [CAPY, LLAMA, HIPPO, ANACONDA]  # ranked by qsim
    h = {x.node: x for x in r.hits}
    assert h[HIPPO].edge == EdgeRef(CAPY, "habitat->habitat", "wetland")
    assert h[LLAMA].edge == EdgeRef(CAPY, "habitat->habitat", "grassland")
    # adjacent_k applies per spec: two specs give two neighbours each
    m2 = MetadataEdges(ANIMALS, [("habitat", "habitat"), ("origin", "origin")])
    r = traverse(Eager(select_k=10, start_k=1, max_depth=1, adjacent_k=1), [CAPY], [1.0], QA, None, [m2])
    assert r.nodes.tolist() == [CAPY, LLAMA, ALPACA]


def test_metadata_id_edges_follow_citations_both_ways():
    ids = {"paper:a": 0, "paper:b": 1, "paper:c": 2, "paper:d": 3}
    items = [(0, {"cites": ["paper:b", "paper:c"]}), (1, {"cites": "paper:c"}), (2, {}), (3, {"cites": ["paper:x"]})]
    q = np.array([0.9, 0.5, 0.7, 0.4])
    fwd = MetadataEdges(items, [("cites", "$id")], ids=ids)
    r = traverse(Eager(select_k=10, start_k=1), [0], [1.0], q, None, [fwd])
    assert r.nodes.tolist() == [0, 2, 1]
    assert {h.node: h.edge.key for h in r.hits if h.edge} == {2: "paper:c", 1: "paper:b"}
    back = MetadataEdges(items, [("$id", "cites")], ids=ids)
    r = traverse(Eager(select_k=10, start_k=1), [2], [1.0], q, None, [back])
    assert r.nodes.tolist() == [2, 0, 1]  # who cites c
    with pytest.raises(InvalidArgument):
        MetadataEdges(items, [("cites", "$id")])


def test_sources_combine_graph_and_metadata():
    g = GraphArrays.from_edges(6, [CAPY], [HIPPO], [1.0])
    m = MetadataEdges(ANIMALS, [("origin", "origin")])
    r = traverse(Eager(select_k=10, start_k=1, max_depth=1, adjacent_k=1), [CAPY], [1.0], QA, None, [GraphEdges(g), m])
    assert r.nodes.tolist() == [CAPY, HIPPO, ALPACA]
    assert r.hits[1].edge.source == "graph" and r.hits[2].edge.source == "origin->origin"


def test_per_call_override_leaves_default_untouched():
    default = Mmr(select_k=5, lambda_mult=0.7)
    call = default.with_(select_k=2, max_traverse=1)
    assert isinstance(call, Mmr) and call.lambda_mult == 0.7
    assert (call.select_k, call.max_traverse) == (2, 1)
    assert (default.select_k, default.max_traverse) == (5, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        default.select_k = 1
    edges = MetadataEdges(ANIMALS, [("origin", "origin")])
    assert len(traverse(call, [CAPY], [1.0], QA, animal_vectors(), [edges]).hits) == 2
    assert len(traverse(default, [CAPY], [1.0], QA, animal_vectors(), [edges]).hits) == 5
    assert Strategy() == Strategy(select_k=5, start_k=4, adjacent_k=10, max_depth=None, max_traverse=None)
    for bad in (dict(select_k=-1), dict(start_k=1.5), dict(max_traverse=True)):
        with pytest.raises(InvalidArgument) as exc:
            Eager(**bad)
        assert exc.value.code == "invalid_argument"
    with pytest.raises(InvalidArgument):
        Mmr(lambda_mult=float("nan"))
    with pytest.raises(InvalidArgument):  # "the search's limit" exists only inside a search
        traverse(Eager(select_k=None), [CAPY], [1.0], QA, None, [MetadataEdges(ANIMALS, [("origin", "origin")])])


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12), st.data(), st.sampled_from([Eager, Mmr, Scored]))
def test_caps_hold_on_random_graphs(n, data, S):
    m = data.draw(st.integers(0, 40))
    src = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    q = np.array(data.draw(st.lists(st.floats(-1, 1), min_size=n, max_size=n)))
    V = np.random.default_rng(n).normal(size=(n, 4)).astype(np.float32)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    strat = S(
        select_k=data.draw(st.integers(0, n)),
        start_k=data.draw(st.integers(1, 3)),
        adjacent_k=data.draw(st.integers(1, 4)),
        max_depth=data.draw(st.one_of(st.none(), st.integers(0, 3))),
        max_traverse=data.draw(st.one_of(st.none(), st.integers(0, 5))),
    )
    starts = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4))
    g = GraphArrays.from_edges(n, src, dst, np.ones(m))
    r = traverse(strat, starts, np.linspace(1, 0, len(starts)), q, V, [GraphEdges(g)])
    nodes = r.nodes.tolist()
    assert len(nodes) == len(set(nodes)) <= strat.select_k
    if strat.max_traverse is not None:
        assert r.n_expanded <= strat.max_traverse
    assert len(set(r.expanded.tolist())) == r.n_expanded  # a node is expanded at most once
    depth = {h.node: h.depth for h in r.hits}
    edges = set(zip(src, dst))
    for h in r.hits:
        if strat.max_depth is not None:
            assert h.depth <= strat.max_depth
        if h.edge is None:
            assert h.depth == 0 and h.node in starts
        else:
            assert (h.edge.src, h.node) in edges
            assert h.edge.src in r.expanded.tolist()
            if h.edge.src in depth:
                assert h.depth == depth[h.edge.src] + 1


def test_start_nodes_outside_the_graph_are_harmless():
    g = GraphArrays.from_edges(3, [0], [1], [1.0])
    q = np.array([0.5, 0.9, 0.1, 0.1, 0.1, 0.2])
    r = traverse(Eager(select_k=10), [5, 0], [1.0, 0.9], q, None, [GraphEdges(g, direction="both")])
    assert r.nodes.tolist() == [5, 0, 1]
    assert r.hits[2].edge == EdgeRef(0, "graph", 0)
