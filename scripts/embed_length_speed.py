#!/usr/bin/env python3
"""texts/s of the default embedder on a store's first 2,000 commit texts, in calls of 256 texts: in store
order (each call sorted into runs by the ONNX path) against sorted longest first across all 2,000, as
``index/vector_cache.py`` does (docs/ingest.md, "What is embedded").  Three alternated rounds; each
reports (wall texts/s, texts per CPU-second of this process): the CPU rate is steadier on a shared machine.

Usage: python scripts/embed_length_speed.py STORE.db   (a copy: the store is only read)
"""

from __future__ import annotations

import json
import sqlite3
import sys
import time

from neurongraph.index.embedder import make_embedder
from neurongraph.model import body_of


def main(db: str) -> None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = conn.execute("SELECT title, text FROM nodes WHERE type = 'commit' ORDER BY idx LIMIT 2000").fetchall()
    texts = [body_of(t, x) for t, x in rows]
    emb = make_embedder(None)
    emb.embed(texts[:64])  # load and warm up

    def run(order: list[int]) -> tuple[float, float]:
        t0, c0 = time.perf_counter(), time.process_time()
        for i in range(0, len(order), 256):
            emb.embed([texts[j] for j in order[i : i + 256]])
        return round(len(order) / (time.perf_counter() - t0), 1), round(len(order) / (time.process_time() - c0), 1)

    plain = list(range(len(texts)))
    by_length = sorted(plain, key=lambda j: -len(texts[j]))
    res: dict[str, list] = {"store_order": [], "sorted": []}
    for _ in range(3):
        res["store_order"].append(run(plain))
        res["sorted"].append(run(by_length))
    print(json.dumps({"model": emb.model_id, "texts": len(texts), **res}))


if __name__ == "__main__":
    main(sys.argv[1])
