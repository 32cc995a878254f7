"""Side by side, one corpus, one run: ngr, graph-retriever and the numpy floor (issue 18, target 0).

    ngr bench perf --peers [--peer-sizes 1000,10000] [--queries 200] [--json]
    python -m neurongraph.bench.peers --sizes 1000,10000 --json

For each corpus size N the synthetic corpus of :mod:`neurongraph.bench.perf` is built once
(``make_corpus`` / ``make_edges`` / ``make_queries``, vectors from :class:`RandomUnitEmbedder`, 384-d) and
the same documents, vectors and edges are given to three systems in the same process:

* **ngr**: ``Engine.search(q, qvec=v)`` on a fresh SQLite file store, default ``SearchConfig`` (BM25 +
  dense + spread + explanation, 10 hits), timed with the trace recorded (``ngr``, as users run it) and
  with ``record=False`` (``ngr_no_trace``);
* **graph-retriever** 0.8 (PyPI ``graph-retriever``, extra ``bench``): ``graph_retriever.traverse`` with
  its ``InMemory`` adapter and the ``Eager`` strategy.  Each document is a ``Content`` whose embedding is
  the same precomputed vector (a numpy row, the fastest form its cosine accepts) and whose metadata
  ``links`` lists its neighbours in both directions (ngr's spread walks edges both ways), traversed
  through the metadata edge ``("links", "$id")``; the query embedding is a function that returns the
  precomputed query vector.  Parameters mapped from ngr's defaults: ``select_k=10`` (``limit``),
  ``start_k=4`` (``seeds``), ``max_depth=2`` (spread ``max_depth``), ``adjacent_k=10`` (graph-retriever's
  default: ngr's spread has no per-step cap; at the default degree ~6 the first step already reaches 10);
* **floor**: what any system has to do at least: a float32 matrix-vector product, ``argpartition`` top-10,
  a 2-hop expansion of the 4 best seeds through a CSR adjacency (index/sparse.py; undirected, ``indptr``/``indices``
  slices) and the top-10 by similarity over the dense top-10 plus that neighbourhood.

Query embedding is excluded everywhere (all three get the same precomputed query vector).  Queries are
run in an interleaved order (query i runs every system, the system order rotated by i) after
``warmup`` untimed queries, so load drift on a shared machine hits all of them alike.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .perf import (
    _Bars,
    _load,
    _machine,
    _pct,
    _phase_embed,
    _phase_ingest_edges,
    _phase_ingest_nodes,
    _Synthetic,
)

__all__ = ["MissingPeer", "SYSTEMS", "run_peers", "GR_PARAMS", "render_table"]

K = 10
SEEDS = 4  # the floor's and graph-retriever's seeds = SearchConfig.seeds
GR_PARAMS = {"select_k": K, "start_k": SEEDS, "adjacent_k": 10, "max_depth": 2}
SYSTEMS = ("ngr", "ngr_no_trace", "graph_retriever", "floor")
DESCRIPTIONS = {
    "ngr": "Engine.search(q, qvec=v), default SearchConfig (BM25 + dense + spread + explanation), trace recorded",
    "ngr_no_trace": "the same with record=False",
    "graph_retriever": "graph_retriever.traverse, InMemory adapter + Eager("
    + ", ".join(f"{k}={v}" for k, v in GR_PARAMS.items())
    + "), edges ('links', '$id') with links = neighbours both ways, precomputed vectors",
    "floor": f"numpy float32 matvec + argpartition top-{K} + CSR 2-hop expansion of the "
    f"{SEEDS} best seeds, top-{K} by similarity over both",
}
INSTALL_HINT = "pip install -e '.[bench]' (or pip install graph-retriever==0.8.0)"


class MissingPeer(RuntimeError):
    """graph-retriever is not installed (the ``bench`` extra)."""


def _graph_retriever() -> Any:
    try:
        import graph_retriever
        from graph_retriever.adapters.in_memory import InMemory
        from graph_retriever.strategies import Eager
    except ImportError:
        raise MissingPeer(f"the side-by-side comparison needs graph-retriever: {INSTALL_HINT}") from None
    return graph_retriever, InMemory, Eager


# ------------------------------------------------------------------ the three systems over one corpus
def _adjacency(n: int, edges: Sequence[tuple[str, str, str]]):
    """Undirected CSR adjacency (duplicates merged) over node indices ``n0000000`` -> 0."""
    from ..index.sparse import Csr

    if not edges:
        return Csr.from_coo(np.zeros(0, np.float32), [], [], (n, n))
    src = np.fromiter((int(s[1:]) for s, _, _ in edges), np.int64, len(edges))
    dst = np.fromiter((int(d[1:]) for _, _, d in edges), np.int64, len(edges))
    rows, cols = np.concatenate([src, dst]), np.concatenate([dst, src])
    return Csr.from_coo(np.ones(rows.size, np.float32), rows, cols, (n, n))


class Floor:
    """Dense top-k plus a 2-hop CSR expansion of the best seeds: the least any graph retriever does."""

    def __init__(self, ids: list[str], vecs: np.ndarray, adjacency, k: int = K, seeds: int = SEEDS):
        self.ids, self.mat = ids, np.ascontiguousarray(vecs, dtype=np.float32)
        self.indptr, self.indices = adjacency.indptr, adjacency.indices
        self.k, self.seeds = min(k, len(ids)), seeds

    def _neighbours(self, rows: np.ndarray) -> np.ndarray:
        ip, ix = self.indptr, self.indices
        parts = [ix[ip[r] : ip[r + 1]] for r in rows.tolist()]
        return np.unique(np.concatenate(parts)) if parts else rows[:0]

    def search(self, qvec: np.ndarray) -> list[str]:
        scores = self.mat @ qvec
        top = np.argpartition(-scores, self.k - 1)[: self.k]
        top = top[np.argsort(-scores[top])]
        hop1 = self._neighbours(top[: self.seeds])
        hop2 = self._neighbours(hop1)
        pool = np.unique(np.concatenate([top, hop1, hop2]))
        best = pool[np.argsort(-scores[pool])[: self.k]]
        return [self.ids[i] for i in best.tolist()]


class GraphRetrieverPeer:
    """graph-retriever's InMemory adapter over the same documents, vectors and (undirected) edges."""

    def __init__(self, corpus: list, vecs: np.ndarray, adjacency, queries: list[str], qvecs: np.ndarray):
        gr, in_memory, eager = _graph_retriever()
        self._traverse = gr.traverse
        ip, ix = adjacency.indptr, adjacency.indices
        ids = [x.id for x in corpus]
        contents = [
            gr.Content(
                id=ids[i],
                content=x.body,
                embedding=vecs[i],
                metadata={"links": [ids[j] for j in ix[ip[i] : ip[i + 1]].tolist()]},
            )
            for i, x in enumerate(corpus)
        ]
        qmap = dict(zip(queries, qvecs))
        self.store = in_memory(embedding=qmap.__getitem__, content=contents)
        self.strategy = eager(**GR_PARAMS)
        self.edges = [("links", "$id")]

    def search(self, query: str) -> list[str]:
        nodes = self._traverse(query, edges=self.edges, strategy=self.strategy, store=self.store)
        return [n.id for n in nodes]


