"""Running a developer plan and writing its answer: every row read, checked by the plan's own steps, then said."""

from __future__ import annotations

import dataclasses
import re
import weakref

from .dev_rows import add_renamed_away
from .devplan import (
    MAX_ITEMS,
    DevPlan,
    all_rows,
)
from .shapes.file_rankings import dirs_answer, row_figure
from .words import SHOW


def _one_root(engine) -> bool:
    """Whether the history has exactly one root commit (``$one_root`` of ``devplan.by_time``), per store state."""
    seq = engine.store.current_seq()
    hit = _ROOTS_SEEN.get(engine)
    if hit is None or hit[0] != seq:
        n = engine.cypher("MATCH (c:commit) WHERE size(coalesce(c.parents, [])) = 0 RETURN count(c) AS n")["rows"]
        hit = _ROOTS_SEEN[engine] = (seq, bool(n) and int(n[0]["n"]) == 1)
    return hit[1]


_ROOTS_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rows(engine, p: DevPlan) -> list[dict]:
    """The plan's rows: its query (every page when its rows are checked one by one), its fallback when the
    query found nothing, the commits that renamed its scope away, then the steps its shape named, in order.
    ``p`` is the runner's copy: a step may add to its explanation (a tie at a cut), never to the shape's plan."""
    if "$one_root" in p.cypher or p.count_cypher and "$one_root" in p.count_cypher:
        p.params["one_root"] = _one_root(engine)
    rows = all_rows(engine, p) if p.read_all else engine.cypher(p.cypher, p.params)["rows"]
    if not rows and p.fallback:
        rows = engine.cypher(p.fallback[0], p.params)["rows"]
        p.explanation += f" ({p.fallback[1]})"
    if p.extra:
        rows = add_renamed_away(engine, p, rows)
    for step in p.steps:
        rows = step(engine, p, rows)
    return rows


_EVIDENCE = ("added_by", "removed_by")  # a file row's commit that added or removed it: cited with the file


def run_plan(engine, p: DevPlan) -> tuple[list[dict], dict, str, list[str]]:
    """``(rows, result, answer, refs)`` for a plan (run on a copy: the plan the shape made is not changed)."""
    p = dataclasses.replace(p, params=dict(p.params))
    rows = _rows(engine, p)
    scope = ("; ".join(p.filters)) if p.filters else ""
    if p.kind == "count" and not rows and p.none_text:
        return rows, {"kind": "count", "shape": p.shape, "value": None}, p.none_text, []
    if p.kind == "count":
        return rows, *_count_answer(engine, p, rows)
    if p.kind == "author":
        if not rows or not rows[0].get("author"):
            return (
                rows,
                {"kind": "author", "shape": p.shape, "value": None},
                p.none_text or "Not found: no commit matches " + p.explanation + ".",
                [],
            )
        r = rows[0]
        result = {"kind": "author", "shape": p.shape, "value": r["author"], "items": [r["id"]]}
        line = f"{r['author']} — {p.explanation}: {_short(r)}"
        return rows, result, f"{line}\n[refs: {r['id']}]", [r["id"]]
    if p.kind == "authors":
        total = len(rows)
        if p.count_cypher and total >= min(p.row_limit, MAX_ITEMS):  # the list is cut; the number of people is not
            total = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
        result = {"kind": "authors", "shape": p.shape, "items": [r["author"] for r in rows], "total": total}
        if not rows:
            return rows, result, p.none_text or f"No commits {scope or 'match'}.", []
        lines = [
            f"- {r['author']}: {_tally(r)}" + (f" (last {str(r['last'])[:10]})" if r.get("last") else "")
            for r in rows[:SHOW]
        ]
        whose = f"of the commits {scope}" if scope else "of all commits, most commits first"
        if p.heads_with_explanation:
            whose = "— " + p.explanation
        noun = p.noun if total != 1 else {"people": "person", "authors": "author"}.get(p.noun, p.noun)
        n_shown = min(SHOW, len(rows))
        head = f"{total} {noun} {whose}" + (f" (showing {n_shown} of {total})" if total > n_shown else "")
        return rows, result, head + ":\n" + "\n".join(lines), []
    if p.kind in ("dirs", "periods"):
        groups: int | None = None
        if p.count_cypher and len(rows) >= MAX_ITEMS:  # the ranking stops at MAX_ITEMS; the number does not
            groups = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
        result, text, refs = dirs_answer(p, rows, total=groups)
        other = _busiest_by_author_date(engine, p, rows)
        if other is not None:
            result["by_author_date"] = list(other)
            text += f"\nBy author date (when the changes were written) the first is {other[0]}: {other[1]} commits."
        return rows, result, text, refs
    total = len(rows)
    if p.count_cypher and len(rows) >= MAX_ITEMS:
        total = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
    ids = [r["id"] for r in rows[:MAX_ITEMS]]  # (a shape checked row by row, e.g. files removed, has no LIMIT)
    result = {"kind": p.kind, "shape": p.shape, "items": ids, "total": total}
    noun = {"commits": "commits", "files": "files", "prs": "PRs", "tags": "tags", "issues": "issues"}[p.kind]
    written = _listed_by_author_date(engine, p, rows) if p.kind == "commits" else None
    if not rows:
        none: list[str] = []
        said = p.none_text or f"No {noun}: {p.explanation} — none in the store."
        return rows, result, _with_author_dates(said, result, written, none), none
    shown = rows[:SHOW]
    if total == 1:
        noun = noun[:-1]  # "1 commit", "1 file", "1 tag", "1 PR", "1 issue"
    head = (
        f"{total} {noun} — {p.explanation}"
        + (f" (showing {len(shown)} of {total})" if total > len(shown) else "")
        + ":"
    )
    counted = [row_figure(r) for r in shown]  # files_most_changed: commits; by recency: the date
    lines = [f"- {_short(r)}{n} [{r['id']}]" for r, n in zip(shown, counted)]
    refs = [r["id"] for r in shown if r.get("in_repo", True)]  # (a sha this history does not hold: no node)
    refs += list(dict.fromkeys(r[k] for r in shown for k in _EVIDENCE if r.get(k)))  # the commits that did it
    text = _with_author_dates(head + "\n" + "\n".join(lines), result, written, refs)
    return rows, result, text + (f"\n[refs: {', '.join(refs)}]" if refs else ""), refs


