"""VectorIndex: the per-query "typical similarity" that anchors the dense score scale."""

from __future__ import annotations

import numpy as np
import pytest

from neurongraph.index.vectors import VectorIndex


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
