"""The reverts as such: which commits were reverted, how many reverts there are."""

from __future__ import annotations

import re

from ..devplan import (
    C_RET,
    MAX_ITEMS,
    DevPlan,
    commit_match,
)
from ..topics import GIT_SUBJECT
from ..words import LISTY
from .lists import plan_list
from .shape import Shape

# "which commits were reverted?", "what got reverted in 2022?": a commit noun, or a what / which question
_REVERTED = re.compile(
    r"(?:\b(?:commits?|changes?|patch(?:es)?)\b|^\W*(?:what|which)\b)[^?]*\b(?:got|been|were|was|are|is)\s+reverted\b",
    re.I,
)


_REVERT_COMMITS = re.compile(r"\breverts\b|\brevert(?:ing)?\s+commits\b", re.I)


# what `git revert` writes ('Revert "<subject>"'), GitHub's too; git's own subject where the ingest titled a PR
# merge by its PR ("Merge pull request #1543 from pallets/revert-shlex-quote" is no revert of its own)
REVERT_TITLE = f"{GIT_SUBJECT} STARTS WITH 'Revert'"


def plan_reverts(words: str, scope, tw, author, params: dict, count: bool) -> DevPlan | None:
    """The reverts as such (no commit named): "which commits were reverted?" (the commits a revert names:
    its ``reverts`` edge, or the fixes / follow-up edge of a commit titled "Revert …") and "how many reverts
    are there?" (the commits whose subject starts with "Revert"); the question's filters apply to the revert."""
    if _REVERTED.search(words):
        match, said = commit_match(scope, tw, author, params)
        pairs = (  # a revert that also says "Fixes: Y" names Y too: its reverts edges speak for it when it has one
            f"{match} MATCH (c)-[e]->(x:commit) WHERE type(e) = 'reverts' OR "
            f"(type(e) IN ['fixes', 'follows_up'] AND {REVERT_TITLE} AND NOT (c)-[:reverts]->(:commit)) "
            "WITH DISTINCT x AS c "
        )
        expl = " ".join(["commits a revert names (its reverts edge, or a fix edge of a commit titled Revert)", *said])
        if count:
            return DevPlan("count_reverted", "count", pairs + "RETURN count(c) AS count", params, expl, filters=said)
        cy = pairs + f"RETURN {C_RET} ORDER BY time DESC, id LIMIT {MAX_ITEMS}"
        return DevPlan("reverted", "commits", cy, params, expl, filters=said)
    if _REVERT_COMMITS.search(words) and (count or LISTY.search(words)):
        match, said = commit_match(scope, tw, author, params, where=[REVERT_TITLE])
        said = ["whose subject starts with 'Revert'"] + said
        if count:
            cy = f"{match} RETURN count(DISTINCT c) AS count"
            return DevPlan("count_reverts", "count", cy, params, "commits " + ", ".join(said), filters=said)
        return plan_list("reverts_list", match, params, said, "DESC", None)
    return None


REVERTS = Shape(
    "reverts",
    lambda engine, q: plan_reverts(q.words, q.scope, q.tw, q.author, q.params, q.count),
    doc="which commits were reverted; how many reverts",
)
