"""Rebuild time and query latency of the Cypher projection (docs/ask.md) on a synthetic store.

Usage: .venv/bin/python benchmarks/ask_projection.py NODES EDGES [--store PATH] [--graph-url URL]
Builds <tmp>/big_<NODES>.db (no embeddings: the projection needs none; with --store, that file, reused
when it exists), projects it into a FalkorDB child (or, with --graph-url, a shared server: the URL's
user needs the writer ACL), prints the rebuild's time and its phases (reading the store, building the
bulk streams, the server's load and indexes), then times one- to three-hop queries.
"""

import argparse
import os
import random
import sys
import tempfile
import time

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
from neurongraph.graphdb.projection import CypherProjection  # noqa: E402
from neurongraph.model import Edge, Node  # noqa: E402
from neurongraph.store.sqlite import SQLiteStore  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("nodes", type=int)
ap.add_argument("edges", type=int)
ap.add_argument("--store", default=None)
ap.add_argument("--graph-url", default=None)
a = ap.parse_args()
N, E = a.nodes, a.edges
path = a.store or os.path.join(tempfile.mkdtemp(prefix="ngr-ask-bench-"), f"big_{N}.db")
fresh = not os.path.exists(path)
st = SQLiteStore(path)
if fresh:
    random.seed(0)
    t0 = time.time()
    types = ["issue", "pr", "commit", "file", "decision"]
    for i in range(0, N, 50000):
        st.upsert_nodes(
            [
                Node(f"n:{j}", types[j % 5], f"title {j}", "", {"time": 1500000000 + j})
                for j in range(i, min(N, i + 50000))
            ]
        )
    rels = ["fixes", "touches", "refs", "follows_up", "merged_in"]
    for i in range(0, E, 100000):
        st.upsert_edges(
            [
                Edge(f"n:{random.randrange(N)}", rels[k % 5], f"n:{random.randrange(N)}")
                for k in range(i, min(E, i + 100000))
            ]
        )
    print("store built", round(time.time() - t0, 1), "s", flush=True)
if a.graph_url:
    from neurongraph.graphdb.remote import GraphTarget, parse_graph_url
    from neurongraph.graphdb.shared import SharedProjection

    p: CypherProjection = SharedProjection(st, GraphTarget(parse_graph_url(a.graph_url)))
else:
    p = CypherProjection(st, cache_dir=None)
p._ensure_child()  # the child's start is not the rebuild's
t0 = time.time()
info = p.sync()
print("rebuild", info, round(time.time() - t0, 1), "s", flush=True)
for q in [
    "MATCH (a:Node {id: $a})-[:fixes]->(b) RETURN count(b)",
    "MATCH (a:Node {id: $a})-[*1..2]->(b) RETURN count(b)",
    "MATCH (a:Node {id: $a})-[*1..3]->(b) RETURN count(DISTINCT b)",
]:
    ts = []
    for k in range(20):
        t1 = time.perf_counter()
        r = p.query(q, {"a": f"n:{k * 37}"})
        ts.append((time.perf_counter() - t1) * 1000)
    ts.sort()
    print(q, "median ms", round(ts[10], 2), "p95", round(ts[18], 2), flush=True)
p.close()
st.close()
