"""Latency of the relation queries (neighbours, k-hop paths, blockers, evidence chains) at 1M edges.

Usage: .venv/bin/python benchmarks/schema_queries.py --nodes 200000 --edges 1000000 [--queries 500]

A synthetic SQLite store (tasks, conditions, notes, entities; relations
blocked_by / resolves_to / evidence_of / related_to / mentions, uniform random
endpoints, ~5 edges per node) queried through the schema API over a bare store
(no embedder: these queries never embed).  One-hop queries read the store's
src/dst indexes; k-hop paths walk the CSR arrays.  Prints a markdown table of
median / p95 milliseconds, plus the write-time cost of strict-mode checks.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

from neurongraph.model import Edge, Node
from neurongraph.schema.api import Schema, StoreGraph
from neurongraph.store.sqlite import SQLiteStore

RELS = ["blocked_by", "resolves_to", "evidence_of", "related_to", "mentions"]
TYPES = ["task", "condition", "note", "entity"]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return (time.perf_counter() - t) * 1e3, out


def build(path: Path, n: int, m: int, seed: int) -> tuple[Schema, StoreGraph]:
    rng = np.random.default_rng(seed)
    store = SQLiteStore(path)
    types = rng.integers(0, len(TYPES), n)
    for i in range(0, n, 50_000):
        store.upsert_nodes([Node(f"n{k}", TYPES[types[k]], f"node {k}") for k in range(i, min(n, i + 50_000))])
    src, dst, rel = rng.integers(0, n, m), rng.integers(0, n, m), rng.integers(0, len(RELS), m)
    for i in range(0, m, 100_000):
        store.upsert_edges(
            [
                Edge(f"n{s}", RELS[r], f"n{d}")
                for s, r, d in zip(src[i : i + 100_000], rel[i : i + 100_000], dst[i : i + 100_000])
            ]
        )
    graph = StoreGraph(store)  # the CSR graph of path queries, rebuilt from the store's change feed
    return Schema(store, graph=graph), graph  # the constructor attaches the write-time validator


def stats(ms: list[float]) -> str:
    a = np.asarray(ms)
    return f"{np.median(a):.3f} | {np.percentile(a, 95):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=200_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--queries", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    rng = np.random.default_rng(args.seed + 1)
    with tempfile.TemporaryDirectory() as tmp:
        t_build, (v, graph) = timed(lambda: build(Path(tmp) / "q.db", args.nodes, args.edges, args.seed))
        t_csr, g = timed(graph)
        t_rev, _ = timed(lambda: g.expand([0], direction="in"))  # reverse CSR, built lazily once
        n_edges = g.n_edges
        v.load_schema(
            {
                "relations": {
                    "blocked_by": {"inverse": "blocks"},
                    "evidence_of": {"inverse": "has_evidence"},
                    "related_to": {"symmetric": True},
                }
            },
            check_existing=False,
        )  # permissive
        starts = [f"n{k}" for k in rng.integers(0, args.nodes, args.queries)]
        rows = []

        def bench(label, fn, q=args.queries):
            fn(starts[0])  # warm
            ms = [timed(lambda s=s: fn(s))[0] for s in starts[:q]]
            rows.append((label, stats(ms)))

        bench("neighbors out, --rel blocked_by (store index)", lambda s: v.neighbors(s, "blocked_by", "out"))
        bench("neighbors in, --rel blocked_by (store index)", lambda s: v.neighbors(s, "blocked_by", "in"))
        bench("neighbors both, any relation (store index)", lambda s: v.neighbors(s))
        bench("neighbors via inverse name `blocks` (= in blocked_by)", lambda s: v.neighbors(s, "blocks", "out"))
        bench("neighbors symmetric `related_to` (both ways)", lambda s: v.neighbors(s, "related_to", "out"))
        bench("effective_blockers", lambda s: v.effective_blockers(s))
        bench("evidence_chain (2 hops, CSR)", lambda s: v.evidence_chain(s))
        bench(
            "find_paths k=2 out, rel filter (CSR)", lambda s: v.find_paths(s, 2, ["blocked_by", "resolves_to"], "out")
        )
        bench("find_paths k=3 out, any relation (CSR)", lambda s: v.find_paths(s, 3, None, "out"), q=100)
        bench("find_paths k=2 both, any relation (CSR)", lambda s: v.find_paths(s, 2, None, "both"), q=100)
        bench(
            "find_paths k=3 both, to a given end (CSR)",
            lambda s: v.find_paths(s, 3, None, "both", end=starts[1]),
            q=100,
        )
        # write-time cost of the schema: 20k new edges, permissive (no rules) vs strict mode + 2 invariants
        new = rng.integers(0, args.nodes, (2, 40_000))
        batch = [
            [Edge(f"n{a}", "related_to", f"n{b}", meta={"b": i}) for a, b in zip(new[0, h::2], new[1, h::2])]
            for i, h in enumerate((0, 1))
        ]
        t_plain, _ = timed(lambda: v.store.upsert_edges(batch[0]))
        v.load_schema(
            {
                "mode": "strict",
                "relations": {r: {"allow": [[a, b] for a in TYPES for b in TYPES]} for r in RELS},
                "invariants": [
                    {
                        "name": "i1",
                        "kind": "edge_requires_state",
                        "rel": "blocked_by",
                        "field": "status",
                        "not_in": ["done"],
                    },
                    {
                        "name": "i2",
                        "kind": "state_requires_edges",
                        "rel": "blocked_by",
                        "field": "status",
                        "in": ["done"],
                        "max": 0,
                    },
                ],
            },
            check_existing=False,
        )
        t_strict, _ = timed(lambda: v.store.upsert_edges(batch[1]))
        t_load, _ = timed(lambda: v.load_schema(v.relation_schema(), check_existing=True))
    print(
        f"\n{args.nodes} nodes, {n_edges} edges; build {t_build / 1e3:.1f} s, CSR from store "
        f"{t_csr:.0f} ms, reverse CSR (first `in` walk after a write) {t_rev:.0f} ms\n"
    )
    print("| query | median ms | p95 ms |\n|---|---|---|")
    for label, s in rows:
        print(f"| {label} | {s} |")
    n = len(batch[0])
    print(
        f"\nwrite {n} edges: permissive schema {t_plain:.0f} ms, strict + 2 invariants {t_strict:.0f} ms; "
        f"load_schema with check of all stored edges {t_load:.0f} ms"
    )


if __name__ == "__main__":
    main()
