"""The structures a blame walk over the stored hunks reads (:class:`~.code_history.CodeHistory`).

They exist apart from the index so that what one step of the walk does reads in one place: ``Hunks`` holds
one commit's ``-U0`` hunks of one file as lookup columns, ``Entry`` one commit's change to one path,
``Commit`` one commit's parents, paths and identifiers, ``Files`` each path's entries (made from the columns
on first use), ``map_lines`` / ``apply_hunks`` move tracked line numbers through one commit, ``Topology`` the
mainline and where each branch commit landed, and ``PathWalk`` one path's commits in walk order.
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import overload

import numpy as np

from .code_facts import CodeFacts

__all__ = ["Commit", "Entry", "Files", "Hunks", "PathWalk", "Topology", "apply_hunks", "as_hunks", "map_lines"]


@dataclass(frozen=True)
class Hunks:
    """One commit's ``-U0`` hunks of one file as the lookup columns a blame step reads, computed once when
    the commit is read: new-side starts (sorted), ends (exclusive), the first line after each hunk
    (``start + max(count, 1)``: after a deletion at ``c`` comes ``c + 1``), and ``shifts[k]``, the old minus
    new size of the first ``k`` hunks."""

    start: np.ndarray
    stop: np.ndarray
    after: np.ndarray
    shifts: np.ndarray

    @classmethod
    def of(cls, h: np.ndarray) -> Hunks:
        h = h[np.argsort(h[:, 2], kind="stable")]
        ns, nc = h[:, 2], h[:, 3]
        return cls(ns, ns + nc, ns + np.maximum(nc, 1), np.concatenate([[0], np.cumsum(h[:, 1] - nc)]))

    @property
    def n(self) -> int:
        return int(self.start.shape[0])


_EMPTY = Hunks.of(np.zeros((0, 4), np.int64))


@dataclass
class Entry:
    """One commit's change to one path."""

    time: float
    order: int  # tiebreak among commits of the same second: ingest order (git log lists newest first)
    idx: int
    hunks: Hunks
    renamed_from: str | None = None
    merge: bool = False
    hunks_p2: Hunks | None = None  # a merge's hunks against its second parent (None: not stored)
    cut: bool = False  # the commit's hunks were cut at the ingest's caps (a generated or vendored file)


@dataclass
class Commit:
    """One commit as a blame walk and the postings read it: time, parents, paths, PR, identifiers."""

    time: float
    merge: bool
    sha: str = ""
    parents: list[str] = field(default_factory=list)
    repo: str = ""
    paths: list[str] = field(default_factory=list)
    pr: int | None = None  # the pull request a merge (or squash) commit landed
    row: int = -1  # its row in ``facts`` (its identifiers are read from there on first need); -1: a later one
    facts: CodeFacts | None = field(default=None, repr=False, compare=False)
    _terms: dict[str, list[str]] = field(default_factory=dict, repr=False, compare=False)

    def _side(self, key: str) -> list[str]:
        got = self._terms.get(key)
        if got is None:
            f = self.facts
            got = self._terms[key] = f.terms_of(key, self.row) if f is not None and self.row >= 0 else []
        return got

    @property
    def added(self) -> list[str]:
        """The identifiers whose count it raised (lower-cased)."""
        return self._side("pa")

    @added.setter
    def added(self, terms: list[str]) -> None:
        self._terms["pa"] = terms

    @property
    def removed(self) -> list[str]:
        """The identifiers whose count it lowered."""
        return self._side("pr")

    @removed.setter
    def removed(self, terms: list[str]) -> None:
        self._terms["pr"] = terms


def as_hunks(h: np.ndarray) -> Hunks:
    """``(n, 4)`` stored hunks (:func:`.code_facts.raw_hunks`) as lookup columns."""
    return Hunks.of(h) if h.size else _EMPTY


