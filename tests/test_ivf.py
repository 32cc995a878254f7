"""IVF approximate top-k: recall against the exact scan, new and removed rows, and the engine path."""

from __future__ import annotations

import numpy as np

import neurongraph as ngr
from neurongraph.index.vectors import VectorIndex


def clustered(n=20_000, dim=64, k=60, seed=0):
    rng = np.random.default_rng(seed)
    centers = rng.normal(size=(k, dim))
    x = centers[rng.integers(0, k, n)] + 0.35 * rng.normal(size=(n, dim))
    return (x / np.linalg.norm(x, axis=1, keepdims=True)).astype(np.float32)


def test_ivf_recall_against_exact_scan():
    x = clustered()
    vi = VectorIndex(x.shape[1])
    vi.set(np.arange(x.shape[0]), x)
    rng = np.random.default_rng(1)
    hits = []
    for q in x[rng.choice(x.shape[0], 50, replace=False)] + 0.05 * rng.normal(size=(50, x.shape[1])).astype(np.float32):
        q = q / np.linalg.norm(q)
        exact, _ = vi.top_k(vi.similarity(q), 10)
        approx, sims = vi.ann_top_k(q, 10, nprobe=16)
        hits.append(len(set(exact.tolist()) & set(approx.tolist())) / 10)
        assert np.all(np.diff(sims) <= 1e-6)  # best first
    assert np.mean(hits) >= 0.9


def test_rows_added_after_training_are_found_and_removed_rows_never_returned():
    x = clustered(5_000)
    vi = VectorIndex(x.shape[1])
    vi.set(np.arange(x.shape[0]), x)
    vi.ann_top_k(x[0], 5, nprobe=4)  # trains
    new = -x[1]  # far from every cluster it was trained on
    vi.set(np.array([9_000]), new[None, :])
    top, _ = vi.ann_top_k(new, 1, nprobe=1)
    assert top.tolist() == [9_000]
    vi.remove(np.array([9_000]))
    assert 9_000 not in vi.ann_top_k(new, 5, nprobe=4)[0].tolist()


def test_engine_uses_ivf_for_spread_and_exact_scan_for_beam(engine):
    engine.add_nodes([ngr.Node(f"n{i}", "note", f"note {i}", f"topic {i % 7} word{i}") for i in range(300)])
    engine.add_nodes([ngr.Node("target", "note", "Quokka habitat", "quokkas live on Rottnest island")])
    for channel in ("spread", "none", "beam"):
        res = engine.search("quokka island habitat", channel=channel, ann_min_nodes=1, ann_nprobe=8)
        assert res.hits[0].id == "target"
    assert engine.vectors.ivf is not None  # spread/none took the IVF path
