"""Questions about the tags themselves: "how many releases are there?", "which tags are there?", "what is the
latest release?", "when was the first version tagged?".

Why a shape of its own: without one these fell to the commit shapes, and a count of tags answered with the
number of *commits* ("How many tags are there?" → "20,918 — all commits"), confidently wrong; the
latest release was "not found".  Tags are ``tag:`` nodes with the time git gives them (a git sync writes
one per tag); the newest is the one with the latest time, as ``git tag --sort=-creatordate`` lists them.
A history without tags says so instead of answering about commits.  Tag *phrases* ("since the last
release", "in v2.0") are time filters on commits (timephrase.py), read before this module sees the
question.
"""

from __future__ import annotations

import re

from ..devplan import MAX_ITEMS, DevPlan, time_bounds
from ..tags import LazyTags, looks_like_version, release_commits
from ..timephrase import FIRST_WORDS, TimeWindow
from .shape import Shape

__all__ = ["plan_tags", "plan_tag_date", "plan_tag_neighbour", "asks_about_a_tag"]

_NOUN = r"(?:git\s+)?(?:tags|releases|versions)"
# what may follow the noun when the question is about the tags as such ("… are there?", "… were cut?"): no more
# content, so "what versions of Python are supported?" or "the latest version of the parser" are not read here
_TAIL = (
    r"\s*(?:(?:(?:are|were|is|was)\s+)?(?:there|made|created|tagged|cut|released|published|out)|exist|"
    r"(?:does|do)\s+(?:it|we|the\s+\w+)\s+have|(?:has|have)\s+been\s+(?:made|tagged|cut|released)|"
    r"(?:of|in)\s+(?:the\s+|this\s+)?(?:project|repo\w*|history|store))?\s*[?.!]*\s*$"
)
_COUNT = re.compile(rf"\b(?:how\s+many|number\s+of|count\s+(?:the\s+)?)\s*{_NOUN}\b{_TAIL}", re.I)
_LIST = re.compile(
    rf"^\s*(?:(?:which|what|list|show(?:\s+me)?|give\s+me|[a-z]+)\s+(?:are\s+)?(?:all\s+)?(?:the\s+)?)?{_NOUN}{_TAIL}",
    re.I,
)
_ORD = re.compile(
    r"\b(?P<which>last|latest|newest|most\s+recent|current|first|oldest|earliest)\s+(?:(?P<n>\d{1,3})\s+)?"
    rf"(?:git\s+)?(?:tag|release|version)s?\b{_TAIL}",
    re.I,
)
_NONE = "No tags: this history has none (a git sync records each tag as a `tag:` node, with its time)."
_RET = "RETURN t.id AS id, t.title AS title, t.type AS type, t.time AS time, t.author AS author"
_TITLED = " (a release is the commit titled by its version: this history has no tags)"
_TAG_NOUN = re.compile(r"\btags?\b", re.I)
_NO_TITLED = "No release '{}': this history has no tags, and no commit is titled by that version."


def _releases(engine, params: dict, words: str = "") -> tuple[str, str]:
    """The node pattern of the releases, ``(t:tag)`` or, in a history without tags whose release commits carry
    their version as the subject, those commits (``params["titled"]``); and what the answer says of them.  A
    question about the *tags* as such ("which tags are there?") reads the tags: there are none."""
    titled = None if _TAG_NOUN.search(words) else release_commits(engine)
    if titled is None:
        return "t:tag", ""
    params["titled"] = titled
    return "t:commit", _TITLED


def _match(node: str, cond: list[str]) -> str:
    """``MATCH`` of the releases with the conditions ``cond`` (titled releases: only the listed commits)."""
    if node == "t:commit":
        cond = ["t.id IN $titled", *cond]
    return f"MATCH ({node})" + (f" WHERE {' AND '.join(cond)}" if cond else "")


def plan_tags(engine, words: str, tw: TimeWindow, params: dict) -> DevPlan | None:
    """The plan when ``words`` (the question without its paths, names and time phrases) asks about the tags
    as such: their number, their list, or the newest / oldest N; else None."""
    if not (_COUNT.search(words) or _ORD.search(words) or _LIST.search(words)):
        return None
    node, titled = _releases(engine, params, words)
    cond = time_bounds(tw, params, "t")  # "how many releases in 2023": by the tag's own time
    match = _match(node, cond)
    said = list(tw.phrases)
    scope = (" " + ", ".join(said)) if said else ""
    scope += titled
    noun = "release commits" if titled else "tags"
    kind = "commits" if titled else "tags"  # (rendered as commits: sha, date, author, subject)
    if _COUNT.search(words):
        cy = f"{match} RETURN count(t) AS count"
        return DevPlan("count_tags", "count", cy, params, f"{noun} in the history{scope}", filters=said)
    ordinal = _ORD.search(words)
    if ordinal is not None:
        first = ordinal.group("which").lower() in FIRST_WORDS
        n = int(ordinal.group("n") or 1)
        order = "ASC" if first else "DESC"
        cy = f"{match} {_RET} ORDER BY time {order}, id {order} LIMIT {min(n, MAX_ITEMS)}"
        which = "oldest" if first else "newest"
        expl = f"the {which} {noun if n > 1 else noun[:-1]} by {'commit' if titled else 'tag'} time{scope}"
        return DevPlan("tags_" + which, kind, cy, params, expl, filters=said, none_text=_NONE)
    if _LIST.search(words):
        cy = f"{match} {_RET} ORDER BY time DESC, id DESC LIMIT {MAX_ITEMS}"
        count = f"{match} RETURN count(t) AS count"
        return DevPlan(
            "tags", kind, cy, params, f"{noun}, newest first{scope}", count_cypher=count, filters=said, none_text=_NONE
        )
    return None


