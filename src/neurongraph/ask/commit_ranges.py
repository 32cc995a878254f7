"""A range between two named commits: "how many commits between 4a2c90a and bcec20c", "between 'Prepare for
3.6.0.' and 'Prepare for 3.7.0.'", "what changed since 83de2e8".

Why: a history without tags marks its releases by commits ("v6.1.0", "Prepare for 3.7.0."), and people name
those (by sha or by subject) as they would name tags.  Two named commits were read as two nodes to link, and the
answer was the graph paths between them — no count at all.  The range is what ``git log A..B`` lists: the
commits reachable from the later one and not from the earlier, read on the same commit graph the tag phrases use
(``tags.commit_graph``); "since A" is ``A..HEAD``.
"""

from __future__ import annotations

import re

import numpy as np

from .names import Mention
from .tags import commit_graph
from .timephrase import TimeWindow

__all__ = ["read_commit_range"]

_BEFORE_PAIR = re.compile(r"\b(?:between|from)\s*$", re.I)
_JOIN = re.compile(r"^\s*(?:and|to|until|till|through|thru|[-–]|\.\.)\s*$", re.I)
_BEFORE_ONE = re.compile(r"\b(since|after)\s*$", re.I)
_QUOTES = "'\"`“”‘’"


def _around(question: str, m: Mention) -> tuple[int, int]:
    """The mention's span with the quotes around it."""
    a, b = m.start, m.end
    while a > 0 and question[a - 1] in _QUOTES:
        a -= 1
    while b < len(question) and question[b] in _QUOTES:
        b += 1
    return a, b


def read_commit_range(engine, question: str, mentions: list[Mention], tw: TimeWindow) -> list[Mention]:
    """Set ``tw``'s commits to the range two named commits (or "since" one) delimit, when the question says so
    and no tag phrase chose commits already; returns the mentions the range took (no longer "the commit" the
    question is about)."""
    if tw.commits is not None:
        return []
    commits = [m for m in mentions if m.type == "commit"]
    if not commits:
        return []
    spans = [_around(question, m) for m in commits]
    for i in range(len(commits) - 1):
        (a0, a1), (b0, b1) = spans[i], spans[i + 1]
        if _BEFORE_PAIR.search(question[:a0]) and _JOIN.match(question[a1:b0]):
            if _apply(engine, tw, commits[i].node, commits[i + 1].node):
                _read(tw, question, a0, b1)
                return [commits[i], commits[i + 1]]
    for m, (a0, a1) in zip(commits, spans):
        if _BEFORE_ONE.search(question[:a0]) and _apply(engine, tw, m.node, None):
            _read(tw, question, a0, a1)
            return [m]
    return []


def _read(tw: TimeWindow, question: str, a: int, b: int) -> None:
    """The range's words are read: taken, and no longer "not understood" (the time reader took "since 4a2c90a"
    for a date or a tag it could not place)."""
    tw.spans.append((a, b))
    said = question[a:b].strip(_QUOTES)
    tw.not_understood[:] = [n for n in tw.not_understood if said not in n]


def _apply(engine, tw: TimeWindow, older: str, newer: str | None) -> bool:
    """``tw.commits`` = reachable from ``newer`` (``HEAD`` when None) and not from ``older``; False when the commit
    graph does not hold them."""
    g = commit_graph(engine)
    below_a = g.below(older.removeprefix("commit:")) if g is not None else None
    if g is None or below_a is None:
        return False
    if newer is None:
        below_b = g.in_head()
    else:
        below_b = g.below(newer.removeprefix("commit:"))
        if below_b is not None and below_a[g.row[newer.removeprefix("commit:")]]:  # written newest first
            below_a, below_b, older, newer = below_b, below_a, newer, older
    if below_b is None:
        return False
    tw.commits, tw.negated = g.select(np.asarray(below_b & ~below_a, dtype=bool))
    to = newer[7:17] if newer is not None else "HEAD"
    tw.tag_said.append(f"between {older[7:17]} and {to} (reachable from {to}, not from {older[7:17]})")
    tw.phrases.append(f"{older[7:17]}..{to}")
    return True
