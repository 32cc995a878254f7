"""Synthetic performance benchmark: ingest throughput and search latency vs corpus size.

    ngr bench perf --nodes 100000 --json

What is measured (and what is not):

* the corpus is synthetic: titles and texts are random words drawn
  (Zipf-Mandelbrot, see ``ZIPF_OFFSET``) from a fixed vocabulary of 5,000 words, node types from a few
  software-history kinds, and
  ``edges_per_node`` typed edges per node, half "local" (to a nearby node index,
  like a PR and its commits) and half uniformly random;
* vectors come from :class:`RandomUnitEmbedder` (a deterministic random unit
  vector per text, 384 dimensions like the real model) so the benchmark measures
  the engine, not a neural network.  Embedding is timed separately
  (``embed_s``) and is **excluded** from ``ingest_nodes_per_s``, which covers the
  vector-cache write + ``Engine.add_nodes`` (SQLite rows, FTS5 index, in-memory
  vector matrix and graph sync);
* ``ingest_edges_per_s``: ``Engine.add_edges`` in batches of 50,000 into a file
  database, including validation, the SQLite upsert and the in-memory CSR sync;
* search latencies call ``Engine.search`` with a precomputed query vector, so
  query embedding is **excluded**; ``search_*`` include writing the trace (the
  default), ``search_no_trace_*`` use ``record=False``; per-stage medians come
  from ``SearchResult.timings_ms``;
* ``peak_rss_mb`` is the process's maximum resident set size (getrusage).
"""

from __future__ import annotations

import hashlib
import os
import platform
import resource
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np

__all__ = ["RandomUnitEmbedder", "make_corpus", "make_edges", "make_queries", "run_perf"]

NODE_TYPES = ("issue", "pr", "commit", "wiki", "decision")
RELATIONS = ("refs", "implements", "fixes", "supersedes", "discusses", "mentions")
EDGE_BATCH = 50_000
NODE_BATCH = 50_000


def _vocabulary(n: int = 5000) -> list[str]:
    """A fixed vocabulary of pronounceable pseudo-words (independent of the corpus seed)."""
    rng = np.random.default_rng(12345)
    cons, vows = list("bcdfghklmnprstvz"), list("aeiou")
    words: dict[str, None] = {}
    while len(words) < n:
        k = int(rng.integers(2, 4))
        w = "".join(cons[int(rng.integers(len(cons)))] + vows[int(rng.integers(len(vows)))] for _ in range(k))
        words[w] = None
    return list(words)


VOCAB = _vocabulary()


class RandomUnitEmbedder:
    """A deterministic random unit vector per text (seeded by its hash).  Not semantic: for benchmarks."""

    def __init__(self, dim: int = 384):
        self.dim = dim
        self.model_id = f"bench-random-unit:{dim}"

    def embed(self, texts: Sequence[str], show_progress: bool = False) -> np.ndarray:
        out = np.empty((len(texts), self.dim), np.float32)
        for i, t in enumerate(texts):
            seed = int.from_bytes(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest(), "little")
            out[i] = np.random.default_rng(seed).standard_normal(self.dim, dtype=np.float32)
        out /= np.linalg.norm(out, axis=1, keepdims=True)
        return out


ZIPF_OFFSET = 10  # p(word) ∝ 1/(rank + 10): the head of a text after stop-word removal


def _zipf_words(rng: np.random.Generator, count: int) -> np.ndarray:
    """Word indices with a Zipf-Mandelbrot distribution over the vocabulary.

    Pure Zipf (offset 0) makes the top pseudo-word 11% of all tokens, like "the",
    and present in 95% of nodes; the engine drops real stop words from queries,
    so that would measure a query nobody sends.  With offset 10 the most frequent
    word is ~1.5% of tokens and occurs in about a third of the nodes (like "fix"
    in a software history), which is still a heavy BM25 posting list.
    """
    ranks = np.arange(1, len(VOCAB) + 1, dtype=np.float64)
    p = 1.0 / (ranks + ZIPF_OFFSET)
    p /= p.sum()
    return rng.choice(len(VOCAB), size=count, p=p)


def make_corpus(n: int, seed: int = 0) -> list:
    """``n`` synthetic nodes (ids ``n0000000``...) with random titles and texts."""
    from ..model import Node

    rng = np.random.default_rng(seed)
    title_len = rng.integers(3, 8, n)
    text_len = rng.integers(10, 40, n)
    words = _zipf_words(rng, int(title_len.sum() + text_len.sum()))
    types = rng.integers(0, len(NODE_TYPES), n)
    vocab = VOCAB
    out, pos = [], 0
    for i in range(n):
        tl, xl = int(title_len[i]), int(text_len[i])
        title = " ".join(vocab[w] for w in words[pos : pos + tl])
        pos += tl
        text = " ".join(vocab[w] for w in words[pos : pos + xl])
        pos += xl
        out.append(Node(f"n{i:07d}", NODE_TYPES[int(types[i])], title, text))
    return out


