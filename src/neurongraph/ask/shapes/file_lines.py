"""Lines: how long a file is, how many lines commits added or removed, who wrote the most lines, the commits
that changed the most lines; summed from the stored diffs after the query, as ``git log --numstat`` adds them.
"""

from __future__ import annotations

import functools
import re

from ...times import to_epoch
from ..devplan import C_RET, MAX_ITEMS, NON_MERGE, DevPlan, Scope, commit_match
from ..timephrase import TimeWindow

LINES = re.compile(r"\blines?\b", re.I)


_ADDED_WORDS = re.compile(r"\b(add\w*|insert\w*|writ\w*|wrote|new)\b", re.I)


_REMOVED_WORDS = re.compile(r"\b(remov\w*|delet\w*|drop\w*)\b", re.I)


def count_lines(words: str, scope: Scope | None, tw: TimeWindow, author: str | None, params: dict) -> DevPlan | None:
    """ "How many lines were added to F?": the line counts of the scoped commits' changes to the scoped
    files, added, removed or both (what ``git log --no-merges --numstat`` adds up; a binary file counts
    none), summed from each commit's stored file list when run."""
    if not LINES.search(words) or scope is not None and scope.kind in ("all", "any"):
        return None
    added, removed = bool(_ADDED_WORDS.search(words)), bool(_REMOVED_WORDS.search(words))
    side = "added" if added and not removed else "deleted" if removed and not added else "changed"
    match, said = commit_match(scope, tw, author, params, touching=True)
    what = {"added": "lines added", "deleted": "lines removed", "changed": "lines changed (added + removed)"}[side]
    cy = f"{match} RETURN DISTINCT c.idx AS idx, substring(f.id, 5) AS path"
    expl = f"{what} by the commits " + ", ".join(said)
    step = functools.partial(sum_lines, side=side)
    return DevPlan(f"count_lines_{side}", "count", cy, params, expl, filters=said, steps=(step,))


_LENGTH = re.compile(
    r"\bhow long is\b|\bhow (?:big|large) is\b|\bline count\b|\blines? of code\b"
    r"|\blines?\b[^?]*\b(?:ha(?:ve|s|d)|contain\w*|long)\b|\b(?:ha(?:ve|s|d)|contain\w*)\b[^?]*\blines?\b"
    r"|\blines?\s+(?:are|were)\s+(?:there\s+)?in\b|\bwc\s+-l\b|\bhow\s+many\s+lines\s+(?:in|of|is|are)\b"
    r"|\bsize\s+of\b[^?]*\bin\s+lines\b",
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
    none = (
        f"Not known: no line count for {scope.phrase} — its stored diffs do not give one (a binary or empty file, "
        "a store without code, or a generated file over the ingest's hunk caps)."
    )
    expl = f"lines in {scope.phrase} {when}"
    return DevPlan("file_lines", "count", cy, params, expl, none_text=none, steps=(file_lines,))


def file_lines(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """``[{"count": N}]`` for a ``file_lines`` plan, or ``[]`` when the stored diffs cannot say (or the file
    is not in the store: no row)."""
    if not rows:
        return []
    until = p.params.get("length_until")
    as_of = to_epoch(until) - 1e-3 if until else None  # the window's end is exclusive
    n = engine.code_history.line_count(str(p.params["f"])[5:], as_of)
    return [] if n is None else [{"count": n}]


def sum_lines(engine, p: DevPlan, rows: list[dict], side: str = "changed") -> list[dict]:
    """``[{"count": N}]``: the ``side`` (added, deleted, changed) of the line counts of each (commit, path) row,
    read from the commits' stored file lists (their ``-U0`` hunks where a long list was cut)."""
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


def lines_by_author(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
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


def commits_by_lines(engine, p: DevPlan, rows: list[dict], n: int = 10) -> list[dict]:
    """The ``n`` commits of ``rows`` (``idx`` + the commit's columns) that added the most lines, most first;
    each row gains ``lines``."""
    first: dict[int, dict] = {}
    for r in rows:  # one row per (commit, scoped path); path None: the whole commit
        first.setdefault(int(r["idx"]), {k: v for k, v in r.items() if k not in ("idx", "path")})
    added = {i: a for i, (a, _) in _line_counts(engine, _paths_per_commit(rows)).items()}
    ranked = sorted(first, key=lambda i: (-added.get(i, 0), str(first[i].get("time") or ""), first[i]["id"]))
    return [{**first[i], "lines": added.get(i, 0)} for i in ranked[:n]]


N_COMMITS = re.compile(r"\b(\d{1,3})\s+(?:commits|changes|patches)\b", re.I)


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
    step = functools.partial(commits_by_lines, n=k)
    return DevPlan(
        "largest_commits_lines", "commits", cy, params, expl.strip(), filters=said, steps=(step,), read_all=True
    )
