"""Ask shapes that the code history answers exactly (issue 24 §3), without a graph query:

* "who / which commit last changed lines A-B of F [as of T]" — blame from the stored hunks
  (``Engine.blame``: the same walk ``git blame`` does, checked against it in tests/test_code_evidence.py);
* "which commit introduced / added / removed X", "when was X added" — the first commit that added the
  identifier (or the last that removed it), as ``git log -S X`` finds it at token level.

Each returns the rows it used, a result object, an answer that cites them, and the refs; the ask
pipeline stores the trace as for any other shape.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..times import to_epoch

__all__ = ["CodeAnswer", "answer_code_question"]

_LINES = re.compile(
    r"^\s*(?P<who>who|which commit|what commit|which change|what change)\s+(?:last\s+|most recently\s+)?"
    r"(?:changed|touched|modified|wrote|edited)\s+lines?\s+(?P<a>\d+)(?:\s*(?:-|–|to|through|\.\.)\s*(?P<b>\d+))?"
    r"\s+(?:of|in)\s+`?(?P<path>[^\s`?]+?)`?(?:\s+(?:as of|before|at|on)\s+(?P<t>[\w:.+-]+))?\s*\??\s*$",
    re.I,
)
_TERM = (
    r"(?:the\s+)?(?:identifier\s+|function\s+|option\s+|flag\s+|symbol\s+|call\s+(?:to\s+)?)?"
    r"`?(?P<term>--?[A-Za-z][\w-]*|[A-Za-z_][\w:]*[\w])`?(?:\(\))?"
)
_ADDED_VERBS = ("introduced", "added", "created", "brought in")
_VERB = (
    r"(?P<verb>introduced|added|created|brought\s+in|removed|deleted|dropped|got\s+rid\s+of|killed|nuked"
    r"|eliminated|ripped\s+out|took\s+out)"
)
_INTRO = re.compile(
    r"^\s*(?:which|what)\s+(?:commit|change)\s+(?:first\s+)?" + _VERB + r"\s+" + _TERM + r"\s*\??\s*$",
    re.I,
)
_WHEN = re.compile(
    r"^\s*when\s+(?:was|were|did)\s+" + _TERM + r"\s+(?:first\s+)?(?:get\s+)?" + _VERB + r"\s*\??\s*$",
    re.I,
)


@dataclass
class CodeAnswer:
    """What a code-history question got: the shape it was read as, the rows used and the cited answer."""

    shape: str
    explanation: str
    rows: list[dict]
    result: dict
    answer: str
    refs: list[str] = field(default_factory=list)


def _describe(engine, ids: list[str]) -> dict[str, dict]:
    """id -> {id, title, sha, author, date} for the commits cited."""
    idx = engine.store.lookup_idx(ids)
    rows = engine.store.nodes_by_idx(idx.values())
    out = {}
    for r in rows.values():
        md = r.metadata
        out[r.id] = {
            "id": r.id,
            "title": r.title,
            "sha": str(md.get("sha", ""))[:12],
            "author": md.get("author"),
            "date": str(md.get("commit_date") or md.get("author_date") or "")[:10],
        }
    return out


def _line(d: dict) -> str:
    who = f", {d['author']}" if d.get("author") else ""
    return f'{d["sha"] or d["id"]} "{d["title"]}" ({d["date"]}{who})'


def _lines_answer(engine, m: re.Match) -> CodeAnswer:
    a = int(m.group("a"))
    b = int(m.group("b") or a)
    path = m.group("path").strip("'\"")
    lo, hi = min(a, b), max(a, b)
    when = None
    note = ""
    if m.group("t"):
        try:
            when = to_epoch(m.group("t"))
        except ValueError:
            note = f"\nNote: the time {m.group('t')!r} was not understood; answered as of now."
    lines = list(range(lo, hi + 1))[:2000]
    got = engine.blame(path, lines, as_of=when)
    by: dict[str, list[int]] = {}
    for ln, cid in zip(lines, got):
        if cid:
            by.setdefault(cid, []).append(ln)
    span = f"line {lo}" if lo == hi else f"lines {lo}–{hi}"
    expl = f"the commits that last changed {span} of {path}" + (f" as of {m.group('t')}" if when else "")
    if not by:
        res = {"kind": "commits", "shape": "lines_last_changed", "items": [], "total": 0}
        return CodeAnswer(
            "lines_last_changed", expl, [], res, f"Not found: the stored history has no changes to {span} of {path}."
        )
    info = _describe(engine, list(by))
    order = sorted(by, key=lambda c: -len(by[c]))
    rows = [{**info.get(c, {"id": c}), "lines": by[c]} for c in order]
    who = m.group("who").lower() == "who"
    parts = []
    for r in rows:
        ls = r["lines"]
        shown = f"line {ls[0]}" if len(ls) == 1 else f"{len(ls)} lines"
        head = f"{r.get('author') or 'unknown author'}: " if who else ""
        parts.append(f"{head}{_line(r)} — {shown}")
    res = {
        "kind": "authors" if who else "commits",
        "shape": "lines_last_changed",
        "items": [r.get("author") for r in rows] if who else [r["id"] for r in rows],
        "commits": [r["id"] for r in rows],
        "total": len(rows),
    }
    refs = [r["id"] for r in rows]
    text = f"{span.capitalize()} of {path} were last changed by:\n- " + "\n- ".join(parts)
    return CodeAnswer("lines_last_changed", expl, rows, res, text + f"\n[refs: {', '.join(refs)}]" + note, refs)


# a file that mentions identifiers in prose: a changelog, release notes, a manual (its edits drop a name the code
# dropped long before: "Move changes to markdown" is not the removal of `get_os_args`)
_DOC_FILE = re.compile(
    r"(?:^|/)(?:changes|changelog|news|history|release[-_]?notes|readme|authors)[^/]*$|\.(?:md|rst|txt|adoc)$"
    r"|(?:^|/)(?:docs?|documentation)/",
    re.I,
)


def _code_removal(engine, nodes: list[int]) -> int:
    """The last commit (of ``nodes``, oldest first) that removed the identifier from the code: not a merge (its
    first-parent diff repeats what its branch did) and not an edit of documentation files only; the last of all
    when none is."""
    rows = engine.store.nodes_by_idx(nodes[-200:])
    for n in reversed(nodes[-200:]):
        md = rows[n].metadata if n in rows else {}
        files = [f.get("path", "") if isinstance(f, dict) else str(f) for f in md.get("files") or []]
        if len(md.get("parents") or []) < 2 and any(not _DOC_FILE.search(f) for f in files):
            return n
    return nodes[-1]


def _term_answer(engine, term: str, verb: str, who: bool = False) -> CodeAnswer:
    removed = " ".join(verb.lower().split()) not in _ADDED_VERBS
    side = "removed" if removed else "added"
    shape = "identifier_removed" if removed else "identifier_introduced"
    ch = engine.code_history
    nodes, _t = ch.changes_of(term, side)
    expl = f"the commit that {'last removed' if removed else 'first added'} `{term}` (git log -S at token level)"
    if not nodes:
        res: dict[str, Any] = {"kind": "commit", "shape": shape, "value": None}
        return CodeAnswer(shape, expl, [], res, f"Not found: no ingested commit {side} `{term}`.")
    pick = _code_removal(engine, nodes) if removed else nodes[0]
    ids = engine.store.ids_by_idx([pick] + nodes[:20])
    cid = ids[pick]
    info = _describe(engine, [cid]).get(cid, {"id": cid, "title": "", "sha": "", "date": ""})
    others = len(nodes) - 1
    tail = f" ({others} other commit{'s' if others != 1 else ''} also {side} it)" if others else ""
    text = f"`{term}` was {'last removed' if removed else 'introduced'} by {_line(info)}{tail}.\n[refs: {cid}]"
    if who and info.get("author"):
        text = f"{info['author']} — {text}"
    res = {"kind": "commit", "shape": shape, "value": cid, "items": [cid]}
    return CodeAnswer(shape, expl, [info], res, text, [cid])


# "who wrote click.get_pager_file?", "who added `parse_args()`": the author of the commit that introduced a name
# that looks like code (an ``_``, a ``.``, ``::``, ``()``, backticks, camelCase or a leading ``--``), so "who
# wrote the docs" or "who added tests" stay the other shapes' questions
_WHO_WROTE = re.compile(
    r"^\s*who\s+(?:first\s+)?(?:wrote|added|introduced|created|implemented|invented)\s+"
    r"(?:the\s+)?(?:function\s+|method\s+|class\s+|option\s+|flag\s+|identifier\s+|symbol\s+)?"
    r"(?P<raw>`[^`\s]+`|--[A-Za-z][\w-]*|[A-Za-z_][\w.:]*(?:\(\))?)\s*\??\s*$",
    re.I,
)
_CODE_LIKE = re.compile(r"`|_|\.|::|\(\)|^--|[a-z][A-Z]")


def _who_wrote(m: re.Match) -> str | None:
    """The identifier a "who wrote X" question names, when X looks like code: its last dotted part."""
    raw = m.group("raw")
    if not _CODE_LIKE.search(raw):
        return None
    term = re.split(r"\.|::", raw.strip("`").removesuffix("()"))[-1]
    return term if len(term) >= 3 else None


def answer_code_question(engine, question: str) -> CodeAnswer | None:
    """The answer when the question is one of this module's shapes and the store has code history."""
    m = _LINES.match(question)
    if m:
        return _lines_answer(engine, m)
    m = _INTRO.match(question) or _WHEN.match(question)
    if m and engine.code_history.commits:
        return _term_answer(engine, m.group("term"), m.group("verb"))
    m = _WHO_WROTE.match(question)
    term = _who_wrote(m) if m else None
    if term and engine.code_history.commits:
        return _term_answer(engine, term, "added", who=True)
    return None
