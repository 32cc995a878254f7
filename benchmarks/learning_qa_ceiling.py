"""What query-conditioned learning can reach on the QA transfer split: the related questions' gold passages
outside the top 5 before feedback that the simulated consumer *used* for a training question, and how
near (cosine, term overlap) each such test question is to the training question that used it.

Why: related ΔR@5 (issue 26's +0.03) counts every gold passage of the 44 related test questions, but
learning only knows the passages that were used, and (by design) applies them only to near questions.
This prints the candidates a perfect rule could lift, so the distance between the measured gain and
what is reachable is a number, not a guess.  Same split, seed and consumer as ``ngr bench learning``.

Usage: .venv/bin/python benchmarks/learning_qa_ceiling.py --dataset ../shared/bench/musique_train200 \
    --template-db .ngr/bench/musique_train200-dcf341ca7fa2.db            (docs/learning.md)
"""

import argparse
import random
import tempfile
from pathlib import Path

import numpy as np

from neurongraph.bench.learning import _Run, related_split
from neurongraph.bench.retrieval import load_dataset
from neurongraph.index.embedder import make_embedder

ap = argparse.ArgumentParser()
ap.add_argument("--dataset", required=True)
ap.add_argument("--template-db", required=True)
ap.add_argument("--top", type=int, default=20, help="hits the simulated consumer reads (as the bench)")
a = ap.parse_args()

ds = load_dataset(a.dataset)
run = _Run(ds, Path(a.template_db), make_embedder(None), None, a.top, Path(tempfile.mkdtemp()))
every = list(range(len(ds.queries)))
order = every[:]
random.Random(0).shuffle(order)
train, test = sorted(order[: len(order) // 2]), sorted(order[len(order) // 2 :])
related, _ = related_split(ds.queries, train, test)
eng = run.engine()
before = dict(zip(test, run.ask(eng, test)))
trained = run.ask(eng, train)
run.feedback(eng, train, trained)
after = dict(zip(related, run.ask(eng, related)))
bank = eng.learning._conditioned(eng.store.current_seq()).bank
used_by: dict[str, list[int]] = {}
for j, r in zip(train, trained):
    for h in r.hits[: a.top]:
        if h.id in run.gold[j]:
            used_by.setdefault(h.id, []).append(j)


def rank(res, pid):
    ids = [h.id for h in res.hits]
    return ids.index(pid) + 1 if pid in ids else None


n_gold = gained = lost = reachable = 0
for i in related:
    for pid in run.gold[i]:
        n_gold += 1
        rb, ra = rank(before[i], pid), rank(after[i], pid)
        top_b, top_a = rb is not None and rb <= 5, ra is not None and ra <= 5
        gained += top_a and not top_b
        lost += top_b and not top_a
        if top_b or pid not in used_by:
            continue
        reachable += 1
        for j in used_by[pid]:
            row = np.array([bank.row[run.qtext[j]]])
            cos = float(bank.vecs[row[0]] @ np.asarray(run.qvecs[i], np.float32))
            overlap = float(bank.overlap(row, run.qtext[i])[0])
            print(f"q{i} {pid}: rank {rb} -> {ra}; used for q{j}: cos {cos:.3f}, term overlap {overlap:.2f}")
            print(f"    test:  {run.qtext[i]}\n    train: {run.qtext[j]}")
print(
    f"related gold passages {n_gold}: gained {gained}, lost {lost} (ΔR@5 {(gained - lost) / n_gold:+.4f}); "
    f"outside the top 5 before and used in training: {reachable} (ceiling ΔR@5 {reachable / n_gold:+.4f}: every one "
    f"lifted, none lost)"
)
eng.close()
