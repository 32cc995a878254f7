"""The git ingest's per-commit code facts (hunks, renames, identifiers; docs/ingest.md) as columns.

Why: :class:`~.code_history.CodeHistory` needs every commit's facts before its first answer.  Reading them
from the store means parsing every commit's metadata JSON (~1 s of a cold ``ngr search`` on mypy's 13.7k
commits); as columns they are a few numpy arrays and one string table, which a cache file beside the store
holds (:mod:`.code_history_file`) and which the index turns into per-file objects only for the paths a
blame walks.  :func:`parse_commit` is the one reader of a commit's metadata, for a full build
(:class:`FactsBuilder`) and for the rows a change feed brings (``CodeHistory._add``).

:meth:`CodeFacts.from_arrays` checks a file's columns before use (lengths, offsets, ranges, finite times),
so a damaged or forged file means a rebuild from the store, never a crash or a wrong answer from it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["CodeFacts", "CommitFacts", "FactsBuilder", "parse_commit", "raw_hunks"]

_NO_HUNKS = np.zeros((0, 4), np.int64)


def raw_hunks(raw: Any) -> np.ndarray:
    """A stored hunk list as an ``(n, 4)`` int64 array (old start, old count, new start, new count); empty
    for anything else."""
    try:
        h = np.asarray(raw, np.int64).reshape(-1, 4)
    except (TypeError, ValueError, OverflowError):
        return _NO_HUNKS
    return h if h.size else _NO_HUNKS


@dataclass
class CommitFacts:
    """One commit's facts as the metadata gives them: ``entries`` are ``(path, hunks, renamed_from, hunks
    against the second parent or None, cut)`` per changed path."""

    time: float
    sha: str
    parents: list[str]
    repo: str
    pr: int | None
    entries: list[tuple[str, np.ndarray, str | None, np.ndarray | None, bool]] = field(default_factory=list)
    added: list[str] = field(default_factory=list)  # lower-cased identifiers, as listed (repeats kept)
    removed: list[str] = field(default_factory=list)

    @property
    def merge(self) -> bool:
        return len(self.parents) > 1


def _terms(code: Any, side: str) -> list[str]:
    raw = [x for k in (side, "bulk_" + side) if isinstance(v := code.get(k), list) for x in v]  # bulk: over the cap
    return [x.lower() for x in raw if isinstance(x, str)]


def parse_commit(md: dict) -> CommitFacts | None:
    """A commit node's metadata as facts; None without a finite ``time`` (nothing can be placed)."""
    try:
        t = float(md.get("time", "nan"))
    except (TypeError, ValueError, OverflowError):
        return None
    if not math.isfinite(t):
        return None
    parents = [p for p in md.get("parents") or [] if isinstance(p, str)]
    pr = md.get("pr")
    c = CommitFacts(
        t, str(md.get("sha") or ""), parents, str(md.get("repo") or ""), pr if isinstance(pr, int) else None
    )
    hunks = md.get("hunks")
    renames = {new: old for old, new in _pairs(md.get("renames")) if isinstance(old, str) and isinstance(new, str)}
    if not isinstance(hunks, dict):
        hunks = {}  # a commit of pure renames only stores no hunk at all
    p2 = md.get("hunks_p2") if c.merge else None
    cut = bool(md.get("hunks_truncated"))
    for path, raw in hunks.items():
        if isinstance(path, str):
            h2 = raw_hunks(p2.get(path, [])) if isinstance(p2, dict) else None
            c.entries.append((path, raw_hunks(raw), renames.get(path), h2, cut))
    for new, old in renames.items():  # a pure rename has no hunk, but the line history moves
        if new not in hunks:
            c.entries.append((new, _NO_HUNKS, old, None, False))
    code = md.get("code")
    if isinstance(code, dict):
        c.added, c.removed = _terms(code, "added"), _terms(code, "removed")
    return c


