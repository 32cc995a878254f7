"""Questions about the files themselves: when one was removed and by whom, how many there are, which changed
last, which files and directories change most often.

Why these read the touches and the stored hunks rather than guess: a new user asks "how many files are
there?" or "when was src/xsk.c removed?" and a wrong number is worse than none.  A file's removal is what git
says of it ("deleted file mode", which the reader records as the file's ``status`` since version 7: binary
and empty files too); in a store an older reader wrote, the commit whose ``-U0`` hunk empties it from line 1
(``@@ -1,N +0,0 @@``) and takes every line it held.  Only a re-creation may touch it after; a move elsewhere
is a rename, said as such.  Directories are the folder that holds each file (``src/`` for ``src/btf.c``), counted
like files: the commits that touch something in it, merges left out, as ``git log --no-merges -- DIR/*``.
"""

from __future__ import annotations

import dataclasses
import itertools
import re

from ..graphdb.projection import RENAMES_LISTED
from ..times import to_epoch
from .devplan import C_RET, MAX_ITEMS, NON_MERGE, ROOT, DevPlan, Scope, by_time, commit_match, time_bounds
from .timephrase import TimeWindow

__all__ = [
    "DELETED",
    "file_deleted",
    "resolve_deleted",
    "count_files",
    "added_or_removed",
    "creators",
    "renamed_files",
    "files_by_recency",
    "files_most_changed",
    "dirs_most_changed",
    "ranking",
    "count_lines",
    "largest_commits",
    "sum_lines",
    "files_added",
    "files_deleted",
    "keep_removed",
    "keep_added",
    "STILL",
    "latest_only",
    "dirs_answer",
    "lines_by_author",
    "row_figure",
    "FILES",
    "COUNT_FILES",
]

DELETED = re.compile(r"\b(remov\w*|delet\w*|dropped|gone)\b", re.I)
_RECENT = re.compile(r"\b(most recent(?:ly)?|latest|last|newest|recent(?:ly)?|lately)\b", re.I)
_OFTEN = re.compile(r"\b(most|top|hottest|busiest|often|frequent\w*)\b", re.I)
_OFTEN_ONLY = re.compile(
    r"\b(often|frequent\w*|hottest|busiest|most (?:changed|commits|active|edited|touched))\b", re.I
)
FILES = re.compile(r"\bfiles?\b|\bpaths?\b", re.I)
_DIRS = re.compile(r"\b(director(?:y|ies)|dirs?|folders?|subdirector(?:y|ies))\b", re.I)
# "how many files ...", "the number of distinct files": the noun counted is the file ("how many commits changed
# files under src/" counts commits)
COUNT_FILES = re.compile(
    r"\b(?:how many|number of|count of)\s+(?:(?:different|distinct|unique|separate|source|other|new)\s+)?"
    r"(?:files?|paths?)\b",
    re.I,
)
# "is F still there?", "does F exist?": answered by the removal check
STILL = re.compile(r"\b(still|exists?|present|around|any ?more)\b", re.I)
_BIGGEST = re.compile(r"\b(biggest|largest|huge\w*|most files)\b", re.I)
_COMMIT_WORD = re.compile(r"\b(?:commits?|changes?|patch(?:es)?)\b", re.I)
_MOST = re.compile(r"\bmost\b", re.I)
_LISTY = re.compile(r"\b(which|what|list|show)\b", re.I)
_LINES = re.compile(r"\blines?\b", re.I)
_ADDED_WORDS = re.compile(r"\b(add\w*|insert\w*|writ\w*|wrote|new)\b", re.I)
_REMOVED_WORDS = re.compile(r"\b(remov\w*|delet\w*|drop\w*)\b", re.I)
_CREATED_WORDS = re.compile(r"\b(added|created|new|introduced)\b", re.I)
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
    return DevPlan("who_deleted" if who else "file_deleted", "author" if who else "commits", cy, params, expl)


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


