"""``ngr bench learning`` (QA) under several learning policies: repeat, related and unrelated transfer, drift.

Why: the learning rules are chosen on the history splits (benchmarks/learning_variants.py) and must not
cost the QA targets (unrelated transfer exactly 0, related ΔR@5, drift 0); this runs them side by side.

Usage: flock /tmp/ngr-heavy.lock .venv/bin/python benchmarks/learning_qa_variants.py \
    --dataset /work/shared/bench/musique_train200 --template-db .ngr/bench/musique_train200-dcf341ca7fa2.db \
    --variant base='{}' --variant gate='{"min_term_overlap": 0.3}'    -> one JSON line per variant
"""

import argparse
import json

from neurongraph.bench.learning import run_learning_benchmark
from neurongraph.bench.retrieval import load_dataset
from neurongraph.index.embedder import make_embedder
from neurongraph.learning.policy import LearningPolicy

ap = argparse.ArgumentParser()
ap.add_argument("--dataset", required=True)
ap.add_argument("--template-db", required=True)
ap.add_argument("--variant", action="append", default=[])
a = ap.parse_args()
ds = load_dataset(a.dataset)
emb = make_embedder(None)
for spec in a.variant:
    name, _, js = spec.partition("=")
    r = run_learning_benchmark(ds, a.template_db, emb, policy=LearningPolicy().replace(**json.loads(js or "{}")))
    tr, rep = r["transfer"], r["repeat"]
    print(
        json.dumps(
            {
                "variant": name,
                "repeat_r5": [rep["before"]["recall@5"], rep["after"]["recall@5"]],
                "related": {k: tr["related"][k] for k in ("n", "delta_recall@5", "delta_recall@2", "delta_mrr")},
                "unrelated": {k: tr["unrelated"][k] for k in ("n", "delta_recall@5", "delta_recall@2", "delta_mrr")},
                "drift": r["drift"]["changed_rankings"],
                "decay_r5": [r["decay"]["after_half_life"]["recall@5"], r["decay"]["after_gap"]["recall@5"]],
                "seconds": r.get("seconds"),
            }
        ),
        flush=True,
    )
