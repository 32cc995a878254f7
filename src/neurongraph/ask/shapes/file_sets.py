"""Sets of files: those added (created) or removed in a period, the oldest or newest, those there now, how many
were touched.  Each row is checked against the file's own history, so a touch is never counted as a creation.
"""

from __future__ import annotations

import dataclasses
import functools
import re

from ...graphdb.projection import RENAMES_LISTED
from ..dev_rows import count_rows, earliest
from ..devplan import C_RET, DevPlan, Scope, all_rows, commit_match, tag_filter, time_bounds
from ..timephrase import TimeWindow
from .file_removal import DELETED, ROOTS_FIRST, file_status, files_deleted, makes, removes

# "how many files ...", "the number of distinct files": the noun counted is the file ("how many commits changed
# files under src/" counts commits)
COUNT_FILES = re.compile(
    r"\b(?:how many|number of|count of)\s+(?:(?:different|distinct|unique|separate|source|other|new)\s+)?"
    r"(?:files?|paths?)\b"
    r"|\bfiles?\b[^?]*\?\s*how\s+many\b",  # "which files live under D/? how many?"
    re.I,
)


# "new" is a file's only when it says so ("new files", "new source files"): "the new tests/ folder" is a place
CREATED_WORDS = re.compile(r"\b(?:added|created|introduced)\b|\bnew\s+(?:[a-z]+\s+)?(?:files?|paths?)\b", re.I)


EARLY = 16  # a file's first commits by time read for its creation (a descendant dated before the root: ovs)


FIRST_COMMITS = 8  # the same for one file ("when was F created?", "who created F?": ``creators``)