# ------------------------------------------------------------------ one size
def _size(n: int, edges_per_node: float, queries: int, warmup: int, dim: int, seed: int, bars: _Bars) -> dict:
    from ..engine import Engine
    from ..store.sqlite import SQLiteStore

    run = _Synthetic(n, edges_per_node, queries, warmup, dim, seed)
    vecs, _ = _phase_embed(run, bars)
    ids = [x.id for x in run.corpus]
    adj = _adjacency(n, run.edges)
    t = time.perf_counter()
    peer = GraphRetrieverPeer(run.corpus, vecs, adj, run.queries, run.qvecs)
    gr_build_s = time.perf_counter() - t
    floor = Floor(ids, vecs, adj)
    tmp = tempfile.mkdtemp(prefix="ngr-peers-")
    eng = Engine(SQLiteStore(os.path.join(tmp, "peers.db")), run.emb)
    try:
        t = time.perf_counter()
        _phase_ingest_nodes(eng, run, vecs, bars)
        _phase_ingest_edges(eng, run, bars)
        ngr_build_s = time.perf_counter() - t
        n_edges = eng.store.stats()["edges"]
        stages: dict[str, list[float]] = {}

        def ngr(q: str, v: np.ndarray) -> list[str]:
            r = eng.search(q, qvec=v)
            for k, ms in r.timings_ms.items():
                if k != "embed_query":
                    stages.setdefault(k, []).append(ms)
            return [h.id for h in r.hits]

        calls: dict[str, Callable[[str, np.ndarray], list[str]]] = {
            "ngr": ngr,
            "ngr_no_trace": lambda q, v: [h.id for h in eng.search(q, qvec=v, record=False).hits],
            "graph_retriever": lambda q, v: peer.search(q),
            "floor": lambda q, v: floor.search(v),
        }
        timed = _interleaved(calls, run, floor.mat, bars)
    finally:
        eng.close()
        shutil.rmtree(tmp, ignore_errors=True)
    p50 = {s: timed[s]["p50_ms"] for s in SYSTEMS}
    return {
        "nodes": n,
        "edges": n_edges,
        "queries": queries,
        "systems": timed,
        "ratios_p50": {
            "ngr_over_graph_retriever": _ratio(p50["ngr"], p50["graph_retriever"]),
            "ngr_over_floor": _ratio(p50["ngr"], p50["floor"]),
            "graph_retriever_over_floor": _ratio(p50["graph_retriever"], p50["floor"]),
        },
        "ngr_p50_ms_by_stage": {k: _pct(v[warmup:], 50) for k, v in stages.items()},
        "build_s": {"ngr_ingest": round(ngr_build_s, 3), "graph_retriever_contents": round(gr_build_s, 3)},
    }


