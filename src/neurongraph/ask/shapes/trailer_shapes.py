"""Who the trailers name: "who reviews the most patches (Reviewed-by)?", "who has the most Acked-by tags?",
"who acked 3f2a9c1?".

Why a shape of its own: the people who review, ack, test or report a change are not its author, and the
store once answered these with the authors (or a search).  The git reader keeps each commit's trailers as
lists of names (``reviewed_by``, ``acked_by``, ``tested_by``, ``reported_by``, ``suggested_by``,
``co_authored_by``, ``signed_off_by``: ``ingest/refs.trailers``), so a ranking is one count over them, as
``git log --format='%(trailers:key=Reviewed-by,valueonly)' | sort | uniq -c`` counts.  The kind is read from
the trailer's own name ("Reviewed-by") or from the verb ("reviews", "acked", "tested"); a question with
neither is not this shape's.
"""

from __future__ import annotations

import re
from typing import Any

from ..devplan import C_RET, MAX_ITEMS, DevPlan, commit_match, time_bounds
from ..question import Question
from .one_change import unread_change
from .shape import Shape

__all__ = ["plan_trailers", "TRAILER_KEYS"]

TRAILER_KEYS = {
    "review": "reviewed_by",
    "ack": "acked_by",
    "test": "tested_by",
    "report": "reported_by",
    "suggest": "suggested_by",
    "co-author": "co_authored_by",
    "sign": "signed_off_by",
}
_NAMED = re.compile(r"\b(Reviewed|Acked|Tested|Reported|Suggested|Co-authored|Signed-off)-by\b", re.I)
# the verbs and nouns of the people trailers name; "tests" (files) and "reports" (documents) are not read
_VERB = re.compile(
    r"\b(?:(review)(?:s|ed|er|ers|ing)?|(ack)(?:s|ed|er|ers|ing)?|(test)(?:ed|er|ers)|(report)(?:ed|er|ers)|"
    r"(suggest)(?:ed|er|ers)?|(co-?author)(?:s|ed)?|(co-?wr)(?:ote|ite|itten|iter|iters)|(sign)(?:s|ed)?[- ]off)\b",
    re.I,
)
_RANKED = re.compile(r"\b(?:most|top|leading|busiest|ranking|rank|how\s+many)\b", re.I)


def _kind(words: str) -> str | None:
    named = _NAMED.search(words)
    if named is not None:
        word = named.group(1).lower()
        return TRAILER_KEYS["co-author" if word.startswith("co") else "sign" if word.startswith("sign") else word[:-2]]
    verb = _VERB.search(words)
    if verb is None:
        return None
    found = next(g for g in verb.groups() if g)
    low = found.lower().replace("coauthor", "co-author").replace("cowr", "co-author").replace("co-wr", "co-author")
    return TRAILER_KEYS.get(low)


_PEOPLE: dict[str, Any] = {"noun": "people", "heads_with_explanation": True}  # the people trailers name


def plan_trailers(words: str, commit_id: str | None, scope, tw, author, params: dict) -> DevPlan | None:
    """The trailer question ``words`` asks, if any: the people of one kind for a named commit, or the people
    ranked by how many commits name them (the question's scope, period and author filters apply)."""
    key = _kind(words)
    if key is None:
        return None
    said_kind = key.replace("_", "-").capitalize()
    article = "an" if said_kind[0] in "AEIOU" else "a"
    none = f"No commit here carries {article} {said_kind} trailer (git records who reviewed or acked a change so)."
    if commit_id is not None:
        params["a"] = commit_id
        cy = f"MATCH (c:commit {{id: $a}}) UNWIND coalesce(c.{key}, []) AS who RETURN who AS author, 1 AS commits"
        expl = f"the people {commit_id}'s {said_kind} trailers name"
        none = f"{commit_id} carries no {said_kind} trailer (git records who reviewed or acked a change so)."
        return DevPlan("trailer_people", "authors", cy, params, expl, none_text=none, **_PEOPLE)
    if not _RANKED.search(words):
        return None
    match, said = commit_match(scope, tw, author, params)
    cy = (
        f"{match} WITH DISTINCT c UNWIND coalesce(c.{key}, []) AS who "
        f"RETURN who AS author, count(DISTINCT c) AS commits ORDER BY commits DESC, author LIMIT {MAX_ITEMS}"
    )
    expl = f"people by the commits whose {said_kind} trailers name them" + (", " + ", ".join(said) if said else "")
    total = f"{match} UNWIND coalesce(c.{key}, []) AS who RETURN count(DISTINCT who) AS count"
    return DevPlan("trailer_ranking", "authors", cy, params, expl, total, filters=said, none_text=none, **_PEOPLE)


