"""The SQLite store, the embedded default: the one SQL store (sql_store.py) with the SQLite dialect, plus
what SQLite does its own way (connection and transactions, FTS5 and its tokens, vectors as blobs, the bulk
edge load, a read-only open on a full disk).

WAL mode (readers never block the writer), one ``BEGIN IMMEDIATE`` transaction
per write call (all or nothing), SAVEPOINTs for nesting, parameterised SQL only.
Every write transaction takes the next sequence number and stamps the rows it
touches, which is how in-memory indexes in this or another process catch up.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager, suppress
from itertools import repeat
from pathlib import Path

import numpy as np

from ..errors import StoreError
from ..model import Edge, Node
from ..times import event_time_of, source_of
from .base import EdgeArrays, LexicalPostings, effective_weights
from .dialects import SQLiteDialect
from .lexical import fts_match_expression, lexical_text
from .migrations import MIGRATIONS
from .sql_ledgers import SQLLedgers
from .sql_schema import SQLSchemaTables
from .sql_store import SQLStore, check_migrations, unknown_nodes_error
from .sqlite_util import chunks, marks, private_file

__all__ = ["SQLiteStore", "copy_database", "SQLITE_VERSION"]

SQLITE_VERSION = sqlite3.sqlite_version  # the linked SQLite library, for benchmark reports


_CLEAR_Q_TERMS = "INSERT INTO temp.q_terms(q_terms) VALUES ('delete-all')"  # empties the contentless q_terms


class SQLiteStore(SQLStore):
    """The default store: one SQLite file (WAL, FTS5), safe for several processes on one machine."""

    # "database or disk is full", "disk I/O error", "attempt to write a readonly database", "database is locked"
    WRITE_REFUSED = (sqlite3.OperationalError, StoreError)
    dialect = SQLiteDialect()

    @property
    def _q(self):
        """The shared statements' connection (sql_shared.py)."""
        return self.conn

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            p = Path(self.path)
            if p.exists() and p.is_dir():
                raise StoreError(f"{self.path} is a directory, not a database file")
            private_file(p)  # 0600 (its -wal and -shm follow), folders made for it 0700
        self.read_only: str | None = None  # why the store was opened read-only (a full disk), else None
        self._meta_overlay: dict[str, str] = {}
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30.0)
            self._enable_wal()
        except sqlite3.DatabaseError as exc:
            if not self._open_read_only(exc):
                raise StoreError(f"cannot open {self.path} as a SQLite database: {exc}") from None
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.conn.execute("PRAGMA busy_timeout=30000")
        self.conn.execute("PRAGMA cache_size=-131072")  # 128 MiB page cache: bulk index inserts stay in memory
        self.conn.execute("PRAGMA temp_store=MEMORY")
        self._lock = threading.RLock()
        self._depth = 0
        self._rel_cache: dict[str, int] = {}
        # node id -> idx for bulk edge loads (upsert_edge_columns): built on the first large batch, then
        # caught up from the change feed inside each write transaction, dropped on a rollback
        self._ids: dict[str, int] | None = None
        self._ids_seq = -1
        self._vocab_ready = False
        self.ledgers = SQLLedgers(self)  # the learning loop's tables (store/base.py: LedgerTables)
        self.schema_tables = SQLSchemaTables(self)  # the relation schema's tables (SchemaTables)
        self._migrate()

    # ------------------------------------------------------------ plumbing
    def _open_read_only(self, exc: sqlite3.DatabaseError) -> bool:
        """On a full disk (or an I/O error creating the ``-shm`` index) a WAL database cannot be opened for
        writing, and SQLite also fails to open it for reading, because the shared-memory index cannot grow.
        Open it read-only then, so search, ask, stats and show still work: ``immutable`` when the log holds
        nothing (nothing to recover; no locks, no ``-shm``), else through the ``unix-none`` VFS with
        exclusive locking mode (SQLite then keeps the WAL index in this process's memory, no ``-shm``, and
        reads the log's committed pages).  Neither takes file locks: on a disk with no room no other
        process can commit either.  Every write then fails with SQLite's "readonly database"
        error, which ``WRITE_REFUSED`` covers (a search answers with ``trace_saved: false``).  Returns
        False where this does not apply."""
        msg = str(exc)
        if self.path == ":memory:" or not Path(self.path).is_file():
            return False
        if not any(m in msg for m in ("disk I/O error", "database or disk is full")):
            return False
        with suppress(Exception):
            self.conn.close()
        wal = Path(self.path + "-wal")
        try:
            empty_log = not wal.exists() or wal.stat().st_size == 0
        except OSError:
            empty_log = False
        how = "?mode=ro&immutable=1" if empty_log else "?mode=ro&vfs=unix-none"
        from urllib.request import pathname2url  # here only: urllib.request loads http, email and ssl (~0.015 s)

        url = "file:" + pathname2url(os.path.abspath(self.path)) + how
        try:
            conn = sqlite3.connect(url, uri=True, isolation_level=None, check_same_thread=False, timeout=30.0)
            if not empty_log:
                conn.execute("PRAGMA locking_mode=EXCLUSIVE")
            conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        except sqlite3.DatabaseError:
            return False
        self.conn = conn
        self.read_only = f"the store was opened read-only after {msg!r} (is the disk full?): nothing can be saved"
        return True

    _VOLATILE_META = "graphdb."  # cache-pairing keys (graph dump token and mark): a read-only store keeps
    # them for this process only, so `ask` works on a full disk; a dump is never paired with them later

    def get_meta(self, key: str) -> str | None:
        if self.read_only is not None and key in self._meta_overlay:
            return self._meta_overlay[key]
        return super().get_meta(key)

    def set_meta(self, key: str, value: str) -> None:
        if self.read_only is not None and key.startswith(self._VOLATILE_META):
            self._meta_overlay[key] = value
            return
        super().set_meta(key, value)

    def _enable_wal(self, wait_s: float = 30.0) -> None:
        """Switch a new database to WAL.  Two processes creating the same file at once can find it locked
        while the other one switches or migrates; that is a wait, not an error."""
        deadline = time.monotonic() + wait_s
        while True:
            try:
                self.conn.execute("PRAGMA journal_mode=WAL")
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _migrate(self) -> None:
        try:  # up to date (the usual open): read only, so a store on a full disk still opens
            done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
        except sqlite3.OperationalError:
            done = None
        if done is not None and {name for name, _ in MIGRATIONS} <= done:
            check_migrations(self.path, done, MIGRATIONS)
            return
        with self.transaction():
            self.conn.execute("CREATE TABLE IF NOT EXISTS migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)")
            done = {r[0] for r in self.conn.execute("SELECT name FROM migrations")}
            check_migrations(self.path, done, MIGRATIONS)
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                for stmt in _split_sql(sql):
                    self.conn.execute(stmt)
                self.conn.execute("INSERT INTO migrations(name, applied_at) VALUES (?, ?)", (name, time.time()))

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """Atomic unit of work; nested calls become SAVEPOINTs."""
        with self._lock:
            if self.read_only is not None:
                raise StoreError(self.read_only)
            if self._depth == 0:
                self.conn.execute("BEGIN IMMEDIATE")
            else:
                self.conn.execute(f"SAVEPOINT sp{self._depth}")
            self._depth += 1
            try:
                yield self.conn
            except BaseException:
                self._depth -= 1
                self._rel_cache.clear()  # relation rows this transaction inserted are gone too
                self._ids = None  # ... and so are node rows the id map may have read inside it
                if self._depth == 0:
                    self.conn.execute("ROLLBACK")
                else:
                    self.conn.execute(f"ROLLBACK TO sp{self._depth}")
                    self.conn.execute(f"RELEASE sp{self._depth}")
                raise
            else:
                self._depth -= 1
                if self._depth == 0:
                    self.conn.execute("COMMIT")
                else:
                    self.conn.execute(f"RELEASE sp{self._depth}")

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        with self._lock:
            self.conn.execute("BEGIN")  # one consistent snapshot across the reads
            try:
                yield
            finally:
                self.conn.execute("COMMIT")

    @property
    def in_transaction(self) -> bool:
        """True inside :meth:`transaction` (callers then defer ``changes_since``, which opens its own)."""
        return self._depth > 0

    def close(self) -> None:
        with self._lock:
            self.conn.close()

    # ------------------------------------------------------------- nodes and edges
    def _write_nodes(
        self, seq: int, now: float, first: int, new: list[Node], old: list[Node], existing: dict[str, tuple[int, str]]
    ) -> None:
        c = self.conn
        c.executemany(
            "INSERT INTO nodes(idx, id, type, title, text, metadata, confidence, content_hash,"
            " created_at, updated_at, seq, event_time, source) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
            [
                (
                    first + k,
                    n.id,
                    n.type,
                    n.title,
                    n.text,
                    json.dumps(n.metadata, ensure_ascii=False),
                    n.confidence,
                    n.hash,
                    now,
                    now,
                    seq,
                    event_time_of(n.metadata),
                    source_of(n.metadata),
                )
                for k, n in enumerate(new)
            ],
        )
        c.executemany(
            "UPDATE nodes SET type=?, title=?, text=?, metadata=?, confidence=?, content_hash=?,"
            " updated_at=?, seq=?, event_time=?, source=? WHERE idx=?",
            [
                (
                    n.type,
                    n.title,
                    n.text,
                    json.dumps(n.metadata, ensure_ascii=False),
                    n.confidence,
                    n.hash,
                    now,
                    seq,
                    event_time_of(n.metadata),
                    source_of(n.metadata),
                    existing[n.id][0],
                )
                for n in old
            ],
        )
        changed = [n for n in old if existing[n.id][1] != n.hash]
        c.executemany("DELETE FROM nodes_fts WHERE rowid = ?", [(existing[n.id][0],) for n in changed])
        rows = [(first + k, lexical_text(n.body)) for k, n in enumerate(new)]
        rows += [(existing[n.id][0], lexical_text(n.body)) for n in changed]
        c.executemany("INSERT INTO nodes_fts(rowid, body) VALUES (?, ?)", rows)

    def _unindex_nodes(self, keys: list[int]) -> None:
        self.conn.executemany("DELETE FROM nodes_fts WHERE rowid = ?", [(k,) for k in keys])

    def _write_edges(self, edges: list[Edge], idx: dict[str, int], rel: dict[str, int], seq: int, now: float) -> None:
        rows = [
            (
                idx[e.src],
                rel[e.rel],
                idx[e.dst],
                e.polarity,
                e.weight,
                e.factuality,
                json.dumps(e.meta, ensure_ascii=False) if e.meta else "{}",
                now,
                now,
                seq,
            )
            for e in edges
        ]
        rows.sort(key=lambda r: (r[0], r[1], r[2]))  # B-tree friendly order: ~2x faster bulk upserts
        first = self._take_keys("edges", "eid", len(rows))  # an existing edge keeps its key (gaps are harmless)
        self.conn.executemany(
            "INSERT INTO edges(eid, src, rel_id, dst, polarity, weight, factuality, meta, created_at, updated_at, seq)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT(src, rel_id, dst) DO UPDATE SET polarity=excluded.polarity,"
            " weight=excluded.weight, factuality=excluded.factuality, meta=json_patch(edges.meta, excluded.meta),"
            " updated_at=excluded.updated_at, seq=excluded.seq",
            [(first + k, *r) for k, r in enumerate(rows)],
        )

    def _find_edges(self, triples: list[tuple[str, str, str]]) -> list[tuple[int, int, int]]:
        q = "SELECT e.eid, e.src, e.dst" + self._EDGE_JOIN + " WHERE s.id = ? AND r.name = ? AND d.id = ?"
        return [r for t in triples for r in self.conn.execute(q, t).fetchall()]

    def _rel_ids(self, names: Iterable[str]) -> dict[str, int]:
        missing = [n for n in set(names) if n not in self._rel_cache]
        if missing:
            self.conn.executemany("INSERT OR IGNORE INTO relations(name) VALUES (?)", [(n,) for n in missing])
            for part in chunks(missing):
                q = f"SELECT name, id FROM relations WHERE name IN ({marks(len(part))})"
                self._rel_cache.update(dict(self.conn.execute(q, part).fetchall()))
        return self._rel_cache

    _BULK_IDS = 2_000  # a batch naming at least this many ids resolves them through the in-memory id map

    def _node_index(self) -> dict[str, int]:
        """Every node's id -> idx, exact as of the current sequence number; call inside a write transaction
        (no other writer can change ``nodes`` meanwhile).  Kept from call to call: new and updated nodes
        since the last call are read through the ``nodes_seq`` index; a node deletion rebuilds it."""
        c = self.conn
        now_seq = self.current_seq()
        if self._ids is not None and now_seq != self._ids_seq:
            if c.execute(
                "SELECT 1 FROM tombstones WHERE seq > ? AND kind = 'node' LIMIT 1", (self._ids_seq,)
            ).fetchone():
                self._ids = None
            else:
                self._ids.update(
                    c.execute("SELECT id, idx FROM nodes INDEXED BY nodes_seq WHERE seq > ?", (self._ids_seq,))
                )
        if self._ids is None:
            self._ids = dict(c.execute("SELECT id, idx FROM nodes"))
        self._ids_seq = now_seq
        return self._ids

    def upsert_edge_columns(
        self,
        src: list[str],
        rel: list[str],
        dst: list[str],
        weight: np.ndarray,
        polarity: np.ndarray,
        factuality: np.ndarray,
    ) -> tuple[int, EdgeArrays | None]:
        """Bulk upsert of validated columns (Store.upsert_edge_columns): ids resolved through an in-memory
        map, rows deduplicated and sorted in numpy, one ``executemany``; the written edges come back as
        arrays (only edges that already existed are read back, for their learned weight)."""
        n = len(src)
        if n == 0:
            return self.current_seq(), None
        now = time.time()
        with self.transaction() as c:
            if n >= self._BULK_IDS // 2 or self._ids is not None:
                ids = self._node_index()
            else:
                ids = self.lookup_idx(set(src) | set(dst))
            get = ids.get
            s = np.fromiter(map(get, src, repeat(-1)), np.int64, n)
            d = np.fromiter(map(get, dst, repeat(-1)), np.int64, n)
            if (s < 0).any() or (d < 0).any():
                bad = {src[i] for i in np.flatnonzero(s < 0).tolist()} | {
                    dst[i] for i in np.flatnonzero(d < 0).tolist()
                }
                raise unknown_nodes_error(sorted(bad))
            rel_map = self._rel_ids(set(rel))
            r = np.fromiter(map(rel_map.__getitem__, rel), np.int64, n)
            order = np.lexsort((d, r, s))  # B-tree friendly order; stable, so equal keys stay in input order
            s, r, d = s[order], r[order], d[order]
            last = np.ones(n, bool)  # a repeated (src, rel, dst) keeps its last values
            last[:-1] = (s[1:] != s[:-1]) | (r[1:] != r[:-1]) | (d[1:] != d[:-1])
            keep = order[last]
            s, r, d = s[last], r[last], d[last]
            w = np.asarray(weight, np.float64)[keep]
            p = np.asarray(polarity, np.int64)[keep]
            f = np.asarray(factuality, np.float64)[keep]
            m = int(s.shape[0])
            seq = self.next_seq()
            first = self._take_keys("edges", "eid", m)  # an existing edge keeps its key (gaps are harmless)
            eid = np.arange(first, first + m, dtype=np.int64)
            c.executemany(
                "INSERT INTO edges(eid, src, rel_id, dst, polarity, weight, factuality, meta,"
                " created_at, updated_at, seq) VALUES (?,?,?,?,?,?,?,'{}',?,?,?)"
                " ON CONFLICT(src, rel_id, dst) DO UPDATE SET polarity=excluded.polarity, weight=excluded.weight,"
                " factuality=excluded.factuality, updated_at=excluded.updated_at, seq=excluded.seq",
                zip(
                    eid.tolist(),
                    s.tolist(),
                    r.tolist(),
                    d.tolist(),
                    p.tolist(),
                    w.tolist(),
                    f.tolist(),
                    repeat(now),
                    repeat(now),
                    repeat(seq),
                ),
            )
            # edges that existed keep their key (below `first`) and their learned part: read those back
            old = c.execute(
                "SELECT eid, src, rel_id, dst, weight, plastic, plastic_at, dormant FROM edges INDEXED BY edges_seq"
                " WHERE seq = ? AND eid < ?",
                (seq, first),
            ).fetchall()
            eff = w
            if old:
                o = np.array(old, np.float64)
                hl = c.execute("SELECT value FROM meta WHERE key = 'learning.plastic_half_life_s'").fetchone()
                hl_s = float(hl[0]) if hl else np.inf
                o_w = effective_weights(o[:, 4], o[:, 5], o[:, 6], o[:, 7], hl_s, self.clock())
                pos = {
                    (int(a), int(b), int(c_)): k for k, (a, b, c_) in enumerate(zip(s.tolist(), r.tolist(), d.tolist()))
                }
                at = np.array([pos[(int(x[1]), int(x[2]), int(x[3]))] for x in old], np.int64)
                eid[at] = o[:, 0].astype(np.int64)
                eff = w.copy()
                eff[at] = o_w
            # schema hook (src/neurongraph/schema): a no-op unless a relation schema validator is attached
            if self.validator is not None:
                self.validator.after_edges(seq)
        return seq, EdgeArrays(
            eid=eid, src=s, dst=d, rel_id=r.astype(np.int32), weight=eff, fact=f, pol=p.astype(np.int8)
        )

    # ---------------------------------------------------------- lexical
    def lexical_search(
        self, terms: list[str], k: int, max_postings: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k BM25 (FTS5) matches of the OR of ``terms``: node indices and scores (higher = better).

        FTS5 scores every document matching any term (~0.7 µs each), so a query of common
        words costs O(corpus).  With ``max_postings`` the query reads at most that many
        postings: terms are kept rarest first (their BM25 idf is highest) and the most
        frequent ones dropped once the budget is spent; the rarest term is always kept.
        """
        if not terms or k <= 0:
            return np.zeros(0, np.int64), np.zeros(0)
        if max_postings is not None and len(terms) > 1:
            terms = self._within_budget(terms, max_postings)
        rows = self.conn.execute(
            "SELECT rowid, bm25(nodes_fts) FROM nodes_fts WHERE nodes_fts MATCH ? ORDER BY rank LIMIT ?",
            (fts_match_expression(terms), int(k)),
        ).fetchall()
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0)
        arr = np.asarray(rows, dtype=np.float64)
        return arr[:, 0].astype(np.int64), -arr[:, 1]

    def _ensure_vocab(self) -> None:
        """The temp tables the tokenizer readers share (per connection, never written to the database file):
        ``q_terms`` tokenizes like ``nodes_fts`` (same tokenizer, so same stemming), ``q_inst`` lists its
        tokens, ``n_vocab``/``n_inst`` read the document frequencies and the tokens of ``nodes_fts`` itself."""
        if self._vocab_ready:
            return
        c = self.conn
        c.execute(  # contentless: only its index is read, and FTS5's 'delete-all' empties it without
            # tokenizing each row again as a DELETE would (~30% of a query-term lookup)
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.q_terms USING fts5(x, content = '', tokenize = "
            "'porter unicode61 remove_diacritics 2')"
        )
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.q_inst USING fts5vocab(temp, q_terms, instance)")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.n_vocab USING fts5vocab(main, nodes_fts, row)")
        c.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.n_inst USING fts5vocab(main, nodes_fts, instance)")
        self._vocab_ready = True

    def lexical_tokens(self, texts: list[str]) -> list[list[str]]:
        """Tokens of each text as ``nodes_fts`` makes them (in order), through the same tokenizer."""
        if not texts:
            return []
        out: list[list[str]] = [[] for _ in texts]
        with self._lock:
            self._ensure_vocab()
            c = self.conn
            c.execute(_CLEAR_Q_TERMS)
            c.executemany("INSERT INTO temp.q_terms(rowid, x) VALUES (?, ?)", list(enumerate(texts)))
            for i, term in c.execute('SELECT doc, term FROM temp.q_inst ORDER BY doc, "offset"'):
                out[i].append(term)
            c.execute(_CLEAR_Q_TERMS)
        return out

    def lexical_postings(self, nodes: list[int] | None = None) -> LexicalPostings:
        """Postings of ``nodes_fts`` rows.  All rows: read from the index itself (no tokenizing, ~10 µs a
        row); given rows: their stored text tokenized again through ``q_terms``, in batches."""
        acc = _Groups()
        with self._lock:
            self._ensure_vocab()
            c = self.conn
            outer = self._depth == 0 and not c.in_transaction
            if outer:
                c.execute("BEGIN")  # one read snapshot: the row list and the tokens agree
            try:
                if nodes is None:
                    rows = [r[0] for r in c.execute("SELECT rowid FROM nodes_fts_docsize")]
                    acc.read(c.execute("SELECT term, group_concat(doc, ' ') FROM temp.n_inst GROUP BY term"))
                else:
                    rows = []
                    for part in chunks(sorted(set(nodes))):
                        got = c.execute(
                            f"SELECT rowid, body FROM nodes_fts WHERE rowid IN ({marks(len(part))})", part
                        ).fetchall()
                        if not got:
                            continue
                        rows += [r[0] for r in got]
                        c.execute(_CLEAR_Q_TERMS)
                        c.executemany("INSERT INTO temp.q_terms(rowid, x) VALUES (?, ?)", got)
                        acc.read(c.execute("SELECT term, group_concat(doc, ' ') FROM temp.q_inst GROUP BY term"))
                    c.execute(_CLEAR_Q_TERMS)
            finally:
                if outer:
                    c.execute("COMMIT")
        return acc.postings(rows)

    def _within_budget(self, terms: list[str], max_postings: int) -> list[str]:
        """Document frequency of each term as FTS5 indexes it (same tokenizer, so same stemming)."""
        with self._lock:
            c = self.conn
            self._ensure_vocab()
            c.execute(_CLEAR_Q_TERMS)
            c.executemany("INSERT INTO temp.q_terms(rowid, x) VALUES (?, ?)", list(enumerate(terms)))
            stems = c.execute("SELECT doc, term FROM temp.q_inst").fetchall()
            if not stems:
                return terms
            qm = marks(len(stems))
            df = dict(
                c.execute(f"SELECT term, doc FROM temp.n_vocab WHERE term IN ({qm})", [t for _, t in stems]).fetchall()
            )
        per_term: dict[int, int] = {}
        for i, stem in stems:
            per_term[i] = max(per_term.get(i, 0), df.get(stem, 0))
        kept: list[int] = []
        total = 0
        for i in sorted(per_term, key=lambda t: per_term[t]):
            if kept and total + per_term[i] > max_postings:
                break
            kept.append(i)
            total += per_term[i]
        return [terms[i] for i in sorted(kept)]

    # ---------------------------------------------------------- vectors
    def get_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        hashes = list(dict.fromkeys(hashes))
        out: dict[str, np.ndarray] = {}
        for part in chunks(hashes):
            qm = marks(len(part))
            q = f"SELECT content_hash, vector FROM embeddings WHERE model = ? AND content_hash IN ({qm})"
            for h, blob in self.conn.execute(q, [model, *part]):
                out[h] = np.frombuffer(blob, dtype=np.float32)
        return out

    def all_node_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        """(node indices, matrix) of every node that has a cached vector for ``model``: one joined scan,
        for the initial load of an engine (no per-node dictionary of arrays)."""
        rows = self.conn.execute(
            "SELECT n.idx, e.vector FROM nodes n JOIN embeddings e ON e.content_hash = n.content_hash AND e.model = ?"
            " WHERE e.dim = ?",
            (model, dim),
        ).fetchall()
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        idx = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        mat = np.frombuffer(b"".join(r[1] for r in rows), dtype=np.float32).reshape(len(rows), dim)
        return idx, mat

    def put_vectors(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        if not items:
            return
        with self.transaction() as c:
            c.executemany(
                "INSERT OR REPLACE INTO embeddings(content_hash, model, dim, vector) VALUES (?,?,?,?)",
                [(h, model, int(v.shape[0]), np.asarray(v, np.float32).tobytes()) for h, v in items],
            )

    def vector_mark(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(rowid), 0) FROM embeddings").fetchone()[0])

    def release_vectors_since(self, mark: int) -> int:
        """The vectors a failed ingest cached (rowids after ``mark``, used by no node) deleted, then the WAL
        checkpointed and truncated: each step alone, each allowed to fail (the disk may still be full; a
        checkpoint first lets the delete reuse the log's space instead of growing it)."""
        gone = 0
        with self._lock:
            for step in ("checkpoint", "delete", "checkpoint"):
                try:
                    if step == "checkpoint":
                        self.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchall()
                    else:
                        with self.transaction() as c:
                            gone = c.execute(
                                "DELETE FROM embeddings WHERE rowid > ? AND content_hash NOT IN "
                                "(SELECT content_hash FROM nodes)",
                                (int(mark),),
                            ).rowcount
                except sqlite3.Error:
                    continue
        return max(gone, 0)

    # ---------------------------------------------------------- copies
    def copy_to(self, path: str | Path) -> None:
        """A consistent copy of the whole database at ``path`` (SQLite's online backup), e.g. to try
        feedback on a scratch copy without touching this store."""
        private_file(Path(path))
        dst = sqlite3.connect(str(path))
        try:
            with self._lock:
                self.conn.backup(dst)
        finally:
            dst.close()


def copy_database(src: str | Path, dst: str | Path) -> None:
    """A consistent copy of the database file ``src`` at ``dst`` through SQLite's online backup, WAL
    included, opening ``src`` read-only (so a template is never written, not even its journal)."""
    source = sqlite3.connect(f"file:{src}?mode=ro", uri=True)
    private_file(Path(dst))
    out = sqlite3.connect(str(dst))
    try:
        source.backup(out)
    finally:
        source.close()
        out.close()


def _split_sql(script: str) -> list[str]:
    """Split a migration into statements (no semicolons inside our string literals)."""
    out, buf = [], []
    for line in script.splitlines():
        stripped = line.split("--", 1)[0]
        buf.append(stripped)
        if stripped.rstrip().endswith(";"):
            stmt = "\n".join(buf).strip()
            if stmt.strip(";").strip():
                out.append(stmt)
            buf = []
    rest = "\n".join(buf).strip()
    if rest:
        out.append(rest)
    return out


class _Groups:
    """``(term, 'doc doc doc …')`` groups (one doc per token occurrence; a term may come in several groups)
    gathered into :class:`LexicalPostings`: (term, doc) pairs with their counts, docs ascending in a term."""

    def __init__(self) -> None:
        self.ids: dict[str, int] = {}
        self.tid: list[int] = []
        self.docs: list[np.ndarray] = []

    def read(self, groups: Iterable[tuple[str, str]]) -> None:
        for term, s in groups:  # parsed as they come: no list of every group's text at once
            self.tid.append(self.ids.setdefault(term, len(self.ids)))
            self.docs.append(np.fromstring(s, dtype=np.int64, sep=" "))

    def postings(self, rows: list[int]) -> LexicalPostings:
        terms = list(self.ids)
        lens = np.fromiter((d.shape[0] for d in self.docs), np.int64, len(self.docs))
        docs = np.concatenate(self.docs) if self.docs else np.zeros(0, np.int64)
        self.docs = []
        term = np.repeat(np.asarray(self.tid, np.int64), lens)
        # the index lists terms in order and each term's docs ascending: sort only when it did not
        if (
            docs.shape[0] > 1
            and not ((term[1:] > term[:-1]) | ((term[1:] == term[:-1]) & (docs[1:] >= docs[:-1]))).all()
        ):
            order = np.lexsort((docs, term))
            term, docs = term[order], docs[order]
        new = np.ones(docs.shape[0], bool)
        new[1:] = (term[1:] != term[:-1]) | (docs[1:] != docs[:-1])
        start = np.flatnonzero(new)
        tf = np.diff(np.append(start, docs.shape[0]))
        term, docs = term[start], docs[start]
        ptr = np.zeros(len(terms) + 1, np.int64)
        np.cumsum(np.bincount(term, minlength=len(terms)), out=ptr[1:])
        return LexicalPostings(np.array(sorted(rows), np.int64), terms, ptr, docs, tf.astype(np.int64))
