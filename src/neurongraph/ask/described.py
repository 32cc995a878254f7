"""A change the question names by description: "the PEP 661 sentinels PR", "the fix for the mmap-based
vmlinux BTF fallback", "the shlex.quote change", "the very first commit".

Why: people name a change by what it did far more often than by its sha, and a question about *one* change
("who co-authored …", "how many files did … touch", "which commit reverted …") answered with the whole
history's figure is confidently wrong.  A description is resolved only where git's own record says which
change it is — its subject holds most of the description's words, more of them than any other subject does,
or its place in history (the root, the tip) — and otherwise the answer names the candidates instead.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from .devplan import C_RET

__all__ = ["Described", "read_described", "resolve", "Resolved", "words_of"]

_NOUNS = (
    r"prs?|pull\s+requests?|commits?|changes?|patch(?:es)?|fix(?:es)?|merges?|removal|addition|rework|rewrite|"
    r"refactor(?:ing)?|cleanup|deprecation|bump|update|support|revert"
)
# "the <words> <noun> [that|for|of <words>]": the words on either side say which change
_DESC = re.compile(
    rf"\b(?:the|that|this)\s+(?P<pre>(?:[^\s?,;!]+\s+){{0,8}}?)(?P<noun>{_NOUNS})\b"
    r"(?P<post>\s+(?:for|of|that|which|to|fixing|adding|removing|about)\s+[^?,;!]{1,120})?",
    re.I,
)
_FIRST = frozenset({"first", "initial", "earliest", "oldest", "very"})
_LAST = frozenset({"last", "latest", "newest", "most", "recent", "very"})
# words that say nothing about which change: the question's frame, not its description
_STOP = frozenset(
    "a an the of to in on at by for from with and or is are was were be been did does do has have had which what "
    "that this those these it its who whom whose when where how many much any some one about fix fixes fixing "
    "change changes commit commits patch patches pr prs pull request requests merge merges hid hide added adding "
    "removed removing made make got get asked unless most top here there every all ever other others very same "
    "reverted revert reverts reverting acked ack reviewed review tested reported suggested co-authored coauthored "
    "signed".split()
)
_WORD = re.compile(r"[\w][\w.+/-]*[\w]|\w")
_ACRONYMS = re.compile(r"\b[A-Z0-9]+(?:/[A-Z0-9]+)+\b")  # "STT/LISP": two words
MIN_SHARE = 0.6  # of the description's words a subject must hold
CANDIDATES = 50


@dataclass
class Described:
    """The words a description gives (lowercased), or its position ("first" / "last"), and where it stands."""

    phrase: str
    words: list[str]
    position: str | None = None
    span: tuple[int, int] = (0, 0)
    noun: str = ""  # "pr", "fix", "revert", …: "the GTP tunneling revert" is a revert


@dataclass
class Resolved:
    """The change a description resolves to (``ids``: one, or the candidates when it does not), and how."""

    ids: list[str] = field(default_factory=list)
    how: str = ""
    rows: list[dict] = field(default_factory=list)

    @property
    def one(self) -> str | None:
        return self.ids[0] if len(self.ids) == 1 else None


def read_described(words: str) -> Described | None:
    """The first description of one change in ``words`` (the question without its names, paths and times)."""
    for m in _DESC.finditer(words):
        raw = f"{m.group('pre')} {m.group('post') or ''}"
        toks = [t.lower() for t in _WORD.findall(raw.replace("/", " ") if _ACRONYMS.search(raw) else raw)]
        if toks and set(toks) <= _FIRST and "very" != toks[-1] and toks[-1] in _FIRST:
            return Described(m.group(0).strip(), [], "first", m.span())
        if toks and set(toks) <= _LAST and toks[-1] in _LAST - {"very", "most"}:
            return Described(m.group(0).strip(), [], "last", m.span())
        kept = [t for t in toks if t not in _STOP and not (t.isdigit() and len(t) > 6)]
        if kept:
            return Described(m.group(0).strip(), kept, None, m.span(), m.group("noun").lower())
    return None


def words_of(words: str) -> Described | None:
    """Every content word of ``words`` as a description, when no "the … change" phrase names one ("which
    commit reverted the strlcpy poisoning?")."""
    kept = [t.lower() for t in _WORD.findall(words) if t.lower() not in _STOP and len(t) > 2]
    return Described(" ".join(kept), kept) if kept else None


def resolve(engine, d: Described, reverts: bool = False) -> Resolved:
    """The one commit ``d`` names: by position (the root ``git log --reverse`` lists first; the tip), or the
    commit whose subject holds the most of its words (at least :data:`MIN_SHARE` of them) when no other does
    as many.  ``reverts``: among the reverts only (a subject that says "revert", or a ``reverts`` edge)."""
    if d.position == "first":
        rows = engine.cypher(  # the oldest root, as ``dev_rows.root_first`` picks it
            f"MATCH (c:commit) WHERE size(coalesce(c.parents, [])) = 0 RETURN {C_RET}, c.parents AS parents "
            "ORDER BY time, id LIMIT 1"
        )["rows"]
        return Resolved([r["id"] for r in rows[:1]], "the root commit (git log --reverse)", rows[:1])
    if d.position == "last" or not d.words:
        return Resolved([], "")
    least = 1 if reverts else max(1, -(-len(d.words) * MIN_SHARE // 1))  # few reverts: one word may do
    which = "WHERE toLower(c.title) CONTAINS 'revert' OR (c)-[:reverts]->(:commit) " if reverts else ""
    rows = engine.cypher(
        f"MATCH (c:commit) {which}WITH c, size([w IN $words WHERE toLower(c.title) CONTAINS w]) AS k "
        f"WHERE k >= $least RETURN {C_RET}, c.parents AS parents, k ORDER BY k DESC, time DESC LIMIT {CANDIDATES}",
        {"words": d.words, "least": int(least)},
    )["rows"]
    rows = [dict(r, k=_held(r.get("title") or "", d.words)) for r in rows]
    rows = sorted((r for r in rows if r["k"] >= least), key=lambda r: -r["k"])
    if not rows:
        return Resolved([], f"no subject holds {int(least)} of: {', '.join(d.words)}")
    best = [r for r in rows if r["k"] == rows[0]["k"]]
    if len(best) > 1:  # 'Revert "X"' holds X's words too: the change itself is X, its revert is the Revert
        said_revert = [r for r in best if str(r.get("title") or "").lower().startswith("revert")]
        best = (said_revert if reverts else [r for r in best if r not in said_revert]) or best
    if len(best) > 1 and len({str(r.get("title") or "").lower() for r in best}) == 1:
        # one change twice: a merge titled by its PR (its one commit's subject) and that commit; the commit
        best = [r for r in best if len(r.get("parents") or []) < 2] or best
    how = f"its subject holds {best[0]['k']} of: {', '.join(d.words)}"
    return Resolved([r["id"] for r in best], how, best)


def _held(title: str, words: list[str]) -> int:
    """How many of ``words`` start a word of ``title`` (or are a whole dotted/underscored name in it)."""
    low = title.lower()
    return sum(1 for w in words if re.search(r"(?<![\w])" + re.escape(w), low))
