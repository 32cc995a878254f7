"""Rankings of files, directories and commits: the most changed, the most recently changed, the largest commits,
the files changed together, the renamed files; and how a ranked row is said.
"""

from __future__ import annotations

import re

from ...graphdb.projection import RENAMES_LISTED
from ..devplan import C_RET, MAX_ITEMS, NON_MERGE, DevPlan, Scope, commit_match, tag_filter, time_bounds
from ..timephrase import TimeWindow
from ..words import FILE_WORDS as FILES
from .file_lines import LINES, N_COMMITS, largest_by_lines
from .file_removal import DELETED, files_deleted
from .file_sets import CREATED_WORDS, files_added, files_by_age
from .shape import Shape

_RECENT = re.compile(r"\b(most recent(?:ly)?|latest|last|newest|recent(?:ly)?|lately)\b", re.I)


_OFTEN = re.compile(r"\b(most|top|hottest|busiest|often|frequent\w*)\b", re.I)


_OFTEN_ONLY = re.compile(
    r"\b(often|frequent\w*|hottest|busiest|most (?:changed|commits|active|edited|touched))\b", re.I
)


_DIRS = re.compile(r"\b(director(?:y|ies)|dirs?|folders?|subdirector(?:y|ies))\b", re.I)


_BIGGEST = re.compile(r"\b(biggest|largest|huge\w*|most files)\b", re.I)


_COMMIT_WORD = re.compile(r"\b(?:commits?|changes?|patch(?:es)?)\b", re.I)


_MOST = re.compile(r"\bmost\b", re.I)


LISTY = re.compile(r"\b(which|what|list|show)\b", re.I)


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
    if n:
        return DevPlan("files_latest_n", "files", cy, params, expl.strip(), filters=said)
    return DevPlan("files_latest", "files", cy, params, expl.strip(), filters=said, steps=(latest_only,))


