"""VectorIndex: the per-query "typical similarity" that anchors the dense score scale."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from neurongraph.index.vectors import SMALL_MATRIX_ROWS, VectorIndex, _median, one_blas_thread


def _unit(rng, n, d=16):
    v = rng.normal(size=(n, d)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_typical_similarity_is_the_median_cosine_of_a_small_corpus():
    rng = np.random.default_rng(0)
    vi = VectorIndex(16)
    vi.set(np.arange(101), _unit(rng, 101))
    q = _unit(rng, 1)[0]
    assert vi.typical_similarity(q) == pytest.approx(float(np.median(vi.matrix @ q)), abs=1e-6)


def test_large_corpus_uses_a_sample_close_to_the_full_median():
    rng = np.random.default_rng(1)
    vi = VectorIndex(16)
    vi.set(np.arange(50_000), _unit(rng, 50_000))
    q = _unit(rng, 1)[0]
    assert abs(vi.typical_similarity(q, sample=4096) - float(np.median(vi.matrix @ q))) < 0.02


def test_changes_reset_the_sample_and_missing_rows_are_ignored():
    np.random.default_rng(2)
    vi = VectorIndex(4)
    q = np.array([1, 0, 0, 0], np.float32)
    assert vi.typical_similarity(q) == 0.0  # empty index
    vi.set(np.array([0, 2]), np.array([[1, 0, 0, 0], [1, 0, 0, 0]], np.float32))  # row 1 missing
    assert vi.typical_similarity(q) == pytest.approx(1.0)
    vi.set(np.array([1, 3, 4]), np.array([[0, 1, 0, 0]] * 3, np.float32))
    assert vi.typical_similarity(q) == pytest.approx(0.0)  # median of 1, 0, 1, 0, 0
    vi.remove([1, 3, 4])
    assert vi.typical_similarity(q) == pytest.approx(1.0)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # inf + -inf, as np.median warns
@settings(max_examples=400, deadline=None)
@given(
    st.lists(st.sampled_from([0.0, -0.0, 0.5, -0.25, 1.0, float("inf"), -float("inf"), float("nan")]), max_size=9)
    | st.lists(st.floats(allow_nan=True, width=32), min_size=1, max_size=40),
    st.sampled_from([np.float32, np.float64]),
)
def test_median_is_numpys_bit_for_bit(values, dtype):
    """``typical_similarity`` takes its median without ``np.median``'s machinery: same value, same bits
    (signed zeros, infinities and NaN included)."""
    if not values:
        return
    x = np.array(values, dtype)
    want, got = float(np.median(x)), _median(x)
    assert (np.isnan(want) and np.isnan(got)) or (want == got and np.signbit(want) == np.signbit(got))


def test_top_k_follows_rows_added_and_removed():
    """The present-row count behind ``top_k`` is cached: every change of the rows must reset it."""
    rng = np.random.default_rng(3)
    vi = VectorIndex(16)
    vi.set(np.arange(10), _unit(rng, 10))
    q = _unit(rng, 1)[0]
    nodes, _ = vi.top_k(vi.similarity(q), 50)
    assert sorted(nodes.tolist()) == list(range(10))
    vi.remove(np.array([3, 7]))
    nodes, scores = vi.top_k(vi.similarity(q), 50)
    assert sorted(nodes.tolist()) == [0, 1, 2, 4, 5, 6, 8, 9] and np.isfinite(scores).all()
    vi.set(np.array([14]), _unit(rng, 1))  # grows: rows 10..13 are holes
    nodes, _ = vi.top_k(vi.similarity(q), 50)
    assert sorted(nodes.tolist()) == [0, 1, 2, 4, 5, 6, 8, 9, 14]
    vi.set(np.array([3]), _unit(rng, 1))
    assert 3 in vi.top_k(vi.similarity(q), 50)[0].tolist()
    sims = vi.similarity(q)
    full = np.where(vi.present, sims, -np.inf)
    order = np.argsort(-full, kind="stable")[:4]
    assert vi.top_k(sims, 4)[0].tolist() == order.tolist()


def _blas_threads() -> list[int]:
    from threadpoolctl import threadpool_info

    return [i["num_threads"] for i in threadpool_info() if i.get("user_api") == "blas"]


def test_a_small_matrix_is_multiplied_on_one_blas_thread():
    """The query's products over fewer than SMALL_MATRIX_ROWS rows run on one BLAS thread (a second one
    stalls when another process holds a core); the previous count comes back after, errors included."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with one_blas_thread(10):  # the libraries loaded so far are found ...
        pass
    import scipy.linalg  # noqa: F401  (... and one loaded after, scipy's own OpenBLAS, is found too)

    with threadpoolctl.threadpool_limits(limits=2, user_api="blas"):
        before = _blas_threads()
        with one_blas_thread(10_000):
            assert set(_blas_threads()) <= {1}
        assert _blas_threads() == before
        with one_blas_thread(SMALL_MATRIX_ROWS):  # a large matrix keeps the library's threads
            assert _blas_threads() == before
        with pytest.raises(RuntimeError), one_blas_thread(10):
            raise RuntimeError("inside")
        assert _blas_threads() == before
