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
  ``ingest_edges_bulk_per_s``: the same edges through the columnar ``Engine.add_edge_columns`` in
  batches of 1,000,000, into a copy of the node-only store (measured before the main store's edges);
* search latencies call ``Engine.search`` with a precomputed query vector, so
  query embedding is **excluded**; ``search_*`` include writing the trace (the
  default), ``search_no_trace_*`` use ``record=False``; per-stage medians come
  from ``SearchResult.timings_ms``;
* ``peak_rss_mb`` is the process's maximum resident set size (getrusage).

With the real model (the default; ``real_model=False`` skips it):

* ``embed_passages_per_s``: the default embedder (all-MiniLM-L6-v2, ONNX Runtime when exported) on
  512 real passages of the shared QA benchmark (``embed.source``; the demo corpus when that is absent),
  model load and warm-up excluded (``embed.load_s``), best of two rounds;
* ``cold_search_s``: median wall time of ``ngr --db DEMO search "…"`` as a new process (start to
  printed result) on the demo store, after one untimed run;
* ``compare_embedders`` (``python -m neurongraph.bench.perf --compare``) adds the same figures for the
  exact torch path and ``onnx:int8``, measured in the same run.

``ngr bench perf --peers`` times the same corpus's search side by side with graph-retriever and the
numpy/scipy floor instead (:mod:`neurongraph.bench.peers`).

The machine is shared in development: ``machine.load_avg_1m`` (start) and ``load_avg_1m_end`` say how
busy it was.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..errors import NeuronGraphError
from ..store.sqlite import SQLITE_VERSION

__all__ = [
    "RandomUnitEmbedder",
    "make_corpus",
    "make_edges",
    "make_queries",
    "run_perf",
    "measure_embedding",
    "measure_cold_search",
    "measure_real_model",
    "bench_passages",
]

NODE_TYPES = ("issue", "pr", "commit", "wiki", "decision")
RELATIONS = ("refs", "implements", "fixes", "supersedes", "discusses", "mentions")
EDGE_BATCH = 50_000
BULK_EDGE_BATCH = 1_000_000  # the columnar path's batch (benchmarks/edge_ingest.py --columns)
NODE_BATCH = 50_000
EMBED_PASSAGES = 512  # real passages timed through the real model
COLD_RUNS = 3  # cold `ngr search` processes timed (after one untimed run that warms the page cache)


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


def _rate_column():
    """Items per second of a task (rich's own speed column formats bytes): the CLI's shared column."""
    from ..cli.common import RateColumn  # lazy: rich loads only when bars are shown

    return RateColumn()


class _Bars:
    """Rich progress bars on a (stderr) console, with rate and time left; no-ops without one."""

    def __init__(self, console):
        self.prog = None
        if console is not None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.prog = Progress(
                TextColumn("{task.description:<18}"),
                BarColumn(),
                MofNCompleteColumn(),
                _rate_column(),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
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
    real_model: bool = True,
    embed_passages: int = EMBED_PASSAGES,
    cold_runs: int = COLD_RUNS,
    compare_embedders: bool = False,
) -> dict:
    """Build a synthetic corpus in a fresh file database and time ingest and search; then, with
    ``real_model``, the real model's embedding throughput and a cold ``ngr search`` (see
    :func:`measure_embedding` and :func:`measure_cold_search`).

    ``blas_threads`` limits BLAS threads (numpy's matrix-vector product) via
    threadpoolctl when it is installed; ``None`` leaves the library default.
    """
    if blas_threads is None:
        res = _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup)
    else:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            raise RuntimeError("blas_threads needs the threadpoolctl package") from None
        with threadpool_limits(limits=blas_threads):
            res = _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup)
    if real_model:
        machine = res.pop("machine")
        res.update(measure_real_model(embed_passages, cold_runs, compare_embedders, console))
        res["machine"] = {**machine, "load_avg_1m_end": _load()}
    return res


