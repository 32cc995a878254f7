"""Which tags a branch holds: "which tags are on the stable branch only and not on main?", "any tags on
neither?", "which releases are not on main?".

Why: with every tag read (git reader 9), a store holds releases that the default branch never reached
(a release cut on a maintenance branch, a tag past ``HEAD``).  "On a branch" is ``git tag --merged B``: the
tags whose commit the branch's tip reaches, read on the commit graph (``tags.commit_graph``).  The default
branch is the synced ``HEAD``; another branch is known only when a sync read it (``--ref origin/stable``),
and a branch the question names that no sync read is said, not guessed.
"""

from __future__ import annotations

import json
import re

import numpy as np

from ..devplan import DevPlan
from ..tags import commit_graph
from .shape import Shape

__all__ = ["plan_branch_tags"]

_ASKS = re.compile(
    r"\b(?:tags?|releases?|versions?)\b[^?]*\b(?:branch(?:es)?|not\s+on|only\s+on|neither|on\s+(?:main|master)\b)"
    r"|\b(?:branch(?:es)?)\b[^?]*\b(?:tags?|releases?)\b",
    re.I,
)
_BRANCH = re.compile(r"\b(?:the\s+)?([\w./-]+)\s+branch\b|\bbranch\s+([\w./-]+)", re.I)
_DEFAULT = {"main", "master", "head", "trunk", "default"}
_NOT_BRANCHES = {"the", "a", "any", "which", "that", "this", "each", "every", "other", "release", "same"}


def plan_branch_tags(engine, question: str, params: dict) -> DevPlan | None:
    """The tags on a branch only, on the default branch only, or on neither; None when the question is not
    about tags and branches, or the store has no tag."""
    if not _ASKS.search(question):
        return None
    graph = commit_graph(engine)
    if graph is None or not graph.tags:
        return None
    in_head = graph.in_head()
    if in_head is None:
        return None
    tips = _branch_tips(engine)
    named = {m.group(1) or m.group(2) for m in _BRANCH.finditer(question)}
    named = {n for n in named if n.lower() not in _NOT_BRANCHES and n.lower() not in _DEFAULT}
    known = {n: sha for n, sha in tips.items() if any(n == b or n.endswith("/" + b) for b in named)}
    missing = sorted(b for b in named if not any(n == b or n.endswith("/" + b) for n in tips))
    others = np.zeros(len(graph.ids), dtype=bool)
    for sha in known.values():
        if sha in graph.row:
            others |= graph._walk(graph.row[sha], graph.up)
    on_head = {t for t, (row, _) in graph.tags.items() if in_head[row]}
    on_other = {t for t, (row, _) in graph.tags.items() if others[row]}
    only_other = sorted(on_other - on_head)
    neither = sorted(set(graph.tags) - on_head - on_other)
    parts = []
    if known:
        branches = ", ".join(sorted(known))
        parts.append(f"on {branches} and not in HEAD's history: {', '.join(only_other) or 'none'}")
        parts.append(f"on neither HEAD's history nor {branches}: {', '.join(neither) or 'none'}")
    else:
        parts.append(f"not in HEAD's history: {', '.join(neither) or 'none'}")
    if missing:
        first = missing[0]
        parts.append(
            f"branch {', '.join(repr(b) for b in missing)} is not synced (`ngr ingest git REPO --ref origin/{first}` "
            "reads it): the tags on it are counted as not in HEAD's history"
        )
    params["tags"] = ["tag:" + t for t in only_other + neither]
    cy = (
        "MATCH (t:tag) WHERE t.id IN $tags RETURN t.id AS id, t.title AS title, t.type AS type, t.time AS time "
        "ORDER BY time, id"
    )
    said = "tags " + "; ".join(parts)
    return DevPlan("branch_tags", "tags", cy, params, said, none_text=said[0].upper() + said[1:] + ".")


def _branch_tips(engine) -> dict[str, str]:
    """``{ref: sha}`` of the branches the git syncs read besides ``HEAD`` (store meta ``ingest.git-tips``)."""
    out: dict[str, str] = {}
    for source in _sources(engine):
        try:
            tips = json.loads(engine.store.get_meta(f"ingest.git-tips.{source}") or "{}")
        except ValueError:
            continue
        if isinstance(tips, dict):
            out.update({str(k): str(v) for k, v in tips.items() if k != "HEAD" and not str(k).startswith("refs/tags")})
    return out


def _sources(engine) -> list[str]:
    first = engine.store.ids_with_prefix("commit:", 1)
    row = engine.store.get_node(first[0][0]) if first else None
    repo = (row.metadata or {}).get("repo") if row is not None else None
    return [str(repo)] if repo else []


BRANCH_TAGS = Shape(
    "branch_tags",
    lambda engine, q: plan_branch_tags(engine, q.text, q.params) if q.commit is None else None,
    doc="tags on one branch only, on neither",
)