def make_edges(n: int, per_node: float, seed: int = 0) -> list[tuple[str, str, str]]:
    """About ``per_node * n`` distinct typed edges: half local (|src-dst| <= 50), half random."""
    rng = np.random.default_rng(seed + 1)
    m = int(round(n * per_node))
    if m == 0 or n < 2:
        return []
    src = rng.integers(0, n, m)
    local = rng.random(m) < 0.5
    dst = np.where(local, np.clip(src + rng.integers(-50, 51, m), 0, n - 1), rng.integers(0, n, m))
    rel = rng.integers(0, len(RELATIONS), m)
    keep = src != dst
    key = np.unique(np.stack([src[keep], rel[keep], dst[keep]], axis=1), axis=0)
    key = key[rng.permutation(key.shape[0])]  # arrival order is not sorted in real ingests
    return [(f"n{s:07d}", RELATIONS[r], f"n{d:07d}") for s, r, d in key.tolist()]


def make_queries(k: int, seed: int = 0) -> list[str]:
    rng = np.random.default_rng(seed + 2)
    lens = rng.integers(2, 6, k)
    words = _zipf_words(rng, int(lens.sum()))
    out, pos = [], 0
    for L in lens.tolist():
        out.append(" ".join(VOCAB[w] for w in words[pos : pos + L]))
        pos += L
    return out


def _pct(xs: list[float], q: float) -> float:
    return round(float(np.percentile(np.asarray(xs), q)), 3) if xs else float("nan")


def _rss_mb() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(r / (1024 * 1024) if sys.platform == "darwin" else r / 1024, 1)


class _Bars:
    """Rich progress bars on a (stderr) console; no-ops without one."""

    def __init__(self, console):
        self.prog = None
        if console is not None:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.prog = Progress(
                TextColumn("{task.description:<18}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )

    def __enter__(self):
        if self.prog:
            self.prog.start()
        return self

    def __exit__(self, *exc):
        if self.prog:
            self.prog.stop()

    def task(self, name: str, total: int):
        return self.prog.add_task(name, total=total) if self.prog else None

    def advance(self, task, k: int) -> None:
        if self.prog:
            self.prog.advance(task, k)


def _blas_info() -> list[dict]:
    try:
        from threadpoolctl import threadpool_info
    except ImportError:
        return []
    return [{"api": i.get("internal_api"), "threads": i.get("num_threads")} for i in threadpool_info()]


def run_perf(
    nodes: int = 10_000,
    edges_per_node: float = 3.0,
    queries: int = 200,
    dim: int = 384,
    seed: int = 0,
    db: str | None = None,
    console=None,
    warmup: int = 10,
    blas_threads: int | None = None,
) -> dict:
    """Build a synthetic corpus in a fresh file database and time ingest and search.

    ``blas_threads`` limits BLAS threads (numpy's matrix-vector product) via
    threadpoolctl when it is installed; ``None`` leaves the library default.
    """
    if blas_threads is None:
        return _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup)
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        raise RuntimeError("blas_threads needs the threadpoolctl package") from None
    with threadpool_limits(limits=blas_threads):
        return _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup)


