"""Edge ingest at scale: ``Engine.add_edges`` (or ``Engine.add_edge_columns``) into a store of N nodes.

Builds a node-only store once (tiny texts, 8-d vectors: the node phase is not what this measures) as a
template, copies it, then loads ``--edges-per-node * N`` edges in batches and prints the rate per slice
of the load and overall.  The edges are ``bench/perf.py``'s ``make_edges`` (half local, half random,
unsorted), so the numbers compare with ``ngr bench perf``'s ``ingest_edges_per_s``.

    flock /tmp/ngr_coord/bench.lock .venv/bin/python benchmarks/edge_ingest.py --nodes 1000000 \
        --edges-per-node 3 --template /tmp/nodes_1M.db [--columns] [--profile out.prof]

Run it with ``PYTHONPATH=<other checkout>/src`` to measure another commit on the same template.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import os
import shutil
import sys
import tempfile
import time

import numpy as np

from neurongraph.bench.perf import make_edges
from neurongraph.engine import Engine
from neurongraph.model import Node
from neurongraph.store.sqlite import SQLiteStore


class TinyEmbedder:
    """8-d deterministic vectors; the vectors are cached before the nodes are added, so it never runs."""

    dim = 8
    model_id = "bench-tiny:8"

    def embed(self, texts, show_progress: bool = False) -> np.ndarray:
        out = np.ones((len(texts), self.dim), np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)


def build_template(path: str, n: int, batch: int = 50_000) -> None:
    store = SQLiteStore(path)
    emb = TinyEmbedder()
    rng = np.random.default_rng(0)
    for i in range(0, n, batch):
        nodes = [Node(f"n{k:07d}", "doc", f"t{k}", f"text {k}") for k in range(i, min(n, i + batch))]
        vecs = rng.standard_normal((len(nodes), emb.dim)).astype(np.float32)
        store.put_vectors(emb.model_id, [(x.hash, v) for x, v in zip(nodes, vecs)])
        store.upsert_nodes(nodes)
    store.close()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--edges-per-node", type=float, default=3.0)
    ap.add_argument("--batch", type=int, default=50_000)
    ap.add_argument("--template", help="node-only store to reuse (built when missing)")
    ap.add_argument("--columns", action="store_true", help="use Engine.add_edge_columns (the columnar path)")
    ap.add_argument("--limit", type=int, default=0, help="stop after this many edges (0: all)")
    ap.add_argument("--profile", help="write a cProfile of the edge load here")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)

    tmp = tempfile.mkdtemp(prefix="ngr-edges-", dir=os.environ.get("NGR_BENCH_TMP", "/tmp"))
    try:
        template = a.template or os.path.join(tmp, "nodes.db")
        t = time.perf_counter()
        if not os.path.exists(template):
            build_template(template, a.nodes)
        build_s = time.perf_counter() - t
        db = os.path.join(tmp, "edges.db")
        shutil.copy(template, db)
        edges = make_edges(a.nodes, a.edges_per_node)
        if a.limit:
            edges = edges[: a.limit]
        eng = Engine(SQLiteStore(db), TinyEmbedder())
        eng.snapshot_min_rows = 10**12  # not measured here
        prof = cProfile.Profile() if a.profile else None
        slices: list[dict] = []
        total = 0.0
        mark, mark_n = 0.0, 0
        for i in range(0, len(edges), a.batch):
            part = edges[i : i + a.batch]
            if a.columns:
                src, rel, dst = (list(x) for x in zip(*part))
            t = time.perf_counter()
            if prof:
                prof.enable()
            if a.columns:
                eng.add_edge_columns(src, rel, dst)
            else:
                eng.add_edges(part)
            if prof:
                prof.disable()
            dt = time.perf_counter() - t
            total += dt
            mark += dt
            mark_n += len(part)
            done = i + len(part)
            if mark_n >= max(len(edges) // 10, a.batch) or done == len(edges):
                slices.append({"edges_done": done, "edges_per_s": round(mark_n / mark)})
                if not a.json:
                    print(f"{done:>10,} edges  {mark_n / mark:>9,.0f} edges/s (this slice)", flush=True)
                mark, mark_n = 0.0, 0
        n_edges = eng.store.edge_count()
        assert eng.graph.n_edges == n_edges, (eng.graph.n_edges, n_edges)
        eng.close()
        if prof:
            prof.dump_stats(a.profile)
        out = {
            "nodes": a.nodes,
            "edges": n_edges,
            "batch": a.batch,
            "path": "add_edge_columns" if a.columns else "add_edges",
            "edges_per_s": round(len(edges) / total),
            "edges_s": round(total, 2),
            "template_build_s": round(build_s, 1),
            "slices": slices,
            "load_avg": os.getloadavg(),
        }
        print(json.dumps(out) if a.json else f"overall {out['edges_per_s']:,} edges/s ({total:.1f} s)")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
