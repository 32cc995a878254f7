"""The commits the most ``Fixes:`` trailers name: "which commit has been blamed the most in Fixes: tags?".

Why a shape of its own: the question reads like a list of commits with a ``Fixes:`` trailer, and was answered
so — the fixes, not what they fix.  What it asks is a count over the trailers' shas, as
``git log --grep='^Fixes:' | grep -o 'Fixes: [0-9a-f]*' | sort | uniq -c | sort -rn`` gives it: each fixing
commit counts once per sha it names (by its first 12 hex digits).  A sha this history does not hold (a sync
repository's fixes name kernel commits) is said as such, with the subject the trailer quotes.
"""

from __future__ import annotations

import re
from collections import Counter

from ..devplan import C_RET, DevPlan
from ..question import Question
from .shape import Shape

__all__ = ["MOST_FIXED", "plan_most_fixed"]

SHOWN = 10  # the commits ranked
_PREFIX = 12  # hex digits a Fixes: sha is counted by (kernel convention; shorter ones as written)

# "which commit / change …" with a ranking, a Fixes trailer or "fix", and a word of being pointed at
_ASKS = re.compile(r"\b(?:which|what)\s+(?:commits?|changes?|patch(?:es)?)\b[^?]*\b(?:most|top)\b", re.I)
_FIXES_WORD = re.compile(r"\bfix(?:es|ed)?\b", re.I)
_POINTED_AT = re.compile(
    r"\b(?:point\w*|blam\w*|named?|referenc\w*|cited?|target\w*|needed|required|got|received|attract\w*)\b", re.I
)
_TRAILER = re.compile(
    r"^[ \t]*Fixes:[ \t]*(?:commit[ \t]+)?([0-9a-f]{7,40})\b[^\n(]*(?:\([ \t]*[\"“](.+?)[\"”])?", re.I | re.M
)


def plan_most_fixed(engine, q: Question) -> DevPlan | None:
    """The ranking, or None when the question does not ask for it."""
    words = q.words
    if not (_ASKS.search(words) and _FIXES_WORD.search(q.text) and _POINTED_AT.search(words)):
        return None
    params = q.params
    params["fixers"] = engine.store.message_grep(["fixes:"])
    cy = f"MATCH (c:commit) WHERE c.id IN $fixers RETURN {C_RET}"
    expl = "the commits the most Fixes: trailers name (each fixing commit counted once per sha)"
    return DevPlan("most_fixed", "commits", cy, params, expl, steps=(_ranked,), read_all=True)


def _ranked(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The shas the fixing commits' trailers name, most named first, as commit rows (or the trailer's own sha and
    quoted subject where this history does not hold the commit)."""
    store = engine.store
    nodes = store.nodes_by_idx(store.lookup_idx([r["id"] for r in rows]).values())
    named: Counter[str] = Counter()
    quoted: dict[str, str] = {}
    for node in nodes.values():
        seen = set()
        for m in _TRAILER.finditer(node.text or ""):
            sha = m.group(1).lower()[:_PREFIX]
            if sha not in seen:
                seen.add(sha)
                named[sha] += 1
                if m.group(2):
                    quoted.setdefault(sha, m.group(2))
    out = []
    for sha, n in sorted(named.items(), key=lambda kv: (-kv[1], kv[0]))[:SHOWN]:
        found = store.ids_with_prefix("commit:" + sha, 2)
        if len(found) == 1:
            head = store.get_node(found[0][0])
            md = head.metadata or {} if head is not None else {}
            title = head.title if head is not None else quoted.get(sha, "")
            out.append(
                {
                    "id": found[0][0],
                    "title": title,
                    "time": md.get("commit_date"),
                    "author": md.get("author"),
                    "fixed_by": n,
                    "in_repo": True,
                }
            )
        else:
            out.append({"id": sha, "title": quoted.get(sha, ""), "fixed_by": n, "in_repo": False})
    return out


MOST_FIXED = Shape(
    "most_fixed",
    plan_most_fixed,
    doc="which commit the most Fixes: trailers name (the bug-introducing commit most often blamed)",
)
