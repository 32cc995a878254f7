"""Depth-2 blame through commits that only moved or renamed the lines (issue 46, ``blame2``).

Blame names the last commit that touched a line.  When that commit only moved the line (a block deleted in one
place and inserted, the same size, in another, in the same or another file) or rewrote it in place while its
identifier changes are a rename, the change the fix repairs is older: the commit that wrote the line before.
The store keeps ``-U0`` hunks and per-commit identifier count changes, not line contents, so "only moved" is
read from them: the line's hunk is a pure insertion with a pure deletion of the same size in the same commit (a
move), or a same-size rewrite (in place); and the commit's identifier changes, less the names that only moved
between files (counted on both sides), are at most ``max_terms``.  The line is then followed to its number
before the mover and blamed again at the mover's first parent.

Blame that ends at the history's first commit (:func:`roots`) cannot go further: the line is older than the
history (an import of a tree kept elsewhere before), so that commit says where the history starts, not what
changed the line.

It reads the code-history index's stored hunks and walk (``index/code_history.py``) and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..index.code_history import CodeHistory

__all__ = ["Blame2", "blame_through_moves", "roots"]


@dataclass
class Blame2:
    """Lines re-blamed past a mover: per (mover, earlier writer), how many lines, and where (old-side numbers
    in the working set's commit)."""

    moved: dict[tuple[int, int], int] = field(default_factory=dict)
    where: dict[int, dict[str, list[int]]] = field(default_factory=dict)  # earlier writer -> path -> lines


def blame_through_moves(
    history: CodeHistory,
    files: list[tuple[str, list[int]]],
    as_of: float | None,
    base: str | None,
    max_terms: int,
    in_place: bool = True,
) -> Blame2:
    """The lines of ``files`` (as in :meth:`CodeHistory.blame`) whose last toucher only moved or renamed them,
    blamed once more at that commit's first parent (module docstring)."""
    out = Blame2()
    history._ensure()
    start = history.start_of(as_of, base)
    if start is None:
        return out
    movers: dict[int, bool] = {}
    for path, lines in files:
        if not lines:
            continue
        tracked = np.asarray(lines, np.int64).copy()
        origin = np.full(tracked.shape[0], -1, np.int64)
        # the walk leaves each blamed line's number in its toucher's new side in ``tracked``
        history._walk_from(start, path, tracked, origin, np.arange(tracked.shape[0]), 0)
        for k, x in enumerate(origin.tolist()):
            if x < 0:
                continue
            if x not in movers:
                movers[x] = _only_moves(history, x, max_terms)
            if not movers[x]:
                continue
            before = _before(history, x, path, int(tracked[k]), in_place)
            parent = history._commits[x].parents[0]
            if before is None or before[1] < 1 or parent not in history._by_sha:  # a parent the store lacks
                continue  # (a shallow history) would be read as the newest commit instead
            y = int(history.blame_lines(before[0], [before[1]], None, parent)[0])
            if y < 0 or y == x:
                continue
            out.moved[(x, y)] = out.moved.get((x, y), 0) + 1
            out.where.setdefault(y, {}).setdefault(path, []).append(int(lines[k]))
    return out


def _only_moves(history: CodeHistory, idx: int, max_terms: int) -> bool:
    """Whether a commit's identifier changes are at most a rename: the names it raised or lowered, less those
    that moved between files (raised in one, lowered in another), number at most ``max_terms``."""
    c = history._commits.get(idx)
    if c is None or c.merge or not c.parents:
        return False
    return len(set(c.added) ^ set(c.removed)) <= max_terms


def _before(history: CodeHistory, idx: int, path: str, line: int, in_place: bool) -> tuple[str, int] | None:
    """(path, line) before commit ``idx`` of the line it left at ``line`` (new side), when its hunk is a pure
    insertion matched by a same-size pure deletion in the same commit, or (``in_place``) a same-size
    rewrite; None otherwise."""
    c = history._commits[idx]
    for p in sorted(c.paths, key=lambda q: q != path):  # the walked path first (a rename may have moved it)
        e = history._files.get(p, {}).get(idx)
        if e is None or not e.hunks.n:
            continue
        h = e.hunks
        k = int(np.searchsorted(h.start, line, side="right")) - 1
        if k < 0 or line >= h.stop[k]:
            continue
        new_n = int(h.stop[k] - h.start[k])
        old_n = new_n + int(h.shifts[k + 1] - h.shifts[k])
        off = line - int(h.start[k])
        if old_n == new_n:
            if not in_place:
                return None
            return (e.renamed_from or p, int(h.start[k] + h.shifts[k]) + off)
        if old_n != 0:
            return None
        return _deleted_block(history, idx, new_n, off)
    return None


def _deleted_block(history: CodeHistory, idx: int, size: int, off: int) -> tuple[str, int] | None:
    """The commit's first pure deletion of ``size`` lines (any of its files): where the moved block was."""
    for path in history._commits[idx].paths:
        e = history._files.get(path, {}).get(idx)
        if e is None:
            continue
        h = e.hunks
        for k in range(h.n):
            new_n = int(h.stop[k] - h.start[k])
            old_n = new_n + int(h.shifts[k + 1] - h.shifts[k])
            if new_n == 0 and old_n == size:
                # a pure deletion's new-side start is the line before it (git's -U0 numbering)
                return (e.renamed_from or path, int(h.start[k]) + 1 + int(h.shifts[k]) + off)
    return None


def roots(history: CodeHistory, nodes: np.ndarray) -> np.ndarray:
    """Which of the commit indices ``nodes`` have no parent (where the stored history starts)."""
    history._ensure()
    got = [history._commits.get(i) for i in nodes.tolist()]
    return np.array([c is not None and not c.parents for c in got], bool)
