"""Issue 43's embedding cost: texts/s of each candidate embedder on a store's commit texts, and the ingest time
it projects for that store against today's default.

The texts are the first ``--limit`` commit nodes of a store, as their vectors are made (``vector_text``), in
batches of 256 like an ingest, each batch through every embedder in turn (load drift falls on all alike).
Each embedder embeds 32 texts first (load and warm-up, not timed).  The
projection keeps an ingest's non-embedding part and scales its embedding part by the rate ratio:
``(total - embed + embed * rate_default / rate_candidate) / total``, with ``--ingest-total`` and
``--ingest-embed`` seconds read from the store's ingest log (``embedding new text ... elapsed``).

    nice -n 10 .venv/bin/python benchmarks/embedders.py --db /tmp/ovs.db --limit 2000 \\
        --embedders default onnx:int8 e5 e5:int8 --ingest-total 1446 --ingest-embed 1369 --json
"""

from __future__ import annotations

import argparse
import json
import time

from neurongraph.index.embedder import make_embedder
from neurongraph.index.vector_cache import vector_text
from neurongraph.store import open_store


def commit_texts(db: str, limit: int) -> list[str]:
    store = open_store(db)
    try:
        out = []
        for r in store.iter_nodes():
            if r.type == "commit":
                out.append(vector_text(r.metadata, r.title, r.text))
                if len(out) == limit:
                    break
        return out
    finally:
        store.close()


def rates(specs: list[str], texts: list[str], batch: int = 256) -> list[dict]:
    """Texts/s of each embedder, the batches interleaved (batch 1 through every embedder, then batch 2, ...)
    so that a change in the machine's load during the run falls on all of them alike."""
    embs = [make_embedder(spec) for spec in specs]
    load = []
    for emb in embs:
        t0 = time.perf_counter()
        emb.embed(texts[:32])
        load.append(time.perf_counter() - t0)
    secs = [0.0] * len(embs)
    for s in range(0, len(texts), batch):
        for k, emb in enumerate(embs):
            t0 = time.perf_counter()
            emb.embed(texts[s : s + batch])
            secs[k] += time.perf_counter() - t0
    return [
        {
            "embedder": spec,
            "model_id": emb.model_id,
            "texts": len(texts),
            "seconds": round(sec, 2),
            "texts_per_s": round(len(texts) / sec, 2),
            "load_and_first_32_s": round(ld, 2),
        }
        for spec, emb, sec, ld in zip(specs, embs, secs, load)
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--limit", type=int, default=2000)
    ap.add_argument("--embedders", nargs="+", default=["default", "e5:int8"])
    ap.add_argument("--ingest-total", type=float, help="seconds today's default ingest of this store took")
    ap.add_argument("--ingest-embed", type=float, help="seconds of that spent embedding")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    texts = commit_texts(a.db, a.limit)
    rows = rates(a.embedders, texts)
    base = rows[0]["texts_per_s"]
    for r in rows:
        r["cost_vs_first"] = round(base / r["texts_per_s"], 3)
        if a.ingest_total and a.ingest_embed:
            rest = a.ingest_total - a.ingest_embed
            r["projected_ingest_ratio"] = round((rest + a.ingest_embed * r["cost_vs_first"]) / a.ingest_total, 3)
    if a.json:
        print(json.dumps(rows, indent=1))
    else:
        for r in rows:
            print(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
