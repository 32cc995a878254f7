"""Search p50 at 10k synthetic nodes (bench perf's corpus): nothing learned vs 1,000 learned queries.

Why this shape: the machine is shared and noisy, so the two states are measured in one process,
interleaved: two engines over two copies of one store, one untouched, one after 1,000 searches each
reported one source used; each timed query is searched on one and then the other, so a burst of load
from other work falls on both.  Reported: each state's median of its rounds' p50, and the median of the per-round
differences (learned − nothing learned), and the median over every (query, round) of the paired
difference of the same query searched on both back to back, who goes first alternating (robust to a
round's burst of load).  Every timed query is one of the learned ones (the learned
view is walked on every timed search: the worst case).  Also the median cost of the two learning reads
per search (``node_priming`` and ``learned_graph``), in microseconds.

Usage: PYTHONPATH=<tree>/src python benchmarks/learned_latency.py LABEL [ROUNDS] [PART]  -> one JSON line.
PART (an ablation; default ``all``): the learned engine searches with only the learning ``reads`` (base
graph, no priming), only the ``priming``, only the learned ``view``, or ``all`` of it.
docs/learning.md, issue 26.
"""

import inspect
import json
import sys
import tempfile
import time

import numpy as np

from neurongraph.bench import perf as P
from neurongraph.engine import Engine
from neurongraph.store.sqlite import SQLiteStore

WALK = ("selected", "validated", "used")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 15
run = P._Synthetic(10000, 3.0, 200, 10, 384, 0)
tmp = tempfile.mkdtemp()
base = Engine(SQLiteStore(tmp + "/a.db"), run.emb)
vecs = run.emb.embed([x.body for x in run.corpus])
base.store.put_vectors(run.emb.model_id, [(x.hash, v) for x, v in zip(run.corpus, vecs)])
for i in range(0, 10000, 2000):
    base.add_nodes(run.corpus[i : i + 2000])
base.add_edges(run.edges)
base.store.copy_to(tmp + "/b.db")
learned = Engine(SQLiteStore(tmp + "/b.db"), run.emb)
qs, qv = run.queries[10:], run.qvecs[10:]

learn = (list(qs) + P.make_queries(1000, 1))[:1000]
for q, v in zip(learn, learned.embedder.embed(learn)):
    r = learned.search(q, qvec=v)
    h = next((h for h in r.hits if h.paths), r.hits[0])
    learned.record_source_use(r.trace_id, [(h.id, s) for s in WALK])


PART = sys.argv[3] if len(sys.argv) > 3 else "all"
if PART != "all":
    _whole = learned.learning.for_search

    def _part(qvec, query, n_nodes, seq=None):
        graph, priming = _whole(qvec, query, n_nodes, seq)
        plain = learned.learning._graph()
        return {"reads": (plain, None), "priming": (plain, priming), "view": (graph, None)}[PART]

    learned.learning.for_search = _part

PAIRED: list[float] = []  # learned − nothing learned, per timed query and round (same query back to back)


def one_round() -> tuple[float, float]:
    """p50 of each engine over the timed queries, each query searched on both back to back."""
    la, lb = [], []
    for k, (q, v) in enumerate(zip(qs, qv)):
        pair = ((base, la), (learned, lb)) if k % 2 == 0 else ((learned, lb), (base, la))  # alternate who goes first
        for eng, lat in pair:
            t = time.perf_counter()
            eng.search(q, qvec=v, record=False)
            lat.append((time.perf_counter() - t) * 1000)
        PAIRED.append(lb[-1] - la[-1])
    return float(np.percentile(la, 50)), float(np.percentile(lb, 50))


def reads_us(eng) -> dict:
    """Median microseconds of the two learning reads of a search, over the timed queries."""
    pr, lg = [], []
    text = "query" in inspect.signature(eng.node_priming).parameters  # trees before 2026-12-02: vector only
    one = getattr(eng.learning, "for_search", None)  # trees since 2026-12-02: one read for both
    for q, v in zip(qs, qv):
        if one is not None:
            t = time.perf_counter()
            one(v, q, eng.table.n)
            pr.append(time.perf_counter() - t)
            lg.append(0.0)
            continue
        args = (v, q) if text else (v,)
        t = time.perf_counter()
        eng.node_priming(*args)
        pr.append(time.perf_counter() - t)
        t = time.perf_counter()
        eng.learned_graph(*args)
        lg.append(time.perf_counter() - t)
    return {"node_priming_us": float(np.median(pr) * 1e6), "learned_graph_us": float(np.median(lg) * 1e6)}


for eng in (base, learned):  # warm-up: caches, the lexical index, the learned state's query vectors
    for q, v in zip(qs[:20], qv[:20]):
        eng.search(q, qvec=v, record=False)
a, b = [], []
for _ in range(ROUNDS):
    x, y = one_round()
    a.append(x)
    b.append(y)
print(
    json.dumps(
        {
            "tree": sys.argv[1] if len(sys.argv) > 1 else "",
            "part": PART,
            "rounds": ROUNDS,
            "nothing_learned_p50_med": float(np.median(a)),
            "learned_p50_med": float(np.median(b)),
            "diff_med": float(np.median(np.subtract(b, a))),
            "paired_diff_med": float(np.median(PAIRED)),  # the typical search's own added cost
            "nothing_learned": a,
            "learned": b,
            "reads_nothing_learned": reads_us(base),
            "reads_learned": reads_us(learned),
            "learned_edges": int(learned.store.ledgers.plastic_edges()[0].shape[0]),
        }
    )
)
