"""Issue 18, target 0: `ngr bench perf --peers` times ngr, graph-retriever and the numpy/scipy floor
side by side on one corpus, in one run."""

from __future__ import annotations

import builtins
import json

import numpy as np
import pytest
from typer.testing import CliRunner

from neurongraph.bench import peers
from neurongraph.cli.main import app

runner = CliRunner()


def _has_graph_retriever() -> bool:
    try:
        peers._graph_retriever()
    except peers.MissingPeer:
        return False
    return True


needs_gr = pytest.mark.skipif(not _has_graph_retriever(), reason="graph-retriever (extra `bench`) not installed")


@needs_gr
def test_cli_runs_all_three_systems_on_one_corpus():
    r = runner.invoke(
        app,
        ["bench", "perf", "--peers", "--peer-sizes", "200", "--queries", "12", "--blas-threads", "1", "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    res = json.loads(r.stdout[r.stdout.index("{") :])
    assert res["benchmark"] == "peers" and res["k"] == 10 and res["graph_retriever_version"] == "0.8.0"
    assert res["graph_retriever_params"] == {"select_k": 10, "start_k": 4, "adjacent_k": 10, "max_depth": 2}
    [size] = res["sizes"]
    assert size["nodes"] == 200 and size["edges"] > 0 and size["queries"] == 12
    assert set(size["systems"]) == set(peers.SYSTEMS)
    for name, s in size["systems"].items():
        assert s["min_hits"] == 10 and s["mean_hits"] == 10, name  # every system, every query: 10 hits
        assert 0 < s["p50_ms"] <= s["p95_ms"], name
    assert size["systems"]["floor"]["top1_is_dense_top1"] == 1.0
    assert {"lexical", "dense", "graph"} <= set(size["ngr_p50_ms_by_stage"])
    assert set(size["ratios_p50"]) == {"ngr_over_graph_retriever", "ngr_over_floor", "graph_retriever_over_floor"}
    assert res["machine"]["cpus"] >= 1 and "load_avg_1m_end" in res["machine"]
    assert all(b["threads"] == 1 for b in res["machine"]["blas"])  # --blas-threads reaches every system


def test_floor_is_dense_top_k_plus_the_seeds_two_hop_neighbourhood():
    rng = np.random.default_rng(0)
    n = 60
    vecs = rng.standard_normal((n, 8)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    ids = [f"n{i:07d}" for i in range(n)]
    edges = [(ids[i], "refs", ids[(i + 7) % n]) for i in range(n)]
    floor = peers.Floor(ids, vecs, peers._adjacency(n, edges))
    q = vecs[3]
    got = floor.search(q)
    scores = vecs @ q
    assert len(got) == 10 and got[0] == ids[int(np.argmax(scores))]
    # the pool is the dense top-10 plus the 2-hop ring of the 4 best seeds; the result is its top-10
    top = list(np.argsort(-scores)[:10])
    pool = set(top)
    for s in top[:4]:
        for d1 in (-7, 7):
            pool.add((s + d1) % n)
            for d2 in (-7, 7):
                pool.add((s + d1 + d2) % n)
    want = sorted(pool, key=lambda i: -scores[i])[:10]
    assert got == [ids[i] for i in want]


def test_missing_graph_retriever_is_a_missing_dependency_error(monkeypatch):
    real_import = builtins.__import__

    def no_gr(name, *args, **kwargs):
        if name.startswith("graph_retriever"):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_gr)
    r = runner.invoke(app, ["bench", "perf", "--peers", "--peer-sizes", "50", "--json"])
    assert r.exit_code != 0
    err = json.loads(r.stdout[r.stdout.index("{") :])["error"]
    assert err["code"] == "missing_dependency" and "[bench]" in err["message"]


def test_sizes_are_checked():
    assert peers.parse_sizes("1000, 10000") == [1000, 10000]
    r = runner.invoke(app, ["bench", "perf", "--peers", "--peer-sizes", "10,x", "--json"])
    assert r.exit_code != 0 and "invalid_argument" in r.stdout