def _pairs(raw: Any) -> list[tuple[Any, Any]]:
    if not isinstance(raw, list):
        return []
    return [(p[0], p[1]) for p in raw if isinstance(p, list | tuple) and len(p) == 2]


_INT_COLUMNS = {  # name -> (dtype, ndim)
    "c_idx": (np.int64, 1),
    "c_pr": (np.int64, 1),
    "c_sha": (np.int32, 1),
    "c_repo": (np.int32, 1),
    "c_par_off": (np.int64, 1),
    "c_par": (np.int32, 1),
    "e_path": (np.int32, 1),
    "e_commit": (np.int32, 1),
    "e_ren": (np.int32, 1),
    "e_ord": (np.int32, 1),
    "e_h_off": (np.int64, 1),
    "e_p2_off": (np.int64, 1),
    "hunks": (np.int64, 2),
    "hunks_p2": (np.int64, 2),
    "pa_term": (np.int32, 1),
    "pa_commit": (np.int32, 1),
    "pr_term": (np.int32, 1),
    "pr_commit": (np.int32, 1),
    "term_lo": (np.int64, 1),
}
_BOOL_COLUMNS = ("c_has_pr", "e_cut", "e_p2")


@dataclass
class CodeFacts:
    """Every commit's facts as columns over one string table (``strings``): commits by row (``c_*``: node
    index, time, PR, sha, source, parents as offsets into ``c_par``), per-path entries sorted by path
    (``e_*``: path, commit row, renamed-from path or -1, place among its commit's paths, cut, hunks as
    offsets into ``hunks``, second-parent hunks where ``e_p2``), and identifier postings per side (``pa_*``
    added, ``pr_*`` removed: term, commit row).  The identifiers are the string table's last block, from
    ``term_lo`` on, sorted (found by bisection: :mod:`.code_postings`)."""

    strings: list[str]
    cols: dict[str, np.ndarray]
    _by_commit: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict, repr=False)

    @property
    def term_lo(self) -> int:
        return int(self.cols["term_lo"][0])

    def terms_of(self, key: str, row: int) -> list[str]:
        """The identifiers commit ``row`` lists on side ``key`` (``pa`` added, ``pr`` removed)."""
        got = self._by_commit.get(key)
        if got is None:
            order = np.argsort(self.cols[f"{key}_commit"], kind="stable")
            got = self._by_commit[key] = (order, self.cols[f"{key}_commit"][order])
        order, rows = got
        lo, hi = np.searchsorted(rows, row, "left"), np.searchsorted(rows, row, "right")
        return [self.strings[s] for s in self.cols[f"{key}_term"][order[lo:hi]].tolist()]

    @property
    def n_commits(self) -> int:
        return int(self.cols["c_idx"].shape[0])

    def __getitem__(self, name: str) -> np.ndarray:
        return self.cols[name]

    def path_rows(self, sid: int) -> tuple[int, int]:
        """The entry rows ``[lo, hi)`` of path string ``sid``."""
        e = self.cols["e_path"]
        return int(np.searchsorted(e, sid, "left")), int(np.searchsorted(e, sid, "right"))

    def hunks_of(self, row: int) -> np.ndarray:
        o = self.cols["e_h_off"]
        return self.cols["hunks"][o[row] : o[row + 1]]

    def p2_of(self, row: int) -> np.ndarray | None:
        if not self.cols["e_p2"][row]:
            return None
        o = self.cols["e_p2_off"]
        return self.cols["hunks_p2"][o[row] : o[row + 1]]

    def arrays(self) -> dict[str, np.ndarray]:
        """The columns to write (:mod:`.code_history_file`)."""
        return dict(self.cols)

    @classmethod
    def from_arrays(cls, cols: dict[str, np.ndarray], strings: list[str]) -> CodeFacts | None:
        """Columns read from a file, if they are consistent (module docstring); else None."""
        try:
            out = {k: np.asarray(cols[k]) for k in (*_INT_COLUMNS, *_BOOL_COLUMNS, "c_time")}
        except KeyError:
            return None
        for k, (dt, nd) in _INT_COLUMNS.items():
            a = out[k]
            if a.dtype != dt or a.ndim != nd or (nd == 2 and a.shape[1] != 4):
                return None
        if any(out[k].dtype != np.bool_ or out[k].ndim != 1 for k in _BOOL_COLUMNS):
            return None
        if out["c_time"].dtype != np.float64 or out["c_time"].ndim != 1:
            return None
        return cls(strings, out) if _consistent(out, len(strings)) else None