# ------------------------------------------------------------------ synthetic phases
class _Synthetic:
    """What the synthetic phases share: the corpus, the queries and their vectors, and timings."""

    def __init__(self, nodes: int, edges_per_node: float, queries: int, warmup: int, dim: int, seed: int):
        t = time.perf_counter()
        self.corpus = make_corpus(nodes, seed)
        self.edges = make_edges(nodes, edges_per_node, seed)
        self.queries = make_queries(queries + warmup, seed)
        self.gen_s = time.perf_counter() - t
        self.emb = RandomUnitEmbedder(dim)
        self.qvecs = self.emb.embed(self.queries)
        self.warmup = warmup


def _phase_embed(run: _Synthetic, bars: _Bars) -> tuple[np.ndarray, float]:
    """Vectors of every node, timed apart from ingest (they are put into the cache before add_nodes)."""
    n = len(run.corpus)
    task = bars.task("embed (excluded)", n)
    t = time.perf_counter()
    vecs = []
    for i in range(0, n, 10_000):
        part = run.corpus[i : i + 10_000]
        vecs.append(run.emb.embed([x.body for x in part]))
        bars.advance(task, len(part))
    return np.concatenate(vecs), time.perf_counter() - t


def _phase_ingest_nodes(eng, run: _Synthetic, vecs: np.ndarray, bars: _Bars) -> float:
    """Vector-cache write + add_nodes (store rows, FTS5, in-memory sync), in batches."""
    n = len(run.corpus)
    task = bars.task("ingest nodes", n)
    t = time.perf_counter()
    for i in range(0, n, NODE_BATCH):
        part = run.corpus[i : i + NODE_BATCH]
        eng.store.put_vectors(run.emb.model_id, [(x.hash, v) for x, v in zip(part, vecs[i : i + NODE_BATCH])])
        r = eng.add_nodes(part)
        assert r["embedded"] == 0, "benchmark vectors should all be cached"
        bars.advance(task, len(part))
    return time.perf_counter() - t


def _phase_ingest_edges(eng, run: _Synthetic, bars: _Bars) -> float:
    task = bars.task("ingest edges", len(run.edges))
    t = time.perf_counter()
    for i in range(0, len(run.edges), EDGE_BATCH):
        part = run.edges[i : i + EDGE_BATCH]
        eng.add_edges(part)
        bars.advance(task, len(part))
    return time.perf_counter() - t


def _phase_bulk_edges(db: str, run: _Synthetic, bars: _Bars) -> float:
    """The same edges through the columnar bulk path (``Engine.add_edge_columns``, batches of
    ``BULK_EDGE_BATCH``) into a copy of the node-only store ``db`` (closed, so the copy is whole)."""
    from ..engine import Engine
    from ..snapshot import snapshot_path
    from ..store.sqlite import SQLiteStore

    copy = db + ".bulk"
    shutil.copy(db, copy)
    snap, snap_copy = snapshot_path(db), snapshot_path(copy)
    if snap is not None and snap_copy is not None and snap.exists():  # open the copy as fast as the original
        shutil.copy(snap, snap_copy)
    task = bars.task("edges bulk", len(run.edges))
    try:
        eng = Engine(SQLiteStore(copy), run.emb)
        eng.snapshot_min_rows = 10**12  # not measured here
        t = time.perf_counter()
        for i in range(0, len(run.edges), BULK_EDGE_BATCH):
            part = run.edges[i : i + BULK_EDGE_BATCH]
            src, rel, dst = (list(x) for x in zip(*part))
            eng.add_edge_columns(src, rel, dst)
            bars.advance(task, len(part))
        took = time.perf_counter() - t
        eng.close()
    finally:
        for path in (copy, copy + "-wal", copy + "-shm", str(snap_copy or "")):
            if path and os.path.exists(path):
                os.unlink(path)
    return took


