"""Search latency on an existing ``ngr bench perf`` store (e.g. 1M nodes / 10M edges), without rebuilding it.

``ngr bench perf --db PATH`` keeps its store; this opens it and runs ``bench/perf.py``'s search phase
(the same synthetic queries and random query vectors, warm-up first, each query with a trace and again
without), so two commits can be compared on one store:

    flock /tmp/ngr_coord/bench.lock .venv/bin/python benchmarks/search_at_scale.py --db /tmp/perf1m.db \
        --nodes 1000000 --queries 100 --blas-threads 1 [--set frontier_cap=0]
    PYTHONPATH=/tmp/base/src .venv/bin/python benchmarks/search_at_scale.py ...   # the other commit

``--set NAME=VALUE`` overrides a SearchConfig option (an int, float or string) for every query.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time


def _value(text: str):
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True)
    ap.add_argument("--nodes", type=int, required=True, help="the --nodes the store was built with (query seed)")
    ap.add_argument("--queries", type=int, default=100)
    ap.add_argument("--warmup", type=int, default=10)
    ap.add_argument("--dim", type=int, default=384)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--blas-threads", type=int)
    ap.add_argument("--set", action="append", default=[], help="SearchConfig option NAME=VALUE")
    a = ap.parse_args(argv)

    from neurongraph.bench.perf import RandomUnitEmbedder, _phase_search, _Synthetic
    from neurongraph.engine import Engine
    from neurongraph.store.sqlite import SQLiteStore

    overrides = {k: _value(v) for k, v in (s.split("=", 1) for s in a.set)}

    class Run(_Synthetic):  # the queries of the perf run, without regenerating its corpus
        def __init__(self):
            from neurongraph.bench.perf import make_queries

            self.queries = make_queries(a.queries + a.warmup, a.seed)
            self.emb = RandomUnitEmbedder(a.dim)
            self.qvecs = self.emb.embed(self.queries)
            self.warmup = a.warmup
            self.gen_s = 0.0

    class Bars:
        def task(self, name, total):
            return None

        def advance(self, task, k):
            pass

    def go() -> dict:
        run = Run()
        t = time.perf_counter()
        eng = Engine(SQLiteStore(a.db), run.emb)
        open_s = time.perf_counter() - t
        eng.snapshot_min_rows = 10**12  # leave the store as it was
        if overrides:
            plain = eng.search

            def search(q, **kw):
                return plain(q, **{**overrides, **kw})

            eng.search = search  # type: ignore[method-assign]
        res = _phase_search(eng, run, Bars())
        res["open_s"] = round(open_s, 1)
        res["graph_edges"] = eng.graph.n_edges
        eng.close()
        return res

    if a.blas_threads:
        from threadpoolctl import threadpool_limits

        with threadpool_limits(limits=a.blas_threads):
            res = go()
    else:
        res = go()
    import neurongraph

    res["code"] = os.path.dirname(neurongraph.__file__)
    res["overrides"] = overrides
    res["load_avg"] = os.getloadavg()
    print(json.dumps({k: (round(v, 2) if isinstance(v, float) else v) for k, v in res.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
