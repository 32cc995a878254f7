"""Row steps shared by shapes (``DevPlan.steps``): the first commit of a same-second tie, ``git log -N`` from the
tip, the root first, counts of checked rows; and the commits that renamed a scope away, added to any plan's rows.

Why steps: what git would say is sometimes more than one query can compute (clock skew, a tie in one second, a
removal told from the stored hunks), so a shape names the checks its rows need and the runner applies them in
order; the runner itself knows no shape.
"""

from __future__ import annotations

import heapq

from .devplan import (
    C_RET,
    DevPlan,
)


def count_rows(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """``[{"count": N}]``: the number of rows that the steps before kept (files checked one by one)."""
    return [{"count": len(rows)}]


def count_people(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """``[{"count": N}]``: the number of distinct authors in the one ``authors`` row."""
    return [{"count": len(set(rows[0]["authors"])) if rows else 0}]


def from_tip(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """The latest ``len(rows)`` commits as ``git log -N`` lists them: :func:`walk_from_tip`."""
    return walk_from_tip(engine, len(rows), rows)


def root_first(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """ "The first commit" of the whole history is a root (no parent), the one ``git log --reverse`` lists
    first, even when a child of it is dated earlier; the other rows of "the first N" follow by time.  With
    one root ``devplan.by_time`` has ordered it first already; this picks the oldest of several roots."""
    if not rows:
        return rows
    roots = engine.cypher(
        f"MATCH (c:commit) WHERE size(coalesce(c.parents, [])) = 0 RETURN {C_RET}, c.parents AS parents "
        "ORDER BY time, id LIMIT 1"
    )["rows"]
    if not roots:
        return rows
    return roots + [r for r in rows if r["id"] != roots[0]["id"]][: len(rows) - 1]


def earliest(engine, rows: list[dict]) -> list[dict]:
    """The first commit of rows ordered by time.  Commits of the same second (a rebase, ``git am``, an
    import) are told apart by ancestry: one that reaches another through same-second parents comes after
    it; then by author time."""
    if not rows:
        return rows
    tied = [r for r in rows if r.get("time") == rows[0].get("time")]
    if len(tied) > 1:
        ids = {r["id"] for r in tied}
        later = {r["id"] for r in tied if _reaches(engine, r, ids - {r["id"]}, rows[0].get("time"))}
        tied = [r for r in tied if r["id"] not in later] or tied
    tied.sort(key=lambda r: (r.get("author_time") or 0, r["id"]))
    return [tied[0]]


def newest(engine, p, rows: list[dict]) -> list[dict]:
    """The newest of rows ordered newest first: of commits of the same second (a series applied by ``git am``
    at once), the one no other of them reaches through same-second parents, as ``git log -1`` lists it."""
    if len(rows) < 2 or "parents" not in rows[0]:
        return rows[:1]
    t = rows[0].get("time")
    tied = [r for r in rows if r.get("time") == t]
    if len(tied) > 1:
        reached = {o["id"] for r in tied for o in tied if o is not r and _reaches(engine, r, {o["id"]}, t)}
        tied = [r for r in tied if r["id"] not in reached] or tied
    return tied[:1]


def _reaches(engine, row: dict, targets: set[str], t, limit: int = 64) -> bool:
    """Does ``row`` reach one of ``targets`` through parents committed in the same second ``t``?"""
    frontier = [f"commit:{p}" for p in row.get("parents") or []]
    seen: set[str] = set()
    while frontier and len(seen) < limit:
        if targets & set(frontier):
            return True
        seen.update(frontier)
        got = engine.cypher(
            "MATCH (c:commit) WHERE c.id IN $ids AND c.time = $t RETURN c.parents AS parents", {"ids": frontier, "t": t}
        )["rows"]
        frontier = [f"commit:{p}" for g in got for p in (g["parents"] or []) if f"commit:{p}" not in seen]
    return False


def walk_from_tip(engine, n: int, rows: list[dict]) -> list[dict]:
    """ "The latest N commits" as ``git log -N`` lists them: from the newest commit, always the newest
    commit whose child was already listed.  Committer times are not monotonic along history (a commit
    dated after its own child: clock skew, mirrors), so the N newest by time can differ."""
    if not rows:
        return rows
    tip = _tip(engine, rows[0])
    seen = {tip["id"]}
    heap: list = []
    out: list[dict] = []
    nxt: dict | None = tip
    while nxt is not None and len(out) < n:
        out.append(nxt)
        parents = [f"commit:{p}" for p in (nxt.get("parents") or []) if f"commit:{p}" not in seen]
        if parents:
            seen.update(parents)
            got = engine.cypher(
                f"MATCH (c:commit) WHERE c.id IN $ids RETURN {C_RET}, c.parents AS parents", {"ids": parents}
            )["rows"]
            for g in got:
                heapq.heappush(heap, (_newest_first(g.get("time")), g["id"], g))
        nxt = heapq.heappop(heap)[2] if heap else None
    return out


def _tip(engine, row: dict, limit: int = 50) -> dict:
    """The head of history from the newest commit by time: while some commit has it as a parent (a child
    dated earlier), go to the newest such child."""
    for _ in range(limit):
        kids = engine.cypher(
            f"MATCH (c:commit) WHERE $sha IN c.parents RETURN {C_RET}, c.parents AS parents ORDER BY time DESC LIMIT 1",
            {"sha": row["id"][7:]},
        )["rows"]
        if not kids:
            return row
        row = kids[0]
    return row


def _newest_first(t) -> tuple:
    """A heap key that pops the newest ISO time first."""
    return tuple(-ord(ch) for ch in str(t or ""))


def add_renamed_away(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """Commits that moved a path of the scope elsewhere touch only the new path, yet ``git log -- SCOPE``
    lists them: add those that touch nothing in the scope (a count adds their number)."""
    extra = engine.cypher(p.extra or "", p.params)["rows"]
    if not extra:
        return rows
    if rows and "authors" in rows[0]:  # a count of people: one row of every author's name
        return [{"authors": sorted(set(rows[0]["authors"] if rows else []) | {r["author"] for r in extra})}]
    if p.kind == "count":
        return [{"count": int(rows[0]["count"] if rows else 0) + len(extra)}]
    if p.kind == "authors":  # their authors count as well: one more commit each, and maybe a later "last"
        by = {r["author"]: dict(r) for r in rows}
        for r in extra:
            a = by.setdefault(r["author"], {"author": r["author"], "commits": 0, "last": r.get("time")})
            a["commits"] += 1
            a["last"] = max(str(a.get("last") or ""), str(r.get("time") or ""))
        return sorted(by.values(), key=lambda r: (-r["commits"], r["author"]))
    seen = {r["id"] for r in rows}
    merged = rows + [r for r in extra if r["id"] not in seen]
    merged.sort(key=lambda r: (str(r.get("time") or ""), r["id"]), reverse=" DESC" in p.cypher)
    return merged