def _removes(engine, node, path: str, row: dict) -> bool:
    """Whether this commit removed ``path``: git's recorded status, else (older stores) a hunk that empties
    it from line 1 and takes every line it held."""
    st = file_status(node, path)
    if st is not None:
        return st == "D"
    h = _node_hunks(node, path)
    return _empties(h) and not _lines_left(engine, path, row, h[0][1])


def _makes(node, path: str) -> bool:
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
        if node is not None and _removes(engine, node, path, r):
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
    made = next((r for r in groups[0] if (n := engine.store.get_node(r["id"])) is not None and _makes(n, path)), None)
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


def count_lines(words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan | None:
    """ "How many lines were added to F?": the line counts of the scoped commits' changes to the scoped
    files, added, removed or both (what ``git log --no-merges --numstat`` adds up; a binary file counts
    none), summed from each commit's stored file list when run."""
    if not _LINES.search(words) or scope is not None and scope.kind in ("all", "any"):
        return None
    added, removed = bool(_ADDED_WORDS.search(words)), bool(_REMOVED_WORDS.search(words))
    side = "added" if added and not removed else "deleted" if removed and not added else "changed"
    match, said = commit_match(scope, tw, author, params, touching=True)
    what = {"added": "lines added", "deleted": "lines removed", "changed": "lines changed (added + removed)"}[side]
    cy = f"{match} RETURN DISTINCT c.idx AS idx, substring(f.id, 5) AS path"
    return DevPlan(
        f"count_lines_{side}", "count", cy, params, f"{what} by the commits " + ", ".join(said), filters=said
    )


_LENGTH = re.compile(
    r"\bhow long is\b|\bhow (?:big|large) is\b|\bline count\b|\blines? of code\b"
    r"|\blines?\b[^?]*\b(?:ha(?:ve|s|d)|contain\w*|long)\b|\b(?:ha(?:ve|s|d)|contain\w*)\b[^?]*\blines?\b"
    r"|\blines?\s+(?:are|were)\s+(?:there\s+)?in\b|\bwc\s+-l\b|\bhow\s+many\s+lines\s+(?:in|of)\b",
    re.I,
)
_CHURN = re.compile(r"\b(chang\w*|modif\w*|touch\w*|edit\w*|churn\w*|commits?|by)\b", re.I)


def file_length(words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan | None:
    """ "How many lines does F have?", "how long is F?": the lines F has at the newest commit (before the
    question's end date, if it gives one), not the lines its commits changed; summed from the stored diffs
    when run (``CodeHistory.line_count``: what ``git show HEAD:F | wc -l`` counts)."""
    if scope is None or scope.kind != "file" or author is not None or not _LENGTH.search(words):
        return None
    if _ADDED_WORDS.search(words) or _REMOVED_WORDS.search(words) or _CHURN.search(words):
        return None  # "how many lines were added to F", "lines changed in F": the commits' line counts
    params["f"] = scope.value
    if tw.until:
        params["length_until"] = tw.until
    when = f"before {tw.until[:10]}" if tw.until else "at the newest commit"
    cy = "MATCH (f:file) WHERE f.id = $f RETURN f.id AS id"
    out = DevPlan("file_lines", "count", cy, params, f"lines in {scope.phrase} {when}")
    out.none_text = (
        f"Not known: no line count for {scope.phrase} — its stored diffs do not give one (a binary or empty file, "
        "a store without code, or a generated file over the ingest's hunk caps)."
    )
    return out


def file_lines(engine, p: DevPlan) -> list[dict]:
    """``[{"count": N}]`` for a ``file_lines`` plan, or ``[]`` when the stored diffs cannot say."""
    until = p.params.get("length_until")
    as_of = to_epoch(until) - 1e-3 if until else None  # the window's end is exclusive
    n = engine.code_history.line_count(str(p.params["f"])[5:], as_of)
    return [] if n is None else [{"count": n}]


def sum_lines(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """``[{"count": N}]``: the plan's side of the line counts of each (commit, path) row, read from the
    commits' stored file lists (their ``-U0`` hunks where a long list was cut)."""
    side = p.shape.rsplit("_", 1)[-1]
    total = 0
    for a, d in _line_counts(engine, _paths_per_commit(rows)).values():
        total += a if side == "added" else d if side == "deleted" else a + d
    return [{"count": total}]


def _paths_per_commit(rows: list[dict]) -> dict[int, set[str] | None]:
    """Commit idx -> the paths of its ``(idx, path)`` rows; None where a row's path is None (the whole commit)."""
    want: dict[int, set[str] | None] = {}
    for r in rows:
        idx = int(r["idx"])
        if r.get("path") is None:
            want[idx] = None
        elif idx not in want:
            want[idx] = {str(r["path"])}
        elif (got := want[idx]) is not None:
            got.add(str(r["path"]))
    return want


def _line_counts(engine, want: dict[int, set[str] | None]) -> dict[int, tuple[int, int]]:
    """Commit idx -> (lines added, lines removed) in the given paths (None: every path it changed), from its
    stored file list (``git log --numstat``'s counts; a binary file counts none) and, beyond a cut list, the
    sums of its ``-U0`` hunks."""
    out: dict[int, tuple[int, int]] = {}
    ids = list(want)
    for k in range(0, len(ids), 2000):
        for idx, node in engine.store.nodes_by_idx(ids[k : k + 2000]).items():
            md = node.metadata or {}
            listed: dict[str, dict] = {str(f.get("path")): f for f in md.get("files") or [] if isinstance(f, dict)}
            raw = md.get("hunks")
            hunks: dict[str, list] = raw if isinstance(raw, dict) else {}
            only = want[idx]
            added = removed = 0
            for path in only if only is not None else set(listed) | set(hunks):
                f = listed.get(path)
                if f is not None:
                    a, d = f.get("added"), f.get("deleted")
                else:  # beyond the listed files: the hunks' sums
                    hs = hunks.get(path) or []
                    a, d = sum(h[3] for h in hs), sum(h[1] for h in hs)
                added, removed = added + int(a or 0), removed + int(d or 0)
            out[idx] = (added, removed)
    return out


def lines_by_author(engine, rows: list[dict]) -> list[dict]:
    """Authors rows ``{author, lines, commits}`` from ``(idx, author, path)`` rows (path None: the
    whole commit), the lines added read from the commits' stored file lists (their hunks beyond a cut list);
    most lines first."""
    who = {int(r["idx"]): str(r.get("author") or "") for r in rows}
    lines: dict[str, int] = {}
    commits: dict[str, int] = {}
    for idx, (added, _) in _line_counts(engine, _paths_per_commit(rows)).items():
        a = who[idx]
        lines[a] = lines.get(a, 0) + added
        commits[a] = commits.get(a, 0) + 1
    ranked = sorted(lines, key=lambda a: (-lines[a], a))
    return [{"author": a, "lines": lines[a], "commits": commits[a]} for a in ranked[:MAX_ITEMS]]


def commits_by_lines(engine, rows: list[dict], n: int) -> list[dict]:
    """The ``n`` commits of ``rows`` (``idx`` + the commit's columns) that added the most lines, most first;
    each row gains ``lines``."""
    first: dict[int, dict] = {}
    for r in rows:  # one row per (commit, scoped path); path None: the whole commit
        first.setdefault(int(r["idx"]), {k: v for k, v in r.items() if k not in ("idx", "path")})
    added = {i: a for i, (a, _) in _line_counts(engine, _paths_per_commit(rows)).items()}
    ranked = sorted(first, key=lambda i: (-added.get(i, 0), str(first[i].get("time") or ""), first[i]["id"]))
    return [{**first[i], "lines": added.get(i, 0)} for i in ranked[:n]]


# A root commit (no parent) comes before every other commit touching a file, whatever the clock says: ovs's
# root "Import from old repository" is dated 2009-07-08 13:19, after its descendant that deleted
# secchan/automake.mk at 10:30 and after a month of commits on lib/dpif.c it created.
_ROOT = ROOT.format(c="x")  # (only in a history with one root: devplan.by_time)
_ROOTS_FIRST = f"WITH f, [x IN cs WHERE {_ROOT}] + [x IN cs WHERE NOT {_ROOT}] AS cs "
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
        f"{_ROOTS_LAST if order == 'DESC' else _ROOTS_FIRST}"
        "WITH f, [x IN cs WHERE x.time = cs[0].time] AS top WITH f, top, top[0] AS c0"
    )
    cond = ["true"] + time_bounds(tw, params, "c0")
    if author:
        params["author"] = author
        cond.append("any(x IN top WHERE x.author = $author)")
    said = [x for x in said if x != "(merge commits left out)"] + ([tw.describe()] if tw.active else [])
    return head, cond, said + ([f"by {author}"] if author else [])


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
    cond = ["true"] + [f"any(x IN early WHERE {c})" for c in time_bounds(tw, params, "x")]
    if author:
        params["author"] = author
        cond.append("any(x IN early WHERE x.author = $author)")
        said.append(f"by {author}")
    said = [x for x in said if x != "(merge commits left out)"] + ([tw.describe()] if tw.active else [])
    # a rename made it: not new — its first commit lists it among its renames, or (a commit's list holds
    # the first RENAMES_LISTED) a `renamed_to` edge leads to it (an edge from a merge alone does not count)
    cy = (
        f"{match} WITH f, c ORDER BY c.time, c.id WITH f, collect(c) AS cs {_ROOTS_FIRST}"
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
    return DevPlan("files_added", "files", cy + ret, params, expl, filters=said)


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
    p = files_added(scope, tw, author, params)
    p.shape = "files_newest" if newest else "files_oldest"
    params["files_top"] = k
    said = [x for x in p.filters if x]
    what = f"the {'file' if k == 1 else f'{k} files'} created {'last' if newest else 'first'}"
    merges = [] if any("merge commits left out" in x for x in said) else ["(merge commits left out)"]
    p.explanation = " ".join([what, *merges, *([", ".join(said)] if said else [])]).strip()
    return p


def by_age(rows: list[dict], p: DevPlan) -> list[dict]:
    """The first ``files_top`` of the created files by creation time (newest first for ``files_newest``);
    a tie at the cut is said in the explanation, not cut silently."""
    k = int(p.params["files_top"])
    newest = p.shape == "files_newest"
    ranked = sorted(rows, key=lambda r: (str(r.get("first") or ""), r["id"]), reverse=newest)
    if len(ranked) > k and ranked[k - 1].get("first") == ranked[k].get("first"):
        same = sum(1 for r in ranked if r.get("first") == ranked[k - 1].get("first"))
        p.explanation += f" ({same} files were created at {str(ranked[k - 1].get('first'))[:10]}, in the same second)"
    return ranked[:k]


def creators(engine, rows: list[dict], path: str) -> list[dict]:
    """Of a file's first commits (rows in time order), those that created it (git's status "A", else a hunk
    from nothing), when any did; else all of them (a store that cannot tell)."""
    made = [r for r in rows if (n := engine.store.get_node(r["id"])) is not None and _makes(n, path)]
    return made or rows


def keep_added(engine, rows: list[dict], params: dict | None = None) -> list[dict]:
    """The rows whose creating commit meets the plan's filters (``params``' since / until / author): one of the
    first-second non-merge commits when git's status says "A" there (in an older store: when none of them
    removed it), else the first of the file's next commits whose status is "A" (a descendant dated before
    its ancestor).  A file a merge brought in has a later change or its deletion as its first non-merge
    commit and no "A" after it: it was not added then."""
    params = params or {}
    by = {int(i) for r in rows for i in r.get("by") or []}
    nodes = engine.store.nodes_by_idx(by)
    later = {int(e[0]) for r in rows for e in r.get("early") or [] if int(e[0]) not in by}  # read once, if needed
    out: list[dict] = []
    for r in rows:
        path = str(r["id"])[5:]
        info = {int(idx): {"time": t, "author": who} for idx, t, who in r.get("early") or []}
        firsts = [(int(i), nodes[int(i)]) for i in r.get("by") or [] if int(i) in nodes]
        st = [file_status(n, path) for _, n in firsts]
        made = {"time": r.get("first"), "author": None}
        if None in st:  # an older reader: anything but a removal
            ok = not any(_removes(engine, n, path, {"id": n.id, "time": r.get("first")}) for _, n in firsts)
        elif "A" in st:
            ok = True
            made = info.get(next(i for (i, _), x in zip(firsts, st) if x == "A"), made)
        else:  # changed, not created, by its first commit: a later-dated one may have created it
            if later:
                nodes.update(engine.store.nodes_by_idx(later))
                later = set()
            ok = False
            for idx, t, who in r.get("early") or []:
                n = nodes.get(int(idx))
                if n is not None and _makes(n, path):  # (status, or a hunk from nothing where the list is cut)
                    ok, made = True, {"time": t, "author": who}
                    break
        if not firsts:
            ok = True
        if ok and _meets(made, r, params):
            out.append({**{k: v for k, v in r.items() if k not in ("by", "early")}, "first": made["time"]})
    return out


def _meets(made: dict, row: dict, params: dict) -> bool:
    """Whether the creating commit (its time and author; the first second's when unknown) meets the filters."""
    t = str(made.get("time") or row.get("first") or "")
    if params.get("since") and t < str(params["since"]) or params.get("until") and t >= str(params["until"]):
        return False
    if params.get("author") and made.get("author") is not None and made["author"] != params["author"]:
        return False
    return True


def files_deleted(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which files were deleted?": files whose latest change removed all their lines (checked against
    the stored hunk, as for one file), within the filters on that removing commit."""
    head, cond, said = _per_file_second(scope, tw, author, params, "DESC")
    cy = (  # the commits of the newest second that touched each file: the removal is among them when run
        f"{head} WHERE {' AND '.join(cond)} RETURN f.id AS id, f.title AS title, f.type AS type, "
        f"[x IN top | x.idx] AS candidates, c0.time AS last ORDER BY last DESC, id"
    )
    expl = "files removed " + ", ".join(["(their last change emptied them; merge commits left out)"] + said)
    return DevPlan("files_deleted", "files", cy, params, expl, filters=said)


def file_events(scope: Scope, params: dict) -> DevPlan:
    """ "What happened to F?", "F looks like it was created twice": the commits that added or removed F, oldest
    first (git's "new / deleted file mode" for F in each commit: ``git log --diff-filter=AD -- F``)."""
    params["f"] = scope.value
    cy = (
        f"MATCH (c:commit)-[:touches]->(f:file {{id: $f}}) WHERE {NON_MERGE} WITH DISTINCT c, f "
        f"ORDER BY c.time, c.author_time, c.id RETURN {C_RET}, f.id AS path"
    )
    expl = f"the commits that added or removed {scope.phrase}"
    return DevPlan("file_events", "commits", cy, params, expl, none_text=f"No commit added or removed {scope.phrase}.")


def keep_events(engine, rows: list[dict]) -> list[dict]:
    """The rows whose commit added ("A") or removed ("D") the row's ``path``, each with what it did."""
    idx = engine.store.lookup_idx([r["id"] for r in rows])
    nodes = engine.store.nodes_by_idx(idx.values())
    out = []
    for r in rows:
        node = nodes.get(idx.get(r["id"], -1))
        st = file_status(node, str(r["path"])[5:]) if node is not None else None
        if st in ("A", "D"):
            out.append(
                {**{k: v for k, v in r.items() if k != "path"}, "did": "added it" if st == "A" else "removed it"}
            )
    return out


def keep_removed(engine, rows: list[dict]) -> list[dict]:
    """The files one of whose newest commits removed them (see ``_removes``), with that commit as
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
                if (n := nodes.get(int(c))) is not None and _removes(engine, n, path, {**row, "id": n.id})
            ),
            None,
        )
        if gone is not None:
            out.append({**{k: v for k, v in r.items() if k != "candidates"}, "removed_by": gone.id})
    return out


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
    return DevPlan("count_files_now" if count else "files_now", "count" if count else "files", cy, params, expl)


def keep_present(engine, rows: list[dict]) -> list[dict]:
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


def files_by_recency(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, n: int | None) -> DevPlan:
    """ "Which file changed most recently?": files by their latest commit, newest first; without a number,
    the files of the newest commit(s) (the latest time)."""
    match, said = commit_match(scope, tw, author, params, touching=True)
    lim = n or MAX_ITEMS
    cy = (
        f"{match} RETURN f.id AS id, f.title AS title, f.type AS type, max(c.time) AS last "
        f"ORDER BY last DESC, id LIMIT {lim}"
    )
    expl = (f"the {n} most recently changed files " if n else "the most recently changed files ") + ", ".join(said)
    return DevPlan("files_latest_n" if n else "files_latest", "files", cy, params, expl.strip(), filters=said)


def latest_only(rows: list[dict]) -> list[dict]:
    """The rows that share the newest ``last`` time (the files of the latest change)."""
    return [r for r in rows if r.get("last") == rows[0].get("last")] if rows else rows


def files_most_changed(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which files change most often?": files ranked by the commits touching them (merges left out, as
    ``git log --no-merges --name-only`` counts), within the scope and filters."""
    match, said = commit_match(scope, tw, author, params, touching=True)
    cy = (
        f"{match} RETURN f.id AS id, f.title AS title, f.type AS type, count(DISTINCT c) AS commits "
        f"ORDER BY commits DESC, id LIMIT {MAX_ITEMS}"
    )
    expl = "files by the commits touching them " + ", ".join(said)
    total = f"{match} RETURN count(DISTINCT f) AS count"  # the list stops at MAX_ITEMS; the number does not
    return DevPlan("files_most_changed", "files", cy, params, expl, count_cypher=total, filters=said)


def dirs_most_changed(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which directories change most often?": each file's own folder ranked by the commits touching
    something in it (top-level files under "(top level)")."""
    match, said = commit_match(scope, tw, author, params, touching=True)
    cy = (
        f"{match} WITH c, substring(f.id, 5) AS p "
        "WITH c, CASE WHEN p CONTAINS '/' THEN left(p, size(p) - size(last(split(p, '/')))) ELSE '' END AS d "
        f"RETURN d AS dir, count(DISTINCT c) AS commits ORDER BY commits DESC, dir LIMIT {MAX_ITEMS}"
    )
    expl = "directories by the commits touching a file in them " + ", ".join(said)
    total = (
        f"{match} WITH substring(f.id, 5) AS p "
        "RETURN count(DISTINCT CASE WHEN p CONTAINS '/' THEN left(p, size(p) - size(last(split(p, '/')))) "
        "ELSE '' END) AS count"
    )
    return DevPlan("dirs_most_changed", "dirs", cy, params, expl.strip(), count_cypher=total, filters=said)


def largest_commits(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, n: int | None) -> DevPlan:
    """ "What was the biggest commit?": commits by the number of files they changed (merges left out: a
    merge's first-parent diff repeats its branch)."""
    match, said = commit_match(scope, tw, author, params, where=[NON_MERGE] if scope is None else None)
    k = n or 10
    cy = (
        f"{match} WITH DISTINCT c RETURN {C_RET}, c.files_total AS files "
        f"ORDER BY files DESC, c.time DESC, c.id LIMIT {k}"
    )
    said = said if scope is not None else ["(merge commits left out)"] + said
    expl = "the commits that changed the most files " + ", ".join(said)
    return DevPlan("largest_commits", "commits", cy, params, expl.strip(), filters=said)


_N_COMMITS = re.compile(r"\b(\d{1,3})\s+(?:commits|changes|patches)\b", re.I)


def largest_by_lines(scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, n: int | None) -> DevPlan:
    """ "Which commit added the most lines?": commits by the lines they added (to the scoped files, if any;
    merges left out), summed from the stored file lists when run."""
    if scope is None:
        match, said = commit_match(None, tw, author, params, where=[NON_MERGE])
        said = ["(merge commits left out)"] + said
        cy = f"{match} RETURN DISTINCT c.idx AS idx, {C_RET}, null AS path ORDER BY idx"
    else:  # the lines added to the scoped files only
        match, said = commit_match(scope, tw, author, params, touching=True)
        cy = f"{match} RETURN DISTINCT c.idx AS idx, {C_RET}, substring(f.id, 5) AS path ORDER BY idx, path"
    k = n or 10
    expl = f"the {'commit' if k == 1 else f'{k} commits'} that added the most lines " + ", ".join(said)
    out = DevPlan("largest_commits_lines", "commits", cy, params, expl.strip(), filters=said)
    out.params["lines_top"] = k
    return out


def co_changed(scope: Scope, tw: TimeWindow, author: str | None, params: dict) -> DevPlan:
    """ "Which files change together with F?": the other files of the commits touching F, by how many of
    those commits touched them (merges left out, as ``git log --no-merges -- F`` lists F's commits)."""
    match, said = commit_match(scope, tw, author, params)
    base = f"{match} WITH DISTINCT c MATCH (c)-[:touches]->(g:file) WHERE g.id <> $f_self "
    cy = (
        f"{base}RETURN g.id AS id, g.title AS title, g.type AS type, count(DISTINCT c) AS commits "
        f"ORDER BY commits DESC, id LIMIT {MAX_ITEMS}"
    )
    params["f_self"] = scope.value
    expl = f"files changed in the same commits as {scope.phrase}, by those commits " + ", ".join(
        w for w in said if not w.startswith("touching")
    )
    total = f"{base}RETURN count(DISTINCT g) AS count"
    return DevPlan("co_changed", "files", cy, params, expl.strip(), count_cypher=total, filters=said)


_TOGETHER = re.compile(
    r"\b(?:together|along ?side|along with|co-?chang\w*|at the same time|in the same commits?)\b", re.I
)


def ranks_commits_by_lines(words: str) -> bool:
    """ "Which commit added the most lines (to F)?": a ranking of commits by lines, not F's creation."""
    return bool(_COMMIT_WORD.search(words) and _LINES.search(words) and (_BIGGEST.search(words) or _MOST.search(words)))


def ranking(
    words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, n: int | None
) -> DevPlan | None:
    """A ranking of files or directories the words ask for, else None."""
    if ranks_commits_by_lines(words):
        if n is None and (m := _N_COMMITS.search(words)):
            n = int(m.group(1))  # "the 3 commits that added the most lines"
        return largest_by_lines(scope, tw, author, params, n)  # "which commit added the most lines?"
    if _BIGGEST.search(words) and _COMMIT_WORD.search(words):
        return largest_commits(scope, tw, author, params, n)
    if scope is not None and scope.kind == "file" and FILES.search(words) and _TOGETHER.search(words):
        return co_changed(scope, tw, author, params)
    if scope is not None and scope.kind == "file":
        return None
    if FILES.search(words) and (aged := files_by_age(words, scope, tw, author, params)) is not None:
        return aged  # "what is the oldest file?": by creation, not by the last change
    if _DIRS.search(words) and _OFTEN.search(words):
        return dirs_most_changed(scope, tw, author, params)
    if not FILES.search(words):
        return None
    if tw.active and _CREATED_WORDS.search(words) or _LISTY.search(words) and _CREATED_WORDS.search(words):
        return files_added(scope, tw, author, params)
    if DELETED.search(words) and (_LISTY.search(words) or tw.active):
        return files_deleted(scope, tw, author, params)
    if _RECENT.search(words) and not _OFTEN_ONLY.search(words):
        # "the files the last commit changed": the latest change's files, not one file
        return files_by_recency(scope, tw, author, params, None if _COMMIT_WORD.search(words) else n)
    if _OFTEN.search(words):
        return files_most_changed(scope, tw, author, params)
    return None


_RENAMED_WORDS = re.compile(r"\brenam\w*|\bmoved\b", re.I)


def renamed_files(words: str, tw: TimeWindow, author: str | None, params: dict, count: bool) -> DevPlan | None:
    """ "Which files were renamed?", "how many renames are there?": the paths a non-merge commit's rename moved
    away (their ``renamed_to`` edges, whose new path that commit lists among its renames, or whose commit lists
    the first 100 only): what ``git log -M --diff-filter=R`` lists; with their new paths.  No date or author
    is kept on the edge, so a filtered question is not read here."""
    if tw.active or author or not _RENAMED_WORDS.search(words) or not (FILES.search(words) or "renames" in words):
        return None
    base = (  # a rename a non-merge commit made (a merge's first-parent diff repeats its branch's renames)
        f"MATCH (o:file)-[:renamed_to]->(n:file)<-[:touches]-(c:commit) WHERE {NON_MERGE} AND "
        f"(substring(n.id, 5) IN coalesce(c.renamed_into, []) "
        f"OR size(coalesce(c.renamed_into, [])) >= {RENAMES_LISTED})"
    )
    total = f"{base} RETURN count(DISTINCT o) AS count"
    expl = "files renamed (the paths a rename moved away)"
    if count:
        return DevPlan("count_renamed", "count", total, params, expl)
    cy = (
        f"{base} WITH o, collect(DISTINCT substring(n.id, 5)) AS to "  # (the new paths of those renames)
        f"RETURN o.id AS id, o.title AS title, o.type AS type, to AS renamed_to ORDER BY id LIMIT {MAX_ITEMS}"
    )
    return DevPlan("renamed_files", "files", cy, params, expl, count_cypher=total)


def added_or_removed(
    words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict
) -> DevPlan | None:
    """ "How many files were added (removed) in 2023?": the number of files ``files_added`` (``files_deleted``)
    lists, not of the files the period's commits touched; else None."""
    if _CREATED_WORDS.search(words):
        p = files_added(scope, tw, author, params)
    elif DELETED.search(words):
        p = files_deleted(scope, tw, author, params)
    else:
        return None
    return dataclasses.replace(p, shape="count_" + p.shape, kind="count")


def row_figure(r: dict) -> str:
    """What an answer line adds after a file: its commit count (a ranking) or its last change (by recency)."""
    if "commits" in r:
        return f": {r['commits']} commit" + ("" if r["commits"] == 1 else "s")
    if "lines" in r:
        return f": {r['lines']:,} lines added"
    if "files" in r and str(r.get("id", "")).startswith("commit:"):
        return f": {r['files']} file" + ("" if r["files"] == 1 else "s")
    if "renamed_to" in r:
        return ": renamed to " + ", ".join(r["renamed_to"] or [])
    if "did" in r:
        return f": {r['did']}"
    if "removed_by" in r:
        return f": removed by {str(r['removed_by'])[7:17]} ({str(r.get('last') or '')[:10]})"
    if "first" in r:
        return f": added {str(r.get('first') or '')[:10]}"
    if "last" in r:
        return f": last changed {str(r.get('last') or '')[:10]}"
    return ""


def dirs_answer(p: DevPlan, rows: list[dict], show: int = 10, total: int | None = None) -> tuple[dict, str, list[str]]:
    """``(result, answer, refs)`` of a table of groups — directories by commits, or commits per year or
    month — (groups are no nodes: nothing to cite)."""
    periods = p.kind == "periods"
    names = [str(r["period"]) if periods else r["dir"] or "(top level)" for r in rows]
    n_all = total if total is not None else len(rows)
    result: dict = {"kind": p.kind, "shape": p.shape, "items": names, "total": n_all}
    if periods:
        result["counts"] = {n: int(r["commits"]) for n, r in zip(names, rows)}
    noun = "periods" if periods else "directories"
    if not rows:
        return result, p.none_text or f"No {noun}: {p.explanation} — none in the store.", []
    show = 100 if periods else show  # a year-by-year table is read whole
    more = f" (showing {show} of {n_all})" if n_all > show else ""
    lines = [f"- {n}: {r['commits']} commit" + ("" if r["commits"] == 1 else "s") for n, r in zip(names, rows[:show])]
    return result, f"{n_all} {noun} — {p.explanation}{more}:\n" + "\n".join(lines), []
