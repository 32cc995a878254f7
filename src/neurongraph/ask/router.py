"""Rule-based router (no LLM): graph when the question names nodes and relations, vector when it asks
for similar things or names nothing, hybrid when both are present or a name comes without a relation."""

from __future__ import annotations

import re

from .names import Mention
from .nl2cypher import RelWord

__all__ = ["route", "MODES"]

MODES = ("auto", "graph", "vector", "hybrid")
VECTOR_CUES = re.compile(
    r"\b(similar|like|about|resembl\w*|anything on|related work|discuss\w*|why|how come|explain)\b", re.I
)
# "when did the project switch from setup.py to pyproject.toml?": the change between two named things, which
# commits make (search), not a path that links them in the graph
CHANGE_CUES = re.compile(
    r"\b(?:switch\w*|mov(?:e|ed|ing)|migrat\w*|convert\w*|port(?:ed|ing)?|replac\w*|transition\w*)\b"
    r"[^?]*\bfrom\b[^?]*\bto\b",
    re.I,
)
LIST_CUES = re.compile(r"\b(list|latest|newest|oldest|recent|last|first|how many|all)\b", re.I)


def route(question: str, mentions: list[Mention], rels: list[RelWord], types: list) -> tuple[str, str]:
    names = [m.node for m in mentions]
    vec = VECTOR_CUES.search(question)
    shown = ", ".join(names[:3]) + ("…" if len(names) > 3 else "")
    if rels and names:
        rel_names = ", ".join(dict.fromkeys(r.rel for r in rels))
        if vec:
            return "hybrid", f"names {shown} and relation {rel_names}, plus '{vec.group(0)}': graph query and search"
        return "graph", f"names {shown} and relation {rel_names}: a graph query answers it"
    if len(names) >= 2 and (change := CHANGE_CUES.search(question)):
        return "vector", f"names {shown} as the two ends of a change ('{change.group(0)[:40]}'): search"
    if len(names) >= 2 and not vec:
        return "graph", f"names {shown}: the graph links them"
    if types and not names and LIST_CUES.search(question) and not vec:
        return "graph", f"a list of {types[0][0]} nodes: a graph query answers it"
    if names:
        return "hybrid", f"names {shown} without a relation word: graph neighbourhood and search"
    if vec:
        return "vector", f"'{vec.group(0)}' asks for similar material and names no node: search"
    return "vector", "no node or relation named: search"
