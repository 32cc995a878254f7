"""Issue 45, install size: the runtime needs no scipy (143 MB of a fresh install); index/sparse.py does its part.

``Csr`` is checked against ``scipy.sparse`` (present in the test environment) on random matrices: the same
rows, columns and sums; a matrix-vector product and a sparse x dense product equal to the last bit when
no entry is repeated three times or more; reachability equal to ``breadth_first_order``.  Then a real
store of a git repository made here is ingested and searched with the PPR channel in a process where
``import scipy`` fails.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from tests.git_fixtures import Repo

from neurongraph.index.sparse import Csr

sp = pytest.importorskip("scipy.sparse")


def _random(rng, n: int, m: int, k: int, unique: bool):
    r, c = rng.integers(0, n, k), rng.integers(0, m, k)
    if unique:
        u = np.unique(r * m + c)
        r, c = u // m, u % m
    return r, c


@pytest.mark.parametrize("seed", range(12))
def test_csr_equals_scipy(seed):
    from scipy.sparse.csgraph import breadth_first_order

    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 200))
    r, c = _random(rng, n, n, int(rng.integers(0, 2000)), unique=seed % 2 == 0)
    d = rng.random(r.size)
    ref = sp.csr_matrix((d, (r, c)), shape=(n, n))
    ref.sum_duplicates()
    got = Csr.from_coo(d, r, c, (n, n))
    assert np.array_equal(ref.indptr, got.indptr) and np.array_equal(ref.indices, got.indices)
    x = rng.random(n)
    w = rng.random((n, 8)).astype(np.float32)
    ones = np.ones(r.size, np.float32)
    dense_ref = np.asarray(sp.csr_matrix((ones, (r, c)), shape=(n, n)) @ w)
    dense = Csr.from_coo(ones, r, c, (n, n)) @ w
    assert dense.dtype == dense_ref.dtype == np.float32
    if seed % 2 == 0:  # no repeated entry: bit for bit
        assert np.array_equal(ref.data, got.data) and np.array_equal(ref @ x, got @ x)
        assert np.array_equal(dense_ref, dense)
    else:  # repeats: summed in another order, so equal to rounding
        np.testing.assert_allclose(got @ x, ref @ x, rtol=1e-12)
        np.testing.assert_allclose(dense, dense_ref, rtol=1e-6)
    t = ref.T.tocsr()
    t.sort_indices()
    assert np.array_equal(t.indptr, got.T.indptr) and np.array_equal(t.indices, got.T.indices)
    start = int(rng.integers(0, n))
    mask = np.zeros(n, bool)
    mask[breadth_first_order(ref, start, directed=True, return_predecessors=False)] = True
    assert np.array_equal(mask, got.reachable(start))


def test_a_product_across_blocks_adds_each_rows_terms_in_order(monkeypatch):
    import neurongraph.index.sparse as sparse

    monkeypatch.setattr(sparse, "_BLOCK", 7)
    rng = np.random.default_rng(3)
    r, c = _random(rng, 30, 500, 400, unique=True)
    w = rng.random((500, 6)).astype(np.float32)
    ones = np.ones(r.size, np.float32)
    assert np.array_equal(Csr.from_coo(ones, r, c, (30, 500)) @ w, sp.csr_matrix((ones, (r, c)), shape=(30, 500)) @ w)


def test_entries_outside_the_matrix_are_refused_and_an_empty_one_multiplies():
    with pytest.raises(ValueError, match="outside"):
        Csr.from_coo([1.0], [3], [0], (2, 2))
    y = Csr.from_coo(np.zeros(0), [], [], (3, 3)) @ np.ones(3)
    assert y.dtype == np.float64 and not y.any()


def test_ingest_and_ppr_search_run_without_scipy(tmp_path):
    repo = Repo(tmp_path / "r")
    repo.commit("parser: first version", {"src/parser.c": "int parse_header(void) { return 0; }\n"})
    repo.commit("parser: fix crash in parse_header", {"src/parser.c": "int parse_header(void) { return 1; }\n"})
    code = textwrap.dedent(
        f"""
        import sys
        sys.modules["scipy"] = None  # any import of scipy fails
        import neurongraph as ngr
        from neurongraph.ingest import sync_source
        eng = ngr.open({str(tmp_path / "s.db")!r}, embedder="hashing")
        sync_source(eng, "git", {str(repo.path)!r})
        hits = eng.search("crash in parse_header", limit=3, channel="ppr").hits
        assert hits and "fix crash" in hits[0].title, [h.title for h in hits]
        eng.close()
        print("ok")
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-3000:]
