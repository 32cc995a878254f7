"""One file's history: when it was renamed, created, removed, or what happened to it; a directory's move."""

from __future__ import annotations

import dataclasses
import re

from ..devplan import (
    C_RET,
    DevPlan,
    Scope,
    by_time,
    renamed_from,
)
from ..timephrase import TimeWindow
from ..words import CREATED, GONE, RENAMED, REVIEW, TWICE
from .file_lines import file_length
from .file_rankings import ranks_commits_by_lines
from .file_removal import DELETED, STILL, file_deleted, file_events
from .file_sets import FIRST_COMMITS, dir_deleted, first_creator
from .shape import Shape

_REPLACED = re.compile(r"\breplac\w*|\bsupersed\w*|\binstead\s+of\b", re.I)


def also_removed(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """ "… and what did it replace?": the files the creating commit removed, said with the answer (git's
    status "D" in that commit; the runner's copy of the plan takes the words)."""
    node = engine.store.get_node(rows[0]["id"]) if rows else None
    if node is None:
        return rows
    gone = [str(f.get("path")) for f in (node.metadata or {}).get("files") or [] if f.get("status") == "D"]
    p.explanation += f"; the same commit removed {', '.join(gone)}" if gone else "; the same commit removed no file"
    return rows


def also_added(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """ "Which file replaced F?": the files the removing commit added or renamed into place, said with it."""
    node = engine.store.get_node(rows[0]["id"]) if rows else None
    if node is None:
        return rows
    files = [f for f in (node.metadata or {}).get("files") or [] if isinstance(f, dict)]
    made = [str(f.get("path")) for f in files if f.get("status") in ("A", "R")]
    if made:
        p.explanation += f"; the same commit added {', '.join(made)}"
        return rows
    grew = max(files, key=lambda f: int(f.get("added") or 0), default=None)  # its code moved into a file
    if grew is not None and int(grew.get("added") or 0) > 0:
        p.explanation += f"; the same commit added no file, and most lines to {grew.get('path')} (+{grew['added']})"
    else:
        p.explanation += "; the same commit added no file"
    return rows


_FROM_TO = re.compile(r"\bfrom\s+(\S+)\s+(?:to|into)\s+(\S+)", re.I)


def plan_dir_move(question: str, scope, params: dict) -> DevPlan | None:
    """ "When did the package move from click/ to src/click/?": the commits with a rename from a path under the
    first directory to one under the second (their first 100 renames each, as the projection keeps them)."""
    if scope is None or scope.kind not in ("any", "all") or not RENAMED.search(question):
        return None
    dirs = [p for p in scope.value if getattr(p, "kind", "") == "dir"]
    m = _FROM_TO.search(question)
    if len(dirs) != 2 or m is None:
        return None
    first, second = sorted(dirs, key=lambda d: question.find(d.phrase))
    params["moved_from"], params["moved_to"] = str(first.value)[5:], str(second.value)[5:]
    cy = (
        "MATCH (c:commit) WHERE size(coalesce(c.parents, [])) < 2 AND any(i IN range(0, size(coalesce("
        "c.renamed_from, [])) - 1) WHERE c.renamed_from[i] STARTS WITH $moved_from AND c.renamed_into[i] "
        f"STARTS WITH $moved_to) RETURN {C_RET} ORDER BY time"
    )
    expl = f"the commits that moved files from {first.phrase} to {second.phrase}"
    return DevPlan(
        "dir_moved",
        "commits",
        cy,
        params,
        expl,
        none_text=f"No commit moved files from {first.phrase} to {second.phrase}.",
    )


def renamed_away_first(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """Of a path written out in full ("which commit renamed travis-ci/managers/ubuntu.sh?"), the renames that
    moved it away, as ``git log --diff-filter=R -- PATH`` names them; the one that brought it there only when
    it was never moved away."""
    away = [r for r in rows if r.get("renamed_to")]
    return away or rows


def plan_file(engine, question: str, scope: Scope, tw: TimeWindow, params: dict) -> DevPlan | None:
    """A question about one file's history: when it was renamed, created or removed; or its length.  "What
    happened to F? I can't find it" is its rename when F was renamed away, else its removal."""
    if (length := file_length(question, scope, tw, None, params)) is not None:
        return length  # "how long is F?"
    if ranks_commits_by_lines(question):
        return None  # "the commits that added the most lines to F": a ranking, not F's creation
    params["f"] = scope.value
    gone = bool(GONE.search(question)) and not tw.active
    if RENAMED.search(question) or gone and engine.code_history.renamed_away(str(scope.value)[5:]):
        params["p"] = str(scope.value)[5:]
        into = "[i IN range(0, size(c.renamed_from) - 1) WHERE c.renamed_from[i] = $p | c.renamed_into[i]]"
        came = "[i IN range(0, size(c.renamed_into) - 1) WHERE c.renamed_into[i] = $p | c.renamed_from[i]]"
        # the renames away from the path, and the one that brought it there (a bare name is read as the path it
        # has now: "when did librt_base64.c move into its own subdirectory?" asks for that one)
        direct = (
            "MATCH (c:commit) WHERE ($p IN coalesce(c.renamed_from, []) OR $p IN coalesce(c.renamed_into, [])) "
            f"AND size(coalesce(c.parents, [])) < 2 RETURN {C_RET}, {into} AS renamed_to, {came} AS renamed_from "
            "ORDER BY time"
        )
        # a store without rename metadata: the first non-merge commit touching each new path
        by_edge = (
            "MATCH (o:file {id: $f})-[:renamed_to]->(n:file) MATCH (c:commit)-[:touches]->(n) "
            "WHERE size(coalesce(c.parents, [])) < 2 WITH n, c ORDER BY c.time, c.id "
            f"WITH n, collect(c)[0] AS c RETURN {C_RET}, n.id AS renamed_to"
        )
        expl = f"the commit that renamed {scope.phrase}"
        fb = (by_edge, "no rename metadata: the first commit touching the new path")
        away = (renamed_away_first,) if "/" in scope.phrase else ()  # a path written out: its own renames
        return DevPlan("file_renamed", "commits", direct, params, expl, fallback=fb, about_file=True, steps=away)
    if (gone or TWICE.search(question)) and not DELETED.search(question) and not tw.active:
        return file_events(scope, params)  # "what happened to F?": when it was added and removed
    if DELETED.search(question) and CREATED.search(question) and not tw.active:
        return file_events(scope, params)  # "when was F added and when deleted?": both
    if (DELETED.search(question) or STILL.search(question)) and not tw.active:
        return file_deleted(scope, params, who=False)
    if _REPLACED.search(question) and not CREATED.search(question) and not tw.active:
        removal = file_deleted(scope, params, who=False)  # "which file replaced F?": its removal, and what came
        return dataclasses.replace(removal, steps=(*removal.steps, also_added))
    if CREATED.search(question) and not tw.active:
        cy = (  # under its earlier paths too (git log --follow): "globals.py" before "move to src directory"
            f"{renamed_from(scope, params)} MATCH (c:commit)-[:touches]->(p) "
            "WHERE size(coalesce(c.parents, [])) < 2 "
            f"WITH DISTINCT c, p ORDER BY {by_time()} LIMIT {FIRST_COMMITS} RETURN {C_RET}, "
            "c.parents AS parents, c.author_time AS author_time, substring(p.id, 5) AS path"
        )
        expl = f"the first commit touching {scope.phrase} or a path it was renamed from"
        steps = (first_creator, also_removed) if _REPLACED.search(question) else (first_creator,)
        return DevPlan("file_created", "commits", cy, params, expl, steps=steps, about_file=True)
    return None


DIR_REMOVED = Shape(
    "dir_removed",
    lambda engine, q: (
        dir_deleted(q.scope, q.params, who=q.who and not REVIEW.search(q.words))  # a reviewer is no author
        if q.scope is not None and q.scope.kind == "dir" and DELETED.search(q.words) and not q.count and not q.tw.active
        else None
    ),
    doc="when a directory was removed, and who removed it: the commit that took its last files",
)
DIR_MOVE = Shape(
    "dir_move",
    lambda engine, q: plan_dir_move(q.text, q.scope, q.params),
    doc="when files moved from one directory to another",
)
FILE_HISTORY = Shape(
    "file_history",
    lambda engine, q: (
        plan_file(engine, q.words, q.scope, q.tw, q.params)
        if q.scope is not None and q.scope.kind == "file" and not q.who and not q.count
        else None
    ),
    doc="one file: renamed (to what), created, removed, what happened to it, how long it is",
)
