"""PRs by an author, the PRs that touched a path, and who merged the most PRs."""

from __future__ import annotations

import functools
import re

from ..devplan import (
    MAX_ITEMS,
    DevPlan,
    Scope,
    commit_match,
    renamed_away,
    time_bounds,
)
from ..question import Question
from ..timephrase import TimeWindow
from ..words import GONE
from .file_removal import DELETED, file_deleted
from .shape import Shape


def _prs_by(author: str, tw: TimeWindow, params: dict, count: bool = False) -> DevPlan:
    """The PRs merged by commits of ``author`` (a squash's author wrote the PR; a merge's clicked merge), or
    how many (``count``)."""
    params["author"] = author
    where = ["c.author = $author"] + time_bounds(tw, params)
    head = f"MATCH (c:commit)-[:merged_in]->(p) WHERE {' AND '.join(where)} "
    expl = f"PRs merged by commits of {author}" + (", " + tw.describe() if tw.active else "")
    if count:
        return DevPlan("count_prs_by_author", "count", head + "RETURN count(DISTINCT p) AS count", params, expl)
    cy = head + "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time ORDER BY time DESC"
    return DevPlan("prs_by_author", "prs", cy, params, expl)


def plan_pr_mergers(tw: TimeWindow, params: dict) -> DevPlan:
    """ "Who merged the most PRs?": authors of the commits that merged PRs (``merged_in``: a merge's author
    clicked merge; a squash's author wrote the PR), by PRs."""
    where = ["p.type IN ['pull_request', 'pr']"] + time_bounds(tw, params)
    head = f"MATCH (c:commit)-[:merged_in]->(p) WHERE {' AND '.join(where)} "
    cy = (
        f"{head}RETURN c.author AS author, count(DISTINCT p) AS prs, max(c.time) AS last "
        f"ORDER BY prs DESC, author LIMIT {MAX_ITEMS}"
    )
    said = [tw.describe()] if tw.active else []
    expl = "authors of the commits that merged PRs (a squash's author wrote the PR), most PRs first"
    total = f"{head}RETURN count(DISTINCT c.author) AS count"
    expl = ", ".join([expl] + said)
    return DevPlan("pr_mergers", "authors", cy, params, expl, total, filters=said, heads_with_explanation=True)


def plan_prs_of(author, scope: Scope | None, who: bool, tw: TimeWindow, params: dict, count: bool) -> DevPlan | None:
    """PRs by an author, or the PRs whose commits touched a scope; None for other PR questions."""
    if author:
        return _prs_by(author, tw, params, count)
    if scope is not None and not who:
        return _prs_touching(scope, tw, params, count)
    return None


# each commit's PRs with their sizes: a branch merged into another PR's branch ("Merge stable into main (#N)")
# is part of both; the PR that landed the commit is the smallest that holds it
_PR_OF = (
    "MATCH (c:commit) WHERE c.id IN $ids MATCH (c)-[:merged_in|part_of]->(p) WHERE p.type IN ['pull_request', 'pr'] "
    "MATCH (x:commit)-[:merged_in|part_of]->(p) "
    "RETURN c.id AS commit, p.id AS id, p.title AS title, p.type AS type, p.time AS time, count(x) AS size"
)


