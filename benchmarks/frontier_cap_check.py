"""Does the spread's frontier cap change any result on the QA sets?  Every system of ``ngr bench retrieval``
runs every question twice, with the configured cap and with ``frontier_cap=0`` (none); the hit lists (ids and
scores) are compared, and the largest frontier any hop expanded is recorded.

    HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/frontier_cap_check.py ../shared/bench/musique_train200 \
        ../shared/bench/hipporag_musique_train100 ../shared/bench/hipporag_hotpotqa_train100

Uses the cached bench stores under .ngr/bench (ingested and linked on first use, as ``ngr bench retrieval``).
"""

from __future__ import annotations

import json
import sys

import neurongraph.retrieval.channels as rc
from neurongraph.bench import retrieval as br

_spread = rc.spread
seen = {"max_frontier": 0, "calls": 0, "capped_calls": 0}


def _spy(*args, **kw):
    r = _spread(*args, **kw)
    seen["calls"] += 1
    # the frontier of hop k+1 is the set of nodes updated at hop k (the seeds for hop 1)
    sizes = [len(args[1])] + [h[0].size for h in r.hops[:-1]]
    seen["max_frontier"] = max(seen["max_frontier"], *sizes)
    cap = kw.get("frontier_cap")
    if cap and max(sizes) > cap:
        seen["capped_calls"] += 1
    return r


def main(folders: list[str]) -> int:
    rc.spread = _spy
    out = {}
    for folder in folders:
        ds = br.load_dataset(folder)
        eng = br.open_for_dataset(ds, None)
        try:
            br.ingest_dataset(eng, ds, link=True)
            base = eng.config.replace(limit=br.CAP, result_types=("passage",))
            qtext = [q["question"] for q in ds.queries]
            qvecs = eng.embedder.embed(qtext)
            seen.update(max_frontier=0, calls=0, capped_calls=0)
            n = differing = 0
            for overrides in br.SYSTEMS.values():
                cfg = base.replace(**overrides)
                for q, v in zip(qtext, qvecs):
                    a = eng.search(q, config=cfg, qvec=v, record=False)
                    b = eng.search(q, config=cfg.replace(frontier_cap=0), qvec=v, record=False)
                    n += 1
                    differing += [(h.id, h.score) for h in a.hits] != [(h.id, h.score) for h in b.hits]
            out[ds.name] = {"searches_compared": n, "differing": differing, "cap": base.frontier_cap, **seen}
        finally:
            eng.close()
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