def asks_about_a_tag(words: str) -> bool:
    """ "when was the last release tagged?": the newest tag is what is asked about, not a time filter."""
    return bool(_ORD.search(words))


# "when was 8.2.0 released?", "what date was v1.1 tagged?": one named tag's date
_RELEASED = re.compile(
    r"\b(?:when|what\s+(?:date|day))\s+(?:was|were|did|is)\s+(?:the\s+)?(?:(?:release|version|tag)\s+)?"
    r"(?P<name>[\w.+-]*\w)\s+(?:(?:get|got)\s+)?(?:released|tagged|cut|published|out|made|ship(?:ped)?)\b",
    re.I,
)


# "which version was released right before 8.4.0?", "what release came after v1.1?": a neighbour of a named tag
_NEIGHBOUR = re.compile(
    r"^\W*(?:which|what)\b[^?]*?\b(?:release|version|tag)\b[^?]*?\b(?:right\s+|just\s+|immediately\s+)?"
    r"(?P<side>before|after|preceding|prior\s+to|following)\s+(?:the\s+)?(?:(?:release|version|tag)\s+)?"
    r"(?P<name>[\w.+-]*\w)\s*[?.!]*\s*$",
    re.I,
)


def plan_tag_neighbour(engine, text: str, params: dict) -> DevPlan | None:
    """The tag just before (or after) a named tag by tag time, as ``git tag --sort=creatordate`` orders them
    (tags of one second by name); a name no tag has is said."""
    m = _NEIGHBOUR.search(text)
    if m is None:
        return None
    named = _named_tag(engine, m.group("name"), params)
    if named is None:
        return None  # "which release came before the parser rewrite?": not a tag
    tag, none = named
    node, titled = _releases(engine, params)
    before = m.group("side").lower() in ("before", "preceding") or m.group("side").lower().startswith("prior")
    cmp, order = ("<", "DESC") if before else (">", "ASC")
    later = f"(t.time {cmp} x.time OR (t.time = x.time AND t.id {cmp} x.id))"
    cy = f"MATCH (x:{node[2:]} {{id: $tag}}) {_match(node, [later])} {_RET} ORDER BY time {order}, id {order} LIMIT 1"
    side = "before" if before else "after"
    if titled:
        expl = f"the release commit {side} {tag} by commit time{titled}"
        none = _NO_TITLED.format(tag) if none else f"No release {side} {tag}."
        return DevPlan("tag_" + side, "commits", cy, params, expl, none_text=none)
    expl = f"the tag {side} {tag} by tag time"
    return DevPlan("tag_" + side, "tags", cy, params, expl, none_text=none or f"No tag {side} {tag}.")


def plan_tag_date(engine, text: str, params: dict) -> DevPlan | None:
    """One named tag and its date ("when was 8.2.0 released?"); a version-like name no tag has is said."""
    m = _RELEASED.search(text)
    if m is None:
        return None
    named = _named_tag(engine, m.group("name"), params)
    if named is None:
        return None  # "when was the parser released?": not a tag
    tag, none = named
    node, titled = _releases(engine, params)
    cy = f"MATCH ({node} {{id: $tag}}) {_RET}"
    if titled:
        none = _NO_TITLED.format(tag) if none else None
        return DevPlan(
            "tag_date", "commits", cy, params, f"the release commit {tag}, with its date{titled}", none_text=none
        )
    return DevPlan("tag_date", "tags", cy, params, f"the tag {tag}, with its date", none_text=none)


def _named_tag(engine, asked: str, params: dict) -> tuple[str, str | None] | None:
    """The tag a question names (``params["tag"]`` set) and, when the store has no such tag, the answer saying
    so; None when the name is neither a tag nor version-like."""
    tags = LazyTags(engine)
    name = tags.name(asked)
    if name is None and not looks_like_version(asked):
        return None
    titled = name is not None and getattr(tags, "titled", False)  # a release commit of a history without tags
    params["tag"] = str(tags.ids[tags.tags[name][0]]) if titled else f"tag:{name or asked}"
    none = f"No tag '{asked}' in the store ('which tags are there?' lists them)." if name is None else None
    return name or asked, none


TAGS = Shape(
    "tags",
    lambda engine, q: (
        None
        if q.scope or q.author or q.wants_prs
        else plan_tag_neighbour(engine, q.text, q.params)
        or plan_tag_date(engine, q.text, q.params)
        or plan_tags(engine, q.words, q.tw, q.params)
    ),
    doc="how many releases, the latest tag, the tags of a period, the release before / after a named one",
)