def landing_prs(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The PR that landed each of the plan's commits (a squash merged in it, or its branch part of it: the
    smallest PR holding it); when none did, the answer names the commits and says so."""
    ids = [r["id"] for r in rows if isinstance(r.get("id"), str)]
    found = engine.cypher(_PR_OF, {"ids": ids})["rows"] if ids else []
    best: dict[str, dict] = {}
    for r in sorted(found, key=lambda r: (r["size"], str(r["id"]))):
        best.setdefault(r["commit"], r)
    prs = list({r["id"]: {k: r[k] for k in ("id", "title", "type", "time")} for r in best.values()}.values())
    if not prs and ids:
        p.none_text = f"No PR: {p.explanation} ({', '.join(i[7:17] for i in ids)}) was part of no PR in the store."
    return prs


def _pr_of_removal(q: Question) -> DevPlan | None:
    """ "In which PR was F deleted?", "F is gone: in which PR?": the PR of F's removal, not every PR that ever
    touched F."""
    if q.scope is None or q.scope.kind != "file" or q.count or q.who or q.tw.active:
        return None
    if not DELETED.search(q.words) and not GONE.search(q.words):
        return None
    removal = file_deleted(q.scope, q.params, who=False)
    expl = f"the PR of {removal.explanation}"
    return DevPlan("pr_of_removal", "prs", removal.cypher, q.params, expl, steps=(*removal.steps, landing_prs))


def _prs_touching(scope: Scope, tw: TimeWindow, params: dict, count: bool) -> DevPlan:
    """ "Which PRs touched DIR?": the PRs a commit touching the scope belongs to (its branch, ``part_of``)
    or merged (a squash, ``merged_in``)."""
    match, said = commit_match(scope, tw, None, params)
    pr_of = "MATCH (c)-[:merged_in|part_of]->(p) WHERE p.type IN ['pull_request', 'pr'] "
    head = f"{match} {pr_of}"
    expl = "PRs with commits " + ", ".join(said)
    ret = "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time ORDER BY time DESC"
    # a commit that moved a path of the scope away touches only the new path, yet `git log -- SCOPE` lists it
    moved = renamed_away(scope, tw, None, params, ret=pr_of + ret)
    if count:  # the PRs' ids, with the renamed-away commits' PRs, counted when run
        counted = functools.partial(count_ids_with, moved=moved)
        return DevPlan("count_prs_touching", "count", head + ret, params, expl, steps=(counted,))
    total = head + "RETURN count(DISTINCT p) AS count"
    cy = f"{head}{ret} LIMIT {MAX_ITEMS}"
    return DevPlan("prs_touching", "prs", cy, params, expl, total, extra=moved, filters=said)


def count_ids_with(engine, p: DevPlan, rows: list[dict], moved: str | None = None) -> list[dict]:
    """``[{"count": N}]``: the distinct ids of the rows and of the rows of the query ``moved``."""
    extra = engine.cypher(moved, p.params)["rows"] if moved else []
    return [{"count": len({r["id"] for r in rows} | {r["id"] for r in extra})}]


# "which PR merged the most commits?", "the biggest pull requests": PRs by the commits they landed
_BY_SIZE = re.compile(
    r"\b(?:most(?!\s+recent)|biggest|largest|longest)\b[^?]*\bcommits?\b|\b(?:biggest|largest|longest)\s+(?:prs?|pull\s+requests?)\b",
    re.I,
)
_ONE_PR = re.compile(r"\b(?:pr|pull\s+request)\b(?!s)", re.I)


def plan_pr_sizes(engine, q: Question) -> DevPlan | None:
    """The PRs with the most commits (their branch's ``part_of`` and the merge or squash ``merged_in``), as
    ``git rev-list --count M^1..M^2`` counts a merged branch; one PR when the question says "which PR"."""
    if not q.wants_prs or q.scope or q.author or q.who or q.count or not _BY_SIZE.search(q.words):
        return None
    k = 1 if _ONE_PR.search(q.words) else 10
    where = ["type(r) IN ['part_of', 'merged_in']", "p.type IN ['pull_request', 'pr']"]
    where += time_bounds(q.tw, q.params, "p")
    cy = (
        f"MATCH (c:commit)-[r]->(p) WHERE {' AND '.join(where)} WITH p, count(DISTINCT c) AS commits "
        f"RETURN p.id AS id, p.title AS title, p.type AS type, p.time AS time, commits "
        f"ORDER BY commits DESC, id LIMIT {k + _TIES_SHOWN}"
    )
    expl = ("the PR" if k == 1 else f"the {k} PRs") + " with the most commits (its branch's and its merge)"
    expl += ", " + q.tw.describe() if q.tw.active else ""
    return DevPlan("prs_by_commits", "prs", cy, q.params, expl, steps=(functools.partial(_with_ties, k=k),))


_TIES_SHOWN = 10  # PRs tied with the last one asked for, read to say the tie


def _with_ties(engine, p: DevPlan, rows: list[dict], k: int) -> list[dict]:
    """The first ``k`` rows and those tied with the k-th: "the PR with the most commits" is no one PR when
    several have as many (a squash-merging project: every PR is one commit)."""
    if len(rows) <= k:
        return rows
    last = rows[k - 1]["commits"]
    kept = [r for r in rows if r["commits"] >= last]
    if len(kept) > k:
        more = " or more" if len(kept) == len(rows) == k + _TIES_SHOWN else ""  # the ties ran past what was read
        unit = f"{last} commit{'s' if last != 1 else ''}"
        tied = sum(r["commits"] == last for r in kept)
        p.explanation += (
            f"; {len(kept)}{more} PRs tie at {unit}: no one PR is the answer"
            if k == 1
            else f"; place {k} is a tie: {tied}{more} PRs have {unit}"
        )
    return kept


PR_SIZES = Shape("pr_sizes", plan_pr_sizes, doc="the PRs that landed the most commits")

PRS_OF = Shape(
    "prs_of",
    lambda engine, q: (
        _pr_of_removal(q) or plan_prs_of(q.author, q.scope, q.who, q.tw, q.params, q.count) if q.wants_prs else None
    ),
    doc="the PRs of an author, the PRs that touched a path",
)