def _with_author_dates(text: str, result: dict, other: list[dict] | None, refs: list[str]) -> str:
    """``text`` with the period's commits by author date after it, when they are others
    (:func:`_listed_by_author_date`); their ids go to ``result`` and ``refs``."""
    if other is None:
        return text
    result["by_author_date"] = [r["id"] for r in other]
    text += f"\nDates are commit dates (as `git log --since` reads them); by author date: {len(other)} commit"
    text += ("s" if len(other) != 1 else "") + " (listed with their commit dates)"
    text += "".join(f"\n- {_short(r)} [{r['id']}]" for r in other[:SHOW])
    refs += [r["id"] for r in other[:SHOW] if r["id"] not in refs]
    return text


def _count_answer(engine, p: DevPlan, rows: list[dict]) -> tuple[dict, str, list[str]]:
    """``(result, answer, refs)`` of a count, with the author-date count beside it where that differs."""
    n = rows[0]["count"] if rows else 0
    result = {"kind": "count", "shape": p.shape, "value": int(n)}
    cited = f"\n[refs: {', '.join(p.cites)}]" if p.cites else ""
    by_author = _by_author_date(engine, p)
    if by_author is not None and by_author != n:
        result["by_author_date"] = int(by_author)
        cited = f" Dates are commit dates (as `git log --since` reads them); by author date: {by_author}." + cited
    return result, f"{n} — {p.explanation}.{cited}", list(p.cites)


_COMMIT_DATE = re.compile(r"\bc\.time (>=|<) \$(since|until)\b")
_AUTHOR_DATE = "coalesce(c.author_date, c.time)"  # when the change was written (commit time where unknown)


def _by_author_date(engine, p: DevPlan) -> int | None:
    """The count with the question's dates read as author dates (when the change was written; a patch applied
    later keeps it), or None when the count has no dates.  Periods are commit dates, as git's ``--since`` and
    ``--until`` read them; where the two differ, the answer gives both."""
    if not _COMMIT_DATE.search(p.cypher):
        return None
    rows = _rows(engine, _author_dated(p))
    return int(rows[0]["count"]) if rows else 0


def _author_dated(p: DevPlan) -> DevPlan:
    """A copy of ``p`` whose period bounds read the author date instead of the commit date."""
    swap = lambda q: _COMMIT_DATE.sub(_AUTHOR_DATE + r" \1 $\2", q) if q else q  # noqa: E731
    return dataclasses.replace(p, params=dict(p.params), cypher=swap(p.cypher), extra=swap(p.extra))


def _listed_by_author_date(engine, p: DevPlan, rows: list[dict]) -> list[dict] | None:
    """The commits of a period's list with its dates read as author dates, when they are not the same commits
    ("what did Amy commit in aug 2020": two written in August were committed in October); else None."""
    if not _COMMIT_DATE.search(p.cypher) or len(rows) >= MAX_ITEMS:
        return None
    alt = _rows(engine, _author_dated(p))
    return alt if {r["id"] for r in alt} != {r["id"] for r in rows} else None


def _busiest_by_author_date(engine, p: DevPlan, rows: list[dict]) -> tuple[str, int] | None:
    """The busiest period by author date when it is not the busiest by commit date (a series written in one month
    and applied in another), else None."""
    if not p.shape.startswith("busiest_") or not rows or "c.time" not in p.cypher:
        return None
    alt = engine.cypher(p.cypher.replace("c.time", _AUTHOR_DATE), p.params)["rows"]
    if not alt or str(alt[0]["period"]) == str(rows[0]["period"]):
        return None
    return str(alt[0]["period"]), int(alt[0]["commits"])


def _tally(r: dict) -> str:
    """ "12 commits" / "3 PRs" / "1,200 lines" of an authors row."""
    if "lines" in r:
        return f"{r['lines']:,} lines added in {r['commits']} commit" + ("" if r["commits"] == 1 else "s")
    n, noun = (r["prs"], "PR") if "prs" in r else (r["commits"], "commit")
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _short(r: dict) -> str:
    rid = r.get("id", "")
    if rid.startswith("commit:"):
        bits = [rid[7:17], str(r.get("time") or "")[:10], r.get("author") or "", r.get("title") or ""]
        return " ".join(b for b in bits if b)
    if rid.startswith("tag:"):  # a tag's name and when it was made ("when was the first version tagged?")
        return " ".join(b for b in (rid[4:], str(r.get("time") or "")[:10]) if b)
    title = r.get("title")
    if not title or title in (rid, rid.removeprefix("file:")):
        return rid.removeprefix("file:")  # a file's title is its path: said once (the [ref] names the node)
    return f"{title} ({rid})"
