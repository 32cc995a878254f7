#!/usr/bin/env python3
"""Padded token slots the ONNX embedder runs for a store's node texts, with and without the length sort of
``index/vector_cache.py`` (docs/ingest.md, "What is embedded").

Why a count and not a timing: on a shared 2-core machine texts/s swing by 2x between runs, while the padded
slots are what the sort changes and are exact.  "store order": the texts in batches of 256 as stored, each
sorted by token count into runs of 32 (what ``OnnxEmbedder.embed`` does); "sorted": longest first, then the
same.  Placeholders without text are left out (they share one label vector).

Usage: python scripts/embed_padding.py STORE.db
"""

from __future__ import annotations

import sqlite3
import sys

from tokenizers import Tokenizer

from neurongraph.index.onnx_export import source_model_dir
from neurongraph.model import body_of


def slots(lengths: list[int], order: list[int], chunk: int = 256, run: int = 32) -> int:
    """Token slots (batch rows x widest row) of embedding ``order`` in calls of ``chunk`` texts."""
    total = 0
    for i in range(0, len(order), chunk):
        ls = sorted(lengths[j] for j in order[i : i + chunk])
        total += sum(max(ls[s : s + run]) * len(ls[s : s + run]) for s in range(0, len(ls), run))
    return total


def main(db: str) -> None:
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    q = "SELECT title, text FROM nodes WHERE json_extract(metadata, '$.placeholder') IS NOT 1 ORDER BY idx"
    texts = [body_of(t, x) for t, x in conn.execute(q)]
    tok = Tokenizer.from_file(str(source_model_dir() / "tokenizer.json"))
    tok.enable_truncation(max_length=256)
    tok.no_padding()
    lengths = [len(e.ids) for e in tok.encode_batch([t.strip() for t in texts])]
    real = sum(lengths)
    plain = list(range(len(texts)))
    by_length = sorted(plain, key=lambda j: -len(texts[j]))
    a, b = slots(lengths, plain), slots(lengths, by_length)
    print(f"{len(texts)} texts, {real} tokens; slots: store order {a} ({a / real:.3f}x), sorted {b} ({b / real:.3f}x)")


if __name__ == "__main__":
    main(sys.argv[1])
