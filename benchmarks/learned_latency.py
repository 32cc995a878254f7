"""p50 of Engine.search at 10k synthetic nodes (bench perf's corpus), before and after 1,000 learned queries.

Usage: PYTHONPATH=<tree>/src python benchmarks/learned_latency.py LABEL  -> one JSON line (7 rounds of 200
searches, record=False; min and median of the rounds' p50).  docs/learning.md, issue 26.
"""

import json
import sys
import tempfile
import time

import numpy as np

from neurongraph.bench import perf as P
from neurongraph.engine import Engine
from neurongraph.store.sqlite import SQLiteStore

WALK = ("selected", "validated", "used")
run = P._Synthetic(10000, 3.0, 200, 10, 384, 0)
db = tempfile.mkdtemp() + "/b.db"
eng = Engine(SQLiteStore(db), run.emb)
vecs = run.emb.embed([x.body for x in run.corpus])
eng.store.put_vectors(run.emb.model_id, [(x.hash, v) for x, v in zip(run.corpus, vecs)])
for i in range(0, 10000, 2000):
    eng.add_nodes(run.corpus[i : i + 2000])
eng.add_edges(run.edges)
qs, qv = run.queries[10:], run.qvecs[10:]


def rounds(k=7):
    out = []
    for _ in range(k):
        lat = []
        for q, v in zip(qs, qv):
            t = time.perf_counter()
            eng.search(q, qvec=v, record=False)
            lat.append((time.perf_counter() - t) * 1000)
        out.append(float(np.percentile(lat, 50)))
    return out


for q, v in zip(qs[:20], qv[:20]):
    eng.search(q, qvec=v, record=False)
b = rounds()
learn = (list(qs) + P.make_queries(1000, 1))[:1000]
for q, v in zip(learn, eng.embedder.embed(learn)):
    r = eng.search(q, qvec=v)
    h = next((h for h in r.hits if h.paths), r.hits[0])
    eng.record_source_use(r.trace_id, [(h.id, s) for s in WALK])
for q, v in zip(qs[:20], qv[:20]):
    eng.search(q, qvec=v, record=False)
a = rounds()
print(
    json.dumps(
        {
            "tree": sys.argv[1],
            "before_min": min(b),
            "before_med": float(np.median(b)),
            "after_min": min(a),
            "after_med": float(np.median(a)),
            "before": b,
            "after": a,
            "learned_edges": int(eng.store.ledgers.plastic_edges()[0].shape[0]),
        }
    )
)
