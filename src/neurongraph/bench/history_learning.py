"""The learning splits of ``ngr bench history``: past fixes reported as used, later fixes scored.

* **70/30** — the earlier 70% of questions (by F's time) are past work whose gold origins found in the
  top 20 are reported used; the later 30% are scored before and after that feedback, and once more
  after the same past searches without feedback (drift: must be identical).
* **shared origin** (issue 26) — only the history's own repeated structure: origins that two or more
  fixes point to.  Their questions are replayed in time order on two copies of the store; each is
  scored when it arrives, then its found origins are reported used on the feedback copy.  A question
  whose origin an *earlier* question of the replay shares is a *later* one: its rank on the feedback
  copy (after) against the copy that saw the same searches without feedback (before).  That copy
  against the untouched store is the drift (must be 0).

Kept apart from history.py so the learning replay can grow without touching the retrieval benchmark.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..engine import Engine, open_engine
from .history_common import LEARN_SPLIT, Pair, _canonical, _config, _metrics

__all__ = ["_learning", "shared_origin_questions"]

TOP = 20  # hits the simulated agent reads (history.K)


def _learning(eng: Engine, pairs: list[Pair], qv: dict, pr_commit: dict, tokens: dict, progress) -> dict:
    """Feedback on the earlier 70% of questions, scored on the later 30%, on copies of the store."""
    cut = int(len(pairs) * LEARN_SPLIT)
    past, future = pairs[:cut], pairs[cut:]
    if not past or not future:
        return {"skipped": "too few pairs for a 70/30 split"}
    out: dict[str, Any] = {"past": len(past), "future": len(future)}
    with tempfile.TemporaryDirectory(prefix="ngr-hist-learn-") as tmp:
        rankings = {}
        for mode in ("feedback", "no-feedback"):
            db = Path(tmp) / f"{mode}.db"
            eng.store.copy_to(db)
            copy = open_engine(db, eng.embedder, eng.config)
            try:

                def score(copy: Engine = copy) -> list[list[str]]:
                    return [
                        _canonical(
                            [
                                h.id
                                for h in copy.search(
                                    p.query, config=_config(copy, p, {}), qvec=qv[id(p)], record=False
                                ).hits
                            ],
                            pr_commit,
                            p.fix,
                        )
                        for p in future
                    ]

                before = score()
                used = 0
                for k, p in enumerate(past):
                    res = copy.search(p.query, config=_config(copy, p, {}), qvec=qv[id(p)], record=True)
                    hits = {h.id for h in res.hits}
                    if mode == "feedback":
                        gold = [h for h in hits if pr_commit.get(h, h) in set(p.origins)]
                        for g in gold:
                            copy.record_source_use(res.trace_id, [(g, s) for s in ("selected", "validated", "used")])
                            used += 1
                    if progress:
                        progress(f"learning ({mode})", k + 1, len(past))
                after = score()
            finally:
                copy.close()
            rankings[mode] = (before, after)
            if mode == "feedback":
                out["used_reports"] = used
                out["before"] = _metrics(before, future, tokens)
                out["after"] = _metrics(after, future, tokens)
                out["delta_recall@10"] = out["after"]["recall@10"] - out["before"]["recall@10"]
                out["delta_mrr"] = out["after"]["mrr"] - out["before"]["mrr"]
        b, a = rankings["no-feedback"]
        out["drift_changed_rankings"] = sum(1 for x, y in zip(b, a) if x != y)
    out["shared_origin"] = _shared_origin(eng, pairs, qv, pr_commit, tokens, progress)
    return out


def shared_origin_questions(pairs: list[Pair]) -> tuple[list[Pair], set[int], set[str]]:
    """The questions of origins with >= 2 fixes, in time order; which of them (``id``) are *later*
    ones (an origin of theirs is an origin of an earlier question of that list); those origins."""
    count: dict[str, int] = {}
    for p in pairs:
        for o in set(p.origins):
            count[o] = count.get(o, 0) + 1
    shared = {o for o, n in count.items() if n >= 2}
    replay = sorted((p for p in pairs if shared & set(p.origins)), key=lambda p: (p.time, p.fix))
    seen: set[str] = set()
    later: set[int] = set()
    for p in replay:
        mine = shared & set(p.origins)
        if mine & seen:
            later.add(id(p))
        seen |= mine
    return replay, later, shared


def _shared_origin(eng: Engine, pairs: list[Pair], qv: dict, pr_commit: dict, tokens: dict, progress) -> dict:
    replay, later, shared = shared_origin_questions(pairs)
    if not later:
        return {"skipped": "no origin with two or more fixes"}
    with tempfile.TemporaryDirectory(prefix="ngr-hist-shared-") as tmp:
        copies = {}
        for mode in ("feedback", "no-feedback"):
            eng.store.copy_to(Path(tmp) / f"{mode}.db")
            copies[mode] = open_engine(Path(tmp) / f"{mode}.db", eng.embedder, eng.config)
        try:
            before, after, pristine, scored = [], [], [], []
            used = 0
            for k, p in enumerate(replay):
                cfg = _config(eng, p, {})
                res = {m: c.search(p.query, config=cfg, qvec=qv[id(p)], record=True) for m, c in copies.items()}
                ranked = {m: _canonical([h.id for h in r.hits], pr_commit, p.fix) for m, r in res.items()}
                if id(p) in later:
                    scored.append(p)
                    before.append(ranked["no-feedback"])
                    after.append(ranked["feedback"])
                    base = eng.search(p.query, config=cfg, qvec=qv[id(p)], record=False)
                    pristine.append(_canonical([h.id for h in base.hits], pr_commit, p.fix))
                gold = set(p.origins)
                for h in {h.id for h in res["feedback"].hits[:TOP]}:
                    if pr_commit.get(h, h) in gold:
                        copies["feedback"].record_source_use(
                            res["feedback"].trace_id, [(h, s) for s in ("selected", "validated", "used")]
                        )
                        used += 1
                if progress:
                    progress("learning (shared origin)", k + 1, len(replay))
        finally:
            for c in copies.values():
                c.close()
    b, a = _metrics(before, scored, tokens), _metrics(after, scored, tokens)
    return {
        "origins": len(shared),
        "questions": len(replay),
        "later": len(scored),
        "used_reports": used,
        "before": b,
        "after": a,
        "delta_recall@10": a["recall@10"] - b["recall@10"],
        "delta_mrr": a["mrr"] - b["mrr"],
        "drift_changed_rankings": sum(1 for x, y in zip(before, pristine) if x != y),
    }
