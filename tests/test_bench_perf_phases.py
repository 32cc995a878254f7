"""Issue 18 / 14: `bench perf` in named phases, and its real-model figures (embedding throughput on real
passages, a cold `ngr search` as a new process)."""

from __future__ import annotations

import json

import pytest

from neurongraph.bench import perf


def test_synthetic_phases_report_the_same_fields_without_the_real_model(tmp_path):
    res = perf.run_perf(nodes=300, queries=5, warmup=2, real_model=False, db=str(tmp_path / "b.db"))
    assert res["nodes"] == 300 and res["ingest_nodes_per_s"] > 0 and res["ingest_edges_per_s"] > 0
    assert res["search_p50_ms"] > 0 and {"lexical", "dense", "graph"} <= set(res["search_p50_ms_by_stage"])
    assert res["reopen_s"] > 0 and res["first_search_after_replay_s"] > 0
    assert "embed_passages_per_s" not in res and "cold_search_s" not in res
    assert res["machine"]["cpus"] >= 1


def test_bench_passages_fall_back_to_the_demo_corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("NGR_BENCH_DATA", str(tmp_path))
    texts, source = perf.bench_passages(100)
    assert source == "demo corpus" and 30 <= len(texts) <= 40 and all(texts)
    corpus = tmp_path / "musique_train200"
    corpus.mkdir()
    rows = [{"id": i, "title": f"t{i}", "text": f"passage {i}"} for i in range(5)]
    (corpus / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    texts, source = perf.bench_passages(3)
    assert texts == ["t0\npassage 0", "t1\npassage 1", "t2\npassage 2"] and source.endswith("corpus.jsonl")


def test_measure_embedding_counts_passages_per_second():
    texts = [f"passage number {i} about caching" for i in range(40)]
    r = perf.measure_embedding("hashing:64", texts, rounds=2)
    assert r["embedder"] == "hashing:64" and r["passages_per_s"] > 0 and len(r["rounds_per_s"]) == 2
    assert r["passages_per_s"] == max(r["rounds_per_s"])


@pytest.mark.model
def test_real_model_figures_through_real_processes(monkeypatch):
    """The default embedder on real passages, and `ngr search` started as a new process on the demo store."""
    res = perf.measure_real_model(embed_passages=32, cold_runs=1)
    assert res["embed_passages_per_s"] > 0 and res["embed"]["passages"] == 32
    assert res["embed"]["embedder"].startswith("st:all-MiniLM-L6-v2:256")
    assert 0 < res["cold_search_s"] < 120 and len(res["cold_search"]["runs_s"]) == 1