def _phase_search(eng, run: _Synthetic, bars: _Bars) -> dict:
    """Warm-up, then every query with a trace and again without; latencies and per-stage medians."""
    w = run.warmup
    qs, qv = run.queries[w:], run.qvecs[w:]
    for q, v in zip(run.queries[:w], run.qvecs[:w]):
        eng.search(q, qvec=v, record=False)
    lat, lat_nt, hits = [], [], []
    stages: dict[str, list[float]] = {}
    task = bars.task("search", 2 * len(qs))
    for q, v in zip(qs, qv):
        t = time.perf_counter()
        r = eng.search(q, qvec=v)
        lat.append((time.perf_counter() - t) * 1000)
        hits.append(len(r.hits))
        for k, ms in r.timings_ms.items():
            if k != "embed_query":
                stages.setdefault(k, []).append(ms)
        bars.advance(task, 1)
    for q, v in zip(qs, qv):
        t = time.perf_counter()
        eng.search(q, qvec=v, record=False)
        lat_nt.append((time.perf_counter() - t) * 1000)
        bars.advance(task, 1)
    return {
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
    }


def _phase_reopen(db: str, run: _Synthetic) -> dict:
    """Open the engine over the finished database: from the snapshot, then by a full replay of the store
    (what every open cost before snapshots, and still costs without one); a first search after each."""
    from ..engine import Engine
    from ..snapshot import snapshot_path
    from ..store.sqlite import SQLiteStore

    q, v = run.queries[-1], run.qvecs[-1]
    t = time.perf_counter()
    eng = Engine(SQLiteStore(db), run.emb)
    reopen_s = time.perf_counter() - t
    from_snapshot = eng.opened_from_snapshot
    t = time.perf_counter()
    eng.search(q, qvec=v, record=False)  # cold: at >= 200k it needs the IVF index
    first_search_s = time.perf_counter() - t
    eng.close()
    snap = snapshot_path(db)
    snap_bytes = snap.stat().st_size if snap is not None and snap.exists() else 0
    if snap is not None and snap_bytes:
        snap.unlink()
    t = time.perf_counter()
    eng = Engine(SQLiteStore(db), run.emb)
    reopen_replay_s = time.perf_counter() - t
    t = time.perf_counter()
    eng.search(q, qvec=v, record=False)
    first_search_replay_s = time.perf_counter() - t
    eng.snapshot_min_rows = 10**12  # measured; do not rewrite it
    eng.close()
    return {
        "reopen_s": round(reopen_s, 3),
        "reopen_from_snapshot": from_snapshot,
        "reopen_replay_s": round(reopen_replay_s, 3),
        "first_search_after_reopen_s": round(first_search_s, 3),
        "first_search_after_replay_s": round(first_search_replay_s, 3),
        "snapshot_mb": round(snap_bytes / 2**20, 1),
    }


def _machine() -> dict:
    return {
        "cpus": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "python": platform.python_version(),
        "sqlite": SQLITE_VERSION,
        "numpy": np.__version__,
        "blas": _blas_info(),
        "platform": platform.platform(),
        "load_avg_1m": _load(),
    }


def _load() -> float | None:
    return round(os.getloadavg()[0], 2) if hasattr(os, "getloadavg") else None


def _run_perf(nodes, edges_per_node, queries, dim, seed, db, console, warmup) -> dict:
    from ..engine import Engine
    from ..store.sqlite import SQLiteStore

    tmp = None
    if db is None:
        tmp = tempfile.mkdtemp(prefix="ngr-bench-")
        db = os.path.join(tmp, "bench.db")
    try:
        with _Bars(console) as bars:
            run = _Synthetic(nodes, edges_per_node, queries, warmup, dim, seed)
            vecs, embed_s = _phase_embed(run, bars)
            eng = Engine(SQLiteStore(db), run.emb)
            try:
                nodes_s = _phase_ingest_nodes(eng, run, vecs, bars)
                del vecs
                bulk_s = None
                if run.edges:  # the bulk path into a copy of the node-only store, then the main store goes on
                    eng.close()
                    bulk_s = _phase_bulk_edges(db, run, bars)
                    eng = Engine(SQLiteStore(db), run.emb)
                edges_s = _phase_ingest_edges(eng, run, bars)
                searched = _phase_search(eng, run, bars)
                st = eng.store.stats()
            finally:
                t = time.perf_counter()
                eng.close()  # a store this size writes its snapshot here (snapshot.py)
                close_s = time.perf_counter() - t
            reopened = _phase_reopen(db, run)
            from .perf_learning import learned_on_store  # issue 26: latency with 1,000 learned queries

            w = run.warmup
            learned = learned_on_store(db, run.emb, run.queries[w:], run.qvecs[w:], make_queries(1000, seed + 1))
        db_bytes = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        n_edges = st["edges"]
        return {
            "nodes": st["nodes"],
            "edges": n_edges,
            "edges_per_node": edges_per_node,
            "queries": queries,
            "embedder": f"{run.emb.model_id} (deterministic random unit vectors per text, not semantic)",
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
            "ingest_edges_bulk_per_s": round(n_edges / bulk_s, 1) if bulk_s else None,
            "ingest_edges_bulk_note": "the same edges through Engine.add_edge_columns in batches of "
            f"{BULK_EDGE_BATCH:,} into a copy of the node-only store",
            **searched,
            **{k: v for k, v in reopened.items() if k != "snapshot_mb"},
            **learned,
            "close_s": round(close_s, 3),
            "snapshot_mb": reopened["snapshot_mb"],
            "db_mb": round(db_bytes / 2**20, 1),
            "peak_rss_mb": _rss_mb(),
            "corpus_generation_s": round(run.gen_s, 3),
            "machine": _machine(),
        }
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