def _in_range(a: np.ndarray, lo: int, hi: int) -> bool:
    return a.size == 0 or (int(a.min()) >= lo and int(a.max()) < hi)


def _offsets_ok(off: np.ndarray, n: int, total: int) -> bool:
    """``n + 1`` non-decreasing offsets from 0 to ``total``."""
    return off.shape[0] == n + 1 and int(off[0]) == 0 and int(off[-1]) == total and bool((np.diff(off) >= 0).all())


def _consistent(c: dict[str, np.ndarray], n_str: int) -> bool:
    n = c["c_idx"].shape[0]
    if any(c[k].shape[0] != n for k in ("c_time", "c_pr", "c_has_pr", "c_sha", "c_repo")):
        return False
    if not (np.isfinite(c["c_time"]).all() and _in_range(c["c_idx"], 0, 2**62)):
        return False
    if np.unique(c["c_idx"]).size != n or not _offsets_ok(c["c_par_off"], n, c["c_par"].shape[0]):
        return False
    if not all(_in_range(c[k], 0, n_str) for k in ("c_sha", "c_repo", "c_par", "e_path", "pa_term", "pr_term")):
        return False
    e = c["e_path"].shape[0]
    if any(c[k].shape[0] != e for k in ("e_commit", "e_ren", "e_ord", "e_cut", "e_p2")):
        return False
    if e and (np.diff(c["e_path"]) < 0).any():
        return False
    if not (_in_range(c["e_commit"], 0, n) and _in_range(c["e_ren"], -1, n_str)):
        return False
    if not (
        _offsets_ok(c["e_h_off"], e, c["hunks"].shape[0]) and _offsets_ok(c["e_p2_off"], e, c["hunks_p2"].shape[0])
    ):
        return False
    lo = c["term_lo"]
    if lo.shape != (1,) or not 0 <= int(lo[0]) <= n_str:
        return False
    for side in ("pa", "pr"):
        t, m = c[f"{side}_term"], c[f"{side}_commit"]
        if t.shape[0] != m.shape[0] or not _in_range(m, 0, n) or not _in_range(t, int(lo[0]), n_str):
            return False
    return True


