"""Questions about one named commit (its author, its PR, its reverts) or one named PR (its files, commits, merger)."""

from __future__ import annotations

import re

from ..devplan import (
    C_RET,
    DevPlan,
)
from ..names import Mention
from ..words import COMMITS, FILE_WORDS, RELATION, REVIEW
from .shape import Shape

# the commit a named commit's Fixes: trailer names ("what does its Fixes: point at", "9a30fc4 says it fixes an older
# commit: which one", "which commit does X fix"); the git reader stores each trailer as a ``fixes`` edge
_FIX_TARGET = re.compile(
    r"\bfixes\s*(?::|tags?\b|trailers?\b|lines?\b)"
    r"|\b(?:fix(?:es|ed)?|repair(?:s|ed)?)\s+(?:an?\s+|the\s+)?(?:older|earlier|previous|prior|original|another)\s+"
    r"(?:commit|change|patch)\b"
    r"|\b(?:which|what)\s+(?:commit|change|patch)\s+(?:does|did)\s+(?:it|this|that|\S+)\s+fix\b",
    re.I,
)
# ... read the other way: the commits whose trailer names it ("the fixes for X", "commits that fix X", "fixed by")
_FIXED_BY = re.compile(r"\b(?:fix(?:es|ed)?|fixing|pointing\s+(?:to|at)|fixes\s+for)\s+(?:commit\s+)?$", re.I)


def _fix_target(question: str, commit: Mention, params: dict) -> DevPlan | None:
    """The commits ``commit``'s Fixes: trailers name, or those whose trailers name it (the question names the
    commit right after "fixes", "fixed by"); None when the question asks neither."""
    if not _FIX_TARGET.search(question):
        return None
    before = question[: commit.start].rstrip(" '\"`(")
    if _FIXED_BY.search(before + " ") or re.search(r"\bfixed\s+by\s*$", before, re.I):
        cy = f"MATCH (c:commit)-[:fixes]->(a:Node {{id: $a}}) RETURN DISTINCT {C_RET} ORDER BY time, id"
        none = f"No commit in the store carries a Fixes: trailer naming {commit.node}."
        return DevPlan(
            "fixed_by", "commits", cy, params, f"commits whose Fixes: trailer names {commit.node}", none_text=none
        )
    cy = f"MATCH (a:Node {{id: $a}})-[:fixes]->(c:commit) RETURN DISTINCT {C_RET} ORDER BY time, id"
    none = f"{commit.node} carries no Fixes: trailer naming a commit of this store."
    return DevPlan(
        "fixes_target", "commits", cy, params, f"the commits {commit.node}'s Fixes: trailers name", none_text=none
    )


