""" "Who" questions: who last/first changed a scope, the authors of it, who wrote the most lines."""

from __future__ import annotations

import re

from ..dev_rows import newest, root_first
from ..devplan import (
    C_RET,
    MAX_ITEMS,
    NON_MERGE,
    DevPlan,
    by_time,
    commit_match,
    renamed_away,
)
from ..words import COMMITS, CREATED, LAST, PEOPLE, PRS, RANKING, REVIEW
from .file_lines import lines_by_author
from .file_removal import DELETED, file_deleted
from .file_sets import FIRST_COMMITS, first_creator
from .prs import plan_pr_mergers
from .shape import Shape


def plan_who_question(
    words: str, rest: str, scope, tw, author, params: dict, first: bool, has_filter: bool, notes: list[str]
) -> DevPlan | None:
    """A "who" question: with a filter, about the scoped commits; without one, only a question about the
    commits themselves ("who made the most / the first commit", "who are the top contributors"), so that
    "who knows about X" stays a search.  "Who created F" is the author of F's first commit, "who deleted
    F" the author of its removal; reviewers are not in the store, and the answer says so."""
    if REVIEW.search(words):
        return None  # (said by ``pr_anchor``, which reads every question: reviewers are not recorded)
    if PRS.search(words) and (RANKING.search(words) or re.search(r"\bmerg\w*", words, re.I)):
        return plan_pr_mergers(tw, params)
    if _LINES_RANKED.search(words) and not re.search(r"\b(?:remov|delet|drop)\w*", words, re.I):
        return _authors_by_lines(scope, tw, author, params)  # "who wrote the most lines (of F)?"
    if scope is not None and scope.kind == "file":
        if DELETED.search(words):
            return file_deleted(scope, params, who=True)
        first = first or bool(CREATED.search(words))
    elif scope is not None and scope.kind == "dir" and CREATED.search(words) and not RANKING.search(words):
        first = not re.search(r"\b(?:added|contributed)\b[^?]*\bto\b", words, re.I)  # "who added the dpll tool"
    if scope is None and _FOUNDED.search(rest):
        first = True  # "who started the libbpf github repo?": the author of its first commit
    last = bool(LAST.search(rest))
    whole = _FOUNDED.search(rest) is not None or (
        COMMITS.search(rest)
        and (first or last or RANKING.search(rest))
        or _TOP_PEOPLE.search(rest)
        or (first or last)
        and PEOPLE.search(rest)  # "who was the first contributor?"
    )
    if not (has_filter or whole):
        return None
    top = _TOP_PEOPLE.search(rest)
    limit = int(top.group(1)) if top and top.group(1) else MAX_ITEMS
    return plan_who(scope, tw, author, params, first, last, max(1, min(limit, MAX_ITEMS)))


# "who started the repo", "who founded the project": the author of the history's first commit
_FOUNDED = re.compile(
    r"\bwho\s+(?:started|founded|created|began|initiated|kicked\s+off)\s+(?:the\s+|this\s+)?(?:[\w-]+\s+){0,2}"
    r"(?:project|repo|repository|codebase|history)\b",
    re.I,
)

# "the top contributors", "top 3 authors in 2023": the authors by commits, the first N of them
_TOP_PEOPLE = re.compile(
    r"\b(?:top|main|biggest|leading|busiest|most\s+active)\s+(?:(\d{1,3})\s+)?(?:contributors?|committers?|authors?)\b",
    re.I,
)
_LINES_RANKED = re.compile(r"\b(?:most|top|biggest|largest)\b[^?]*\blines?\b|\blines?\b[^?]*\bmost\b", re.I)


def _authors_by_lines(scope, tw, author, params: dict) -> DevPlan:
    """ "Who wrote the most lines?": the authors by the lines their non-merge commits added (to the scoped
    files, if any), what ``git log --no-merges --numstat`` adds up per author; summed when run."""
    if scope is None:
        match, said = commit_match(None, tw, author, params, where=[NON_MERGE])
        said = ["(merge commits left out)"] + said
    else:
        match, said = commit_match(scope, tw, author, params, touching=True)
    path = "substring(f.id, 5)" if scope is not None else "null"
    cy = f"{match} RETURN DISTINCT c.idx AS idx, c.author AS author, {path} AS path ORDER BY idx, path"
    expl = "authors by the lines their commits added" + (" " + ", ".join(said) if said else "")
    total = f"{match} RETURN count(DISTINCT c.author) AS count"
    return DevPlan(
        "authors_by_lines",
        "authors",
        cy,
        params,
        expl,
        total,
        filters=said,
        steps=(lines_by_author,),
        read_all=True,
        heads_with_explanation=True,
    )


def plan_who(scope, tw, author, params: dict, first: bool, last: bool, limit: int = MAX_ITEMS) -> DevPlan:
    """ "who last changed F" (the author of the newest scoped commit), "who first …", else the authors (the
    first ``limit`` by commits)."""
    of_file = scope is not None and scope.kind == "file"
    match, said = commit_match(scope, tw, author, params, follow_renames=first and of_file)
    if first or last:
        order = "ASC" if first else "DESC"
        # "who created F": its first commits (under its earlier paths too), of which run_plan takes the one git
        # says created it (clock skew)
        lim = FIRST_COMMITS if of_file else 1  # "who last changed F": its newest second's commits (newest)
        path = ", substring(p.id, 5) AS path" if first and of_file else ""
        cy = f"{match} WITH DISTINCT c, {'p' if path else 'null AS p'} ORDER BY {by_time(order)} LIMIT {lim} "
        cy += f"RETURN {C_RET}{path}" + (", c.parents AS parents" if of_file and not first else "")
        expl = f"the author of the {'first' if first else 'latest'} commit " + (", ".join(said) or "of the history")
        steps = (first_creator, root_first) if first and not said else (first_creator,) if first else (newest,)
        return DevPlan("who_first" if first else "who_last", "author", cy, params, expl, filters=said, steps=steps)
    cy = (
        f"{match} WITH DISTINCT c RETURN c.author AS author, count(c) AS commits, max(c.time) AS last "
        f"ORDER BY commits DESC, author LIMIT {int(limit)}"
    )
    expl = "authors of the commits " + ", ".join(said) if said else "authors of all commits, most commits first"
    total = f"{match} RETURN count(DISTINCT c.author) AS count"
    return DevPlan(
        "who",
        "authors",
        cy,
        params,
        expl,
        total,
        extra=renamed_away(scope, tw, author, params),
        filters=said,
        row_limit=int(limit),
    )


WHO_SHAPE = Shape(
    "who",
    lambda engine, q: plan_who_question(
        q.words, q.rest, q.scope, q.tw, q.author, q.params, q.first, q.has_filter, q.notes
    ),
    claims=lambda q: q.who,
    doc="who last / first changed a scope, its authors, who wrote the most lines, who merged the most PRs",
)
