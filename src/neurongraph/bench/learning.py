"""Learning-loop benchmark: does use-feedback help re-asked and related questions, and only those?

Four scenarios, each on a private copy of the dataset's store (the template is
never written):

* **repeat** — ask every question; a simulated consumer reads the top ``top`` hits,
  selects + validates the gold ones among them and marks them used; then ask every
  question again.  Recall before / after.
* **transfer** — feedback on a random half; the other half is measured before and
  after, split into *related* (shares a gold passage or a gold title — the bridge
  entity — with a trained question) and *unrelated*.
* **drift** — ``rounds`` rounds of plain retrieval with no feedback: every ranking and
  every edge weight must stay bit-for-bit identical (retrieval is counted, never learned).
* **decay** — after the repeat training, the store clock jumps one plastic
  half-life and then ``gap_half_lives`` half-lives ahead; no explicit ``decay()`` call,
  so this measures the lazy decay every read applies.
"""

from __future__ import annotations

import random
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from ..config import SearchConfig
from ..engine import Engine
from ..learning import LearningPolicy
from ..store.sqlite import SQLiteStore, copy_database
from .retrieval import CAP, Dataset, evaluate, passage_id

__all__ = ["run_learning_benchmark", "related_split"]


def _copy_store(template: Path, folder: Path, name: str) -> Path:
    """A consistent private copy through SQLite's backup API (WAL included; template opened read-only)."""
    dst = folder / f"{name}.db"
    copy_database(template, dst)
    return dst


def related_split(queries: list[dict], train: list[int], test: list[int]) -> tuple[list[int], list[int]]:
    """Test questions sharing a gold passage or a gold title (MuSiQue's bridge entities are passage titles)."""

    def keys(q):
        return {("id", g) for g in q["gold_ids"]} | {("title", t.strip().lower()) for t in q.get("gold_titles", [])}

    trained = set().union(*(keys(queries[i]) for i in train)) if train else set()
    related = [i for i in test if keys(queries[i]) & trained]
    return related, [i for i in test if i not in set(related)]


class _Run:
    def __init__(self, ds: Dataset, template: Path, embedder, policy: LearningPolicy | None, top: int, folder: Path):
        self.ds, self.template, self.embedder, self.policy, self.top, self.folder = (
            ds,
            template,
            embedder,
            policy,
            top,
            folder,
        )
        self.qtext = [q["question"] for q in ds.queries]
        self.qvecs = embedder.embed(self.qtext)
        self.gold = [[passage_id(g) for g in q["gold_ids"]] for q in ds.queries]
        self.tokens = {
            passage_id(p["id"]): len((p.get("title", "") + " " + p.get("text", "")).split()) for p in ds.passages
        }
        self.n_engines = 0
        self.cfg: SearchConfig | None = None  # set by engine(): passages only, deep enough for every metric

    def engine(self):
        self.n_engines += 1
        eng = Engine(SQLiteStore(_copy_store(self.template, self.folder, f"run{self.n_engines}")), self.embedder)
        if self.policy is not None:
            eng.set_learning_policy(self.policy)
        self.cfg = eng.config.replace(limit=CAP, result_types=("passage",))  # every engine: the same search
        return eng

    def ask(self, eng, which: list[int]) -> list:
        return [eng.search(self.qtext[i], config=self.cfg, qvec=self.qvecs[i]) for i in which]

    def feedback(self, eng, which: list[int], results: list) -> int:
        """The simulated consumer: of the top hits it read, the gold ones are selected, validated and used."""
        used = 0
        for i, res in zip(which, results):
            gold = set(self.gold[i])
            picked = [h.id for h in res.hits[: self.top] if h.id in gold]
            if picked:
                eng.record_source_use(res.trace_id, [(n, s) for n in picked for s in ("selected", "validated", "used")])
                used += len(picked)
        return used

    def metrics(self, which: list[int], results: list) -> dict:
        m = evaluate([[h.id for h in r.hits] for r in results], [self.gold[i] for i in which], self.tokens)
        return {k: v for k, v in m.items() if k.startswith(("recall", "mrr"))}


def _delta(before: dict, after: dict) -> dict:
    return {f"delta_{k}": after[k] - before[k] for k in before}