def _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup) -> dict:
    from ..engine import Engine
    from ..store.sqlite import SQLiteStore

    tmp = None
    if db is None:
        tmp = tempfile.mkdtemp(prefix="ngr-bench-")
        db = os.path.join(tmp, "bench.db")
    emb = RandomUnitEmbedder(dim)
    res: dict = {}
    try:
        with _Bars(console) as bars:
            t = time.perf_counter()
            corpus = make_corpus(nodes, seed)
            edges = make_edges(nodes, edges_per_node, seed)
            qs = make_queries(queries + warmup, seed)
            gen_s = time.perf_counter() - t

            # embedding, timed apart from ingest
            task = bars.task("embed (excluded)", nodes)
            t = time.perf_counter()
            vecs = []
            for i in range(0, nodes, 10_000):
                part = corpus[i : i + 10_000]
                vecs.append(emb.embed([n.body for n in part]))
                bars.advance(task, len(part))
            vecs = np.concatenate(vecs)
            embed_s = time.perf_counter() - t

            eng = Engine(SQLiteStore(db), emb)
            try:
                # ingest nodes: vector-cache write + add_nodes (store rows, FTS5, in-memory sync)
                task = bars.task("ingest nodes", nodes)
                t = time.perf_counter()
                for i in range(0, nodes, NODE_BATCH):
                    part = corpus[i : i + NODE_BATCH]
                    eng.store.put_vectors(emb.model_id, [(n.hash, v) for n, v in zip(part, vecs[i : i + NODE_BATCH])])
                    r = eng.add_nodes(part)
                    assert r["embedded"] == 0, "benchmark vectors should all be cached"
                    bars.advance(task, len(part))
                nodes_s = time.perf_counter() - t
                del vecs

                # ingest edges in batches
                task = bars.task("ingest edges", len(edges))
                t = time.perf_counter()
                for i in range(0, len(edges), EDGE_BATCH):
                    part = edges[i : i + EDGE_BATCH]
                    eng.add_edges(part)
                    bars.advance(task, len(part))
                edges_s = time.perf_counter() - t

                # search: precomputed query vectors; warm-up first
                qvecs = emb.embed(qs)
                for q, v in zip(qs[:warmup], qvecs[:warmup]):
                    eng.search(q, qvec=v, record=False)
                lat, lat_nt = [], []
                stages: dict[str, list[float]] = {}
                hits = []
                task = bars.task("search", 2 * queries)
                for q, v in zip(qs[warmup:], qvecs[warmup:]):
                    t = time.perf_counter()
                    r = eng.search(q, qvec=v)
                    lat.append((time.perf_counter() - t) * 1000)
                    hits.append(len(r.hits))
                    for k, ms in r.timings_ms.items():
                        if k != "embed_query":
                            stages.setdefault(k, []).append(ms)
                    bars.advance(task, 1)
                for q, v in zip(qs[warmup:], qvecs[warmup:]):
                    t = time.perf_counter()
                    eng.search(q, qvec=v, record=False)
                    lat_nt.append((time.perf_counter() - t) * 1000)
                    bars.advance(task, 1)
                st = eng.store.stats()
            finally:
                t = time.perf_counter()
                eng.close()  # a store this size writes its snapshot here (snapshot.py)
                close_s = time.perf_counter() - t

            # cold start: open the engine over the finished database — from the snapshot, then by a
            # full replay of the store (what every open cost before snapshots, and still costs without one)
            from ..snapshot import snapshot_path

            t = time.perf_counter()
            eng = Engine(SQLiteStore(db), emb)
            reopen_s = time.perf_counter() - t
            from_snapshot = eng.opened_from_snapshot
            t = time.perf_counter()
            eng.search(qs[-1], qvec=qvecs[-1], record=False)  # cold: at >= 200k it needs the IVF index
            first_search_s = time.perf_counter() - t
            eng.close()
            snap = snapshot_path(db)
            snap_bytes = snap.stat().st_size if snap is not None and snap.exists() else 0
            if snap_bytes:
                snap.unlink()
            t = time.perf_counter()
            eng = Engine(SQLiteStore(db), emb)
            reopen_replay_s = time.perf_counter() - t
            t = time.perf_counter()
            eng.search(qs[-1], qvec=qvecs[-1], record=False)
            first_search_replay_s = time.perf_counter() - t
            eng.snapshot_min_rows = 10**12  # measured; do not rewrite it
            eng.close()

        db_bytes = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        n_edges = st["edges"]
        res = {
            "nodes": st["nodes"],
            "edges": n_edges,
            "edges_per_node": edges_per_node,
            "queries": queries,
            "embedder": f"{emb.model_id} (deterministic random unit vectors per text, not semantic)",
            "dim": dim,
            "ingest_nodes_per_s": round(nodes / nodes_s, 1),
            "ingest_nodes_s": round(nodes_s, 3),
            "ingest_nodes_note": "vector-cache write + Engine.add_nodes (SQLite rows, FTS5, in-memory sync), "
            f"batches of {NODE_BATCH}; embedding excluded (see embed_s)",
            "embed_s": round(embed_s, 3),
            "ingest_edges_per_s": round(n_edges / edges_s, 1) if edges_s > 0 else None,
            "ingest_edges_s": round(edges_s, 3),
            "ingest_edges_note": f"Engine.add_edges in batches of {EDGE_BATCH} into a file database "
            "(validation, SQLite upsert, in-memory CSR sync)",
            "search_p50_ms": _pct(lat, 50),
            "search_p95_ms": _pct(lat, 95),
            "search_p99_ms": _pct(lat, 99),
            "search_no_trace_p50_ms": _pct(lat_nt, 50),
            "search_no_trace_p95_ms": _pct(lat_nt, 95),
            "search_no_trace_p99_ms": _pct(lat_nt, 99),
            "search_note": "Engine.search with a precomputed qvec (query embedding excluded), default SearchConfig "
            "(limit 10, spread channel); search_* record a trace, search_no_trace_* use record=False",
            "search_p50_ms_by_stage": {k: _pct(v, 50) for k, v in stages.items()},
            "mean_hits": round(float(np.mean(hits)), 2) if hits else 0.0,
            "reopen_s": round(reopen_s, 3),
            "reopen_from_snapshot": from_snapshot,
            "reopen_replay_s": round(reopen_replay_s, 3),
            "first_search_after_reopen_s": round(first_search_s, 3),
            "first_search_after_replay_s": round(first_search_replay_s, 3),
            "close_s": round(close_s, 3),
            "snapshot_mb": round(snap_bytes / 2**20, 1),
            "db_mb": round(db_bytes / 2**20, 1),
            "peak_rss_mb": _rss_mb(),
            "corpus_generation_s": round(gen_s, 3),
            "machine": {
                "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
                "python": platform.python_version(),
                "sqlite": sqlite3.sqlite_version,
                "numpy": np.__version__,
                "blas": _blas_info(),
                "platform": platform.platform(),
                "load_avg_1m": round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None,
            },
        }
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    return res
