"""What a search read its question as: the intent, its topic, and what the search did with them.

Why: a question that asks when something began (origin.py) or which change introduced or removed a name
(code_evidence.py) is answered by its own rule, and when that rule declines the search runs as usual.  The
user should see which happened, on which words, and why, not guess it from the order of the hits; the
result carries it as ``reading`` and ``ngr search --explain`` prints it first.  A question with no such
intent has no reading.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .code_evidence import CodeEvidence
from .origin import Origin
from .query import Query

__all__ = ["Reading", "read_query"]

ASKED = {
    "origin": "when did X start",
    "introduced": "which change introduced X",
    "removed": "which change removed X",
}


@dataclass(frozen=True)
class Reading:
    """One question's intent (a key of :data:`ASKED`), the words read as its topic, and what the search did."""

    intent: str
    topic: tuple[str, ...]
    rule: str
    node: int | None = None  # the change put first, a node index (the origin rule)

    def to_dict(self, ids: Mapping[int, str]) -> dict[str, Any]:
        """JSON form; ``ids`` maps node indices to node ids."""
        return {
            "intent": self.intent,
            "asked": ASKED[self.intent],
            "topic": list(self.topic),
            "rule": self.rule,
            "put_first": ids.get(self.node) if self.node is not None else None,
        }

    def line(self, ids: Mapping[int, str]) -> str:
        """One line for ``--explain``."""
        topic = f" — topic {' '.join(self.topic)!r}" if self.topic else ""
        first = f" ({ids[self.node]})" if self.node is not None and self.node in ids else ""
        return f"read as: {ASKED[self.intent]}{topic}: {self.rule}{first}"


def read_query(q: Query, origin: Origin | None, code: CodeEvidence | None) -> Reading | None:
    """The reading of a search whose question asks for a beginning, an introduction or a removal; else None."""
    if code is not None and code.intent:
        verb = "added" if code.intent == "introduced" else "removed"
        return Reading(code.intent, code.terms, f"the changes that {verb} these names in the code score first")
    if origin is not None:
        back = (
            "; recent changes are not preferred (the recency prior's age part is off)"
            if q.looks_back
            else "; a version number dates it, so recent changes are preferred as usual"
        )
        if origin.node is not None:
            rule = f"the earliest change whose subject names {origin.words[0]!r} is put first"
            return Reading("origin", tuple(origin.words), rule + back, origin.node)
        return Reading("origin", tuple(origin.words), f"searched as usual: {origin.why}{back}")
    if q.intent:
        return Reading(q.intent, (), "searched as usual: no name of the question is in the code history")
    return None
