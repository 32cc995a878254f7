"""What the code changes say, per commit: line provenance (blame) and identifier postings (pickaxe).

The git ingest stores, in each commit node's metadata, the ``-U0`` hunks per file (``hunks``), its
renames, and the identifiers whose count it raised or lowered (``code``: ``added`` / ``removed``;
docs/ingest.md).  This index holds them in memory so a search can answer, without running git:

* **blame** — which commit last touched each old-side line of a file as of a time T: walk the file's
  commits from the newest one at or before T back in time, mapping the tracked line numbers through
  each commit's hunks (a line inside a hunk's new side was written by that commit; the others shift by
  the hunk sizes before them), following renames.  Merge commits are skipped: their first-parent
  diff repeats the branch's own commits, which are nodes with their own hunks.
* **code terms** — which commits added or removed an identifier (``ensure_sync``, ``--json``): the
  commit that first added it introduced it (``git log -S`` semantics at token level).

It is derived state (the store is the truth), read lazily on first use and kept in step with the
change feed like the lexical index: :meth:`changed` marks rows, the next use re-reads only those.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CodeHistory", "Blame"]

_EMPTY = np.zeros((0, 4), np.int64)


@dataclass
class _Entry:
    """One commit's change to one path."""

    time: float
    order: int  # tiebreak among commits of the same second: ingest order (git log lists newest first)
    idx: int
    hunks: np.ndarray  # (k, 4): old_start, old_count, new_start, new_count, sorted by new_start
    renamed_from: str | None = None


@dataclass
class _Commit:
    time: float
    merge: bool
    paths: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


@dataclass
class Blame:
    """Provenance of the working set's lines: per commit index, how many lines it last touched and which."""

    lines: dict[int, int]  # commit idx -> blamed lines
    where: dict[int, dict[str, list[int]]]  # commit idx -> path -> lines (old-side numbers)
    total: int  # lines asked about that had any provenance
    asked: int  # lines asked about

    def share(self) -> tuple[np.ndarray, np.ndarray]:
        """(commit indices sorted, share of the blamed lines each one last touched)."""
        if not self.lines:
            return np.zeros(0, np.int64), np.zeros(0)
        nodes = np.array(sorted(self.lines), np.int64)
        return nodes, np.array([self.lines[n] for n in nodes.tolist()], np.float64) / max(self.total, 1)


def _ranges_text(lines: list[int]) -> str:
    out: list[list[int]] = []
    for n in sorted(set(lines)):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    return ", ".join(f"{a}" if a == b else f"{a}–{b}" for a, b in out)


def describe(where: dict[str, list[int]]) -> str:
    """``lines 120–131 of ip/ipaddress.c`` for a hit's explanation."""
    return "; ".join(f"line{'s' if len(v) > 1 else ''} {_ranges_text(v)} of {p}" for p, v in sorted(where.items()))


def _hunks(raw: Any) -> np.ndarray:
    try:
        h = np.asarray(raw, np.int64).reshape(-1, 4)
    except (TypeError, ValueError):
        return _EMPTY
    if h.size == 0:
        return _EMPTY
    return h[np.argsort(h[:, 2], kind="stable")]