def _ratio(a: float, b: float) -> float | None:
    return round(a / b, 2) if b > 0 else None


def _interleaved(calls: dict, run: _Synthetic, mat: np.ndarray, bars: _Bars) -> dict:
    """Warm-up, then each timed query through every system in a rotated order."""
    w = run.warmup
    for q, v in zip(run.queries[:w], run.qvecs[:w]):
        for s in SYSTEMS:
            calls[s](q, v)
    lat: dict[str, list[float]] = {s: [] for s in SYSTEMS}
    hits: dict[str, list[int]] = {s: [] for s in SYSTEMS}
    top1: dict[str, list[bool]] = {s: [] for s in SYSTEMS}
    qs, qv = run.queries[w:], run.qvecs[w:]
    task = bars.task("peers search", len(qs))
    for i, (q, v) in enumerate(zip(qs, qv)):
        dense_top1 = f"n{int(np.argmax(mat @ v)):07d}"
        order = SYSTEMS[i % len(SYSTEMS) :] + SYSTEMS[: i % len(SYSTEMS)]
        for s in order:
            t = time.perf_counter()
            got = calls[s](q, v)
            lat[s].append((time.perf_counter() - t) * 1000)
            hits[s].append(len(got))
            top1[s].append(bool(got) and got[0] == dense_top1)
        bars.advance(task, 1)
    return {
        s: {
            "p50_ms": _pct(lat[s], 50),
            "p95_ms": _pct(lat[s], 95),
            "mean_hits": round(float(np.mean(hits[s])), 2),
            "min_hits": int(min(hits[s])),
            "top1_is_dense_top1": round(float(np.mean(top1[s])), 3),
            "what": DESCRIPTIONS[s],
        }
        for s in SYSTEMS
    }


