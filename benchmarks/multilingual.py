"""Issue 29's measurements on one store: R@1 / R@5 / MRR of bm25, dense, hybrid and ngr, the query latency
with the question's embedding included, and (``--ingest``) ingest throughput on a fresh store.

``ngr bench retrieval`` reports R@2/5/10; the Japanese targets are stated at R@1 (acc@1 for tatoeba), so this
script ranks with the same engine, the same systems and the same configuration, and adds k = 1.

    flock /tmp/ngr-heavy.lock .venv/bin/python benchmarks/multilingual.py \\
        --dataset ../shared/bench/multilingual/jsquad_ja --db /tmp/jsq.db [--multilingual on] [--ingest] \\
        [--embedder hashing] [--json]

``--multilingual on`` marks a new store as one that holds CJK text before the corpus goes in (a
Japanese question over an English-only corpus, tatoeba_ja_en, stands for such a store); ``off`` keeps it on
its base model whatever it holds (the "any embedder" check).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from neurongraph.bench.retrieval import SYSTEMS, ingest_dataset, load_dataset, passage_id
from neurongraph.engine import Engine
from neurongraph.index.embedder import make_embedder
from neurongraph.index.multilingual import MULTILINGUAL_KEY
from neurongraph.store.sqlite import SQLiteStore

NAMES = ("bm25", "dense", "hybrid", "ngr")


def _rank_of(hits: list[str], gold: set[str]) -> int | None:
    return next((i for i, h in enumerate(hits) if h in gold), None)


def _recall(hits: list[str], gold: set[str], k: int) -> float:
    """|top-k ∩ gold| / |gold|, as ``ngr bench retrieval`` counts it (acc@k on a one-gold set)."""
    return len(gold & set(hits[:k])) / len(gold)


def measure(eng: Engine, ds, names=NAMES) -> dict:
    """R@1, R@5, MRR per system; query latency with the embedding (``search`` embeds the question itself)."""
    base = eng.config.replace(limit=50, result_types=("passage",))
    out = {}
    for name in names:
        cfg = base.replace(**SYSTEMS[name])
        ranks, lat, r1, r5 = [], [], [], []
        for q in ds.queries:
            t = time.perf_counter()
            res = eng.search(q["question"], config=cfg, record=False)
            lat.append((time.perf_counter() - t) * 1000)
            hits, gold = [h.id for h in res.hits], {passage_id(g) for g in q["gold_ids"]}
            ranks.append(_rank_of(hits, gold))
            r1.append(_recall(hits, gold, 1))
            r5.append(_recall(hits, gold, 5))
        out[name] = {
            "recall@1": float(np.mean(r1)),
            "recall@5": float(np.mean(r5)),
            "mrr": float(np.mean([0.0 if x is None else 1.0 / (x + 1) for x in ranks])),
            "latency_ms_p50": float(np.median(lat)),
        }
    return out


def throughput(datasets: list[str], n: int, embedder: str | None) -> dict:
    """Passages/s of ``add_nodes`` (embedding included, no link) on a fresh store, the first ``n`` passages
    of each dataset interleaved: mixed Japanese and English text as a history holds it."""
    import tempfile

    from neurongraph.model import Node

    parts = [load_dataset(d).passages[:n] for d in datasets]
    nodes = [
        Node(f"p:{k}:{p['id']}", "passage", p.get("title", ""), p.get("text", ""))
        for group in zip(*parts)
        for k, p in enumerate(group)
    ]
    with tempfile.TemporaryDirectory() as d:
        eng = Engine(SQLiteStore(Path(d) / "t.db"), make_embedder(embedder))
        try:
            t = time.perf_counter()
            for i in range(0, len(nodes), 256):  # batches as an ingest writes them
                eng.add_nodes(nodes[i : i + 256])
            dt = time.perf_counter() - t
            model = eng.embedder.model_id
        finally:
            eng.close()
    return {"passages": len(nodes), "seconds": dt, "passages_per_s": len(nodes) / dt, "embedder": model}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--db")
    ap.add_argument("--embedder", default=None)
    ap.add_argument("--multilingual", choices=("on", "off"), default=None)
    ap.add_argument("--ingest", action="store_true", help="time the ingest (the store must not exist yet)")
    ap.add_argument("--limit-queries", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--system", action="append", choices=NAMES, help="only these systems (default: all four)")
    ap.add_argument("--throughput", type=int, default=0, help="only time add_nodes on N passages of each set")
    ap.add_argument("--mix-with", action="append", default=[], help="another dataset to interleave (--throughput)")
    a = ap.parse_args(argv)
    if a.throughput:
        print(json.dumps(throughput([a.dataset, *a.mix_with], a.throughput, a.embedder)))
        return 0
    if not a.db:
        ap.error("--db is required (except with --throughput)")
    ds = load_dataset(a.dataset, a.limit_queries)
    fresh = not Path(a.db).exists()
    store = SQLiteStore(a.db)
    if a.multilingual and fresh:
        store.set_meta(MULTILINGUAL_KEY, a.multilingual)
    eng = Engine(store, make_embedder(a.embedder))
    try:
        result: dict = {"dataset": ds.name, "n_queries": len(ds.queries)}
        t = time.perf_counter()
        ingest_dataset(eng, ds)  # cached vectors: a no-op on a built store
        if a.ingest and fresh:
            dt = time.perf_counter() - t
            result["ingest_s"] = dt
            result["ingest_passages_per_s"] = len(ds.passages) / dt
        result["embedder"] = eng.embedder.model_id
        result["systems"] = measure(eng, ds, tuple(a.system or NAMES))
    finally:
        eng.close()
    if a.json:
        print(json.dumps(result, indent=1))
    else:
        print(f"{result['dataset']} ({result['n_queries']} questions), embedder {result['embedder']}")
        if "ingest_passages_per_s" in result:
            print(f"ingest + link: {result['ingest_s']:.1f} s, {result['ingest_passages_per_s']:.1f} passages/s")
        for name, m in result["systems"].items():
            print(
                f"  {name:7s} R@1 {m['recall@1']:.3f}  R@5 {m['recall@5']:.3f}  MRR {m['mrr']:.3f}  "
                f"p50 {m['latency_ms_p50']:.1f} ms"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