class CodeHistory:
    """The index (module docstring).  ``read_rows(idx or None)`` yields ``(idx, type, metadata)`` of the
    given node indices (None: every node); the engine passes a store reader, so SQL stays in store/."""

    def __init__(self, read_rows: Callable[[list[int] | None], Iterable[tuple[int, str, dict]]]):
        self._read = read_rows
        self._commits: dict[int, _Commit] = {}
        self._files: dict[str, dict[int, _Entry]] = {}
        self._sorted: dict[str, tuple[list[tuple[float, int]], list[_Entry]]] = {}
        self._postings: dict[str, dict[str, dict[int, float]]] = {"added": {}, "removed": {}}
        self._post_sorted: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._built = False
        self._dirty: set[int] = set()

    # ------------------------------------------------------------ keeping in step
    def changed(self, idx: np.ndarray | None) -> None:
        """Rows written or deleted (None: start over on next use)."""
        if idx is None or (self._built and idx.size > 50_000):
            self._built = False
            self._dirty.clear()
            return
        if self._built:
            self._dirty.update(int(i) for i in idx.tolist())

    def _ensure(self) -> None:
        if not self._built:
            self._commits.clear()
            self._files.clear()
            self._postings = {"added": {}, "removed": {}}
            for idx, typ, md in self._read(None):
                if typ == "commit":
                    self._add(idx, md)
            self._sorted.clear()
            self._post_sorted.clear()
            self._built = True
            self._dirty.clear()
            return
        if self._dirty:
            dirty, self._dirty = sorted(self._dirty), set()
            for i in dirty:
                self._remove(i)
            for idx, typ, md in self._read(dirty):
                if typ == "commit":
                    self._add(idx, md)

    @property
    def commits(self) -> int:
        self._ensure()
        return len(self._commits)

    def _add(self, idx: int, md: dict) -> None:
        try:
            t = float(md.get("time"))
        except (TypeError, ValueError):
            return
        if not math.isfinite(t):
            return
        c = _Commit(t, len(md.get("parents") or []) > 1)
        hunks = md.get("hunks")
        renames = {new: old for old, new in (md.get("renames") or []) if isinstance(old, str) and isinstance(new, str)}
        if isinstance(hunks, dict) and not c.merge:
            for path, raw in hunks.items():
                if not isinstance(path, str):
                    continue
                self._files.setdefault(path, {})[idx] = _Entry(t, -idx, idx, _hunks(raw), renames.get(path))
                self._sorted.pop(path, None)
                c.paths.append(path)
            for new, old in renames.items():  # a pure rename has no hunk, but the line history moves
                if new not in hunks:
                    self._files.setdefault(new, {})[idx] = _Entry(t, -idx, idx, _EMPTY, old)
                    self._sorted.pop(new, None)
                    c.paths.append(new)
        code = md.get("code")
        if isinstance(code, dict):
            for side in ("added", "removed"):
                terms = [x.lower() for x in code.get(side) or [] if isinstance(x, str)]
                post = self._postings[side]
                for term in dict.fromkeys(terms):
                    post.setdefault(term, {})[idx] = t
                    self._post_sorted.pop((side, term), None)
                setattr(c, side, terms)
        self._commits[idx] = c

    def _remove(self, idx: int) -> None:
        c = self._commits.pop(idx, None)
        if c is None:
            return
        for p in c.paths:
            self._files.get(p, {}).pop(idx, None)
            self._sorted.pop(p, None)
        for side in ("added", "removed"):
            for term in c.added if side == "added" else c.removed:
                self._postings[side].get(term, {}).pop(idx, None)
                self._post_sorted.pop((side, term), None)

    def _timeline(self, path: str) -> tuple[list[tuple[float, int]], list[_Entry]]:
        got = self._sorted.get(path)
        if got is None:
            entries = sorted(self._files.get(path, {}).values(), key=lambda e: (e.time, e.order))
            got = ([(e.time, e.order) for e in entries], entries)
            self._sorted[path] = got
        return got

    # ------------------------------------------------------------ blame
    def blame_lines(self, path: str, lines: list[int] | np.ndarray, as_of: float | None) -> np.ndarray:
        """For each old-side line (1-based) of ``path`` as of ``as_of`` (None: now), the index of the commit
        that last touched it; -1 where the history does not say (no hunks stored, line past the end)."""
        self._ensure()
        tracked = np.asarray(lines, np.int64).copy()
        origin = np.full(tracked.shape[0], -1, np.int64)
        active = np.arange(tracked.shape[0])
        keys, entries = self._timeline(path)
        i = len(keys) if as_of is None else bisect.bisect_right(keys, (float(as_of), math.inf))
        seen_paths = {path}
        while active.size and i > 0:
            i -= 1
            e = entries[i]
            h = e.hunks
            if h.shape[0]:
                ln = tracked[active]
                ns, nc, oc = h[:, 2], h[:, 3], h[:, 1]
                j = np.searchsorted(ns, ln, side="right") - 1
                jj = np.maximum(j, 0)
                has = j >= 0
                inside = has & (nc[jj] > 0) & (ln <= ns[jj] + nc[jj] - 1) & (ln >= ns[jj])
                origin[active[inside]] = e.idx
                cum = np.cumsum(oc - nc)
                before = has & np.where(nc[jj] > 0, ns[jj] + nc[jj] - 1 < ln, ns[jj] < ln)
                prev = np.where(j - 1 >= 0, cum[np.maximum(j - 1, 0)], 0)
                shift = np.where(before, cum[jj], np.where(has, prev, 0))
                keep = ~inside
                tracked[active[keep]] = ln[keep] + shift[keep]
                active = active[keep]
            if e.renamed_from and e.renamed_from not in seen_paths:
                seen_paths.add(e.renamed_from)
                keys, entries = self._timeline(e.renamed_from)
                i = bisect.bisect_left(keys, (e.time, e.order))
        return origin

    def blame(self, files: Iterable[tuple[str, list[int]]], as_of: float | None, visible=None) -> Blame:
        """Provenance of several files' lines (``visible``: a node mask; a commit outside it is skipped as if
        absent — it cannot be, as of ``as_of``, except for filters on other fields)."""
        lines: dict[int, int] = {}
        where: dict[int, dict[str, list[int]]] = {}
        total = asked = 0
        for path, ls in files:
            if not ls:
                continue
            asked += len(ls)
            got = self.blame_lines(path, ls, as_of)
            for ln, c in zip(ls, got.tolist()):
                if c < 0 or (visible is not None and (c >= visible.shape[0] or not visible[c])):
                    continue
                total += 1
                lines[c] = lines.get(c, 0) + 1
                where.setdefault(c, {}).setdefault(path, []).append(int(ln))
        return Blame(lines, where, total, asked)

    # ------------------------------------------------------------ code terms
    def _posting(self, side: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._post_sorted.get((side, term))
        if got is None:
            d = self._postings[side].get(term, {})
            idx = np.fromiter(d.keys(), np.int64, len(d))
            t = np.fromiter(d.values(), np.float64, len(d))
            o = np.lexsort((-idx, t))  # oldest first; same second: the later-listed (older) first
            got = (idx[o], t[o])
            self._post_sorted[(side, term)] = got
        return got

    def changes_of(self, term: str, side: str, as_of: float | None = None) -> tuple[list[int], list[float]]:
        """Commit indices (oldest first) that ``side`` (``"added"`` / ``"removed"``) the identifier, with times."""
        self._ensure()
        idx, t = self._posting(side, term.lower())
        if as_of is not None:
            cut = int(np.searchsorted(t, as_of, side="right"))
            idx, t = idx[:cut], t[:cut]
        return idx.tolist(), t.tolist()

    def document_frequency(self, term: str) -> int:
        self._ensure()
        t = term.lower()
        return len(self._postings["added"].get(t, {})) + len(self._postings["removed"].get(t, {}))

    def term_matches(
        self,
        terms: list[str],
        as_of: float | None,
        intent: str = "",
        side_weights: tuple[float, float] = (1.0, 0.5),
        visible=None,
        max_terms: int = 40,
    ) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]]]:
        """Commits that added/removed any of ``terms`` (whole identifiers, case-insensitive), scored in [0, 1]:
        the idf-weighted share of the terms a commit changed.  ``intent`` ``"introduced"`` gives the term's
        first adder (as of ``as_of``) full weight and later adders a quarter (pickaxe's first commit);
        ``"removed"`` does the same for the last remover; otherwise adders weigh ``side_weights[0]`` and
        removers ``side_weights[1]``.  Returns (nodes sorted, scores, node -> the evidence phrases)."""
        self._ensure()
        n_docs = max(len(self._commits), 1)
        want = list(dict.fromkeys(t.lower() for t in terms if t))
        scored: list[tuple[float, str]] = []
        for t in want:
            df = len(self._postings["added"].get(t, {})) + len(self._postings["removed"].get(t, {}))
            if df:
                scored.append((math.log((n_docs + 1) / (df + 0.5)), t))
        scored.sort(key=lambda x: -x[0])
        scored = scored[:max_terms]
        if not scored:
            return np.zeros(0, np.int64), np.zeros(0), {}
        acc: dict[int, float] = {}
        why: dict[int, list[str]] = {}
        norm = sum(w for w, _ in scored)
        for w, t in scored:
            for side in ("added", "removed"):
                idx, tm = self._posting(side, t)
                if as_of is not None:
                    cut = np.searchsorted(tm, as_of, side="right")
                    idx = idx[:cut]
                if visible is not None and idx.size:
                    ok = idx < visible.shape[0]
                    ok[ok] = visible[idx[ok]]
                    idx = idx[ok]
                if not idx.size:
                    continue
                if intent == "introduced":
                    weights = np.full(idx.shape[0], 0.25 if side == "added" else 0.1)
                    if side == "added":
                        weights[0] = 1.0
                elif intent == "removed":
                    weights = np.full(idx.shape[0], 0.25 if side == "removed" else 0.1)
                    if side == "removed":
                        weights[-1] = 1.0
                else:
                    weights = np.full(idx.shape[0], side_weights[0] if side == "added" else side_weights[1])
                verb = "added" if side == "added" else "removed"
                for n, v in zip(idx.tolist(), weights.tolist()):
                    acc[n] = acc.get(n, 0.0) + w * v
                    why.setdefault(n, []).append(f"{verb} `{t}`")
        nodes = np.array(sorted(acc), np.int64)
        scores = np.array([acc[n] for n in nodes.tolist()], np.float64) / norm
        return nodes, np.minimum(scores, 1.0), why