class Files:
    """path -> {commit idx: :class:`Entry`}, the mapping the blame walks read: a path's entries are made
    from the columns on its first use (a big history has ~60k), then kept and changed in place."""

    def __init__(self) -> None:
        self._d: dict[str, dict[int, Entry]] = {}
        self._facts: CodeFacts | None = None
        self._sid: dict[str, int] | None = None
        self._merge: np.ndarray = np.zeros(0, bool)

    def reset(self, facts: CodeFacts | None) -> None:
        self._d, self._facts, self._sid = {}, facts, None
        if facts is not None:
            self._merge = np.diff(facts["c_par_off"]) > 1

    def _path_ids(self) -> dict[str, int]:
        if self._sid is None:
            f = self._facts
            self._sid = {} if f is None else {f.strings[i]: i for i in np.unique(f["e_path"]).tolist()}
        return self._sid

    @overload
    def get(self, path: str) -> dict[int, Entry] | None: ...

    @overload
    def get(self, path: str, default: dict[int, Entry]) -> dict[int, Entry]: ...

    def get(self, path: str, default: dict[int, Entry] | None = None) -> dict[int, Entry] | None:
        d = self._d.get(path)
        if d is None:
            sid = self._path_ids().get(path)
            if sid is None:
                return default
            d = self._d[path] = self._make(sid)
        return d

    def setdefault(self, path: str, default: dict[int, Entry]) -> dict[int, Entry]:
        d = self.get(path)
        if d is None:
            d = self._d[path] = default
        return d

    def _make(self, sid: int) -> dict[int, Entry]:
        f = self._facts
        assert f is not None  # a path id comes from the columns
        lo, hi = f.path_rows(sid)
        out: dict[int, Entry] = {}
        for row in range(lo, hi):
            r = int(f["e_commit"][row])
            idx, ren, p2 = int(f["c_idx"][r]), int(f["e_ren"][row]), f.p2_of(row)
            out[idx] = Entry(
                float(f["c_time"][r]),
                -idx,
                idx,
                as_hunks(f.hunks_of(row)),
                f.strings[ren] if ren >= 0 else None,
                bool(self._merge[r]),
                as_hunks(p2) if p2 is not None else None,
                bool(f["e_cut"][row]),
            )
        return out

    def renames(self) -> Iterator[tuple[str, int]]:
        """``(old path, commit idx)`` of every entry that renamed its file."""
        for d in self._d.values():
            for e in d.values():
                if e.renamed_from:
                    yield e.renamed_from, e.idx
        f = self._facts
        if f is None:
            return
        for row in np.flatnonzero(f["e_ren"] >= 0).tolist():
            if f.strings[int(f["e_path"][row])] not in self._d and f.strings[int(f["e_ren"][row])]:
                yield f.strings[int(f["e_ren"][row])], int(f["c_idx"][int(f["e_commit"][row])])


