"""In-memory BM25: the lexical stage of a search without a full-text query per search (issue 18).

SQLite's FTS5 stays the durable text store and the reference ranking; this index holds the same
postings in numpy arrays and scores them the way FTS5's ``bm25()`` does, so a search gets the
same candidates, in the same order, with the same scores:

* tokens come from the store (``Store.lexical_postings`` / ``Store.lexical_tokens``: SQLite's own
  tokenizer, so the same stemming and folding), never from a tokenizer of ours;
* score of a row = sum over the query's phrases of
  ``idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * dl / avgdl))`` with k1 = 1.2, b = 0.75,
  ``idf = ln((N - df + 0.5) / (df + 0.5))`` (1e-6 when not positive), N the rows, avgdl their mean
  length in tokens, evaluated in FTS5's order of operations (bit-identical doubles);
* a term that the tokenizer splits into several tokens (or none) is a phrase query in FTS5; those
  queries are not answered here (``search`` returns ``None``) and go to the store;
* ``max_postings`` keeps terms rarest first until that many postings, the rarest always, exactly as
  ``SQLiteStore.lexical_search`` does; ties are ordered by node index, as FTS5 orders them.

Layout: immutable segments, each a CSR over term ids (``ptr``, ``docs`` ascending, ``tf``); a change
replaces a row by a new small segment, and segments of similar size are merged (a log-structured
merge), so one change costs about its own postings, not the corpus.  A row's live segment is
``seg_of[row]``: postings of older versions of the row are skipped by that test until a merge drops
them.  A query gathers its terms' posting slices, accumulates into a scratch array and selects the
top k with ``argpartition``: no Python loop over documents, no scan of the corpus.

:class:`LexicalIndex` adds the engine-facing life cycle: built lazily (the first search of an engine
still asks the store, so a one-shot command never pays for a build), changed rows queued by
``changed`` and applied at the next search, query-term tokens cached, and the arrays exported to and
restored from the engine snapshot.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["BM25Index", "LexicalIndex", "check_arrays", "K1", "B"]

K1 = 1.2  # FTS5 bm25() defaults (fts5_aux.c)
B = 0.75
_IDF_FLOOR = 1e-6


@dataclass
class _Segment:
    serial: int
    ptr: np.ndarray  # int64 per term id known when built, + 1
    docs: np.ndarray  # int32 row per posting, ascending within a term
    tf: np.ndarray  # int32
    rows: np.ndarray  # int64 rows that had this segment as their live one when built (tokens or not)
    dead: int = 0  # of those, rows replaced or removed since


class BM25Index:
    """BM25 postings of a set of rows (node indices), scored like FTS5's ``bm25()``.  Not thread-safe (a
    query uses shared scratch arrays), like the engine that owns it."""

    def __init__(self) -> None:
        self.vocab: dict[str, int] = {}
        self.seg_of = np.full(0, -1, np.int64)  # live segment serial per row, -1 = not indexed
        self.dl = np.zeros(0, np.int64)  # tokens per row
        self.n_rows = 0
        self.n_tokens = 0
        self._segs: list[_Segment] = []
        self._serial = 0
        self._scratch = np.zeros(0, np.float64)
        self._pos = np.zeros(0, np.int64)
        self._norm = np.zeros(0, np.float64)  # k1 * (1 - b + b * dl / avgdl) per row, for _norm_key
        self._norm_key: tuple = ()

    # ------------------------------------------------------------ updates
    def _grow(self, n: int) -> None:
        if n > self.seg_of.shape[0]:
            extra = max(n - self.seg_of.shape[0], self.seg_of.shape[0] // 4)
            self.seg_of = np.concatenate([self.seg_of, np.full(extra, -1, np.int64)])
            self.dl = np.concatenate([self.dl, np.zeros(extra, np.int64)])
            self._scratch = np.zeros(self.seg_of.shape[0], np.float64)
            self._pos = np.zeros(self.seg_of.shape[0], np.int64)

    def remove(self, rows: np.ndarray) -> None:
        """Drop rows (absent ones are ignored)."""
        rows = np.unique(np.asarray(rows, np.int64))
        rows = rows[(rows >= 0) & (rows < self.seg_of.shape[0])]
        rows = rows[self.seg_of[rows] >= 0]
        if rows.size == 0:
            return
        serials, counts = np.unique(self.seg_of[rows], return_counts=True)
        by_serial = {s.serial: s for s in self._segs}
        for s, c in zip(serials.tolist(), counts.tolist()):
            if s in by_serial:
                by_serial[s].dead += c
        self.n_rows -= int(rows.size)
        self.n_tokens -= int(self.dl[rows].sum())
        self.seg_of[rows] = -1
        self.dl[rows] = 0
        self._merge()

    def add(self, rows: np.ndarray, terms: list[str], ptr: np.ndarray, docs: np.ndarray, tf: np.ndarray) -> None:
        """Index (or re-index) ``rows`` with their postings (``LexicalPostings`` layout); rows without a
        posting are indexed as empty (they count in N, as an FTS5 row without tokens does)."""
        rows = np.unique(np.asarray(rows, np.int64))
        self.remove(rows)
        if rows.size == 0:
            return
        self._grow(int(rows.max()) + 1)
        tid = np.fromiter((self.vocab.setdefault(t, len(self.vocab)) for t in terms), np.int64, len(terms))
        term = np.repeat(tid, np.diff(ptr))
        docs, tf = np.asarray(docs, np.int64), np.asarray(tf, np.int64)
        listed = np.zeros(self.seg_of.shape[0] + 1, bool)
        listed[rows] = True
        keep = listed[np.minimum(docs, self.seg_of.shape[0])]  # postings of rows not listed are not ours
        if not keep.all():
            term, docs, tf = term[keep], docs[keep], tf[keep]
        del keep, listed
        seg = self._build(term, docs, tf, rows)
        del term, docs, tf
        self.seg_of[rows] = seg.serial
        if seg.docs.shape[0] < 100_000:
            np.add.at(self.dl, seg.docs, seg.tf)
        else:  # (exact: counts far below 2**53)
            self.dl += np.bincount(seg.docs, weights=seg.tf, minlength=self.dl.shape[0]).astype(np.int64)
        self.n_rows += int(rows.size)
        self.n_tokens += int(self.dl[rows].sum())
        self._segs.append(seg)
        self._merge()

    def _build(self, term: np.ndarray, docs: np.ndarray, tf: np.ndarray, rows: np.ndarray) -> _Segment:
        ptr = np.zeros(len(self.vocab) + 1, np.int64)
        np.cumsum(np.bincount(term, minlength=len(self.vocab)), out=ptr[1:])
        self._serial += 1
        if (
            term.shape[0] > 1
            and not (  # a whole store's postings arrive in order: no sort then
                (term[1:] > term[:-1]) | ((term[1:] == term[:-1]) & (docs[1:] > docs[:-1]))
            ).all()
        ):
            order = np.lexsort((docs, term))
            docs, tf = docs[order], tf[order]
        return _Segment(self._serial, ptr, docs.astype(np.int32), tf.astype(np.int32), rows)

    def _live(self, s: _Segment) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(term id, row, tf) of a segment's live postings."""
        term = np.repeat(np.arange(s.ptr.shape[0] - 1, dtype=np.int64), np.diff(s.ptr))
        docs = s.docs.astype(np.int64)
        ok = self.seg_of[docs] == s.serial if s.dead else np.ones(docs.shape[0], bool)
        return term[ok], docs[ok], s.tf[ok].astype(np.int64)

    def _rebuild(self, segs: list[_Segment]) -> _Segment:
        """One segment of the live postings and rows of ``segs``; their rows now live in it."""
        parts = [self._live(s) for s in segs]
        term, docs, tf = (np.concatenate([p[i] for p in parts]) for i in range(3))
        rows = np.concatenate([s.rows[self.seg_of[s.rows] == s.serial] for s in segs])
        seg = self._build(term, docs, tf, np.sort(rows))
        self.seg_of[rows] = seg.serial
        return seg

    def _merge(self) -> None:
        """Merge the newest segments while the newer one is at least half the older (sizes stay
        geometric: O(log) segments, each posting rewritten O(log) times); compact dead-heavy ones."""
        segs = self._segs
        for i, s in enumerate(segs):
            if 2 * s.dead > s.rows.shape[0]:
                segs[i] = self._rebuild([s])
        while len(segs) >= 2 and (2 * segs[-1].docs.shape[0] >= segs[-2].docs.shape[0]):
            b, a = segs.pop(), segs.pop()
            segs.append(self._rebuild([a, b]))

    def compact(self) -> None:
        """One segment, no dead postings (before an export)."""
        if len(self._segs) > 1 or (self._segs and self._segs[0].dead):
            self._segs = [self._rebuild(self._segs)]

    # ------------------------------------------------------------ queries
    def _postings(self, tid: int) -> tuple[np.ndarray, np.ndarray]:
        """Live (rows, tf) of one term."""
        ds, fs = [], []
        for s in self._segs:
            if tid >= s.ptr.shape[0] - 1:
                continue
            lo, hi = int(s.ptr[tid]), int(s.ptr[tid + 1])
            if lo == hi:
                continue
            d, f = s.docs[lo:hi], s.tf[lo:hi]
            if s.dead:
                ok = self.seg_of[d] == s.serial
                d, f = d[ok], f[ok]
            ds.append(d)
            fs.append(f)
        if not ds:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        if len(ds) == 1:
            return ds[0], fs[0]
        return np.concatenate(ds), np.concatenate(fs)

    def df(self, tid: int) -> int:
        """Rows containing term ``tid``."""
        n = 0
        for s in self._segs:
            if tid < s.ptr.shape[0] - 1:
                lo, hi = int(s.ptr[tid]), int(s.ptr[tid + 1])
                n += hi - lo if not s.dead else int((self.seg_of[s.docs[lo:hi]] == s.serial).sum())
        return n

    def search(self, phrases: list[str], k: int, max_postings: int | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Top-k rows of the OR of single-token ``phrases`` (tokens as the store makes them; repeats
        count again, as repeated phrases do in FTS5): rows and scores, best first, ties by row."""
        if not phrases or k <= 0 or self.n_tokens == 0:  # (no token anywhere: nothing can match)
            return np.zeros(0, np.int64), np.zeros(0)
        tids = [self.vocab.get(p, -1) for p in phrases]
        dfs = [self.df(t) if t >= 0 else 0 for t in tids]
        if max_postings is not None and len(phrases) > 1:  # SQLiteStore._within_budget, on our counts
            kept: list[int] = []
            total = 0
            # FTS5 lists the terms in token order (fts5vocab): that order breaks ties of frequency
            for i in sorted(range(len(phrases)), key=lambda j: (dfs[j], phrases[j].encode(), j)):
                if kept and total + dfs[i] > max_postings:
                    break
                kept.append(i)
                total += dfs[i]
            keep = sorted(kept)
        else:
            keep = list(range(len(phrases)))
        n_rows = self.n_rows if self.n_rows > 0 else 1
        avgdl = float(self.n_tokens) / float(n_rows)
        key = (self.n_rows, self.n_tokens, self._serial, self.seg_of.shape[0])
        if self._norm_key != key:  # once per change of the rows, not per query
            self._norm = K1 * ((1 - B) + B * self.dl.astype(np.float64) / avgdl)  # FTS5's order of operations
            self._norm_key = key
        live = [i for i in keep if dfs[i] > 0]
        if not live:
            return np.zeros(0, np.int64), np.zeros(0)
        idfs = [math.log((n_rows - dfs[i] + 0.5) / (dfs[i] + 0.5)) for i in live]
        idfs = [x if x > 0.0 else _IDF_FLOOR for x in idfs]
        parts = [self._postings(tids[i]) for i in live]
        if len(parts) == 1:
            d, f = parts[0]
            w: float | np.ndarray = idfs[0]
        else:  # every phrase's postings at once, each with its phrase's idf
            d = np.concatenate([p[0] for p in parts])
            f = np.concatenate([p[1] for p in parts])
            w = np.repeat(np.array(idfs), [p[0].shape[0] for p in parts])
        ff = f.astype(np.float64)
        contrib = w * ((ff * (K1 + 1.0)) / (ff + self._norm[d]))
        if len(parts) == 1:  # one phrase: each row once, its score is its contribution
            cat, scores = d, contrib
        else:  # sum per row in phrase order (add.at adds in array order, as FTS5 sums its phrases)
            scratch, pos = self._scratch, self._pos
            np.add.at(scratch, d, contrib)
            at = np.arange(d.shape[0])
            pos[d] = at  # one position per distinct row (whichever write lands) picks it exactly once
            cat = d[pos[d] == at]
            scores = scratch[cat]
            scratch[cat] = 0.0
        if cat.shape[0] > k:
            kth = np.partition(scores, cat.shape[0] - k)[cat.shape[0] - k]
            cand = np.flatnonzero(scores >= kth)
            cat, scores = cat[cand], scores[cand]
        order = np.lexsort((cat, -scores))[:k]
        return cat[order].astype(np.int64), scores[order]

    # ------------------------------------------------------------ export
    def export(self) -> dict[str, np.ndarray]:
        """The index as flat arrays (one compacted segment): ``rows``, ``ptr``, ``docs``, ``tf`` and the
        vocabulary (``terms``, UTF-8, NUL-separated)."""
        self.compact()
        seg = self._segs[0] if self._segs else None
        names = sorted(self.vocab, key=self.vocab.__getitem__)
        ptr = np.zeros(len(names) + 1, np.int64)
        if seg is not None:
            ptr[: seg.ptr.shape[0]] = seg.ptr
            ptr[seg.ptr.shape[0] :] = seg.ptr[-1]
        return {
            "rows": np.flatnonzero(self.seg_of >= 0).astype(np.int64),
            "terms": np.frombuffer("\0".join(names).encode(), np.uint8),
            "ptr": ptr,
            "docs": seg.docs if seg is not None else np.zeros(0, np.int32),
            "tf": seg.tf if seg is not None else np.zeros(0, np.int32),
        }

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray], n: int, checked: bool = False) -> BM25Index | None:
        """An index from ``export()``'s arrays over rows < ``n``, or ``None`` when they do not fit together
        (``checked``: ``check_arrays`` already said they do, as ``load_snapshot`` does)."""
        if not checked and not check_arrays(a, n):
            return None
        rows, ptr = np.asarray(a["rows"], np.int64), np.asarray(a["ptr"], np.int64)
        docs, tf = np.asarray(a["docs"], np.int32), np.asarray(a["tf"], np.int32)  # (no copy: export's types)
        names = _names(a["terms"])
        assert names is not None
        ix = cls()
        ix.vocab = {t: i for i, t in enumerate(names)}
        ix._grow(n)
        ix._serial = 1
        ix._segs = [_Segment(1, ptr, docs, tf, rows)]
        ix.seg_of[rows] = 1
        ix.dl[: ix.dl.shape[0]] = np.bincount(docs, weights=tf, minlength=ix.dl.shape[0]).astype(np.int64)
        ix.n_rows = int(rows.size)
        ix.n_tokens = int(tf.sum(dtype=np.int64))
        return ix


def _names(blob: np.ndarray) -> list[str] | None:
    try:
        raw = bytes(np.asarray(blob, np.uint8))
        return raw.decode().split("\0") if raw else []
    except (UnicodeDecodeError, ValueError, TypeError):
        return None


def check_arrays(a: dict[str, np.ndarray], n: int) -> bool:
    """Whether ``export()``-style arrays describe a valid index over rows < ``n`` (a snapshot's fields are
    checked before use: a damaged file means a rebuild, never a crash or a wrong ranking's silent use)."""
    try:
        rows, ptr, docs, tf, terms = (a[k] for k in ("rows", "ptr", "docs", "tf", "terms"))
    except KeyError:
        return False
    if any(x.ndim != 1 or x.dtype.kind not in "iu" for x in (rows, ptr, docs, tf, terms)):
        return False
    names = _names(terms)
    if names is None or docs.shape != tf.shape or ptr.shape[0] != len(names) + 1:
        return False
    if len(set(names)) != len(names) or "" in names:
        return False
    # (comparisons in the arrays' own integer types: no copies, no overflowing differences)
    if int(ptr[0]) != 0 or int(ptr[-1]) != docs.shape[0] or (ptr[1:] < ptr[:-1]).any():
        return False
    if rows.size and (int(rows.min()) < 0 or int(rows.max()) >= n or (rows[1:] <= rows[:-1]).any()):
        return False
    if tf.size and (int(tf.min()) < 1 or int(tf.max()) >= 2**31):
        return False
    if docs.size:
        if int(docs.min()) < 0 or int(docs.max()) >= n:
            return False
        member = np.zeros(n, bool)
        member[rows] = True
        if not member[docs].all():
            return False
        later = docs[1:] <= docs[:-1]  # not ascending ...
        heads = ptr[1:-1]
        later[heads[(heads > 0) & (heads < docs.shape[0])] - 1] = False  # ... except where a term starts
        if later.any():  # ascending within a term: no row twice
            return False
    return True


class LexicalIndex:
    """The engine's in-memory lexical stage: a :class:`BM25Index` kept in step with the store.

    ``tokens(texts)`` and ``postings(rows | None)`` are the store's ``lexical_tokens`` and
    ``lexical_postings``; either returning ``None`` switches this off for good (the engine then keeps
    asking the store).  ``known(rows)`` says which rows the engine's arrays hold (live nodes)."""

    BUILD_AFTER = 1  # searches answered by the store before the index is built (a one-shot command never builds)
    REBUILD_FRACTION = 0.25  # pending changes above this fraction of the rows: rebuild from the store's index

    def __init__(
        self,
        tokens: Callable[[list[str]], list[list[str]] | None],
        postings: Callable,
        known: Callable[[np.ndarray], np.ndarray],
    ):
        self._tokens = tokens
        self._postings = postings
        self._known = known
        self.index: BM25Index | None = None
        self.supported = True
        self.searches = 0
        self._pending: list[np.ndarray] = []
        self._n_pending = 0
        self._term_tokens: dict[str, list[str]] = {}
        self.restored = False  # the index came from a snapshot (no build)

    def changed(self, rows: np.ndarray) -> None:
        """Rows added, updated or deleted in the store (applied at the next search)."""
        if self.index is not None and rows.size:
            self._pending.append(np.asarray(rows, np.int64))
            self._n_pending += int(rows.size)

    def drop(self) -> None:
        self.index, self._pending, self._n_pending, self.restored = None, [], 0, False

    def restore(self, index: BM25Index) -> None:
        self.index, self._pending, self._n_pending, self.restored = index, [], 0, True

    def _build(self) -> BM25Index | None:
        p = self._postings(None)
        if p is None:
            self.supported = False
            return None
        ix = BM25Index()
        rows = p.rows[self._known(p.rows)]  # rows another process added after our refresh wait for it
        ix.add(rows, p.terms, p.ptr, p.docs, p.tf)
        return ix

    def current(self) -> BM25Index | None:
        """The index with every pending change applied (built when due), or ``None`` (ask the store)."""
        if not self.supported:
            return None
        if self.index is None:
            self.searches += 1
            if self.searches <= self.BUILD_AFTER:
                return None
            self.index = self._build()
            self._pending, self._n_pending = [], 0
        self._catch_up()
        return self.index

    def _catch_up(self) -> None:
        ix = self.index
        if ix is None or not self._pending:
            return
        if self._n_pending > max(1000, self.REBUILD_FRACTION * ix.n_rows):
            self.index = self._build()  # reading the store's index beats tokenizing most rows again
        else:
            rows = np.unique(np.concatenate(self._pending))
            ix.remove(rows)
            rows = rows[self._known(rows)]
            if rows.size:
                p = self._postings(rows.tolist())
                ix.add(p.rows[self._known(p.rows)], p.terms, p.ptr, p.docs, p.tf)
        self._pending, self._n_pending = [], 0

    def export(self) -> dict[str, np.ndarray] | None:
        """The index's arrays for a snapshot (pending changes applied), or ``None`` when it is not built."""
        self._catch_up()
        return self.index.export() if self.index is not None else None

    def phrases(self, terms: list[str]) -> list[str] | None:
        """Each query term's single token, or ``None`` when one is not exactly one token (a phrase query)."""
        todo = [t for t in terms if t not in self._term_tokens]
        if todo:
            got = self._tokens(todo)
            if got is None:
                self.supported = False
                return None
            if len(self._term_tokens) > 100_000:
                self._term_tokens.clear()
            self._term_tokens.update(zip(todo, got))
        out = []
        for t in terms:
            toks = self._term_tokens[t]
            if len(toks) != 1:
                return None
            out.append(toks[0])
        return out

    def search(self, terms: list[str], k: int, max_postings: int | None) -> tuple[np.ndarray, np.ndarray] | None:
        """Like ``Store.lexical_search``, from memory; ``None`` when the store has to answer."""
        ix = self.current()
        if ix is None:
            return None
        if not terms or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        phrases = self.phrases(terms)
        if phrases is None:
            return None
        return ix.search(phrases, k, max_postings)