def _counted(q: Question, key: str) -> DevPlan:
    """ "How many Reviewed-by tags did Andrii give?": the commits whose trailers of that kind name the person
    (a trailer holds "Name <email>"), within the question's period; the person is not the commits' author."""
    said_kind = key.replace("_", "-").capitalize()
    q.params["author"] = q.author  # (the name the trailers hold; the guard sees the author read)
    where = [f"any(x IN coalesce(c.{key}, []) WHERE x = $author OR x STARTS WITH ($author + ' <'))"]
    where += time_bounds(q.tw, q.params)
    cy = f"MATCH (c:commit) WHERE {' AND '.join(where)} RETURN count(c) AS count"
    expl = f"commits whose {said_kind} trailers name {q.author}" + (", " + q.tw.describe() if q.tw.active else "")
    return DevPlan("trailer_count", "count", cy, q.params, expl)


# a person a trailer names, who may have written no commit ("co-authored by Claude", "has Claude been credited as a
# co-author"): capitalised words after "by", or after the auxiliary that opens the question
_TRAILER_NAME = re.compile(
    r"\bby\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
    r"|^\W*(?i:has|have|did|does|is|was|were)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})\s+(?i:been|ever|got|get|as)\b"
    r"|\b(?i:list|lists|listing|name|names|naming|credit|credits|crediting)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})"
    r"\s+(?i:as)\b"
)


def _trailer_named(engine, q: Question, key: str) -> DevPlan | None:
    """ "how many commits were co-authored by Claude?", "which commits list Claude as a co-author?": the commits
    whose trailers of that kind name the person (by the start of the name the trailer holds: "Name <email>");
    None when the question names no one there.  Answering without the name had counted every commit."""
    m = _TRAILER_NAME.search(q.text)
    if m is None:
        return None
    name = next(g for g in m.groups() if g).strip()
    said_kind = key.replace("_", "-").capitalize()
    q.params["named"] = name.lower()
    where = [f"any(x IN coalesce(c.{key}, []) WHERE toLower(x) STARTS WITH $named)"] + time_bounds(q.tw, q.params)
    match = f"MATCH (c:commit) WHERE {' AND '.join(where)}"
    expl = f"commits whose {said_kind} trailers name {name}" + (", " + q.tw.describe() if q.tw.active else "")
    none = f"No commit's {said_kind} trailer names {name}."
    if q.count:
        return DevPlan("trailer_count", "count", f"{match} RETURN count(c) AS count", q.params, expl)
    cy = f"{match} RETURN {C_RET} ORDER BY time, id LIMIT {MAX_ITEMS}"
    total = f"{match} RETURN count(c) AS count"
    return DevPlan("trailer_commits", "commits", cy, q.params, expl + ", oldest first", total, none_text=none)


def _plan(engine, q: Question) -> DevPlan | None:
    """A trailer question about a named commit, a change named by description, or the whole history."""
    key = _kind(q.words)
    if key is not None and q.count and q.author and not q.who and q.commit is None:
        return _counted(q, key)
    if key is not None and not q.who and q.author is None and q.commit is None and q.pr is None:
        if (named := _trailer_named(engine, q, key)) is not None:
            return named
    if not q.who or key is None:
        return None
    commit = q.commit.node if q.commit else None
    if commit is None and q.described is not None and not _RANKED.search(q.words):
        got = q.change(engine)
        if got is None or got.one is None:
            return unread_change(q.described, got)  # the people of one change: never the whole history's
        commit = got.one
    return plan_trailers(q.words, commit, q.scope, q.tw, q.author, q.params)


TRAILERS = Shape(
    "trailers",
    _plan,
    doc="who reviewed / acked / tested (the trailers git keeps)",
)