# ------------------------------------------------------------------ real-model phases
COLD_QUERY = "why is login slow"
_BENCH_CORPUS = "musique_train200/corpus.jsonl"


def bench_passages(n: int = EMBED_PASSAGES) -> tuple[list[str], str]:
    """Up to ``n`` real passages (title + text, as nodes are embedded) and where they came from: the
    shared QA benchmark corpus (under ``$NGR_BENCH_DATA``, else ``../shared/bench`` beside the
    repository, as in the Makefile), else the built-in demo corpus (35 short software-history nodes)."""
    from ..model import body_of

    env = os.environ.get("NGR_BENCH_DATA")
    root = Path(env) if env else Path(__file__).resolve().parents[3].parent / "shared" / "bench"
    for path in (root / _BENCH_CORPUS,):
        if path.is_file():
            out = []
            with path.open(encoding="utf-8") as f:
                for line in f:
                    d = json.loads(line)
                    out.append(body_of(d.get("title", ""), d.get("text", "")))
                    if len(out) >= n:
                        break
            return out, str(path)
    rows = [json.loads(x) for x in _demo_corpus().read_text("utf-8").splitlines() if x.strip()]
    return [body_of(r["title"], r.get("text", "")) for r in rows if r.get("kind") == "node"][:n], "demo corpus"


def _demo_corpus() -> Path:
    from importlib import resources

    return Path(str(resources.files("neurongraph.cli").joinpath("demo_corpus.jsonl")))


def measure_embedding(spec: str | None, passages: Sequence[str], rounds: int = 2) -> dict:
    """Passages per second of the embedder ``spec`` (None: the default) on ``passages``: the model is
    loaded and warmed on 16 texts first (timed apart, ``load_s``), then all passages are embedded
    ``rounds`` times; the best round counts (the machine is shared: the best is the least disturbed)."""
    from ..index.embedder import make_embedder

    t = time.perf_counter()
    emb = make_embedder(spec)
    emb.embed(list(passages[:16]))
    load_s = time.perf_counter() - t
    rates, cpu_rates = [], []
    for _ in range(rounds):
        t, c = time.perf_counter(), time.process_time()
        emb.embed(list(passages))
        rates.append(len(passages) / (time.perf_counter() - t))
        cpu_rates.append(len(passages) / max(time.process_time() - c, 1e-9))
    backend = getattr(emb, "backend", None)
    return {
        "embedder": emb.model_id + (f" ({backend})" if backend else ""),
        "passages_per_s": round(max(rates), 1),
        "rounds_per_s": [round(r, 1) for r in rates],
        "passages_per_cpu_s": round(max(cpu_rates), 1),  # per CPU-second of this process: less load-dependent
        "load_s": round(load_s, 3),
    }


def _ngr_command() -> list[str]:
    script = Path(sys.executable).with_name("ngr")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "neurongraph.cli.main"]