def run_peers(
    sizes: Sequence[int] = (1000, 10_000),
    edges_per_node: float = 3.0,
    queries: int = 200,
    warmup: int = 10,
    dim: int = 384,
    seed: int = 0,
    console=None,
    blas_threads: int | None = None,
) -> dict:
    """Time ngr, graph-retriever and the floor on one synthetic corpus per size (module docstring).

    ``blas_threads`` limits BLAS threads for all three (threadpoolctl), as ``run_perf`` does: on a busy
    shared machine one thread gives steadier figures; ``None`` leaves the library default."""
    _graph_retriever()  # fail before building anything
    from contextlib import nullcontext
    from importlib.metadata import version

    limit: Any = nullcontext()
    if blas_threads is not None:
        try:
            from threadpoolctl import threadpool_limits
        except ImportError:
            raise RuntimeError("blas_threads needs the threadpoolctl package") from None
        limit = threadpool_limits(limits=blas_threads)
    out = []
    with limit, _Bars(console) as bars:
        machine = _machine()  # inside the limit: machine.blas shows the threads used
        for n in sizes:
            out.append(_size(int(n), edges_per_node, queries, warmup, dim, seed, bars))
    return {
        "benchmark": "peers",
        "k": K,
        "dim": dim,
        "edges_per_node": edges_per_node,
        "warmup": warmup,
        "note": "same synthetic corpus, vectors (bench-random-unit, deterministic per text) and edges for every "
        "system; query embedding excluded (precomputed query vectors); interleaved query order, warm-up "
        "excluded; top1_is_dense_top1 = share of queries whose first hit is the exact dense top-1",
        "graph_retriever_version": version("graph-retriever"),
        "graph_retriever_params": GR_PARAMS,
        "sizes": out,
        "machine": {**machine, "load_avg_1m_end": _load()},
    }


def render_table(res: dict):
    """A rich table: one row per size and system."""
    from rich.table import Table

    t = Table(title="ngr bench perf --peers (query embedding excluded, 10 hits)")
    for c in ("N", "system", "p50 ms", "p95 ms", "hits", "p50 vs floor"):
        t.add_column(c, justify="left" if c == "system" else "right")
    for size in res["sizes"]:
        floor = size["systems"]["floor"]["p50_ms"]
        for s in SYSTEMS:
            r = size["systems"][s]
            ratio = _ratio(r["p50_ms"], floor)
            t.add_row(
                f"{size['nodes']:,}",
                s,
                f"{r['p50_ms']:.2f}",
                f"{r['p95_ms']:.2f}",
                f"{r['mean_hits']:g}",
                f"{ratio:g}×" if ratio is not None else "-",
            )
        t.add_section()
    m = res["machine"]
    blas = ", ".join(f"{b['api']} {b['threads']}" for b in m.get("blas", [])) or "?"
    t.caption = f"load {m.get('load_avg_1m')} → {m.get('load_avg_1m_end')}, {m.get('cpus')} cpus, BLAS threads: {blas}"
    return t


def parse_sizes(text: str) -> list[int]:
    """``"1000,10000"`` -> ``[1000, 10000]`` (each at least 20: the floor needs more nodes than hits)."""
    from ..errors import InvalidArgument

    try:
        sizes = [int(x) for x in text.replace(" ", "").split(",") if x]
    except ValueError:
        raise InvalidArgument(f"sizes must be comma-separated integers, got {text!r}") from None
    if not sizes or min(sizes) < 20:
        raise InvalidArgument(f"sizes must be integers >= 20, got {text!r}")
    return sizes


def main(argv: list[str] | None = None) -> int:
    """``python -m neurongraph.bench.peers``: the comparison as a table, or JSON with ``--json``."""
    import argparse
    import json

    p = argparse.ArgumentParser(prog="python -m neurongraph.bench.peers", description=__doc__.splitlines()[0])
    p.add_argument("--sizes", default="1000,10000", help="corpus sizes, comma-separated")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--edges-per-node", type=float, default=3.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--blas-threads", type=int, default=None)
    p.add_argument("--json", action="store_true")
    a = p.parse_args(argv)
    try:
        res = run_peers(parse_sizes(a.sizes), a.edges_per_node, a.queries, seed=a.seed, blas_threads=a.blas_threads)
    except MissingPeer as exc:
        print(f"error[missing_dependency]: {exc}")
        return 2
    if a.json:
        print(json.dumps(res, indent=2))
    else:
        from rich.console import Console

        Console().print(render_table(res))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
