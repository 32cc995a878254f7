"""First-query time of engine processes sharing one FalkorDB server, against each building its own graph.

Usage: .venv/bin/python benchmarks/graph_server_shared.py STORE [--processes 3]
Starts a server (graphdb/serve.py) on a Unix socket, then runs PROCESSES engine processes one after the
other on STORE (e.g. the synthetic store benchmarks/ask_projection.py --store writes), each timing its
first ``MATCH (n) RETURN count(n)`` through the shared server (writer URL: the first one builds the graph,
the others find it current), then the same with private children and no dump cache (each rebuilds).
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

SRC = str(Path(__file__).resolve().parents[1] / "src")
sys.path.insert(0, SRC)
from neurongraph.graphdb.serve import start_graph_server  # noqa: E402

CHILD = """
import sys, time, json
sys.path.insert(0, {src!r})
from neurongraph.store import open_store
from neurongraph.graphdb.projection import CypherProjection
from neurongraph.graphdb.remote import graph_target
from neurongraph.graphdb.shared import SharedProjection
st = open_store({store!r})
target = graph_target(env={{"NGR_GRAPH_URL": {url!r}}}) if {url!r} else None
p = SharedProjection(st, target) if target else CypherProjection(st, cache_dir=None)
t0 = time.perf_counter()
n = p.query("MATCH (n) RETURN count(n) AS c")["rows"][0]["c"]
print(json.dumps({{"first_query_s": round(time.perf_counter() - t0, 3), "nodes": n, "sync": p.last_sync}}))
p.close(); st.close()
"""


def run(store: str, url: str) -> dict:
    code = CHILD.format(src=SRC, store=store, url=url)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=os.environ)
    return json.loads(out.stdout.strip().splitlines()[-1])


ap = argparse.ArgumentParser()
ap.add_argument("store")
ap.add_argument("--processes", type=int, default=3)
a = ap.parse_args()
with start_graph_server() as srv:
    for i in range(a.processes):
        t0 = time.perf_counter()
        r = run(a.store, srv.url("writer"))
        print("shared server, process", i + 1, r, "wall", round(time.perf_counter() - t0, 2), "s", flush=True)
for i in range(a.processes):
    t0 = time.perf_counter()
    r = run(a.store, "")
    print("private child, process", i + 1, r, "wall", round(time.perf_counter() - t0, 2), "s", flush=True)
