"""The code history's identifier postings (pickaxe): which commits added or removed an identifier, scored.

It exists apart from :class:`~.code_history.CodeHistory` so that the search's reading of identifiers
(``ensure_sync``, ``--json``) reads in one place: both sides' postings (:class:`.code_postings.Postings`),
kept in step by the index's change feed (:meth:`Pickaxe.add` / :meth:`Pickaxe.remove`), the substring
lookup that ``git log -S`` semantics need, and the idf-weighted scores of :meth:`Pickaxe.term_matches` and
:meth:`Pickaxe.recent_changers`.  ``n_docs`` (the commits the index holds) is the caller's.
"""

from __future__ import annotations

import math

import numpy as np

from .code_facts import CodeFacts
from .code_postings import Postings

__all__ = ["MAX_SUPERSTRINGS", "MIN_SUBSTRING", "Pickaxe"]

MIN_SUBSTRING = 6  # a named identifier this long also matches the identifiers containing it (git log -S)
MAX_SUPERSTRINGS = 64  # ... unless more contain it than this (then it is too generic: whole matches only)


def _side_weights(n: int, side: str, intent: str, side_weights: tuple[float, float]) -> np.ndarray:
    """Weights of one posting list (oldest first) of ``side``: with an intent, the first adder (or the last
    remover) counts fully, the rest of that side a quarter and the other side a tenth."""
    if intent == "introduced":
        w = np.full(n, 0.25 if side == "added" else 0.1)
        if side == "added":
            w[0] = 1.0
        return w
    if intent == "removed":
        w = np.full(n, 0.25 if side == "removed" else 0.1)
        if side == "removed":
            w[-1] = 1.0
        return w
    return np.full(n, side_weights[0] if side == "added" else side_weights[1])


