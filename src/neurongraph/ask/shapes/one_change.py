"""Questions about one change named by description: "how many files did the PEP 661 sentinels PR touch?",
"… did the very first commit add?", "which commit reverted the shlex.quote change?".

Why a shape of its own: a count of one change's files answered with the history's count, or "which commit
reverted X" answered with every revert, is confidently wrong.  The change is resolved by :mod:`..described`
(its subject's words, or its place in history); when it does not resolve to one commit, the answer names the
candidates and answers nothing else.
"""

from __future__ import annotations

import functools
import re

from ..described import Described, Resolved, resolve, words_of
from ..dev_rows import count_rows
from ..devplan import C_RET, DevPlan
from ..question import Question
from ..words import FILE_WORDS
from .file_removal import file_status
from .shape import Shape

__all__ = ["CHANGE_FILES", "REVERT_OF", "unread_change"]

# "how many files did <the change> touch / add / remove?": the files of one change
_FILES_OF = re.compile(
    r"\bfiles?\b[^?]*\bdid\s+(?:the|that|this|a)\b[^?]*\b(?P<verb>touch|add|chang|modif|remov|delet|creat|introduc)\w*",
    re.I,
)
_YES_NO = re.compile(r"\s*(?:was|were|has|have|had|did|is|are)\b", re.I)  # "was X ever reverted?"
_REVERT = re.compile(r"\brevert(?:ed|s|ing)?\b", re.I)
_STATUS = {"add": "A", "creat": "A", "introduc": "A", "remov": "D", "delet": "D"}


def unread_change(d: Described | str, got: Resolved | None = None) -> DevPlan:
    """Said, not answered: which change a description names (``d``, or its words) is not settled by git's
    record; the candidates its subject words found, if any."""
    phrase = d.phrase if isinstance(d, Described) else d.strip()
    cands = ", ".join(f"{r['id'][7:17]} {r.get('title') or ''}".strip() for r in (got.rows if got else [])[:5])
    why = f"candidates: {cands}" if cands else (got.how if got and got.how else "no subject holds its words")
    text = (
        f"Not understood: which change '{phrase}' is ({why}) — name it by its sha, its #number or its quoted "
        "subject (the figure of the whole history would not be its)."
    )
    return DevPlan("change_not_read", "commits", "UNWIND [] AS x RETURN x AS id", {}, "one change", none_text=text)


def keep_status(engine, p: DevPlan, rows: list[dict], status: str = "A") -> list[dict]:
    """The file rows git says the plan's commit ``$a`` created ("A") or deleted ("D")."""
    node = engine.store.get_node(str(p.params["a"]))
    return [r for r in rows if node is not None and file_status(node, r["id"][5:]) == status]


def plan_change_files(engine, q: Question) -> DevPlan | None:
    """The number of files one described change touched (added, removed): its commit's touches, as
    ``git show --stat`` counts them (a squash or a merge: its first-parent diff)."""
    m = _FILES_OF.search(q.words)
    if q.described is None or not q.count or q.scope is not None or not (m or FILE_WORDS.search(q.words)):
        return None  # "how many files did <the change> touch?", "how many files were in <the change>?"
    got = q.change(engine)
    if got is None or got.one is None:
        return unread_change(q.described, got)
    params = {"a": got.one}
    cy = "MATCH (c:commit {id: $a})-[:touches]->(f:file) RETURN DISTINCT f.id AS id ORDER BY id"
    verb = m.group("verb").lower() if m else "touch"
    status = next((s for k, s in _STATUS.items() if verb.startswith(k)), None)
    steps = (functools.partial(keep_status, status=status), count_rows) if status else (count_rows,)
    did = {"A": "added", "D": "removed"}.get(status or "", "touched")
    expl = f"files {did} by {got.one[7:17]} {got.rows[0].get('title') or ''} ({got.how})".replace("  ", " ")
    return DevPlan("change_files", "count", cy, params, expl, steps=steps, read_all=True, cites=[got.one])


def plan_revert_of(engine, q: Question) -> DevPlan | None:
    """ "Which commit reverted <the change>?", "was <the change> reverted?": the revert whose subject holds the
    most of the description's words (a revert's subject quotes the reverted one's)."""
    if q.commit is not None or q.count or q.who or not _REVERT.search(q.words) or q.scope or q.author or q.tw.active:
        return None
    d = q.described or words_of(_REVERT.sub(" ", q.words))
    if d is None:
        return None
    got = q.change(engine, reverts=True) if q.described is not None else resolve(engine, d, reverts=True)
    if got is not None and not got.rows and _YES_NO.match(q.text):
        none = (
            f"No revert found: no revert commit's subject names {', '.join(d.words)} in the history read "
            "(HEAD and tags; a revert only on another branch is read after `ngr ingest git --ref BRANCH`)."
        )
        return DevPlan("revert_of", "commits", "UNWIND [] AS x RETURN x AS id", {}, "no revert", none_text=none)
    if got is None or got.one is None:
        return unread_change(d, got) if got is not None and got.rows else None
    params = {"a": got.one}
    cy = f"MATCH (c:commit {{id: $a}}) RETURN {C_RET}"
    expl = f"the revert of {d.phrase} ({got.how})" + _why(engine, got.one, q.text)
    return DevPlan("revert_of", "commits", cy, params, expl)


def _why(engine, commit_id: str, text: str) -> str:
    """ "… and why?": the commit message's body, as the change's author gave the reason (first 400 characters)."""
    if not re.search(r"\bwhy\b", text, re.I):
        return ""
    node = engine.store.get_node(commit_id)  # a commit node's text is its message's body (the title apart)
    body = [ln for ln in (node.text if node is not None else "").splitlines() if not _REVERTS_LINE.match(ln)]
    said = " ".join(" ".join(body).split())[:400]
    return f"; its message says: {said}" if said else ""


_REVERTS_LINE = re.compile(r"\s*This reverts commit\b", re.I)


CHANGE_FILES = Shape(
    "change_files",
    plan_change_files,
    doc="how many files one change named by description (or 'the very first commit') touched, added, removed",
)
REVERT_OF = Shape(
    "revert_of",
    plan_revert_of,
    doc="which commit reverted a change named by description; whether it was reverted",
)