def map_lines(h: Hunks, ln: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Which of the (new-side) line numbers ``ln`` lie inside hunks ``h``, and every line's old-side number
    (meaningful for the others): a line after a hunk shifts by that hunk's old minus new size."""
    j = np.searchsorted(h.start, ln, side="right") - 1
    inside = (j >= 0) & (ln < h.stop[np.maximum(j, 0)])
    return inside, ln + h.shifts[np.searchsorted(h.after, ln, side="right")]


def apply_hunks(e: Entry, tracked: np.ndarray, origin: np.ndarray, active: np.ndarray, who: int) -> np.ndarray:
    """One commit's hunks over the tracked lines: the lines it wrote are blamed on ``who``; the rest move to
    their numbers before it.  Returns the rows still unresolved."""
    if not e.hunks.n or not active.size:
        return active
    ln = tracked[active]
    if int(ln.max()) < int(e.hunks.start[0]):  # every tracked line comes before the first hunk: unchanged
        return active
    inside, shifted = map_lines(e.hunks, ln)
    origin[active[inside]] = who
    keep = ~inside
    tracked[active[keep]] = shifted[keep]
    return active[keep]


@dataclass
class Topology:
    """The mainline (the first-parent chain of the newest tip) with positions, and for every commit the
    mainline position that first contains it (``landed``: its own for a mainline commit, the merge's for a
    branch commit)."""

    main: list[int]  # commit idx by position, oldest first
    pos: dict[int, int]
    landed: dict[int, int]
    merged_by: dict[int, int]  # branch commit idx -> the mainline merge idx that landed it
    max_time: list[float]  # running max of the mainline's times (bisect for "newest at or before T")

    @classmethod
    def of(cls, commits: dict[int, Commit], by_sha: dict[str, int], heads: list[str] | None = None) -> Topology:
        """``heads``: the synced default branches' tips (HEAD); the newest of them is the mainline's tip, else
        the newest commit no other commit has as a parent (a store with release branches and tags has several
        such leaves: HEAD's history is the one a user means by "now")."""
        if not commits:
            return cls([], {}, {}, {}, [])
        known = [by_sha[h] for h in heads or [] if h in by_sha]
        if known:
            tip = max(known, key=lambda i: (commits[i].time, -i))
        else:
            is_parent: set[int] = set()
            for c in commits.values():
                for p in c.parents:
                    if p in by_sha:
                        is_parent.add(by_sha[p])
            tips = [i for i in commits if i not in is_parent]
            tip = max(tips or list(commits), key=lambda i: (commits[i].time, -i))
        chain: list[int] = []
        seen: set[int] = set()
        cur: int | None = tip
        while cur is not None and cur not in seen:
            seen.add(cur)
            chain.append(cur)
            ps = commits[cur].parents
            cur = by_sha.get(ps[0]) if ps else None
        chain.reverse()
        pos = {c: k for k, c in enumerate(chain)}
        landed: dict[int, int] = dict(pos)
        merged_by: dict[int, int] = {}
        for k, m in enumerate(chain):
            stack = [by_sha[p] for p in commits[m].parents[1:] if p in by_sha]
            while stack:
                x = stack.pop()
                if x in landed:
                    continue
                landed[x] = k
                merged_by[x] = m
                stack.extend(by_sha[p] for p in commits[x].parents if p in by_sha)
        run, best = [], -math.inf
        for ci in chain:
            best = max(best, commits[ci].time)
            run.append(best)
        return cls(chain, pos, landed, merged_by, run)

    def at(self, as_of: float | None) -> int | None:
        """The newest mainline commit at or before ``as_of`` (the tip when None)."""
        if not self.main:
            return None
        if as_of is None:
            return self.main[-1]
        k = bisect.bisect_right(self.max_time, float(as_of)) - 1
        return self.main[k] if k >= 0 else None

    def chain_from(self, start: int, commits: dict[int, Commit], by_sha: dict[str, int]) -> tuple[list[int], int]:
        """``start``'s first-parent commits before it reaches the mainline, and the mainline position it joins."""
        side: list[int] = []
        cur: int | None = start
        seen: set[int] = set()
        while cur is not None and cur not in self.pos and cur not in seen:
            seen.add(cur)
            side.append(cur)
            ps = commits[cur].parents if cur in commits else []
            cur = by_sha.get(ps[0]) if ps else None
        return side, (self.pos[cur] if cur is not None and cur in self.pos else -1)


@dataclass
class PathWalk:
    """One path's commits for a blame walk: mainline ones by position, branch ones under the merge that
    landed them (newest first)."""

    main: list[Entry]
    main_pos: list[int]
    branch: dict[int, list[Entry]]

    @classmethod
    def of(cls, entries: list[Entry], topo: Topology) -> PathWalk:
        on_main = sorted((e for e in entries if e.idx in topo.pos), key=lambda e: topo.pos[e.idx])
        branch: dict[int, list[Entry]] = {}
        for e in entries:
            m = topo.merged_by.get(e.idx)
            if m is not None and not e.merge:
                branch.setdefault(m, []).append(e)
        for v in branch.values():
            v.sort(key=lambda e: (e.time, e.order), reverse=True)
        return cls(on_main, [topo.pos[e.idx] for e in on_main], branch)