def files_added(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which files were added in 2024?": files whose creating commit falls in the filters (a path a rename
    created is not new: git says R, not A).  The creating commit is the first by time, unless git's status
    says it only changed the file and one of the file's next commits created it: a clock set back dates a
    descendant before its ancestor (ovs's root "Import from old repository" added COPYING on 2009-07-08 and
    a child is dated 2009-06-15).  So the query keeps each file's first ``EARLY`` commits and lets a file
    through when any of them meets the filters; ``keep_added`` decides which commit made it."""
    match, said = commit_match(scope, TimeWindow(), None, params, touching=True)
    cond = ["true"] + [f"any(x IN early WHERE {c})" for c in time_bounds(tw, params, "x") + tag_filter(tw, params, "x")]
    if author:
        params["author"] = author
        cond.append("any(x IN early WHERE x.author = $author)")
        said.append(f"by {author}")
    said = [x for x in said if x != "(merge commits left out)"] + ([tw.describe()] if tw.active else [])
    # a rename made it: not new — its first commit lists it among its renames, or (a commit's list holds
    # the first RENAMES_LISTED) a `renamed_to` edge leads to it (an edge from a merge alone does not count)
    cy = (
        f"{match} WITH f, c ORDER BY c.time, c.id WITH f, collect(c) AS cs {ROOTS_FIRST}"
        f"WITH f, [x IN cs WHERE x.time = cs[0].time] AS top, cs[..{EARLY}] AS early "
        f"WITH f, top, early, top[0] AS c0 WHERE {' AND '.join(cond)} "
        "OPTIONAL MATCH (o:file)-[:renamed_to]->(f) WITH f, top, early, c0, count(o) AS moved "
        "WHERE none(x IN top WHERE substring(f.id, 5) IN coalesce(x.renamed_into, [])) AND NOT (moved > 0 AND "
        f"any(x IN top WHERE size(coalesce(x.renamed_into, [])) >= {RENAMES_LISTED})) "
    )
    ret = (
        "RETURN f.id AS id, f.title AS title, f.type AS type, c0.time AS first, [x IN top | x.idx] AS by, "
        "[x IN early | [x.idx, x.time, x.author]] AS early ORDER BY first, id"
    )
    expl = "files added " + ", ".join(["(first commit; merge commits left out)"] + said)
    return DevPlan("files_added", "files", cy + ret, params, expl, filters=said, steps=(keep_added,), read_all=True)


_AGE = re.compile(
    r"\b(?P<old>oldest|earliest)\s+(?:\d{1,3}\s+)?files?\b|\b(?P<new>newest)\s+(?:\d{1,3}\s+)?files?\b"
    r"|\bfiles?\b[^?]*\b(?:created|added)\s+(?:(?P<first>first)|(?P<last>last|most recently))\b"
    r"|\b(?:(?P<first2>first)|(?P<last2>last|most recently))\s+(?:\d{1,3}\s+)?(?:created|added)\s+files?\b",
    re.I,
)


_N_FILES = re.compile(r"\b(\d{1,3})\s+(?:\w+\s+){0,2}?files\b", re.I)


def files_by_age(words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan | None:
    """ "What is the oldest file?", "the 5 newest files", "which files were created first?": files by the time
    their creating commit made them (``files_added``'s rows, clock skew resolved), oldest or newest first."""
    m = _AGE.search(words)
    if m is None:
        return None
    newest = bool(m.group("new") or m.group("last") or m.group("last2"))
    k = int(n.group(1)) if (n := _N_FILES.search(words)) else 1 if re.search(r"\bfile\b", words, re.I) else 10
    added = files_added(scope, tw, author, params)
    said = [x for x in added.filters if x]
    what = f"the {'file' if k == 1 else f'{k} files'} created {'last' if newest else 'first'}"
    merges = [] if any("merge commits left out" in x for x in said) else ["(merge commits left out)"]
    expl = " ".join([what, *merges, *([", ".join(said)] if said else [])]).strip()
    ranked = functools.partial(by_age, k=k, newest=newest)
    shape = "files_newest" if newest else "files_oldest"
    return dataclasses.replace(added, shape=shape, explanation=expl, steps=(*added.steps, ranked))


def by_age(engine, p: DevPlan, rows: list[dict], k: int = 10, newest: bool = False) -> list[dict]:
    """The first ``k`` of the created files by creation time (newest first if ``newest``); a tie at the cut is
    said in the explanation (of the plan being run: a copy), not cut silently."""
    ranked = sorted(rows, key=lambda r: (str(r.get("first") or ""), r["id"]), reverse=newest)
    if len(ranked) > k and ranked[k - 1].get("first") == ranked[k].get("first"):
        same = sum(1 for r in ranked if r.get("first") == ranked[k - 1].get("first"))
        p.explanation += f" ({same} files were created at {str(ranked[k - 1].get('first'))[:10]}, in the same second)"
    return ranked[:k]


def first_creator(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The one commit git says created the file ``$f`` (of its first commits by time; a child dated before it:
    clock skew), the first of a same-second tie by ancestry; "who first …" without a file keeps its one row."""
    if p.kind == "author" and len(rows) < 2:
        return rows
    return earliest(engine, creators(engine, rows, str(p.params["f"])[5:]))


def creators(engine, rows: list[dict], path: str) -> list[dict]:
    """Of a file's first commits (rows in time order), those that created it (git's status "A", else a hunk
    from nothing), when any did; else all of them (a store that cannot tell)."""
    made = [r for r in rows if (n := engine.store.get_node(r["id"])) is not None and makes(n, r.get("path") or path)]
    return made or rows


def keep_added(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The rows whose creating commit meets the plan's filters (``params``' since / until / author): one of the
    first-second non-merge commits when git's status says "A" there (in an older store: when none of them
    removed it), else the first of the file's next commits whose status is "A" (a descendant dated before
    its ancestor).  A file a merge brought in has a later change or its deletion as its first non-merge
    commit and no "A" after it: it was not added then."""
    params = p.params
    within = (set(params["within"]), bool(params.get("within_not"))) if "within" in params else None  # a tag range
    by = {int(i) for r in rows for i in r.get("by") or []}
    nodes = engine.store.nodes_by_idx(by)
    later = {int(e[0]) for r in rows for e in r.get("early") or [] if int(e[0]) not in by}  # read once, if needed
    out: list[dict] = []
    for r in rows:
        path = str(r["id"])[5:]
        info = {int(idx): {"time": t, "author": who} for idx, t, who in r.get("early") or []}
        firsts = [(int(i), nodes[int(i)]) for i in r.get("by") or [] if int(i) in nodes]
        st = [file_status(n, path) for _, n in firsts]
        made = {"time": r.get("first"), "author": None, "id": firsts[0][1].id if firsts else None}
        if None in st:  # an older reader: anything but a removal
            ok = not any(removes(engine, n, path, {"id": n.id, "time": r.get("first")}) for _, n in firsts)
        elif "A" in st:
            ok = True
            i_made, n_made = next((i, n) for (i, n), x in zip(firsts, st) if x == "A")
            made = {**info.get(i_made, made), "id": n_made.id}
        else:  # changed, not created, by its first commit: a later-dated one may have created it
            if later:
                nodes.update(engine.store.nodes_by_idx(later))
                later = set()
            ok = False
            for idx, t, who in r.get("early") or []:
                n = nodes.get(int(idx))
                if n is not None and makes(n, path):  # (status, or a hunk from nothing where the list is cut)
                    ok, made = True, {"time": t, "author": who, "id": n.id}
                    break
        if not firsts:
            ok = True
        if ok and _meets(made, r, params, within):
            kept = {k: v for k, v in r.items() if k not in ("by", "early")}
            out.append({**kept, "first": made["time"], "added_by": made.get("id")})
    return out


def _meets(made: dict, row: dict, params: dict, within: tuple[set, bool] | None = None) -> bool:
    """Whether the creating commit (its time and author; the first second's when unknown) meets the filters:
    the dates, the author, a tag range (``within``: its commit ids, and whether the range is excluded)."""
    if within is not None and made.get("id") is not None and (made["id"] in within[0]) == within[1]:
        return False
    t = str(made.get("time") or row.get("first") or "")
    if params.get("since") and t < str(params["since"]) or params.get("until") and t >= str(params["until"]):
        return False
    if params.get("author") and made.get("author") is not None and made["author"] != params["author"]:
        return False
    return True


# "how many files are in dcb/ right now", "files under src/ at HEAD": the files there now, not every path touched
NOW = re.compile(r"\b(?:right\s+now|now|currently|current|at\s+HEAD|today|at\s+present|still)\b", re.I)


_CHANGED = re.compile(
    r"\b(?:touch\w*|chang\w*|modif\w*|edit\w*|add\w*|remov\w*|delet\w*|renam\w*|creat\w*|commit\w*|ever|history)\b",
    re.I,
)


def files_there(words: str, scope: Scope | None) -> bool:
    """Whether "how many files …" asks for the files there now: "right now", "at HEAD", or a directory asked
    in the present with no verb of change ("how many files under ovsdb/?", what ``git ls-tree`` counts);
    "how many files were touched / ever under src/" and the whole history's files stay the paths touched."""
    if NOW.search(words):
        return True
    if scope is None:
        return False
    parts = scope.value if scope.kind in ("any", "all") else [scope]
    return any(getattr(p, "kind", "") == "dir" for p in parts) and not _CHANGED.search(words)


def files_now(scope: Scope | None, params: dict, count: bool) -> DevPlan:
    """The files under ``scope`` (or in the whole history) that exist at ``HEAD``: each path's latest commit in
    ``HEAD``'s history did not delete it and no later commit renamed it away (resolved when run,
    :func:`keep_present`); what ``git ls-tree -r HEAD -- DIR`` lists."""
    if scope is not None and scope.kind in ("any", "all"):  # "in dcb/ (counting Makefile)": the directory's
        dirs = [p for p in scope.value if isinstance(p, Scope) and p.kind == "dir"]
        scope = dirs[0] if len(dirs) == 1 else None
    cond = ["NOT c.id IN $off_head"] if "off_head" in params else []
    if scope is not None:
        cond.append(scope.condition("f", "f", params))
    where = f" WHERE {' AND '.join(cond)}" if cond else ""
    cy = (
        f"MATCH (c:commit)-[:touches]->(f:file){where} WITH f, c ORDER BY c.time DESC "
        "WITH f, collect(c.id)[0] AS last RETURN f.id AS id, f.title AS title, f.type AS type, last ORDER BY id"
    )
    prep = scope is not None and re.match(r"(?:in|under|inside|within|below|beneath)\b", scope.phrase, re.I)
    where_said = (scope.phrase if prep else f"under {scope.phrase}") if scope is not None else "in the repository"
    expl = f"files {where_said} at HEAD (deleted and renamed-away paths left out)"
    steps = (keep_present, count_rows) if count else (keep_present,)
    shape, kind = ("count_files_now", "count") if count else ("files_now", "files")
    return DevPlan(shape, kind, cy, params, expl, steps=steps, read_all=True)


def keep_present(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The file rows whose path still exists: its line count on ``HEAD``'s first-parent line is not 0 (deleted
    or renamed away: ``CodeHistory.line_count``); where the stored hunks give none (a binary or empty file),
    its latest commit (``last``) did not delete it."""
    idx = engine.store.lookup_idx([r["last"] for r in rows if r.get("last")])
    by_idx = engine.store.nodes_by_idx(idx.values())
    out = []
    ch = engine.code_history
    for r in rows:
        path = str(r["id"])[5:]
        lines = ch.line_count(path)  # on HEAD's first-parent line: 0 once deleted or renamed away
        if lines == 0 or ch.renamed_away(path):
            continue
        node = by_idx.get(idx.get(r.get("last"), -1))
        if lines is None and (node is None or file_status(node, path) == "D"):
            continue  # no stored hunk (binary, empty, cut): the latest commit's own word decides
        out.append(r)
    return out


def count_files(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "How many files are there?": every path the history touched (removed and renamed ones included),
    or the files the scoped commits touched."""
    if scope is None and not tw.active and author is None:
        cy = "MATCH (f:file) RETURN count(f) AS count"
        expl = "files in the history (every path a commit touched; removed and renamed ones included)"
        return DevPlan("count_files", "count", cy, params, expl)
    match, said = commit_match(scope, tw, author, params, touching=True)
    cy = f"{match} RETURN count(DISTINCT f) AS count"
    return DevPlan("count_files", "count", cy, params, "files touched by the commits " + ", ".join(said), filters=said)


def added_or_removed(
    words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict
) -> DevPlan | None:
    """ "How many files were added (removed) in 2023?": the number of files ``files_added`` (``files_deleted``)
    lists, not of the files the period's commits touched; else None."""
    if CREATED_WORDS.search(words):
        p = files_added(scope, tw, author, params)
    elif DELETED.search(words):
        p = files_deleted(scope, tw, author, params)
    else:
        return None
    return dataclasses.replace(p, shape="count_" + p.shape, kind="count", steps=(*p.steps, count_rows))


def dir_deleted(scope: Scope, params: dict, who: bool) -> DevPlan:
    """ "When was the ovn directory removed?" / "who removed DIR?": when no file under DIR is left at ``HEAD``, the
    commit that deleted most of its files ("Remove OVN.") and, when another, the newest commit under it, which
    took the last of them ("ovn: Remove remaining pieces."); no answer while some file is still there."""
    cond = scope.condition("f", "f", params)
    cy = (
        f"MATCH (c:commit)-[:touches]->(f:file) WHERE {cond} AND size(coalesce(c.parents, [])) < 2 "
        f"WITH DISTINCT c ORDER BY c.time DESC, c.id LIMIT {_DIR_LOOK_BACK} RETURN {C_RET}"
    )
    expl = f"the commits that removed {scope.phrase}: the one that deleted most of its files, then the last one"
    shape, kind = ("who_deleted_dir", "author") if who else ("dir_deleted", "commits")
    present = files_now(scope, dict(params), count=False)
    return DevPlan(
        shape,
        kind,
        cy,
        params,
        f"the author of the commit that deleted most files of {scope.phrase}" if who else expl,
        none_text=f"{scope.phrase} was not removed: it still has files at HEAD.",
        steps=(functools.partial(_dir_removals, present, str(scope.value)),),
    )


_DIR_LOOK_BACK = 64  # newest commits under a removed directory read for its removal


def _dir_removals(present: DevPlan, prefix: str, engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The commit of ``rows`` (newest first) that deleted most files under ``prefix`` (``file:dir/``), then the
    newest when it is another; none while a file under it exists at ``HEAD``."""
    if not rows or keep_present(engine, present, all_rows(engine, present)):  # every path, page by page
        return []
    nodes = engine.store.nodes_by_idx(engine.store.lookup_idx([r["id"] for r in rows]).values())
    by_id = {n.id: n for n in nodes.values()}

    def deleted(row: dict) -> int:
        files = (by_id[row["id"]].metadata or {}).get("files") or [] if row["id"] in by_id else []
        return sum(
            1
            for f in files
            if isinstance(f, dict) and f.get("status") == "D" and f"file:{f.get('path')}".startswith(prefix)
        )

    most = max(rows, key=deleted)  # the first of equal counts: the newest
    return [most] if most is rows[0] or not deleted(most) else [most, rows[0]]
