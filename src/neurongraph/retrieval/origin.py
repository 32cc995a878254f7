""" "When did X start?": the earliest change whose subject names X first, not the later tweaks that match X best.

Why: asked when a feature began ("when did mypy start supporting ParamSpec?", "when did Geneve support begin?"),
search put the follow-ups first: a later fix names the feature as often as its first commit, and recency and the
graph favour the busy recent ones. A question that asks when something began is read for its topic's informative
words (retrieval/topic_terms.py: "ParamSpec", not "mypy" or "supporting"). When the topic is a name as written (a
capital inside: a feature, a protocol, a tool), the earliest change whose *subject* holds the name and whose
message holds the other words, among what the search may show, is put first and its hit says so
(``scores.origin``). Not read: a topic in plain words ("template strings": "Add string.Template stubs", 2013, holds
them too), a body that only mentions the name (a kernel sync listing a feature before it existed), and an
identifier the code history knows (its introduction is the code evidence's answer: code_evidence.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from .topic_terms import LexicalSearch, named, rows_holding

# a question about a beginning: "when did X start", "when was X first added", "which commit introduced X",
# "since when": a when/which question and a word of beginning ("when was the fix for X added" is not one)
_BEGINNING = re.compile(
    r"\b(?:start(?:ed|s|ing)?|began|begin(?:s|ning)?|first|introduc(?:e|ed|es|ing|tion)|originally|"
    r"added\s+support|add\s+support)\b",
    re.I,
)
_ASKS_WHEN = re.compile(
    r"\b(?:when|since\s+when|which\s+(?:commit|change|pr|version|release)|what\s+commit|"
    r"who\s+(?:wrote|added|introduced|made|did|started|implemented|contributed))\b",
    re.I,
)

_WORD = re.compile(r"[A-Za-z][\w.+-]*[\w+]|[A-Za-z]")

# words of the question that ask, not name the topic
_ASKING = frozenset(
    "when what which who how did does do was were is are has have had the a an of for in to on by with it wrote "
    "made implemented contributed "
    "support supporting supported add added adding start started starts starting begin began beginning first "
    "introduce introduced introduces introducing introduction originally since commit change pr version "
    "release ever".split()
)


@dataclass
class Origin:
    """What a "when did X start" question was read as: the topic's words and the earliest change whose subject
    names the topic, or ``None`` and why none was put first (``--explain`` says it: retrieval/reading.py)."""

    node: int | None
    words: list[str]
    why: str = ""


def asks_origin(query: str) -> bool:
    return bool(_BEGINNING.search(query) and _ASKS_WHEN.search(query))


def origin_of(
    query: str,
    search: LexicalSearch,
    n_rows: int,
    event_time: np.ndarray | None,
    shown: Callable[[np.ndarray], np.ndarray],
    titles: Callable[[list[int]], dict[int, str]],
) -> Origin | None:
    """How the question asks for an origin: None when it does not ask when something began; else the topic
    and its earliest change (``node`` None, with the reason, when none is put first).  ``shown(nodes)``: the
    mask of the nodes this search may show (its filters, its result types); ``titles(nodes)``: their subjects."""
    if event_time is None or not asks_origin(query):
        return None
    words = [w for w in _WORD.findall(query) if w.lower() not in _ASKING]
    rows, kept = rows_holding(search, n_rows, words)
    if not rows.size:
        return Origin(None, [], "no word of the topic is rare enough in this history to name it")
    if not named(kept[0]):
        return Origin(None, kept, "the topic is in plain words, which later changes use as often as the first one")
    rows = rows[rows < event_time.shape[0]]
    rows = rows[shown(rows)]
    rows = rows[event_time[rows] > 0]
    subjects = titles(rows.tolist()) if rows.size else {}
    name = re.compile(rf"(?<![\w]){re.escape(kept[0])}", re.I)  # the name; the other words may be the body's
    named_there = np.array([bool(name.search(subjects.get(int(r), ""))) for r in rows.tolist()], bool)
    rows = rows[named_there]
    if not rows.size:
        return Origin(None, kept, f"no dated change this search may show names {kept[0]!r} in its subject")
    return Origin(int(rows[np.argmin(event_time[rows])]), kept)
