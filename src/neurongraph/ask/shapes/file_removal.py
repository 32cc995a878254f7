"""A file's removal, as git says it: who removed it and when, which files were removed, what happened to one.

A removal is what git records ("deleted file mode", the ingest's ``status``); in a store an older reader wrote,
the commit whose ``-U0`` hunk empties the file from line 1 and takes every line it held.  Only a re-creation may
touch it after; a move elsewhere is a rename, said as such.
"""

from __future__ import annotations

import itertools
import re

from ..devplan import (
    C_RET,
    NON_MERGE,
    ROOT,
    DevPlan,
    Scope,
    by_time,
    commit_match,
    renamed_from,
    tag_filter,
    time_bounds,
)
from ..timephrase import TimeWindow

DELETED = re.compile(r"\b(remov\w*|delet\w*|dropped|gone|rid\s+of)\b", re.I)


# "is F still there?", "does F exist?": answered by the removal check
STILL = re.compile(r"\b(still|exists?|present|around|any ?more)\b", re.I)


_LOOK_BACK = 64  # newest touches read to find the removal (a re-created file's older removal lies further back)


def file_deleted(scope: Scope, params: dict, who: bool) -> DevPlan:
    """ "When was F removed?" / "who deleted F?": the newest commits touching F, resolved when run."""
    params["f"] = scope.value
    cy = (
        f"MATCH (c:commit)-[:touches]->(f:file {{id: $f}}) WHERE {NON_MERGE} WITH DISTINCT c "
        f"ORDER BY {by_time('DESC')} LIMIT {_LOOK_BACK} RETURN {C_RET}, c.parents AS parents"
    )
    expl = f"the commit that removed {scope.phrase}"
    if who:
        expl = f"the author of {expl}"
    shape, kind = ("who_deleted", "author") if who else ("file_deleted", "commits")
    return DevPlan(shape, kind, cy, params, expl, steps=(resolve_deleted,), about_file=True)


def _node_hunks(node, path: str) -> list[list[int]]:
    return list(((node.metadata or {}).get("hunks") or {}).get(path) or [])


def file_status(node, path: str) -> str | None:
    """What git said of ``path`` in this commit — "A" created, "D" deleted, "M" neither — as the reader
    (version 7) records it; None where it is not recorded (an older reader, or a cut file list)."""
    md = node.metadata or {}
    if not md.get("file_status"):
        return None
    f = next((x for x in md.get("files") or [] if isinstance(x, dict) and x.get("path") == path), None)
    if f is None:
        return None if int(md.get("files_total") or 0) > len(md.get("files") or []) else "M"
    return str(f.get("status") or "M")


def removes(engine, node, path: str, row: dict) -> bool:
    """Whether this commit removed ``path``: git's recorded status, else (older stores) a hunk that empties
    it from line 1 and takes every line it held."""
    st = file_status(node, path)
    if st is not None:
        return st == "D"
    h = _node_hunks(node, path)
    return _empties(h) and not _lines_left(engine, path, row, h[0][1])


def makes(node, path: str) -> bool:
    st = file_status(node, path)
    return st == "A" if st is not None else _creates(_node_hunks(node, path))


def _empties(h: list[list[int]]) -> bool:
    return len(h) == 1 and h[0][0] == 1 and h[0][2] == 0 and h[0][3] == 0


def _creates(h: list[list[int]]) -> bool:
    return len(h) == 1 and h[0][0] == 0 and h[0][1] == 0


def _emptying(engine, rows: list[dict], path: str) -> dict | None:
    """The first of ``rows`` (commit rows) that removed ``path``."""
    for r in rows:
        node = engine.store.get_node(r["id"])  # None: a row the projection has and the store lost
        if node is not None and removes(engine, node, path, r):
            return r
    return None


