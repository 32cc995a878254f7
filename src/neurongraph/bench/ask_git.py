"""``ngr bench ask --repo DIR``: developer questions whose exact answers git itself computes.

Why git and not the store: the store is what is being tested, so the gold answer of every question comes
from a ``git`` command run on the repository (``git log`` with ``--since/--until/--author/-- PATH``,
``git diff M^1 M --name-only``, ``--diff-filter=A/R``, ``--grep``), never from the ingested nodes.  The
store is read only to check that the ingest saw the same repository (the head commit is a node).

Each shape has 2–3 wordings, drawn with a seeded random generator, and a scorer: a *set* shape is exact
when the answer's set of commits / files / PRs equals git's; a *count* shape when the number is equal; an
*author* shape when the author name is equal.  The answer read is ``ask``'s ``result`` (``items`` /
``value``), else the ids of its graph rows.  A shape a history has no data for (no PRs, no reverts, no
tags) is reported as n/a.  Tag shapes take their gold from ``git rev-list`` (``vX..HEAD``, ``vX..vY``,
``vX ^P`` with ``P = git describe --tags --abbrev=0 vX^``) and ``git tag --contains X --sort=creatordate``.

What git counts, so the ask is held to git's own defaults: a path-limited question counts non-merge commits
(``git log --no-merges --full-history -- PATH``: a merge's first-parent diff repeats its branch); an
unscoped one (``latest N``, ``between dates``, ``in YEAR``, ``by AUTHOR``) counts merges too.  Dates are
committer dates, UTC, filtered with ``--since-as-filter`` (git >= 2.37): plain ``--since`` stops walking at
the first commits older than the date, and on a history whose commit dates are not monotonic (ovs) it
misses commits inside the window (11 of 48 for 2013-12-18..26).  Author names are as the commits record
them (``-c log.mailmap=false``), which is what the ingest stores.
"""

from __future__ import annotations

import time
from pathlib import Path

from ..errors import InvalidArgument
from .ask_git_facts import GitFacts
from .ask_git_questions import Question, generate
from .ask_git_wordings import SHAPES

__all__ = ["GitFacts", "Question", "SHAPES", "answer_value", "exact", "generate", "run_repo", "repo_table"]


# ---------------------------------------------------------------------- scoring
def _norm_id(x: str) -> str:
    for pre in ("commit:", "file:", "pr:", "pull_request:", "tag:"):
        if x.startswith(pre):
            return x[len(pre) :]
    return x


def answer_value(res: dict, kind: str):
    """What an ask answered: its ``result`` (items / value), else the ids of its graph rows."""
    r = res.get("result") or {}
    if kind in ("count", "author"):
        return r.get("value")
    if kind == "dirs":  # the first of the ranking
        return (r.get("items") or [None])[0]
    if "items" in r:
        return {_norm_id(x) for x in r["items"]}
    want = {"commits": "commit:", "files": "file:", "prs": "pr:", "tags": "tag:"}[kind]
    return {_norm_id(row["id"]) for row in res.get("rows", []) if str(row.get("id", "")).startswith(want)}


def exact(q: Question, got) -> bool:
    if q.kind in ("count", "author", "dirs"):
        return got == q.gold
    if not isinstance(got, set):
        return False
    gold = q.gold if isinstance(q.gold, set) else set()
    if q.kind == "commits":  # an answer may give full or short shas
        return len(got) == len(gold) and all(any(g.startswith(x) or x.startswith(g) for g in gold) for x in got)
    return got == gold


def run_repo(engine, repo: str | Path, per_shape: int = 20, seed: int = 0, limit: int | None = None) -> dict:
    """Ask every generated question; accuracy per shape (n/a for shapes with no data) and overall."""
    facts = GitFacts(repo)
    head = facts.commits[0][0] if facts.commits else None
    if head and not engine.store.node_types(["commit:" + head]):
        raise InvalidArgument(f"the store does not hold {repo}'s head commit {head[:10]}: ingest it first")
    qs = generate(facts, per_shape, seed)
    if limit:
        qs = qs[:limit]
    per: dict[str, list[int]] = {s: [] for s in SHAPES}
    examples: dict[str, str] = {}
    failures: list[dict] = []
    t0 = time.perf_counter()
    for q in qs:
        res = engine.ask(q.question, mode="graph")
        got = answer_value(res, q.kind)
        ok = exact(q, got)
        per[q.shape].append(int(ok))
        examples.setdefault(q.shape, q.question)
        if not ok and len(failures) < 200:
            g = sorted(q.gold) if isinstance(q.gold, set) else q.gold
            w = sorted(got) if isinstance(got, set) else got
            failures.append(
                {
                    "shape": q.shape,
                    "question": q.question,
                    "gold": g[:20] if isinstance(g, list) else g,
                    "got": w[:20] if isinstance(w, list) else w,
                }
            )
    secs = time.perf_counter() - t0
    shapes = {
        s: ({"questions": len(v), "exact": round(sum(v) / len(v), 3), "example": examples[s]} if v else "n/a")
        for s, v in per.items()
    }
    n = sum(len(v) for v in per.values())
    return {
        "repo": str(repo),
        "questions": n,
        "shapes_with_data": sum(1 for v in per.values() if v),
        "exact": round(sum(sum(v) for v in per.values()) / max(1, n), 3),
        "ms_per_question": round(1000 * secs / max(1, n), 1),
        "shapes": shapes,
        "failures": failures,
    }


def repo_table(res: dict) -> str:
    lines = [
        f"{res['repo']}: {res['questions']} questions over {res['shapes_with_data']} shapes, exact {res['exact']:.3f}"
        f" ({res['ms_per_question']} ms/question)",
        "",
        "| shape | questions | exact | example |",
        "|---|---|---|---|",
    ]
    for s, v in res["shapes"].items():
        if v == "n/a":
            lines.append(f"| {s} | 0 | n/a | |")
        else:
            lines.append(f"| {s} | {v['questions']} | {v['exact']:.3f} | {v['example']} |")
    return "\n".join(lines)