def latest_only(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The rows that share the newest ``last`` time (the files of the latest change)."""
    return [r for r in rows if r.get("last") == rows[0].get("last")] if rows else rows


def files_most_changed(
    scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, people: bool = False
) -> DevPlan:
    """ "Which files change most often?": files ranked by the commits touching them (merges left out, as
    ``git log --no-merges --name-only`` counts), within the scope and filters; with ``people`` ("touched by the
    most authors"), by the distinct authors of those commits."""
    match, said = commit_match(scope, tw, author, params, touching=True)
    key = "authors" if people else "commits"
    counted = "count(DISTINCT c.author)" if people else "count(DISTINCT c)"
    cy = (
        f"{match} RETURN f.id AS id, f.title AS title, f.type AS type, {counted} AS {key} "
        f"ORDER BY {key} DESC, id LIMIT {MAX_ITEMS}"
    )
    expl = f"files by the {'authors of the ' if people else ''}commits touching them " + ", ".join(said)
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


# "what else changes when someone edits F", "what else gets touched with F": the files changed beside it
_WHAT_ELSE = re.compile(
    r"\bwhat\s+else\s+(?:changes?|gets?\s+(?:changed|touched|edited)|is\s+(?:changed|touched|edited)|"
    r"(?:do|does|did)\s+(?:\w+\s+){0,2}(?:change|touch|edit))\b",
    re.I,
)
_COMMITS_ASKED = re.compile(r"\b(?:which|what|how\s+many)\s+(?:commits?|patch(?:es)?|prs?|pull\s+requests?)\b", re.I)


def _asks_co_changed(words: str) -> bool:
    """Whether a question about one file asks for the files changed with it: "files changed together with F",
    "what changes together with F most often", "what else changes when someone edits F" (not "which commits
    changed F together with G": commits)."""
    if _COMMITS_ASKED.search(words):
        return False
    together = _TOGETHER.search(words) and (FILES.search(words) or "what" in words.lower())
    return bool(_WHAT_ELSE.search(words) or together)


def ranks_commits_by_lines(words: str) -> bool:
    """ "Which commit added the most lines (to F)?": a ranking of commits by lines, not F's creation."""
    return bool(_COMMIT_WORD.search(words) and LINES.search(words) and (_BIGGEST.search(words) or _MOST.search(words)))


def ranking(
    words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, n: int | None
) -> DevPlan | None:
    """A ranking of files or directories the words ask for, else None."""
    if ranks_commits_by_lines(words):
        if n is None and (m := N_COMMITS.search(words)):
            n = int(m.group(1))  # "the 3 commits that added the most lines"
        return largest_by_lines(scope, tw, author, params, n)  # "which commit added the most lines?"
    if _BIGGEST.search(words) and _COMMIT_WORD.search(words):
        return largest_commits(scope, tw, author, params, n)
    if scope is not None and scope.kind == "file" and _asks_co_changed(words):
        return co_changed(scope, tw, author, params)
    if scope is not None and scope.kind == "file":
        return None
    if FILES.search(words) and (aged := files_by_age(words, scope, tw, author, params)) is not None:
        return aged  # "what is the oldest file?": by creation, not by the last change
    if _DIRS.search(words) and _OFTEN.search(words):
        return dirs_most_changed(scope, tw, author, params)
    if not FILES.search(words) and not _names_entries(words, scope):
        return None
    if tw.active and CREATED_WORDS.search(words) or LISTY.search(words) and CREATED_WORDS.search(words):
        return files_added(scope, tw, author, params)
    if DELETED.search(words) and (LISTY.search(words) or tw.active):
        return files_deleted(scope, tw, author, params)
    if _RECENT.search(words) and not _OFTEN_ONLY.search(words):
        # "the files the last commit changed": the latest change's files, not one file
        return files_by_recency(scope, tw, author, params, None if _COMMIT_WORD.search(words) else n)
    if _OFTEN.search(words):
        return files_most_changed(scope, tw, author, params, people=bool(_BY_PEOPLE.search(words)))
    return None


# "which script in scripts/ …", "what page under docs/ …": the noun names the directory's files
_ENTRY_NOUN = re.compile(r"\b(?:which|what)\s+([a-z]+)\s+(?:in|under|inside|within|below|of)\b", re.I)
_NOT_ENTRIES = re.compile(
    r"^(?:commits?|changes?|patch(?:es)?|prs?|merges?|authors?|people|persons?|contributors?|committers?|"
    r"developers?|year|month|week|day|date|time|version|release|tag|one|is|was|are|were)$",
    re.I,
)


def _names_entries(words: str, scope: Scope | None) -> bool:
    """Whether "which X in DIR" names DIR's files by another noun (a script, a page, a header)."""
    m = _ENTRY_NOUN.search(words)
    return bool(scope is not None and scope.kind == "dir" and m and not _NOT_ENTRIES.match(m.group(1)))


_RENAMED_WORDS = re.compile(r"\brenam\w*|\bmoved\b", re.I)
# "the files touched by the most authors": ranked by people, not by commits
_BY_PEOPLE = re.compile(
    r"\b(?:most|many|more)\s+(?:different\s+|distinct\s+)?(?:authors|people|contributors|developers)\b", re.I
)
_WHAT = re.compile(r"^\W*(?:what|which|anything)\b", re.I)  # "what was renamed in 2024?"


def renamed_files(words: str, tw: TimeWindow, author: str | None, params: dict, count: bool) -> DevPlan | None:
    """ "Which files were renamed?", "how many renames are there?": the paths a non-merge commit's rename moved
    away (their ``renamed_to`` edges, whose new path that commit lists among its renames, or whose commit lists
    the first 100 only): what ``git log -M --diff-filter=R`` lists; with their new paths.  "What was renamed in
    2024?" (no file word: what else is renamed) keeps the renames whose commit meets the dates, tag range and
    author."""
    asks = FILES.search(words) or "renames" in words or _WHAT.search(words)
    if not _RENAMED_WORDS.search(words) or not asks:
        return None
    filters = time_bounds(tw, params, "c") + tag_filter(tw, params, "c")
    if author:
        params["author"] = author
        filters.append("c.author = $author")
    base = (  # a rename a non-merge commit made (a merge's first-parent diff repeats its branch's renames)
        f"MATCH (o:file)-[:renamed_to]->(n:file)<-[:touches]-(c:commit) WHERE {NON_MERGE} AND "
        f"(substring(n.id, 5) IN coalesce(c.renamed_into, []) "
        f"OR size(coalesce(c.renamed_into, [])) >= {RENAMES_LISTED})" + "".join(f" AND {f}" for f in filters)
    )
    total = f"{base} RETURN count(DISTINCT o) AS count"
    said = ([tw.describe()] if tw.active else []) + ([f"by {author}"] if author else [])
    expl = "files renamed (the paths a rename moved away)" + "".join(f", {x}" for x in said)
    if count:
        return DevPlan("count_renamed", "count", total, params, expl)
    cy = (
        f"{base} WITH o, collect(DISTINCT substring(n.id, 5)) AS to "  # (the new paths of those renames)
        f"RETURN o.id AS id, o.title AS title, o.type AS type, to AS renamed_to ORDER BY id LIMIT {MAX_ITEMS}"
    )
    return DevPlan("renamed_files", "files", cy, params, expl, count_cypher=total)


def row_figure(r: dict) -> str:
    """What an answer line adds after a file: its commit count (a ranking) or its last change (by recency)."""
    if "fixed_by" in r:  # most_fixed.py: how many fixing commits' Fixes: trailers name it
        n = r["fixed_by"]
        return (
            f": named by {n} Fixes: trailer"
            + ("" if n == 1 else "s")
            + ("" if r.get("in_repo") else " (not in this history)")
        )
    if "commits" in r:
        return f": {r['commits']} commit" + ("" if r["commits"] == 1 else "s")
    if "authors" in r:
        return f": {r['authors']} author" + ("" if r["authors"] == 1 else "s")
    if "lines" in r:
        return f": {r['lines']:,} lines added"
    if "files" in r and str(r.get("id", "")).startswith("commit:"):
        return f": {r['files']} file" + ("" if r["files"] == 1 else "s")
    for key, said in (("renamed_to", "renamed to "), ("renamed_from", "renamed here from ")):
        paths = r.get(key)  # a list from the rename metadata; one node id from the edge fallback
        if paths:
            return ": " + said + ", ".join([paths] if isinstance(paths, str) else paths)
    if "did" in r:
        return f": {r['did']}"
    if "removed_by" in r:
        return f": removed by {str(r['removed_by'])[7:17]} ({str(r.get('last') or '')[:10]})"
    if "first" in r:
        by = f" by {str(r['added_by'])[7:17]}" if r.get("added_by") else ""
        return f": added {str(r.get('first') or '')[:10]}{by}"
    if "last" in r:
        last = str(r.get("last") or "")  # a time (by recency) or the commit itself (the files there now)
        return f": last changed by {last[7:17]}" if last.startswith("commit:") else f": last changed {last[:10]}"
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


RENAMED_FILES = Shape(
    "renamed_files",
    lambda engine, q: None if q.scope or q.wants_prs else renamed_files(q.words, q.tw, q.author, q.params, q.count),
    doc="which files were renamed; how many",
)
