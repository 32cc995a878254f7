"""One side of the code history's identifier postings: term -> the commits that added (or removed) it.

Why: ovs's 20.9k commits list 1.17M (identifier, commit) pairs; made into dicts on every first use they
cost ~1 s of a cold code-aware search.  Here they stay the columns' runs (:class:`.code_facts.CodeFacts`:
one sort, each term's commits oldest first, the later-listed first within a second), and a term is
found by bisection in the facts' sorted term block (no index to build).  A term the change feed touches
(:meth:`Postings.setdefault`) becomes a dict of its own, which then answers for it.
"""

from __future__ import annotations

import bisect

import numpy as np

from .code_facts import CodeFacts

__all__ = ["Postings", "sort_posting"]


def sort_posting(idx: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Commits and times oldest first; within a second the later-listed (older, larger index) first."""
    o = np.lexsort((-idx, t))
    return idx[o], t[o]


class Postings:
    """term -> {commit index: time} (module docstring)."""

    def __init__(self) -> None:
        self._facts: CodeFacts | None = None
        self._idx = np.zeros(0, np.int64)
        self._t = np.zeros(0)
        self._run_sid = np.zeros(0, np.int64)
        self._run_lo = np.zeros(0, np.int64)
        self._run_hi = np.zeros(0, np.int64)
        self._over: dict[str, dict[int, float]] = {}

    def reset(self, facts: CodeFacts | None, key: str) -> None:
        """The postings of ``facts``' side ``key`` (``pa`` added, ``pr`` removed); no change yet."""
        self._facts, self._over = facts, {}
        if facts is None:
            self._idx, self._t = np.zeros(0, np.int64), np.zeros(0)
            self._run_sid = self._run_lo = self._run_hi = np.zeros(0, np.int64)
            return
        term, row = facts[f"{key}_term"].astype(np.int64), facts[f"{key}_commit"]
        idx, t = facts["c_idx"][row], facts["c_time"][row]
        if not _in_order(term, t, idx):  # the builder writes them in order: a sort only for another writer
            o = np.lexsort((-idx, t, term))
            term, idx, t = term[o], idx[o], t[o]
        self._idx, self._t = idx, t
        starts = np.flatnonzero(np.concatenate([[True], term[1:] != term[:-1]])) if term.size else term
        self._run_sid = term[starts]
        self._run_lo = starts.astype(np.int64)
        self._run_hi = np.append(starts[1:], term.size).astype(np.int64)

    def _run(self, term: str) -> int:
        """The run of ``term`` in the columns, or -1."""
        f = self._facts
        if f is None or not self._run_sid.size:
            return -1
        lo = f.term_lo
        sid = bisect.bisect_left(f.strings, term, lo)
        if sid >= len(f.strings) or f.strings[sid] != term:
            return -1
        k = int(np.searchsorted(self._run_sid, sid))
        return k if k < self._run_sid.size and int(self._run_sid[k]) == sid else -1

    def get(self, term: str) -> dict[int, float] | None:
        """``{commit index: time}`` of ``term`` (None: never seen); read only."""
        d = self._over.get(term)
        if d is not None:
            return d
        k = self._run(term)
        if k < 0:
            return None
        lo, hi = int(self._run_lo[k]), int(self._run_hi[k])
        return dict(zip(self._idx[lo:hi].tolist(), self._t[lo:hi].tolist()))

    def df(self, term: str) -> int:
        d = self._over.get(term)
        if d is not None:
            return len(d)
        k = self._run(term)
        return int(self._run_hi[k] - self._run_lo[k]) if k >= 0 else 0

    def sorted(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """(commit indices, times) of ``term``, oldest first (:func:`sort_posting`)."""
        d = self._over.get(term)
        if d is not None:
            return sort_posting(np.fromiter(d.keys(), np.int64, len(d)), np.fromiter(d.values(), np.float64, len(d)))
        k = self._run(term)
        if k < 0:
            return np.zeros(0, np.int64), np.zeros(0)
        lo, hi = int(self._run_lo[k]), int(self._run_hi[k])
        return self._idx[lo:hi], self._t[lo:hi]

    def setdefault(self, term: str) -> dict[int, float]:
        """``term``'s postings as a dict of its own, to change in place (a commit written or deleted)."""
        d = self._over.get(term)
        if d is None:
            d = self._over[term] = dict(self.get(term) or {})
        return d

    def vocabulary(self) -> list[str]:
        """Every term with at least one commit, sorted."""
        f = self._facts
        base = [f.strings[s] for s in self._run_sid.tolist()] if f is not None else []
        if not self._over:
            return base  # the term block is sorted: so are its runs
        kept = [t for t in base if t not in self._over]
        return sorted(kept + [t for t, d in self._over.items() if d])


def _in_order(term: np.ndarray, t: np.ndarray, idx: np.ndarray) -> bool:
    """Sorted by term, then time, then index descending (:func:`sort_posting` within each term)."""
    if term.size < 2:
        return True
    dt, tt, di = np.diff(term), np.diff(t), np.diff(idx)
    return bool(((dt > 0) | ((dt == 0) & ((tt > 0) | ((tt == 0) & (di < 0))))).all())
