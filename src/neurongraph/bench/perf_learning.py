"""``ngr bench perf``'s learned phase: search latency with many learned queries in the store (issue 26).

Contextual plasticity adds, per search, one product of the query with the learning-query matrix and a
gather over the learned edges of near queries (learning/contextual.py).  This phase makes that cost
visible at its worst: every timed query is itself one of the ``n_learned`` learning queries, so every
timed search finds near learned edges and walks the learned view.  Each learning query's search is
recorded and its best hit that came through the graph (else its first hit) is reported used.
"""

from __future__ import annotations

import time

import numpy as np

__all__ = ["phase_learned", "learned_on_store"]

WALK = ("selected", "validated", "used")


def phase_learned(eng, timed: list[str], timed_vecs: np.ndarray, extra: list[str], n_learned: int = 1000) -> dict:
    """Teach ``n_learned`` queries (the timed ones first, then ``extra``), then time the timed ones again."""
    learn = (list(timed) + [q for q in extra if q not in set(timed)])[:n_learned]
    vecs = eng.embedder.embed(learn)
    t = time.perf_counter()
    for q, v in zip(learn, vecs):
        r = eng.search(q, qvec=v)
        if not r.hits:
            continue
        h = next((h for h in r.hits if h.paths), r.hits[0])
        eng.record_source_use(r.trace_id, [(h.id, s) for s in WALK])
    teach_s = time.perf_counter() - t
    for q, v in zip(timed[:10], timed_vecs[:10]):  # warm-up: the first search after a change embeds nothing new
        eng.search(q, qvec=v, record=False)
    lat = []
    for q, v in zip(timed, timed_vecs):
        t = time.perf_counter()
        eng.search(q, qvec=v, record=False)
        lat.append((time.perf_counter() - t) * 1000)
    learned_edges = int(eng.store.ledgers.plastic_edges()[0].shape[0])
    return {
        "learned_queries": len(learn),
        "learned_edges": learned_edges,
        "learned_teach_s": round(teach_s, 2),
        "search_learned_no_trace_p50_ms": round(float(np.percentile(lat, 50)), 3),
        "search_learned_no_trace_p95_ms": round(float(np.percentile(lat, 95)), 3),
        "search_learned_note": f"after {len(learn)} searches each reported one source used; every timed query "
        "is one of them (the learned view is walked on every timed search); record=False",
    }


def learned_on_store(db: str, embedder, timed: list[str], timed_vecs: np.ndarray, extra: list[str]) -> dict:
    """The learned phase on the finished benchmark store, in an engine of its own (after every other phase,
    so none of their numbers sees the learned state)."""
    from ..engine import Engine
    from ..store.sqlite import SQLiteStore

    eng = Engine(SQLiteStore(db), embedder)
    try:
        eng.snapshot_min_rows = 10**12  # not measured here
        return phase_learned(eng, timed, timed_vecs, extra)
    finally:
        eng.close()
