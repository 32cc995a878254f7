"""Per-query latency of the graph channels on a synthetic random graph.

Usage: .venv/bin/python benchmarks/graph_channels.py --nodes 100000 --degree 10 [--queries 20]

Random directed graph, ``degree`` out-edges per node (uniform targets), weights
U(0.1, 1), 10 relation types; 5 random seeds per query; qsim ~ U(0, 1); 32-d random
unit vectors for MMR; metadata: one field with n/100 distinct values (~100 nodes
per value).  Prints a markdown table (median / p95 ms over the queries).
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np

from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.beam import beam_search
from neurongraph.graph.ppr import ppr, transition_matrix
from neurongraph.graph.spread import spread
from neurongraph.graph.strategies import Eager, GraphEdges, MetadataEdges, Mmr, Scored, traverse


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1e3, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=100_000)
    ap.add_argument("--degree", type=int, default=10)
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    rng = np.random.default_rng(a.seed)
    n, m = a.nodes, a.nodes * a.degree

    ms_build, g = timed(
        lambda: GraphArrays.from_edges(
            n,
            np.repeat(np.arange(n), a.degree),
            rng.integers(0, n, m),
            rng.uniform(0.1, 1.0, m),
            rtype=rng.integers(0, 10, m).astype(np.int32),
        )
    )
    qsim = rng.uniform(0.0, 1.0, n)
    V = rng.normal(size=(n, 32)).astype(np.float32)
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    vals = rng.integers(0, max(n // 100, 1), n)
    ms_meta, meta = timed(lambda: MetadataEdges(((i, {"cat": int(v)}) for i, v in enumerate(vals)), [("cat", "cat")]))
    ms_ppr_build, _ = timed(lambda: transition_matrix(g))
    seeds_q = [rng.choice(n, 5, replace=False) for _ in range(a.queries + 1)]
    ge = GraphEdges(g)

    channels = {
        "spread (depth 2, decay .5, min_act .01)": lambda s: spread(g, s, np.ones(5), max_depth=2),
        "spread (depth 3)": lambda s: spread(g, s, np.ones(5), max_depth=3),
        "beam mean (D=3, B=4)": lambda s: beam_search(g, s, qsim, score_mode="mean"),
        "beam min (D=3, B=4)": lambda s: beam_search(g, s, qsim, score_mode="min"),
        "beam last (D=3, B=4)": lambda s: beam_search(g, s, qsim, score_mode="last"),
        "beam mean, typed (query_types=[1,2], alpha=.5)": lambda s: beam_search(
            g, s, qsim, query_types=[1, 2], alpha=0.5
        ),
        "ppr (d=.5, tol 1e-8, cached matrix)": lambda s: ppr(g, s),
        "ppr (d=.85)": lambda s: ppr(g, s, damping=0.85),
        "ppr (d=.5, undirected)": lambda s: ppr(g, s, undirected=True),
        "eager (select 10, start 4, adj 10, depth 2) graph": lambda s: traverse(
            Eager(select_k=10, max_depth=2), s, qsim[s], qsim, V, [ge]
        ),
        "mmr (same) graph": lambda s: traverse(Mmr(select_k=10, max_depth=2), s, qsim[s], qsim, V, [ge]),
        "scored (same) graph": lambda s: traverse(Scored(select_k=10, max_depth=2), s, qsim[s], qsim, V, [ge]),
        "eager, metadata edges (~100 nodes/value)": lambda s: traverse(
            Eager(select_k=10, max_depth=2), s, qsim[s], qsim, V, [meta]
        ),
        "mmr, metadata edges": lambda s: traverse(Mmr(select_k=10, max_depth=2), s, qsim[s], qsim, V, [meta]),
    }
    print(
        f"nodes={n:,} edges={m:,}  build: CSR {ms_build:.0f} ms, metadata index {ms_meta:.0f} ms, "
        f"PPR matrix {ms_ppr_build:.0f} ms (once per graph version)"
    )
    its = {d: ppr(g, seeds_q[0], damping=d).iterations for d in (0.5, 0.85)}
    print(f"PPR power iterations to tol 1e-8: d=.5 -> {its[0.5]}, d=.85 -> {its[0.85]}")
    print("\n| channel | median ms | p95 ms |\n|---|---:|---:|")
    for name, fn in channels.items():
        fn(seeds_q[-1])  # warm-up (caches, first-touch)
        t = np.array([timed(lambda s=s, fn=fn: fn(s))[0] for s in seeds_q[:-1]])
        print(f"| {name} | {np.median(t):.2f} | {np.percentile(t, 95):.2f} |")
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"\npeak RSS {rss:.0f} MiB")


if __name__ == "__main__":
    main()