def measure_cold_search(backend: str | None = None, runs: int = COLD_RUNS, db: str | None = None) -> dict:
    """Wall seconds from starting ``ngr search`` to its exit (result printed) on the demo store, one new
    process per run, default embedder (``backend="torch"``: forced through sentence-transformers, the
    path before the ONNX export).  One untimed run first warms the page cache."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    env.pop("NGR_EMBED_BACKEND", None)
    if backend:
        env["NGR_EMBED_BACKEND"] = backend
    tmp = tempfile.mkdtemp(prefix="ngr-cold-") if db is None else None
    try:
        if db is None:
            db = os.path.join(tmp or ".", "demo.db")
            subprocess.run(
                [*_ngr_command(), "--db", db, "ingest", str(_demo_corpus())],
                env=env, check=True, capture_output=True, timeout=600,
            )  # fmt: skip
        times = []
        for i in range(runs + 1):
            t = time.perf_counter()
            r = subprocess.run(
                [*_ngr_command(), "--db", db, "search", COLD_QUERY],
                env=env, capture_output=True, text=True, timeout=600,
            )  # fmt: skip
            dt = time.perf_counter() - t
            if r.returncode != 0:
                raise RuntimeError(f"ngr search failed ({r.returncode}): {r.stderr.strip()[-300:]}")
            if i:
                times.append(dt)
        return {"median_s": round(float(np.median(times)), 3), "runs_s": [round(x, 3) for x in times]}
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def measure_real_model(
    embed_passages: int = EMBED_PASSAGES, cold_runs: int = COLD_RUNS, compare: bool = False, console=None
) -> dict:
    """``embed_passages_per_s`` and ``cold_search_s`` with the default embedder; with ``compare`` also the
    exact torch path and the int8 ONNX path, measured in the same run (before -> after ratios)."""
    passages, source = bench_passages(embed_passages)
    say = console.print if console is not None else (lambda *a, **k: None)
    say(f"[dim]real model: embedding {len(passages)} passages, {cold_runs} cold searches[/]")
    emb = measure_embedding(None, passages)
    cold = measure_cold_search(None, cold_runs)
    out: dict = {
        "embed_passages_per_s": emb["passages_per_s"],
        "cold_search_s": cold["median_s"],
        "embed": {
            **emb,
            "passages": len(passages),
            "mean_chars": round(float(np.mean([len(p) for p in passages])), 1) if passages else 0.0,
            "source": source,
        },
        "cold_search": {**cold, "command": f"ngr --db DEMO.db search {COLD_QUERY!r}", "store": "demo corpus"},
    }
    if compare:
        say("[dim]real model: the same with the torch path and onnx:int8[/]")
        out["embed_by_path"] = {"default": emb, "torch": measure_embedding("torch", passages)}
        try:
            out["embed_by_path"]["onnx:int8"] = measure_embedding("onnx:int8", passages)
        except NeuronGraphError as exc:
            out["embed_by_path"]["onnx:int8"] = {"error": str(exc)}
        out["cold_search_by_path"] = {"default": cold, "torch": measure_cold_search("torch", cold_runs)}
    return out


def main(argv: list[str] | None = None) -> int:
    """``python -m neurongraph.bench.perf [--compare]``: only the real-model figures, as JSON."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m neurongraph.bench.perf", description=main.__doc__)
    p.add_argument("--compare", action="store_true", help="also the torch path and onnx:int8, in the same run")
    p.add_argument("--passages", type=int, default=EMBED_PASSAGES, help="real passages to embed")
    p.add_argument("--cold-runs", type=int, default=COLD_RUNS, help="timed cold `ngr search` processes")
    a = p.parse_args(argv)
    if a.passages < 16 or a.cold_runs < 1:
        print("error[invalid_argument]: --passages must be >= 16 and --cold-runs >= 1", file=sys.stderr)
        return 2
    res = {"machine": {**_machine(), "load_avg_1m_start": _load()}}
    res.update(measure_real_model(a.passages, a.cold_runs, a.compare))
    res["machine"]["load_avg_1m_end"] = _load()
    print(json.dumps(res, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