def run_learning_benchmark(
    ds: Dataset,
    template: str | Path,
    embedder,
    *,
    policy: LearningPolicy | None = None,
    top: int = 20,
    rounds: int = 3,
    gap_half_lives: float = 20.0,
    seed: int = 0,
    progress: Callable[[str], None] | None = None,
) -> dict:
    say = progress or (lambda msg: None)
    folder = Path(tempfile.mkdtemp(prefix="ngr-learning-"))
    t0 = time.perf_counter()
    try:
        run = _Run(ds, Path(template), embedder, policy, top, folder)
        every = list(range(len(ds.queries)))
        out: dict = {
            "dataset": ds.name,
            "n_queries": len(every),
            "n_passages": len(ds.passages),
            "embedder": embedder.model_id,
            "top": top,
        }

        say("drift: rounds of retrieval without feedback")
        eng = run.engine()
        out["policy"] = _policy_dict(eng.learning_policy)
        weights0 = _weights(eng)
        first = [(tuple(h.id for h in r.hits), tuple(h.scores["final"] for h in r.hits)) for r in run.ask(eng, every)]
        changed = 0
        for _ in range(rounds):
            again = [
                (tuple(h.id for h in r.hits), tuple(h.scores["final"] for h in r.hits)) for r in run.ask(eng, every)
            ]
            changed += sum(a != b for a, b in zip(first, again))
        stats = eng.node_stats()
        out["drift"] = {
            "rounds": rounds + 1,
            "changed_rankings": changed,
            "changed_edge_weights": int(np.sum(_weights(eng) != weights0)),
            "retrieved_count_total": int(sum(s["retrieved_count"] for s in stats.values())),
            "used_count_total": int(sum(s["used_count"] for s in stats.values())),
        }
        eng.close()

        say("repeat: ask, feedback, ask again")
        eng = run.engine()
        before = run.ask(eng, every)
        n_used = run.feedback(eng, every, before)
        after = run.ask(eng, every)
        out["repeat"] = {
            "before": run.metrics(every, before),
            "after": run.metrics(every, after),
            "used_sources": n_used,
        }
        out["repeat"]["delta"] = _delta(out["repeat"]["before"], out["repeat"]["after"])

        say("decay: the same store after simulated gaps")
        real = eng.store.clock
        pol = eng.learning_policy
        out["decay"] = {
            "plastic_half_life_s": pol.plastic_half_life_s,
            "activation_half_life_s": pol.activation_half_life_s,
        }
        for name, gap in (
            ("after_half_life", pol.plastic_half_life_s),
            ("after_gap", gap_half_lives * max(pol.plastic_half_life_s, pol.activation_half_life_s)),
        ):
            eng.store.clock = lambda gap=gap: real() + gap
            out["decay"][name] = {"gap_s": gap, **run.metrics(every, run.ask(eng, every))}
        eng.close()

        say("transfer: feedback on half, measure the other half")
        order = every[:]
        random.Random(seed).shuffle(order)
        train, test = sorted(order[: len(order) // 2]), sorted(order[len(order) // 2 :])
        related, unrelated = related_split(ds.queries, train, test)
        eng = run.engine()
        base = run.ask(eng, test)
        run.feedback(eng, train, run.ask(eng, train))
        later = run.ask(eng, test)
        eng.close()
        pos = {q: k for k, q in enumerate(test)}
        tr: dict[str, object] = {"n_train": len(train), "n_test": len(test)}
        for name, group in (("related", related), ("unrelated", unrelated)):
            b = run.metrics(group, [base[pos[i]] for i in group]) if group else {}
            a = run.metrics(group, [later[pos[i]] for i in group]) if group else {}
            tr[name] = {"n": len(group), "before": b, "after": a, **(_delta(b, a) if group else {})}
        out["transfer"] = tr
        out["seconds"] = round(time.perf_counter() - t0, 1)
        return out
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _weights(eng) -> np.ndarray:
    """Every edge's effective weight in the in-memory graph, ordered by edge id."""
    e = eng.graph.all_edges()
    return e.weight[np.argsort(e.eid, kind="stable")].copy()


def _policy_dict(p: LearningPolicy) -> dict:
    import dataclasses

    return dataclasses.asdict(p)