class FactsBuilder:
    """Collects commits' facts (:meth:`add`) into :class:`CodeFacts` (:meth:`facts`)."""

    def __init__(self) -> None:
        self._sid: dict[str, int] = {}
        self._c: dict[str, list] = {k: [] for k in ("idx", "time", "pr", "has_pr", "sha", "repo", "npar", "par")}
        self._e: list[tuple[int, int, int, bool, np.ndarray, np.ndarray | None, int]] = []
        self._post: dict[str, tuple[list[int], list[int]]] = {"pa": ([], []), "pr": ([], [])}

    def sid(self, s: str) -> int:
        i = self._sid.get(s)
        if i is None:
            i = self._sid[s] = len(self._sid)
        return i

    def add(self, idx: int, f: CommitFacts) -> None:
        row = len(self._c["idx"])
        c = self._c
        c["idx"].append(idx)
        c["time"].append(f.time)
        c["pr"].append(f.pr if f.pr is not None and -(2**63) <= f.pr < 2**63 else 0)
        c["has_pr"].append(f.pr is not None and -(2**63) <= f.pr < 2**63)
        c["sha"].append(self.sid(f.sha))
        c["repo"].append(self.sid(f.repo))
        c["npar"].append(len(f.parents))
        c["par"].extend(self.sid(p) for p in f.parents)
        for k, (path, h, ren, h2, cut) in enumerate(f.entries):
            self._e.append((self.sid(path), row, self.sid(ren) if ren is not None else -1, cut, h, h2, k))
        for side, terms in (("pa", f.added), ("pr", f.removed)):
            t, m = self._post[side]
            for term in dict.fromkeys(terms):
                t.append(self.sid(term))
                m.append(row)

    def facts(self) -> CodeFacts:
        strings, remap, term_lo = self._order_strings()
        c = self._c
        e = [(int(remap[x[0]]), x[1], int(remap[x[2]]) if x[2] >= 0 else -1, *x[3:]) for x in self._e]
        e.sort(key=lambda x: x[0])  # by path (stable: a path's entries in reading order)
        cols = {
            "c_idx": np.array(c["idx"], np.int64),
            "c_time": np.array(c["time"], np.float64),
            "c_pr": np.array(c["pr"], np.int64),
            "c_has_pr": np.array(c["has_pr"], bool),
            "c_sha": remap[np.array(c["sha"], np.int64)].astype(np.int32),
            "c_repo": remap[np.array(c["repo"], np.int64)].astype(np.int32),
            "c_par_off": np.concatenate([[0], np.cumsum(np.array(c["npar"], np.int64))]).astype(np.int64),
            "c_par": remap[np.array(c["par"], np.int64)].astype(np.int32),
            "e_path": np.array([x[0] for x in e], np.int32),
            "e_commit": np.array([x[1] for x in e], np.int32),
            "e_ren": np.array([x[2] for x in e], np.int32),
            "e_ord": np.array([x[6] for x in e], np.int32),
            "e_cut": np.array([x[3] for x in e], bool),
            "e_p2": np.array([x[5] is not None for x in e], bool),
        }
        cols["e_h_off"], cols["hunks"] = _stack([x[4] for x in e])
        cols["e_p2_off"], cols["hunks_p2"] = _stack(
            [x[5] for x in e if x[5] is not None], [x[5] is not None for x in e]
        )
        for side, (t, m) in self._post.items():  # by term, then oldest first (the order the postings read)
            term, row = remap[np.array(t, np.int64)], np.array(m, np.int64)
            o = np.lexsort((-cols["c_idx"][row], cols["c_time"][row], term))
            cols[f"{side}_term"], cols[f"{side}_commit"] = term[o].astype(np.int32), row[o].astype(np.int32)
        cols["term_lo"] = np.array([term_lo], np.int64)
        return CodeFacts(strings, cols)

    def _order_strings(self) -> tuple[list[str], np.ndarray, int]:
        """The string table with the identifiers last and sorted; old id -> new id; where they start."""
        old = list(self._sid)
        is_term = np.zeros(len(old), bool)
        for t, _m in self._post.values():
            is_term[np.array(t, np.int64)] = True
        others = np.flatnonzero(~is_term)
        terms = sorted(np.flatnonzero(is_term).tolist(), key=old.__getitem__)
        order = np.concatenate([others, np.array(terms, np.int64)]).astype(np.int64)
        remap = np.empty(len(old), np.int64)
        remap[order] = np.arange(len(old))
        return [old[i] for i in order.tolist()], remap, int(others.size)


def _stack(parts: list[np.ndarray], present: list[bool] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Offsets (one per entry, plus the end) and the rows of ``parts`` stacked; with ``present``, entries
    without a part get an empty range."""
    sizes = np.fromiter((p.shape[0] for p in parts), np.int64, len(parts))
    if present is not None:
        full = np.zeros(len(present), np.int64)
        full[np.flatnonzero(np.array(present, bool))] = sizes
        sizes = full
    off = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    rows = np.concatenate(parts).astype(np.int64) if parts else np.zeros((0, 4), np.int64)
    return off, rows.reshape(-1, 4)
