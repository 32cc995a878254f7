"""The learning splits of ``ngr bench history``: past fixes reported as used, later fixes scored.

Kept apart from history.py so the learning replay can grow (more splits) without touching the
retrieval benchmark itself.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from ..engine import Engine, open_engine
from .history import LEARN_SPLIT, Pair, _canonical, _config, _metrics

__all__ = ["_learning"]


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
    return out
