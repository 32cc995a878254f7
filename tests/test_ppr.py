"""Personalised PageRank: dense reference, dangling mass, caps, cache, paths."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.ppr import DEFAULT_DAMPING, ppr, transition_matrix


def dense_ppr(n, src, dst, w, seeds, acts, d, undirected=False):
    """(I - d (Pᵀ + p·1_danglingᵀ)) r = (1-d) p, solved exactly."""
    src, dst, w = np.asarray(src, int), np.asarray(dst, int), np.asarray(w, float)
    if undirected:
        src, dst, w = np.r_[src, dst], np.r_[dst, src], np.r_[w, w]
    W = np.zeros((n, n))
    np.add.at(W, (src, dst), w)
    out = W.sum(1)
    P = np.divide(W, out[:, None], out=np.zeros_like(W), where=out[:, None] > 0)
    p = np.zeros(n)
    np.add.at(p, seeds, acts)
    p /= p.sum()
    M = P.T + np.outer(p, out <= 0)
    return np.linalg.solve(np.eye(n) - d * M, (1 - d) * p)


SRC = [0, 0, 1, 2, 2, 3, 5]
DST = [1, 2, 2, 0, 3, 4, 4]  # 4 is dangling, 6 is isolated
W = [1.0, 0.5, 1.0, 0.3, 0.7, 1.0, 0.2]
F = [1.0, 1.0, 0.5, 1.0, 1.0, 0.8, 1.0]


@pytest.mark.parametrize("undirected", [False, True])
@pytest.mark.parametrize("damping", [DEFAULT_DAMPING, 0.85])
def test_matches_dense_reference(undirected, damping):
    g = GraphArrays.from_edges(7, SRC, DST, W, fact=F)
    r = ppr(g, [0, 5], [2.0, 1.0], damping=damping, tol=1e-13, max_iter=2000, undirected=undirected)
    ref = dense_ppr(7, SRC, DST, np.multiply(W, F), [0, 5], [2.0, 1.0], damping, undirected)
    assert r.converged
    np.testing.assert_allclose(r.scores, ref, atol=1e-11)
    assert r.scores.sum() == pytest.approx(1.0, abs=1e-12)
    assert r.scores[6] == 0.0
    # top nodes: the reference's support, best first (1 and 2 tie exactly: don't test float noise)
    assert set(r.nodes.tolist()) == set(np.flatnonzero(ref > 0).tolist())
    assert np.all(np.diff(ref[r.nodes]) <= 1e-12)


def test_dangling_mass_returns_to_the_seeds():
    g = GraphArrays.from_edges(2, [0], [1], [1.0])
    r = ppr(g, [0], damping=0.5, tol=1e-14, max_iter=500)
    # r0 = 0.5 + 0.5·r1 (dangling return), r1 = 0.5·r0  =>  r0 = 2/3, r1 = 1/3
    np.testing.assert_allclose(r.scores, [2 / 3, 1 / 3], atol=1e-12)


def test_zero_weight_out_edges_count_as_dangling():
    g = GraphArrays.from_edges(3, [0, 1], [1, 2], [1.0, 0.0])
    r = ppr(g, [0], tol=1e-14, max_iter=500)
    assert r.scores[2] == 0.0
    assert r.scores.sum() == pytest.approx(1.0)


def test_iteration_cap_is_respected():
    g = GraphArrays.from_edges(7, SRC, DST, W, fact=F)
    r = ppr(g, [0], damping=0.85, tol=0.0, max_iter=3)
    assert r.iterations == 3 and not r.converged
    # exactly three Jacobi steps of the dense operator
    ref_full = dense_ppr(7, SRC, DST, np.multiply(W, F), [0], [1.0], 0.85)
    p = np.eye(7)[0]
    Wd = np.zeros((7, 7))
    np.add.at(Wd, (SRC, DST), np.multiply(W, F))
    out = Wd.sum(1)
    M = np.divide(Wd, out[:, None], out=np.zeros_like(Wd), where=out[:, None] > 0).T + np.outer(p, out <= 0)
    x = p.copy()
    for _ in range(3):
        x = 0.15 * p + 0.85 * M @ x
    np.testing.assert_allclose(r.scores, x, atol=1e-12)
    assert not np.allclose(r.scores, ref_full, atol=1e-6)


def test_chain_ordering_decreases_with_distance():
    n = 6
    g = GraphArrays.from_edges(n, list(range(n - 1)), list(range(1, n)), np.ones(n - 1))
    r = ppr(g, [0], tol=1e-14, max_iter=500)
    assert list(r.nodes) == list(range(n))
    assert np.all(np.diff(r.scores) < 0)


def test_matrix_cached_by_version_and_options():
    g = GraphArrays.from_edges(7, SRC, DST, W, fact=F)
    t1 = transition_matrix(g)
    assert transition_matrix(g) is t1
    assert transition_matrix(g, undirected=True) is not t1
    assert transition_matrix(g) is t1  # both option sets stay cached
    before = ppr(g, [6], tol=1e-14).scores
    assert before[6] == pytest.approx(1.0)
    g.upsert_edges([6], [0], [1.0], [1.0], [-1], [1], [99])  # the isolated node gets an edge
    t2 = transition_matrix(g)
    assert t2 is not t1
    after = ppr(g, [6], tol=1e-14).scores
    assert after[0] > 0 and after[6] < 1.0


def test_typed_multipliers_steer_the_walk():
    # 0 -> 1 typed 5, 0 -> 2 typed 9; query asks for type 5
    g = GraphArrays.from_edges(3, [0, 0], [1, 2], [1.0, 1.0], rtype=np.array([5, 9], np.int32))
    plain = ppr(g, [0], tol=1e-14).scores
    assert plain[1] == pytest.approx(plain[2])
    typed = ppr(g, [0], tol=1e-14, query_types=[5], alpha=0.25).scores
    assert typed[1] == pytest.approx(4 * typed[2])
    assert ppr(g, [0], query_types=[5], alpha=0.0).scores[2] == 0.0


def test_explanation_paths_follow_real_edges_from_a_seed():
    g = GraphArrays.from_edges(7, SRC, DST, W, fact=F)
    r = ppr(g, [0], top_k=5)
    edges = {(s, i, d) for i, (s, d) in enumerate(zip(SRC, DST))}
    assert r.path(0) == []
    assert r.path(3) == [(0, 1, 2), (2, 4, 3)]
    for node in r.nodes.tolist():
        p = r.path(node)
        if node != 0:
            assert p and p[0][0] == 0 and p[-1][2] == node
        assert all(h in edges for h in p)
        assert all(a[2] == b[0] for a, b in zip(p, p[1:]))
    # undirected: a hop may run against the stored direction (walk order)
    ru = ppr(g, [4], top_k=7, undirected=True)
    assert ru.path(3) == [(4, 5, 3)]


@settings(max_examples=50, deadline=None)
@given(st.integers(1, 10), st.data(), st.booleans())
def test_scores_are_a_distribution(n, data, undirected):
    m = data.draw(st.integers(0, 25))
    src = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    dst = data.draw(st.lists(st.integers(0, n - 1), min_size=m, max_size=m))
    w = data.draw(st.lists(st.floats(0, 2), min_size=m, max_size=m))
    seeds = data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=3))
    acts = data.draw(st.lists(st.floats(0.1, 1), min_size=len(seeds), max_size=len(seeds)))
    g = GraphArrays.from_edges(n, src, dst, w)
    r = ppr(g, seeds, acts, tol=1e-13, max_iter=500, undirected=undirected)
    assert np.all(r.scores >= 0)
    assert r.scores.sum() == pytest.approx(1.0, abs=1e-9)
    ref = dense_ppr(n, src, dst, w, seeds, acts, DEFAULT_DAMPING, undirected)
    np.testing.assert_allclose(r.scores, ref, atol=1e-9)


def test_subnormal_weights_do_not_overflow():
    # w · (1/out) overflows for a subnormal out-weight; w / out does not
    g = GraphArrays.from_edges(3, [0, 1], [1, 2], [5e-324, 1.0])
    r = ppr(g, [0], tol=1e-14, max_iter=500)
    assert np.isfinite(r.scores).all() and r.scores.sum() == pytest.approx(1.0)
    np.testing.assert_allclose(r.scores, dense_ppr(3, [0, 1], [1, 2], [1.0, 1.0], [0], [1.0], 0.5), atol=1e-12)