def _lines_left(engine, path: str, row: dict, removed: int) -> bool:
    """Whether ``path`` held more than ``removed`` lines before ``row``'s commit: then the hunk that starts
    at line 1 cut its head, not the file.  The lines it held are the sum of the earlier non-merge commits'
    added − removed lines; unknown (so not said) when a rename brought the file's lines in, or a count is
    missing (a binary or cut file list)."""
    moved_in = engine.cypher(  # `renamed_to` edges: every rename (a commit's own list is cut at 100)
        "MATCH (o:file)-[:renamed_to]->(f:file {id: $f}) RETURN count(o) AS n", {"f": "file:" + path}
    )["rows"]
    if moved_in and moved_in[0]["n"]:
        return False
    earlier = engine.cypher(
        f"MATCH (c:commit)-[:touches]->(f:file {{id: $f}}) WHERE {NON_MERGE} AND c.time <= $t AND c.id <> $me "
        "RETURN DISTINCT c.idx AS idx",
        {"f": "file:" + path, "t": row.get("time"), "me": row["id"]},
    )["rows"]
    held = 0
    for node in engine.store.nodes_by_idx([int(r["idx"]) for r in earlier]).values():
        f = next((x for x in (node.metadata or {}).get("files") or [] if x.get("path") == path), None)
        if f is None or f.get("added") is None or f.get("deleted") is None:
            return False
        held += int(f["added"]) - int(f["deleted"])
    return held > removed


def _moved_away(engine, path: str) -> dict | None:
    """The latest commit that renamed ``path`` away, with ``into`` its new path: from the commit's rename
    list, else (a commit renaming over 100 files lists the first 100) from the `renamed_to` edge and the
    first commit touching the new path."""
    rows = engine.cypher(
        f"MATCH (c:commit) WHERE $p IN coalesce(c.renamed_from, []) AND {NON_MERGE} "
        f"RETURN {C_RET}, c.renamed_into AS into, c.renamed_from AS from_ ORDER BY time DESC LIMIT 1",
        {"p": path},
    )["rows"]
    if rows:
        m = dict(rows[0])
        m["into"] = dict(zip(m.pop("from_") or [], m.get("into") or [])).get(path)
        return m
    rows = engine.cypher(
        f"MATCH (o:file {{id: $f}})-[:renamed_to]->(n:file) MATCH (c:commit)-[:touches]->(n) WHERE {NON_MERGE} "
        f"WITH n, c ORDER BY c.time, c.id WITH n, collect(c)[0] AS c RETURN {C_RET}, substring(n.id, 5) AS into "
        "ORDER BY time DESC LIMIT 1",
        {"f": "file:" + path},
    )["rows"]
    return dict(rows[0]) if rows else None


