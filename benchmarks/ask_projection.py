"""Rebuild time and query latency of the Cypher projection (docs/ask.md) on a synthetic store.

Usage: .venv/bin/python benchmarks/ask_projection.py NODES EDGES   (e.g. 100000 1000000)
Builds <tmp>/big_<NODES>.db (no embeddings: the projection needs none), projects it into a FalkorDB child,
then times one- to three-hop queries.
"""
import sys, time, random
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parents[1] / "src"))
from neurongraph.store.sqlite import SQLiteStore
from neurongraph.model import Node, Edge
from neurongraph.graphdb.projection import CypherProjection
N, E = int(sys.argv[1]), int(sys.argv[2])
random.seed(0)
import tempfile, os
st = SQLiteStore(os.path.join(tempfile.mkdtemp(prefix="ngr-ask-bench-"), f"big_{N}.db"))
t0 = time.time()
types = ["issue", "pr", "commit", "file", "decision"]
for i in range(0, N, 50000):
    st.upsert_nodes([Node(f"n:{j}", types[j % 5], f"title {j}", "", {"time": 1500000000 + j}) for j in range(i, min(N, i + 50000))])
rels = ["fixes", "touches", "refs", "follows_up", "merged_in"]
for i in range(0, E, 100000):
    st.upsert_edges([Edge(f"n:{random.randrange(N)}", rels[k % 5], f"n:{random.randrange(N)}") for k in range(i, min(E, i + 100000))])
print("store built", round(time.time() - t0, 1), "s", flush=True)
p = CypherProjection(st)
t0 = time.time(); info = p.sync(); print("rebuild", info, round(time.time() - t0, 1), "s", flush=True)
for q in ["MATCH (a:Node {id: $a})-[:fixes]->(b) RETURN count(b)", "MATCH (a:Node {id: $a})-[*1..2]->(b) RETURN count(b)", "MATCH (a:Node {id: $a})-[*1..3]->(b) RETURN count(DISTINCT b)"]:
    ts = []
    for k in range(20):
        t1 = time.perf_counter(); r = p.query(q, {"a": f"n:{k * 37}"}); ts.append((time.perf_counter() - t1) * 1000)
    ts.sort(); print(q, "median ms", round(ts[10], 2), "p95", round(ts[18], 2), flush=True)
p.close(); st.close()
