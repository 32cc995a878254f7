"""Lists of commits: the scoped commits, the latest or first N; the files the scoped commits touched."""

from __future__ import annotations

from dataclasses import replace

from ..dev_rows import from_tip, root_first
from ..devplan import (
    AUTHORED,
    C_RET,
    MAX_ITEMS,
    DevPlan,
    by_time,
    commit_match,
    renamed_away,
)
from ..message_words import commits_mentioning, phrase_words
from ..question import Question
from ..words import COMMITS, FILE_WORDS, LISTY
from .shape import Shape


def plan_list(
    shape: str,
    match: str,
    params: dict,
    said: list[str],
    order: str,
    n: int | None,
    extra: str | None = None,
    key: str = "c.time",
) -> DevPlan:
    """The commits ``match`` finds, newest (``DESC``) or oldest first; "the latest / first N" (``n``) of the whole
    history as ``git log -N`` / ``git log --reverse`` list them (from the tip; the root first)."""
    lim = n if n else MAX_ITEMS
    cy = f"{match} WITH DISTINCT c ORDER BY {by_time(order, key)} LIMIT {lim} RETURN {C_RET}, c.parents AS parents"
    cnt = f"{match} RETURN count(DISTINCT c) AS count" if not n else None
    which = "latest" if order == "DESC" else "first"
    what = (f"the {which} commit" if n == 1 else f"the {which} {n} commits" if n else "commits") + (
        " " + ", ".join(said) if said else ""
    )
    steps = ((from_tip,) if order == "DESC" else (root_first,)) if n and not said else ()
    return DevPlan(shape, "commits", cy, params, what, cnt, extra=extra, filters=said, steps=steps)


def plan_listing(engine, q: Question) -> DevPlan:
    """The scoped commits (newest first, or "the first N"), or the files they touched ("which files changed in
    2024?"); renamed-away commits are added when run."""
    if FILE_WORDS.search(q.text) and not COMMITS.search(q.text.replace("changed", "")) and q.scope is None:
        match, said = commit_match(None, q.tw, q.author, q.params)
        cy = (
            f"{match} MATCH (c)-[:touches]->(f:file) RETURN DISTINCT f.id AS id, f.title AS title, "
            f"f.type AS type ORDER BY id LIMIT {MAX_ITEMS}"
        )
        expl = "files touched by commits " + ", ".join(said)
        return DevPlan("files_changed", "files", cy, q.params, expl, filters=said)
    match, said = commit_match(q.scope, q.tw, q.author, q.params)
    moved = None if q.n else renamed_away(q.scope, q.tw, q.author, q.params)
    order = "ASC" if q.first else "DESC"
    # "when did A last commit": A's own last commit, by when A wrote it (a mirror applies patches weeks later)
    key = AUTHORED if q.author and q.n else "c.time"
    made = plan_list("latest_n" if q.n else "commits", match, q.params, said, order, q.n, extra=moved, key=key)
    if q.topic is not None and not q.n:
        made.fallback = _in_messages(engine, q, order, key)
    return made


def _in_messages(engine, q: Question, order: str, key: str) -> tuple[str, str] | None:
    """When no subject names the topic: the commits whose whole message holds the topic phrase's informative
    words (ask/message_words.py), with the question's other filters."""
    assert q.topic is not None
    ids, kept = commits_mentioning(engine, phrase_words(q.text, q.topic.span[0]))
    if not ids:
        return None
    topic_cond = [c for c in q.tw.conditions if c[1].startswith("whose subject mentions")]
    q.params["message_ids"] = ids
    tw = replace(q.tw, conditions=[c for c in q.tw.conditions if c not in topic_cond])
    words = " and ".join(f"'{w}'" for w in kept)
    match, said = commit_match(q.scope, tw, q.author, q.params, where=["c.id IN $message_ids"])
    cy = plan_list("commits", match, q.params, said, order, None, key=key).cypher
    return cy, f"no subject names the topic; commits whose message mentions {words}, as git log -i --grep finds them"


LISTING = Shape(
    "listing",
    plan_listing,
    claims=lambda q: q.n is not None or q.has_filter and bool(LISTY.search(q.text) or COMMITS.search(q.text)),
    doc="the scoped commits, the latest / first N, the files they touched",
)
