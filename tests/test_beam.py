"""Path beam search: score modes, per-seed beams, cycles, typed multipliers."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.beam import beam_search


def G(n, edges, rtype=None, pol=None):
    src, dst = zip(*edges) if edges else ((), ())
    return GraphArrays.from_edges(n, list(src), list(dst), np.ones(len(edges)), rtype=rtype, pol=pol)


# S=0 -> X=1 (off-topic) -> T=2 ; S -> Y=3 -> U=4
OFF = G(5, [(0, 1), (1, 2), (0, 3), (3, 4)])
QOFF = np.array([0.9, 0.05, 0.95, 0.5, 0.45])


def test_mean_accepts_what_min_rejects():
    mean = beam_search(OFF, [0], QOFF, max_depth=2, beam_width=2, score_mode="mean").as_dict()
    mn = beam_search(OFF, [0], QOFF, max_depth=2, beam_width=2, score_mode="min").as_dict()
    assert mean[2] == pytest.approx((0.9 + 0.05 + 0.95) / 3)
    assert mean[4] == pytest.approx((0.9 + 0.5 + 0.45) / 3)
    assert mean[2] > mean[4]  # MEAN: the detour through X is outweighed by T
    assert mn[2] == pytest.approx(0.05)  # MIN: the chain is as weak as X
    assert mn[4] == pytest.approx(0.45)
    assert mn[4] > mn[2]


def test_min_sim_ends_paths_before_the_weak_node():
    r = beam_search(OFF, [0], QOFF, max_depth=2, beam_width=4, min_sim=0.1, score_mode="mean")
    assert set(r.as_dict()) == {0, 3, 4}
    # a seed below min_sim is still a start
    r = beam_search(OFF, [1], QOFF, max_depth=1, min_sim=0.1)
    assert r.as_dict() == {1: pytest.approx(0.05), 2: pytest.approx((0.05 + 0.95) / 2)}


def test_last_scores_the_arrival_only():
    r = beam_search(OFF, [0], QOFF, max_depth=2, beam_width=4, score_mode="last")
    assert r.as_dict() == {n: pytest.approx(QOFF[n]) for n in range(5)}
    assert r.path(2) == [(0, 0, 1), (1, 1, 2)]
    assert r.node_path(2) == [0, 1, 2]
    assert r.depth[list(r.nodes).index(2)] == 2
    assert r.path(0) == [] and r.node_path(0) == [0]


def test_per_seed_beams_keep_the_weak_seed():
    # strong seed A=0 with three strong neighbours; weak seed B=4 with one neighbour W=5
    g = G(6, [(0, 1), (0, 2), (0, 3), (4, 5)])
    q = np.array([0.9, 0.8, 0.85, 0.9, 0.2, 0.3])
    per = beam_search(g, [0, 4], q, max_depth=1, beam_width=2)
    shared = beam_search(g, [0, 4], q, max_depth=1, beam_width=2, per_seed=False)
    assert 5 in per.as_dict() and per.seed[list(per.nodes).index(5)] == 4
    assert per.as_dict()[5] == pytest.approx(0.25)
    assert 5 not in shared.as_dict()  # the shared beam spent its width on A's side
    assert set(shared.as_dict()) == {0, 4, 2, 3}
    assert set(per.as_dict()) == {0, 4, 2, 3, 5}


def test_beam_width_cuts_per_level():
    g = G(5, [(0, 1), (0, 2), (0, 3), (0, 4)])
    q = np.array([1.0, 0.1, 0.4, 0.3, 0.2])
    r = beam_search(g, [0], q, max_depth=1, beam_width=2, score_mode="last")
    assert set(r.as_dict()) == {0, 2, 3}


def test_no_cycles_and_best_path_wins():
    # 0 <-> 1, 1 -> 2, 0 -> 2 : the 2-hop path 0-1-0 must never appear
    g = G(3, [(0, 1), (1, 0), (1, 2), (0, 2)])
    q = np.array([0.5, 0.9, 0.4])
    r = beam_search(g, [0], q, max_depth=3, beam_width=8, score_mode="mean")
    for n in r.nodes:
        p = r.node_path(int(n))
        assert len(p) == len(set(p))
    assert r.as_dict()[2] == pytest.approx((0.5 + 0.9 + 0.4) / 3)  # via 1 beats direct (0.45)
    assert r.node_path(2) == [0, 1, 2]


def test_typed_multipliers_lower_scores_only_when_layer_on():
    # 0 -type7-> 1 (off-type), 0 -type3-> 2 (on-type, negative polarity), 0 -untyped-> 3
    g = G(4, [(0, 1), (0, 2), (0, 3)], rtype=np.array([7, 3, -1], np.int32), pol=np.array([1, -1, 1], np.int8))
    q = np.array([0.6, 0.8, 0.8, 0.8])
    plain = beam_search(g, [0], q, max_depth=1)
    off = beam_search(g, [0], q, max_depth=1, query_types=(), alpha=0.5, beta=0.1)
    for a, b in zip(plain.__dict__.values(), off.__dict__.values()):
        assert np.array_equal(a, b)  # layer off: bit-identical
    on = beam_search(g, [0], q, max_depth=1, query_types=[3], alpha=0.5, beta=0.1).as_dict()
    assert on[1] == pytest.approx(0.7 * 0.5)
    assert on[2] == pytest.approx(0.7 * 0.1)
    assert on[3] == plain.as_dict()[3]
    # a negative base score is divided, so attenuation still lowers it
    qn = np.array([-0.2, -0.4, 0.0, 0.0])
    neg = beam_search(g, [0], qn, max_depth=1, min_sim=-1, query_types=[3], alpha=0.5).as_dict()
    assert neg[1] == pytest.approx(-0.3 / 0.5)


def _simple_paths(g, seed, D, q, min_sim):
    e = g.all_edges()
    adj = {}
    for s, d in zip(e.src.tolist(), e.dst.tolist()):
        adj.setdefault(s, []).append(d)
    out, stack = [], [[seed]]
    while stack:
        p = stack.pop()
        out.append(p)
        if len(p) <= D:
            for nb in adj.get(p[-1], []):
                if nb not in p and q[nb] >= min_sim:
                    stack.append(p + [nb])
    return out


MODE_FN = {"mean": lambda v: float(np.mean(v)), "min": lambda v: float(np.min(v)), "last": lambda v: float(v[-1])}


@settings(max_examples=60, deadline=None)
@given(
    n=st.integers(2, 8),
    data=st.data(),
    mode=st.sampled_from(["mean", "min", "last"]),
    D=st.integers(0, 3),
    B=st.integers(1, 4),
)
def test_paths_are_real_acyclic_and_scored_by_mode(n, data, mode, D, B):
    pairs = [(a, b) for a, b in itertools.product(range(n), repeat=2) if a != b]
    edges = data.draw(st.lists(st.sampled_from(pairs), max_size=20, unique=True))
    q = np.array(data.draw(st.lists(st.floats(0, 1), min_size=n, max_size=n)))
    seeds = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3, unique=True))
    min_sim = 0.2
    g = G(n, edges)
    r = beam_search(g, seeds, q, max_depth=D, beam_width=B, min_sim=min_sim, score_mode=mode)
    eset = {(a, i, b) for i, (a, b) in enumerate(edges)}
    best = {}
    for s in seeds:
        for p in _simple_paths(g, s, D, q, min_sim):
            best[p[-1]] = max(best.get(p[-1], -np.inf), MODE_FN[mode](q[p]))
    assert set(seeds) <= set(r.nodes.tolist())
    for node, sc, d in zip(r.nodes.tolist(), r.score, r.depth):
        p = r.node_path(node)
        assert len(p) == d + 1 <= D + 1 and p[-1] == node and p[0] in seeds
        assert len(set(p)) == len(p)
        assert all(x in eset for x in r.path(node))
        assert all(q[x] >= min_sim for x in p[1:])
        assert sc == pytest.approx(MODE_FN[mode](q[p]))
        assert sc <= best[node] + 1e-12
    # unlimited width: LAST reaches exactly the nodes of the filtered D-ball
    r_all = beam_search(g, seeds, q, max_depth=D, beam_width=n * n, min_sim=min_sim, score_mode="last")
    assert set(r_all.nodes.tolist()) == set(best)


def test_seeds_without_graph_rows_do_not_steal_edges():
    # node 5 exists for qsim but not in the graph (n_nodes=3); listed first it must not
    # be credited with node 0's edge
    g = G(3, [(0, 1)])
    q = np.array([0.5, 0.9, 0.1, 0.1, 0.1, 0.2])
    r = beam_search(g, [5, 0], q, max_depth=1)
    assert r.node_path(1) == [0, 1]
    assert set(r.as_dict()) == {0, 1, 5}
