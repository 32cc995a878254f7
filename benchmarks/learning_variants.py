"""The learning splits of ``ngr bench history`` under several learning policies, with per-question ranks.

Why: choosing a learning rule needs the questions each rule moves (up and down), on every history, and the
splits are slow (each variant replays the past searches).  The "before" side of both splits is the store
without feedback, identical to a search of the untouched store (drift is 0, checked by ``ngr bench
history``), so it is searched once; each variant replays only the feedback side, on its own store copy.

Usage (store copies in /tmp, never the cached stores):
  flock /tmp/ngr-heavy.lock .venv/bin/python benchmarks/learning_variants.py --repo .ngr/history/iproute2 \
      --db /tmp/ip.db --variant base='{}' --variant noterm='{"term_gate": 0}' --out /tmp/ip-var.json
A variant is a JSON object of ``LearningPolicy`` fields.  Output: per split, the metrics before/after and
each later question's rank before and after, per variant.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from neurongraph.bench.history import _canonical, _config, _metrics, prepare
from neurongraph.bench.history_learning import LEARN_SPLIT, TOP, shared_origin_questions
from neurongraph.engine import Engine, open_engine
from neurongraph.learning.policy import LearningPolicy

WALK = ("selected", "validated", "used")


def _rank(r: list[str], origins) -> int | None:
    g = set(origins)
    return next((i + 1 for i, x in enumerate(r) if x in g), None)


def _search(eng: Engine, p, qv, pr, record: bool):
    res = eng.search(p.query, config=_config(eng, p, {}), qvec=qv[id(p)], record=record)
    return res, _canonical([h.id for h in res.hits], pr, p.fix)


def _report(eng: Engine, res, p, pr) -> int:
    n = 0
    for h in {h.id for h in res.hits[:TOP]}:
        if pr.get(h, h) in set(p.origins):
            eng.record_source_use(res.trace_id, [(h, s) for s in WALK])
            n += 1
    return n


def run_variant(eng: Engine, policy: LearningPolicy, pairs, qv, pr, tmp: Path) -> dict:
    cut = int(len(pairs) * LEARN_SPLIT)
    past, future = pairs[:cut], pairs[cut:]
    out = {}
    db = tmp / "v7030.db"
    eng.store.copy_to(db)
    c = open_engine(db, eng.embedder, eng.config)
    try:
        c.set_learning_policy(policy)
        for p in past:
            res, _ = _search(c, p, qv, pr, True)
            _report(c, res, p, pr)
        out["70/30"] = [_search(c, p, qv, pr, False)[1] for p in future]
    finally:
        c.close()
    db.unlink()
    replay, later, _ = shared_origin_questions(pairs)
    db = tmp / "vshared.db"
    eng.store.copy_to(db)
    c = open_engine(db, eng.embedder, eng.config)
    try:
        c.set_learning_policy(policy)
        ranked = []
        for p in replay:
            res, r = _search(c, p, qv, pr, True)
            if id(p) in later:
                ranked.append(r)
            _report(c, res, p, pr)
        out["shared"] = ranked
    finally:
        c.close()
    db.unlink()
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repo", required=True)
    ap.add_argument("--db", required=True, help="a copy of the store (written: incremental ingest)")
    ap.add_argument("--variant", action="append", default=[], help="name=JSON of LearningPolicy fields")
    ap.add_argument("--out", required=True)
    ap.add_argument("--embedder", default=None)
    a = ap.parse_args()
    eng = open_engine(a.db, a.embedder)
    t0 = time.time()
    prep = prepare(a.repo, eng)
    pairs, qv, pr = prep.groups["main"], prep.qv, prep.hist.pr_commit
    tokens = {cid: c["tokens"] for cid, c in prep.hist.commits.items()}
    cut = int(len(pairs) * LEARN_SPLIT)
    future = pairs[cut:]
    replay, later, _ = shared_origin_questions(pairs)
    scored = [p for p in replay if id(p) in later]
    base = {
        "70/30": [_search(eng, p, qv, pr, False)[1] for p in future],
        "shared": [_search(eng, p, qv, pr, False)[1] for p in scored],
    }
    qs = {"70/30": future, "shared": scored}
    result: dict = {"repo": a.repo, "questions": {k: [(p.fix, p.query, p.origins) for p in v] for k, v in qs.items()}}
    result["before"] = {k: _metrics(base[k], qs[k], tokens) for k in base}
    result["before_ranks"] = {k: [_rank(r, p.origins) for r, p in zip(base[k], qs[k])] for k in base}
    result["variants"] = {}
    with tempfile.TemporaryDirectory(prefix="ngr-var-") as tmp:
        for spec in a.variant:
            name, _, js = spec.partition("=")
            pol = LearningPolicy().replace(**json.loads(js or "{}"))
            t = time.time()
            got = run_variant(eng, pol, pairs, qv, pr, Path(tmp))
            v = {}
            for k, ranked in got.items():
                m = _metrics(ranked, qs[k], tokens)
                b = result["before"][k]
                v[k] = {
                    "after": m,
                    "delta_recall@10": m["recall@10"] - b["recall@10"],
                    "delta_mrr": m["mrr"] - b["mrr"],
                    "ranks": [_rank(r, p.origins) for r, p in zip(ranked, qs[k])],
                }
            v["seconds"] = round(time.time() - t, 1)
            result["variants"][name] = v
            print(
                name,
                {k: (round(v[k]["delta_recall@10"], 4), round(v[k]["delta_mrr"], 4)) for k in got},
                v["seconds"],
                file=sys.stderr,
                flush=True,
            )
            Path(a.out).write_text(json.dumps(result))
    eng.close()
    result["seconds"] = round(time.time() - t0, 1)
    Path(a.out).write_text(json.dumps(result))


if __name__ == "__main__":
    main()