def plan_commit(question: str, commit: Mention, params: dict, who: bool, wants_prs: bool) -> DevPlan | None:
    """A question about one named commit: its author, the PR it was merged in, what reverted it, what its Fixes:
    trailer names."""
    params["a"] = commit.node
    if (target := _fix_target(question, commit, params)) is not None:
        return target
    wants_prs = wants_prs and not re.search(r"\bwho\s+(?:has\s+|had\s+)?reverted\b", question, re.I)
    if re.search(r"\brevert(?:s|ed|ing)?\b", question, re.I) and not wants_prs:
        # one edge per target, the strongest first: a revert that also says "Fixes: X" is stored as fixes,
        # so revert commits linked by fixes/refs count when no reverts edge names X
        by_rel = (
            f"MATCH (c:commit)-[e:reverts]->(a:Node {{id: $a}}) RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        by_title = (
            "MATCH (c:commit)-[e]->(a:Node {id: $a}) WHERE type(e) IN ['fixes', 'refs', 'follows_up'] "
            f"AND c.title STARTS WITH 'Revert' RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        # "which commit reverted X", "was X (ever) reverted", "did X get reverted": what reverted it
        passive = re.search(r"\b(?:was|were|been|get|got|gets|is|ever)\b[^?]*\breverted\b", question, re.I)
        if who and re.search(r"\bwho\s+(?:has\s+|had\s+)?reverted\b", question, re.I):  # the author of the revert
            fb = (by_title, "no reverts edge: revert commits that name it as fixed or referenced")
            return DevPlan("reverted_by", "author", by_rel, params, f"who reverted {commit.node}", fallback=fb)
        if (
            passive
            or re.search(r"\b(?:which|what)\b[^?]*\brevert(?:ed|s)\b", question, re.I)
            and not re.search(r"\bdid\b", question, re.I)
        ):
            fb = (by_title, "no reverts edge: revert commits that name it as fixed or referenced")
            return DevPlan("reverted_by", "commits", by_rel, params, f"commits that revert {commit.node}", fallback=fb)
        fwd = (
            "MATCH (a:Node {id: $a})-[e]->(c:commit) WHERE type(e) = 'reverts' OR "
            "(type(e) IN ['fixes', 'refs', 'follows_up'] AND a.title STARTS WITH 'Revert') "
            f"RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        return DevPlan("reverts", "commits", fwd, params, f"commits {commit.node} reverts")
    if who or re.search(r"\bauthor", question, re.I):
        return DevPlan(
            "author_of",
            "author",
            f"MATCH (c:Node {{id: $a}}) RETURN {C_RET}",
            params,
            f"the author of {commit.node}",
        )
    if wants_prs and not RELATION.search(question.replace(commit.phrase, "")):
        return DevPlan(
            "pr_of_commit",
            "prs",
            "MATCH (c:Node {id: $a})-[r]->(p) WHERE type(r) IN ['merged_in', 'part_of'] "
            "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time, c.id AS anchor",
            params,
            f"the PR {commit.node} was merged in (merged_in, part_of)",
        )
    return None


def _pr_reviewers(pr: str, params: dict) -> DevPlan:
    """ "Who reviewed PR #N?": git holds no PR review, only its commits' Reviewed-by / Acked-by trailers; the
    people those name, or that it is not recorded (never who merged it, which is another question)."""
    cy = (
        "MATCH (c:commit)-[r]->(p:Node {id: $pr}) WHERE type(r) IN ['merged_in', 'part_of'] "
        "UNWIND coalesce(c.reviewed_by, []) + coalesce(c.acked_by, []) AS who "
        "RETURN who AS author, count(DISTINCT c) AS commits ORDER BY commits DESC, author"
    )
    none = (
        f"Not recorded in git: who reviewed {pr} (the forge keeps PR reviews; none of its commits carries a "
        "Reviewed-by or Acked-by trailer)."
    )
    expl = f"the people the Reviewed-by / Acked-by trailers of {pr}'s commits name"
    return DevPlan(
        "pr_reviewers", "authors", cy, params, expl, none_text=none, noun="people", heads_with_explanation=True
    )


def plan_pr(question: str, pr: str, params: dict, who: bool, count: bool) -> DevPlan | None:
    """A question about one PR: its files, its commits, who merged it."""
    params["pr"] = pr
    merging = "MATCH (m:commit)-[:merged_in]->(p:Node {id: $pr}) WITH m ORDER BY m.time LIMIT 1 "
    if who and REVIEW.search(question):
        return _pr_reviewers(pr, params)
    if FILE_WORDS.search(question):
        return DevPlan(
            "pr_files",
            "files",
            merging + "MATCH (m)-[:touches]->(f:file) RETURN DISTINCT f.id AS id, f.title AS title, "
            "f.type AS type, m.id AS via ORDER BY id",
            params,
            f"files the commit that merged {pr} touches (a merge: its first-parent diff)",
        )
    if who:
        return DevPlan("pr_author", "author", merging + "WITH m AS c RETURN " + C_RET, params, f"who merged {pr}")
    if COMMITS.search(question) or count:
        cy = (
            "MATCH (c:commit)-[r]->(p:Node {id: $pr}) WHERE type(r) IN ['merged_in', 'part_of'] "
            f"WITH DISTINCT c ORDER BY c.time, c.id RETURN {C_RET}"
        )
        return DevPlan("pr_commits", "commits", cy, params, f"commits part_of or merged_in {pr}")
    return None


NAMED_COMMIT = Shape(
    "named_commit",
    lambda engine, q: plan_commit(q.text, q.commit, q.params, q.who, q.wants_prs) if q.commit else None,
    claims=lambda q: q.commit is not None,
    doc="one named commit: its author, its PR, what it reverts or what reverted it",
)
NAMED_PR = Shape(
    "named_pr",
    lambda engine, q: plan_pr(q.text, q.pr, q.params, q.who, q.count) if q.pr else None,
    claims=lambda q: q.pr is not None,
    doc="one named PR: its files, its commits, who merged it",
)
