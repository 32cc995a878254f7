"""The retrieval benchmark harness end to end on a tiny generated 2-hop dataset."""

from __future__ import annotations

import json

import pytest

import neurongraph as ngr
from neurongraph.bench.retrieval import evaluate, ingest_dataset, load_dataset, markdown_table, run_benchmark
from neurongraph.errors import InvalidArgument

PEOPLE = ["Aldo Brenn", "Mira Quell", "Toma Vesk", "Ilsa Drom", "Kurt Fenwa", "Nola Prisk"]
TOWNS = ["Lurevale", "Oskarby", "Penmarrow", "Quillford", "Rastenholm", "Sivercombe"]
BOOKS = ["The Glass Orchard", "Winter Ledger", "Salt Meridian", "Copper Hymnal", "Paper Tides", "Quiet Engines"]


def make_dataset(folder):
    """Question: 'Where was the author of BOOK born?'  Hop 1: the book names its author.
    Hop 2: the author's passage names the town, sharing no content word with the question."""
    passages, queries = [], []
    for i, (person, town, book) in enumerate(zip(PEOPLE, TOWNS, BOOKS)):
        passages.append({"id": 2 * i, "title": book, "text": f"{book} is a novel written by {person} in {1950 + i}."})
        passages.append(
            {
                "id": 2 * i + 1,
                "title": person,
                "text": f"{person} grew up in {town}, a harbour settlement, and later taught music.",
            }
        )
        queries.append(
            {
                "qid": f"q{i}",
                "question": f"Where was the author of {book} born?",
                "answers": [town],
                "gold_ids": [2 * i, 2 * i + 1],
                "gold_titles": [book, person],
            }
        )
    for j in range(12):  # distractors
        passages.append({"id": 100 + j, "title": f"Filler {j}", "text": f"Unrelated notes about weather pattern {j}."})
    folder.mkdir()
    (folder / "corpus.jsonl").write_text("\n".join(json.dumps(p) for p in passages))
    (folder / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    return folder


def test_harness_end_to_end(tmp_path):
    ds = load_dataset(make_dataset(tmp_path / "tiny"))
    eng = ngr.open(tmp_path / "bench.db", embedder="hashing")
    info = ingest_dataset(eng, ds, link=True)
    assert info["link"]["edges"] > 0
    res = run_benchmark(eng, ds)
    assert res["n_queries"] == 6 and set(res["systems"]) >= {"bm25", "dense", "hybrid", "ngr", "ngr-beam", "ngr-ppr"}
    for m in res["systems"].values():
        for k in ("recall@2", "recall@5", "recall@10", "mrr"):
            assert 0.0 <= m[k] <= 1.0
        assert m["passages_to_full_recall"] >= 2
    # the bridge passage shares no word with the question: only the graph brings it up
    assert res["systems"]["ngr"]["recall@2"] == 1.0
    assert res["systems"]["ngr"]["recall@2"] > res["systems"]["hybrid"]["recall@2"]
    assert res["systems"]["ngr"]["tokens_to_full_recall"] < res["systems"]["hybrid"]["tokens_to_full_recall"]
    assert "| ngr |" in markdown_table(res)
    eng.close()


def test_evaluate_counts_cost_to_full_recall():
    m = evaluate([["a", "x", "b"], ["y", "z"]], [["a", "b"], ["c"]], {"a": 10, "b": 5, "x": 1, "y": 2, "z": 3})
    assert m["recall@2"] == pytest.approx((0.5 + 0.0) / 2)
    assert m["passages_to_full_recall"] == pytest.approx((3 + 50) / 2)
    assert m["tokens_to_full_recall"] == pytest.approx((16 + 5) / 2)
    assert m["never_full_recall"] == 1 and m["mrr"] == pytest.approx(0.5)


def test_bad_dataset_folder_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidArgument, match="corpus.jsonl"):
        load_dataset(tmp_path)


def test_cli_bench_retrieval_json(tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    folder = make_dataset(tmp_path / "tiny")
    out = tmp_path / "res.json"
    r = CliRunner().invoke(
        app,
        [
            "--embedder",
            "hashing",
            "bench",
            "retrieval",
            "--dataset",
            str(folder),
            "--db",
            str(tmp_path / "b.db"),
            "--system",
            "hybrid",
            "--system",
            "ngr",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert set(res["systems"]) == {"hybrid", "ngr"} and res["dataset"] == "tiny"
    assert res["ingest"]["link"]["edges"] > 0
    bad = CliRunner().invoke(
        app,
        [
            "--embedder",
            "hashing",
            "bench",
            "retrieval",
            "--dataset",
            str(folder),
            "--db",
            str(tmp_path / "b.db"),
            "--system",
            "nope",
            "--json",
        ],
    )
    assert bad.exit_code == 2 and "unknown system" in bad.output


def test_cli_ingest_link_and_search_channels(tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    f = tmp_path / "items.jsonl"
    f.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {
                    "id": "issue:12",
                    "type": "issue",
                    "title": "Crash on start",
                    "text": "The app crashes when the cache is cold.",
                },
                {
                    "id": "pr:40",
                    "type": "pull_request",
                    "title": "Warm the cache",
                    "text": "Fixes #12 by warming the cache first.",
                },
            ]
        )
    )
    base = ["--embedder", "hashing", "--db", str(tmp_path / "s.db")]
    r = CliRunner().invoke(app, base + ["ingest", str(f), "--link", "--json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["link"]["edges_by_linker"]["ref"] >= 1
    for ch in ("spread", "beam", "ppr", "eager", "mmr", "scored", "none"):
        r = CliRunner().invoke(app, base + ["search", "crash on start", "--channel", ch, "--json"])
        assert r.exit_code == 0, (ch, r.output)
        assert json.loads(r.stdout)["hits"][0]["id"] == "issue:12"
    r = CliRunner().invoke(app, base + ["link", "--json"])
    assert r.exit_code == 0 and json.loads(r.stdout)["edges"] >= 1