class Pickaxe:
    """Both sides' postings, term -> the commits that ``added`` / ``removed`` it, and their scoring."""

    def __init__(self) -> None:
        self._postings = {"added": Postings(), "removed": Postings()}
        self._post_sorted: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._vocab: dict[str, tuple[str, np.ndarray, list[str]]] = {}  # side -> the terms joined, for substrings

    def reset(self, facts: CodeFacts) -> None:
        """Start over from the columns of ``facts``."""
        self._postings["added"].reset(facts, "pa")
        self._postings["removed"].reset(facts, "pr")
        self._post_sorted.clear()
        self._vocab.clear()

    def forget_vocabulary(self) -> None:
        """Drop the joined terms of the substring lookup (rows changed: made again on its next use)."""
        self._vocab.clear()

    def add(self, idx: int, time: float, added: list[str], removed: list[str]) -> None:
        """Commit ``idx`` (at ``time``) added the identifiers ``added`` and removed ``removed``."""
        for side, terms in (("added", added), ("removed", removed)):
            post = self._postings[side]
            for term in dict.fromkeys(terms):
                post.setdefault(term)[idx] = time
                self._post_sorted.pop((side, term), None)

    def remove(self, idx: int, added: list[str], removed: list[str]) -> None:
        """Commit ``idx`` is gone: out of the postings of the identifiers it added and removed."""
        for side, terms in (("added", added), ("removed", removed)):
            for term in terms:
                self._postings[side].setdefault(term).pop(idx, None)
                self._post_sorted.pop((side, term), None)

    def _posting(self, side: str, term: str) -> tuple[np.ndarray, np.ndarray]:
        got = self._post_sorted.get((side, term))
        if got is None:  # oldest first; same second: the later-listed (older) first
            got = self._post_sorted[(side, term)] = self._postings[side].sorted(term)
        return got

    def _containing(self, side: str, term: str) -> list[str]:
        """The ``side`` terms that contain ``term`` (``git log -S`` counts substrings: ``CGROUP_DEVICE`` inside
        ``BPF_PROG_TYPE_CGROUP_DEVICE``), found in one joined string, not by a Python loop over the terms."""
        v = self._vocab.get(side)
        if v is None:
            terms = self._postings[side].vocabulary()
            joined = "\n".join(terms)
            starts = np.zeros(len(terms), np.int64)
            if terms:
                starts[1:] = np.cumsum(np.fromiter((len(t) + 1 for t in terms[:-1]), np.int64, len(terms) - 1))
            v = self._vocab[side] = (joined, starts, terms)
        joined, starts, terms = v
        found: list[str] = []
        at = joined.find(term)
        while at >= 0 and len(found) <= MAX_SUPERSTRINGS:
            k = int(np.searchsorted(starts, at, side="right")) - 1
            found.append(terms[k])
            nxt = int(starts[k + 1]) if k + 1 < len(terms) else len(joined)
            at = joined.find(term, nxt)
        return found

    def _family(self, side: str, term: str, substrings: bool) -> list[str]:
        """The ``side`` terms whose postings answer for ``term``: itself, and with ``substrings`` those holding it."""
        own = [term] if self._postings[side].df(term) else []
        if substrings and len(term) >= MIN_SUBSTRING:
            sup = self._containing(side, term)
            if len(sup) <= MAX_SUPERSTRINGS:
                own = list(dict.fromkeys(own + sup))
        return own

    def _union_posting(self, side: str, terms: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """One posting list (oldest first) for several terms: each commit once, at its time."""
        if len(terms) == 1:
            return self._posting(side, terms[0])
        parts = [self._posting(side, t) for t in terms]
        idx = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, np.int64)
        tm = np.concatenate([p[1] for p in parts]) if parts else np.zeros(0)
        idx, first = np.unique(idx, return_index=True)
        tm = tm[first]
        o = np.lexsort((-idx, tm))
        return idx[o], tm[o]

    def changes_of(self, term: str, side: str, as_of: float | None = None) -> tuple[list[int], list[float]]:
        """Commit indices (oldest first) that ``side`` (``"added"`` / ``"removed"``) the identifier, with times."""
        idx, t = self._posting(side, term.lower())
        if as_of is not None:
            cut = int(np.searchsorted(t, as_of, side="right"))
            idx, t = idx[:cut], t[:cut]
        return idx.tolist(), t.tolist()

    def document_frequency(self, term: str) -> int:
        """How many commits added or removed the identifier (each side counted)."""
        t = term.lower()
        return self._postings["added"].df(t) + self._postings["removed"].df(t)

    def recent_changers(
        self,
        n_docs: int,
        terms: list[str],
        as_of: float | None,
        n: int,
        visible=None,
        max_terms: int = 40,
        rare_df: int = 0,
    ) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]]]:
        """The last ``n`` commits before ``as_of`` that added or removed each of ``terms`` (a declaration or a use
        of a name the caller's lines touch, in any file), scored like :meth:`term_matches`: the idf-weighted
        share of the (``max_terms`` rarest) terms a commit was among the last changers of."""
        want = list(dict.fromkeys(t.lower() for t in terms if t))
        post = {t: self._union_posting("added", [t]) for t in want}
        for t in want:
            r = self._posting("removed", t)
            if r[0].size:
                idx = np.concatenate([post[t][0], r[0]])
                tm = np.concatenate([post[t][1], r[1]])
                idx, first = np.unique(idx, return_index=True)
                tm = tm[first]
                o = np.lexsort((-idx, tm))
                post[t] = (idx[o], tm[o])
        scored = sorted(
            ((math.log((n_docs + 1) / (post[t][0].shape[0] + 0.5)), t) for t in want if post[t][0].size),
            key=lambda x: -x[0],
        )[:max_terms]
        if not scored:
            return np.zeros(0, np.int64), np.zeros(0), {}
        norm = sum(w for w, _ in scored)
        if rare_df > 0:
            norm = max(norm, math.log((n_docs + 1) / (rare_df + 0.5)))
        acc: dict[int, float] = {}
        why: dict[int, list[str]] = {}
        for w, t in scored:
            idx, tm = post[t]
            if as_of is not None:
                idx = idx[: int(np.searchsorted(tm, as_of, side="right"))]
            if visible is not None and idx.size:
                ok = idx < visible.shape[0]
                ok[ok] = visible[idx[ok]]
                idx = idx[ok]
            for c in idx[-n:].tolist():
                acc[c] = acc.get(c, 0.0) + w
                why.setdefault(c, []).append(f"`{t}`")
        nodes = np.array(sorted(acc), np.int64)
        return nodes, np.minimum(np.array([acc[c] for c in nodes.tolist()]) / norm, 1.0), why

    def term_matches(
        self,
        n_docs: int,
        terms: list[str],
        as_of: float | None,
        intent: str = "",
        side_weights: tuple[float, float] = (1.0, 0.5),
        visible=None,
        max_terms: int = 40,
        substrings: bool = False,
        rare_df: int = 0,
    ) -> tuple[np.ndarray, np.ndarray, dict[int, list[str]]]:
        """Commits that added/removed any of ``terms`` (whole identifiers, case-insensitive), scored in [0, 1]:
        the idf-weighted share of the terms a commit changed.  ``intent`` ``"introduced"`` gives the term's
        first adder (as of ``as_of``) full weight and later adders a quarter (pickaxe's first commit);
        ``"removed"`` does the same for the last remover; otherwise adders weigh ``side_weights[0]`` and
        removers ``side_weights[1]``.  ``substrings``: a distinctive term (``MIN_SUBSTRING`` characters or more) also
        matches the identifiers containing it, as ``git log -S`` does, unless more than ``MAX_SUPERSTRINGS`` do.
        ``rare_df`` (0: off): the share is taken of at least the idf of a term ``rare_df`` commits changed, so
        terms many commits changed (``err``, ``value``) give their adders little even when nothing rarer is
        asked about.  Returns (nodes sorted, scores, node -> the evidence phrases)."""
        shown: dict[str, str] = {}
        for t in terms:
            if t:
                shown.setdefault(t.lower(), t)  # explanations name the identifier as the caller wrote it
        want = list(shown)
        scored: list[tuple[float, str]] = []
        # each (side, term)'s posting list, once: the term itself and, with substrings, those containing it
        posting = {
            (side, t): self._union_posting(side, fam)
            for t in want
            for side in ("added", "removed")
            if (fam := self._family(side, t, substrings))
        }
        for t in want:
            df = sum(posting[(side, t)][0].shape[0] for side in ("added", "removed") if (side, t) in posting)
            if df:
                scored.append((math.log((n_docs + 1) / (df + 0.5)), t))
        scored.sort(key=lambda x: -x[0])
        scored = scored[:max_terms]
        if not scored:
            return np.zeros(0, np.int64), np.zeros(0), {}
        acc: dict[int, float] = {}
        why: dict[int, list[str]] = {}
        norm = sum(w for w, _ in scored)
        if rare_df > 0:  # a share of at least one rare term's weight: common terms alone weigh little
            norm = max(norm, math.log((n_docs + 1) / (rare_df + 0.5)))
        for w, t in scored:
            for side in ("added", "removed"):
                if (side, t) not in posting:
                    continue
                idx, tm = posting[(side, t)]
                if as_of is not None:
                    cut = np.searchsorted(tm, as_of, side="right")
                    idx = idx[:cut]
                if visible is not None and idx.size:
                    ok = idx < visible.shape[0]
                    ok[ok] = visible[idx[ok]]
                    idx = idx[ok]
                if not idx.size:
                    continue
                weights = _side_weights(idx.shape[0], side, intent, side_weights)
                verb = "added" if side == "added" else "removed"
                exact = self._postings[side].get(t) or {}
                for n, v in zip(idx.tolist(), weights.tolist()):
                    acc[n] = acc.get(n, 0.0) + w * v
                    inside = "" if n in exact else " inside a longer identifier"
                    why.setdefault(n, []).append(f"{verb} `{shown[t]}`{inside}")
        nodes = np.array(sorted(acc), np.int64)
        scores = np.array([acc[n] for n in nodes.tolist()], np.float64) / norm
        return nodes, np.minimum(scores, 1.0), why