def resolve_deleted(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The removing commit among ``rows`` (newest first), or none with ``p.none_text`` saying why."""
    path = str(p.params["f"])[5:]
    phrase = p.explanation.rsplit("removed ", 1)[-1]
    moved = _moved_away(engine, path)
    if moved and (not rows or str(moved.get("time") or "") >= str(rows[0].get("time") or "")):
        into = moved.get("into")
        p.explanation += f" (moved away: renamed to {into})" if into else " (moved away by a rename)"
        return [moved]
    if not rows:
        p.none_text = f"{phrase} has no commits in the store."
        return []
    # newest first, grouped by second: commits of one second (a rebase, `git am`, a mirror's sync batch) are
    # ordered by nothing the store keeps, so the removal is the one among them whose hunk empties the file
    groups = [list(g) for _, g in itertools.groupby(rows, key=lambda r: r.get("time"))]
    gone = _emptying(engine, groups[0], path)
    if gone is not None:
        return [gone]
    made = next((r for r in groups[0] if (n := engine.store.get_node(r["id"])) is not None and makes(n, path)), None)
    if made is not None and len(groups) > 1 and (gone := _emptying(engine, groups[1], path)) is not None:
        p.explanation += f"; it was added again by {made['id'][7:17]} ({str(made.get('time'))[:10]})"
        return [gone]
    latest = rows[0]
    p.none_text = (
        f"{phrase} was not removed: its latest commit, {latest['id'][7:17]} {str(latest.get('time') or '')[:10]} "
        f'"{latest.get("title") or ""}", left it in place.'
    )
    p.explanation += " — none: still present"
    return []


# A root commit (no parent) comes before every other commit touching a file, whatever the clock says: ovs's
# root "Import from old repository" is dated 2009-07-08 13:19, after its descendant that deleted
# secchan/automake.mk at 10:30 and after a month of commits on lib/dpif.c it created.
_ROOT = ROOT.format(c="x")  # (only in a history with one root: devplan.by_time)


ROOTS_FIRST = f"WITH f, [x IN cs WHERE {_ROOT}] + [x IN cs WHERE NOT {_ROOT}] AS cs "


_ROOTS_LAST = f"WITH f, [x IN cs WHERE NOT {_ROOT}] + [x IN cs WHERE {_ROOT}] AS cs "


def _per_file_second(
    scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, order: str
) -> tuple[str, list[str], list[str]]:
    """``(head, conditions, said)`` for a question about each file's first (``ASC``) or last (``DESC``)
    commit: ``top`` = the non-merge commits of that second (no order among them is stored), ``c0`` the
    first of them; the question's dates and author apply to that second, not to every commit."""
    match, said = commit_match(scope, TimeWindow(), None, params, touching=True)
    head = (
        f"{match} WITH f, c ORDER BY c.time{' DESC' if order == 'DESC' else ''}, c.id WITH f, collect(c) AS cs "
        f"{_ROOTS_LAST if order == 'DESC' else ROOTS_FIRST}"
        "WITH f, [x IN cs WHERE x.time = cs[0].time] AS top WITH f, top, top[0] AS c0"
    )
    cond = ["true"] + time_bounds(tw, params, "c0") + tag_filter(tw, params, "c0")  # dates, a tag range
    if author:
        params["author"] = author
        cond.append("any(x IN top WHERE x.author = $author)")
    said = [x for x in said if x != "(merge commits left out)"] + ([tw.describe()] if tw.active else [])
    return head, cond, said + ([f"by {author}"] if author else [])


def files_deleted(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which files were deleted?": files whose latest change removed all their lines (checked against
    the stored hunk, as for one file), within the filters on that removing commit."""
    head, cond, said = _per_file_second(scope, tw, author, params, "DESC")
    cy = (  # the commits of the newest second that touched each file: the removal is among them when run
        f"{head} WHERE {' AND '.join(cond)} RETURN f.id AS id, f.title AS title, f.type AS type, "
        f"[x IN top | x.idx] AS candidates, c0.time AS last ORDER BY last DESC, id"
    )
    expl = "files removed " + ", ".join(["(their last change emptied them; merge commits left out)"] + said)
    return DevPlan("files_deleted", "files", cy, params, expl, filters=said, steps=(keep_removed,), read_all=True)


def file_events(scope: Scope, params: dict) -> DevPlan:
    """ "What happened to F?", "F looks like it was created twice": the commits that added or removed F, oldest
    first (git's "new / deleted file mode" for F in each commit: ``git log --diff-filter=AD -- F``)."""
    params["f"] = scope.value
    cy = (  # under its earlier paths too (git log --follow): created as click/x.py, moved to src/click/x.py
        f"{renamed_from(scope, params)} MATCH (c:commit)-[:touches]->(p) WHERE {NON_MERGE} WITH DISTINCT c, p "
        f"ORDER BY c.time, c.author_time, c.id RETURN {C_RET}, p.id AS path"
    )
    expl = f"the commits that added, moved or removed {scope.phrase} (under its earlier paths too)"
    none = f"No commit added or removed {scope.phrase}."
    return DevPlan("file_events", "commits", cy, params, expl, none_text=none, steps=(keep_events,))


def keep_events(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The rows whose commit added ("A"), removed ("D") or moved here (a rename git paired) the row's ``path``,
    each with what it did."""
    idx = engine.store.lookup_idx([r["id"] for r in rows])
    nodes = engine.store.nodes_by_idx(idx.values())
    out = []
    for r in rows:
        node = nodes.get(idx.get(r["id"], -1))
        path = str(r["path"])[5:]
        st = file_status(node, path) if node is not None else None
        moved = [old for old, new in (node.metadata or {}).get("renames") or [] if new == path] if node else []
        did = (
            "added it"
            if st == "A"
            else "removed it"
            if st == "D"
            else f"moved it from {moved[0]} to {path}"
            if moved
            else ""
        )
        if did:
            out.append({**{k: v for k, v in r.items() if k != "path"}, "did": did})
    return out


def keep_removed(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The files one of whose newest commits removed them (see ``removes``), with that commit as
    ``removed_by`` (all of them: the total is their number).  The candidates are read in one batch."""
    nodes = engine.store.nodes_by_idx({int(c) for r in rows for c in r["candidates"]})
    out = []
    for r in rows:
        path = str(r["id"])[5:]
        row = {"time": r.get("last")}
        gone = next(
            (
                n
                for c in r["candidates"]
                if (n := nodes.get(int(c))) is not None and removes(engine, n, path, {**row, "id": n.id})
            ),
            None,
        )
        if gone is not None:
            out.append({**{k: v for k, v in r.items() if k != "candidates"}, "removed_by": gone.id})
    return out
