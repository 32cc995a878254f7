"""The PostgreSQL + pgvector store, for many engine processes sharing one history: the one SQL store
(sql_store.py) with the PostgreSQL dialect, plus what PostgreSQL does its own way (a connection pool and the
write lock, BM25 over ``tsvector`` postings, pgvector, array writes through ``unnest``, NUL-safe text).

Opened by URL (``postgresql://user@host:port/db``).  Psycopg 3 with a small connection pool: reads
outside a transaction borrow any pooled connection (so threads of one process read in parallel); a
``transaction()`` pins one connection to the calling thread until it ends; nested calls are SAVEPOINTs.
Parameterised SQL only.

**Concurrency (why the change feed never skips a number).**  Every outermost ``transaction()`` first
takes one transaction-scoped advisory lock (``pg_advisory_xact_lock``), held until COMMIT or ROLLBACK,
in every process on the database.  Write transactions are therefore serial, exactly as SQLite's
``BEGIN IMMEDIATE``: the sequence number a writer takes (a counter row in ``meta``) is committed before
the next writer can take the following one, so sequence order is commit order, and a reader whose
snapshot shows ``seq = n`` sees every row stamped ``<= n`` and none above.  ``changes_since`` reads in one
REPEATABLE READ snapshot.  Read-modify-write inside ``transaction()`` sees the latest commit (READ
COMMITTED after the lock), node indices and edge keys come from transactional counters that only grow,
and an idempotency key is a UNIQUE column, global to the database.  Reads (search) never wait for the
lock: PostgreSQL's MVCC serves them from the last committed state.
"""

from __future__ import annotations

import inspect
import re
import struct
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.types.string import StrBinaryDumper, StrDumperUnknown
from psycopg_pool import ConnectionPool

from ..errors import StoreError
from ..model import Edge, Node
from ..times import event_time_of, source_of
from .dialects import NUL_STAND_IN, PostgresDialect, pg_json
from .lexical import lexical_text
from .postgres_bulk import HnswBulk, repair_index
from .postgres_errors import DRIVER_ERRORS, raising_store_errors, store_error
from .postgres_migrations import MIGRATIONS
from .sql_ledgers import SQLLedgers
from .sql_schema import SQLSchemaTables
from .sql_store import SQLStore, check_migrations
from .urls import is_postgres_url, redacted_url  # one URL test for every interface (re-exported here)

__all__ = ["PostgresStore", "is_postgres_url", "WRITE_LOCK", "NUL_STAND_IN", "pg_json"]


# PostgreSQL text and jsonb cannot hold the character U+0000 (SQLite can): one Markdown page or GitHub item
# with a NUL byte aborted the whole sync ("PostgreSQL text fields cannot contain NUL (0x00) bytes").  Every
# string sent to the server has each NUL replaced by U+FFFD, and JSON written for jsonb use has its
# ``\u0000`` escapes replaced by ``\ufffd``: such a text is stored with U+FFFD where the NUL was.
def _no_nul(s: str) -> str:
    return s.replace("\x00", NUL_STAND_IN) if "\x00" in s else s


class _NulSafeText(StrDumperUnknown):
    """psycopg's default string dumper, with NUL replaced (it raises ``DataError`` on one)."""

    def dump(self, obj: str):
        return super().dump(_no_nul(obj))


class _NulSafeBinary(StrBinaryDumper):
    """The binary string dumper (arrays, COPY), with NUL replaced (the server would refuse it)."""

    def dump(self, obj: str):
        return super().dump(_no_nul(obj))


def nul_safe(conn: psycopg.Connection) -> None:
    """Make ``conn`` send every ``str`` parameter with NUL replaced (the pool's ``configure``)."""
    conn.adapters.register_dumper(str, _NulSafeBinary)
    conn.adapters.register_dumper(str, _NulSafeText)  # registered last: the default for text format


WRITE_LOCK = 0x6E6772  # "ngr": the advisory lock every write transaction holds until it ends
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
BM25_K1, BM25_B = 1.2, 0.75  # FTS5's defaults


def _vec_bytes(blob: bytes) -> np.ndarray:
    """pgvector's binary form (``vector_send``): int16 dim, int16 unused, then big-endian float4."""
    return np.frombuffer(blob, dtype=">f4", offset=4).astype(np.float32)


def _tsquery_literal(lexeme: str) -> str:
    """A lexeme as a quoted tsquery operand (sent as a parameter, never spliced into SQL)."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


class _Result:
    """Rows of one statement, fetched (so the pooled connection goes back at once)."""

    def __init__(self, rows: list[tuple], rowcount: int):
        self.rows, self.rowcount = rows, rowcount

    def fetchone(self) -> Any:
        return self.rows[0] if self.rows else None

    def fetchall(self) -> list[tuple]:
        return self.rows

    def __iter__(self) -> Iterator[tuple]:
        return iter(self.rows)


class SQL:
    """What the store's sections run their statements through: the calling thread's transaction connection
    inside ``store.transaction()``, else a pooled one.  ``executemany`` (a write) needs a transaction."""

    def __init__(self, store: PostgresStore):
        self._store = store

    def execute(self, sql: str, params: Any = ()) -> _Result:
        with self._store._conn() as c:
            cur = c.execute(sql, params)
            return _Result(cur.fetchall() if cur.description else [], cur.rowcount)

    def executemany(self, sql: str, rows: list) -> None:
        self._store._many(sql, rows)


class QMark(SQL):
    """:class:`SQL` for statements written with ``?`` placeholders (the SQL the two stores share, see
    sql_ledgers.py, sql_schema.py): each ``?`` is sent as psycopg's ``%s``.  Such statements hold no ``?`` or ``%``
    of their own."""

    def execute(self, sql: str, params: Any = ()) -> _Result:
        return super().execute(sql.replace("?", "%s"), params)

    def executemany(self, sql: str, rows: list) -> None:
        super().executemany(sql.replace("?", "%s"), rows)


class _Local(threading.local):
    conn: psycopg.Connection | None = None
    depth: int = 0
    rels: dict[str, int]

    def __init__(self) -> None:
        self.rels = {}


class PostgresLedgers(SQLLedgers):
    """The learning ledgers on PostgreSQL: the one SQL section, its driver failures raised as StoreError."""


class PostgresSchemaTables(SQLSchemaTables):
    """The relation-schema tables on PostgreSQL: the one SQL section, its driver failures raised as StoreError."""


class PostgresStore(SQLStore):
    """The store on PostgreSQL + pgvector, for several processes and machines sharing one history."""

    NUL_STAND_IN = NUL_STAND_IN  # what a NUL character is stored as (ingest/sync.py names the items)
    dialect = PostgresDialect()

    @property
    def _q(self):
        """The shared statements' connection (sql_shared.py)."""
        return self.qmark

    def __init__(self, url: str, *, pool_size: int = 4, bulk: bool = True):
        if not is_postgres_url(url):
            raise StoreError(f"not a PostgreSQL URL: {url!r} (expected postgresql://...)")
        self.url = url
        self.path = redacted_url(url)
        self._local = _Local()
        self._rel_cache: dict[str, int] = {}
        self._closed = False
        try:  # one direct connection first: a wrong URL fails at once, not after the pool's timeout
            psycopg.connect(url, autocommit=True, connect_timeout=15).close()
        except psycopg.Error as exc:
            raise StoreError(f"cannot connect to {self.path}: {str(exc).strip()}") from None
        try:
            self.pool = ConnectionPool(
                url,
                min_size=1,
                max_size=max(1, int(pool_size)),
                kwargs={"autocommit": True},
                configure=nul_safe,
                open=True,
                timeout=60.0,
                name="neurongraph",
            )
            self.pool.wait(timeout=30.0)
        except DRIVER_ERRORS as exc:
            raise StoreError(f"cannot open a connection pool on {self.path}: {exc}") from None
        self.sql = SQL(self)
        self.qmark = QMark(self)
        self.ledgers = PostgresLedgers(self)
        self.schema_tables = PostgresSchemaTables(self)
        self.bulk = HnswBulk(url)  # HNSW maintenance during large vector writes (postgres_bulk.py)
        self.bulk_enabled = bulk  # False: every write maintains the index (the benchmark's baseline)
        try:
            self._migrate()
            with self.pool.connection() as c:  # a bulk load that died left the index to build
                self.repaired_index = repair_index(url, c)
        except BaseException:
            self.pool.close()
            raise

    # ------------------------------------------------------------ plumbing
    def _migrate(self) -> None:
        with self.transaction() as c:
            c.execute("CREATE TABLE IF NOT EXISTS migrations (name text PRIMARY KEY, applied_at double precision)")
            done = {r[0] for r in c.execute("SELECT name FROM migrations")}
            check_migrations(self.path, done, MIGRATIONS)
            for name, sql in MIGRATIONS:
                if name in done:
                    continue
                c.execute(sql)  # a constant script, several statements, no parameters
                c.execute("INSERT INTO migrations(name, applied_at) VALUES (%s, %s)", (name, time.time()))

    @contextmanager
    def transaction(self) -> Iterator[psycopg.Connection]:
        """Atomic unit of work (serialised with every other writer on the database); nested calls are
        SAVEPOINTs."""
        loc = self._local
        if loc.depth == 0:
            try:
                with self.pool.connection() as conn:
                    loc.conn, loc.depth, loc.rels = conn, 1, {}
                    try:
                        with conn.transaction():
                            conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
                            yield conn
                        self._rel_cache.update(loc.rels)  # relation ids are shared only once committed
                    finally:
                        loc.conn, loc.depth, loc.rels = None, 0, {}
            except DRIVER_ERRORS as exc:  # the commit, or a statement inside: a store_error like any other
                raise store_error(exc) from exc
        else:
            conn = loc.conn
            assert conn is not None
            loc.depth += 1
            try:
                with conn.transaction():
                    yield conn
            except BaseException:
                loc.rels = {}  # rows this savepoint inserted are gone (re-read on next use)
                raise
            finally:
                loc.depth -= 1

    @property
    def in_transaction(self) -> bool:
        return self._local.depth > 0

    def _tx(self) -> psycopg.Connection:
        """The calling thread's transaction connection (section methods run inside one)."""
        conn = self._local.conn
        if conn is None:
            raise StoreError("this store method must run inside store.transaction()")
        return conn

    @contextmanager
    def _conn(self) -> Iterator[psycopg.Connection]:
        """The thread's transaction connection, else any pooled one (autocommit: each statement sees the
        latest commit)."""
        conn = self._local.conn
        if conn is not None:
            yield conn
        else:
            with self.pool.connection() as c:
                yield c

    def _all(self, sql: str, params: Any = ()) -> list[tuple]:
        with self._conn() as c:
            return c.execute(sql, params).fetchall()

    def _one(self, sql: str, params: Any = ()) -> tuple | None:
        with self._conn() as c:
            return c.execute(sql, params).fetchone()

    def _many(self, sql: str, rows: list) -> None:
        if rows:
            with self._tx().cursor() as cur:
                cur.executemany(sql, rows)

    def _bump(self, key: str, delta: int) -> None:
        if delta:
            self._tx().execute("UPDATE meta SET value = (value::bigint + %s)::text WHERE key = %s", (int(delta), key))

    def _index_text(self, idxs: list[int], sign: int) -> None:
        """Add (``sign`` 1) or take away (-1) these nodes' current ``tsv`` to the full-text tables BM25 reads:
        their postings ``(lexeme, idx, tf, dl)`` and the document frequency of each lexeme."""
        if not idxs:
            return
        c = self._tx()
        c.execute(
            "INSERT INTO lexemes(lexeme, df) SELECT u.lexeme, %s * count(*) FROM nodes n, unnest(n.tsv) AS u"
            " WHERE n.idx = ANY(%s) GROUP BY u.lexeme ORDER BY u.lexeme"
            " ON CONFLICT (lexeme) DO UPDATE SET df = lexemes.df + excluded.df",
            (int(sign), idxs),
        )
        if sign < 0:
            c.execute("DELETE FROM postings WHERE idx = ANY(%s)", (idxs,))
        else:
            c.execute(
                "INSERT INTO postings(lexeme, idx, tf, dl) SELECT u.lexeme, n.idx,"
                " coalesce(array_length(u.positions, 1), 1), n.dl FROM nodes n, unnest(n.tsv) AS u"
                " WHERE n.idx = ANY(%s) ORDER BY u.lexeme, n.idx",  # in index order: each leaf page is visited once
                (idxs,),
            )

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            try:
                self.bulk.finish()  # a load this handle started: the index is built before the close returns
            except psycopg.Error as exc:
                raise store_error(exc) from exc
            finally:
                self.pool.close()

    def finish_bulk(self) -> dict | None:
        """End this handle's bulk load now (build the HNSW index unless another load still runs): the
        build's report, else None.  Without it the index is built at close() or after a pause in writes."""
        try:
            return self.bulk.finish()
        except psycopg.Error as exc:
            raise store_error(exc) from exc

    def _require_transaction(self) -> None:
        self._tx()

    @contextmanager
    def _snapshot(self) -> Iterator[None]:
        """Inside a transaction its own connection; else a pooled one in one REPEATABLE READ snapshot, which
        the shared statements (``_q``) use meanwhile."""
        loc = self._local
        if loc.conn is not None:
            yield
            return
        with self.pool.connection() as c, c.transaction():
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            loc.conn = c
            try:
                yield
            finally:
                loc.conn = None

    def _tombstone(self, seq: int, kind: str, keys: list[int]) -> None:
        self._tx().execute(
            "INSERT INTO tombstones(seq, kind, key) SELECT %s, %s, k FROM unnest(%s::bigint[]) k", (seq, kind, keys)
        )

    # ------------------------------------------------------------- nodes
    _NODE_ARRAYS = (
        "%s::bigint[], %s::text[], %s::text[], %s::text[], %s::text[], %s::text[], %s::float8[], %s::text[],"
        " %s::float8[], %s::text[], %s::text[], %s::int[]"
    )

    def _write_nodes(
        self, seq: int, now: float, first: int, new: list[Node], old: list[Node], existing: dict[str, tuple[int, str]]
    ) -> None:
        """Rows through ``unnest`` of arrays, the text as ``tsv`` with its postings and counts (BM25)."""
        c = self._tx()
        old_idx = [existing[n.id][0] for n in old]
        r = c.execute("SELECT coalesce(sum(dl), 0) FROM nodes WHERE idx = ANY(%s)", (old_idx,)).fetchone()
        old_dl = int(r[0]) if r else 0
        lex = {n.id: lexical_text(n.body) for n in (*new, *old)}
        dl = {k: len(_TOKEN.findall(v)) for k, v in lex.items()}
        self._index_text(old_idx, -1)  # their old text leaves the counts
        for part, idxs in ((new, [first + k for k in range(len(new))]), (old, old_idx)):
            if not part:
                continue
            arrays = (
                idxs,
                [n.id for n in part],
                [n.type for n in part],
                [n.title for n in part],
                [n.text for n in part],
                [pg_json(n.metadata) for n in part],
                [float(n.confidence) for n in part],
                [n.hash for n in part],
                [event_time_of(n.metadata) for n in part],
                [source_of(n.metadata) for n in part],
                [lex[n.id] for n in part],
                [dl[n.id] for n in part],
            )
            rows = f" FROM unnest({self._NODE_ARRAYS}) AS u(i, id, ty, ti, tx, md, cf, h, et, so, lx, dl)"
            if part is new:
                c.execute(
                    "INSERT INTO nodes(idx, id, type, title, text, metadata, confidence, content_hash, created_at,"
                    " updated_at, seq, event_time, source, tsv, dl)"
                    " SELECT i, id, ty, ti, tx, md, cf, h, %s, %s, %s, et, so, to_tsvector('ngr', lx), dl" + rows,
                    (now, now, seq, *arrays),
                )
            else:
                c.execute(
                    "UPDATE nodes n SET type = u.ty, title = u.ti, text = u.tx, metadata = u.md, confidence = u.cf,"
                    " content_hash = u.h, updated_at = %s, seq = %s, event_time = u.et, source = u.so,"
                    " tsv = to_tsvector('ngr', u.lx), dl = u.dl" + rows + " WHERE n.idx = u.i",
                    (now, seq, *arrays),
                )
        self._index_text([first + k for k in range(len(new))] + old_idx, +1)
        self._bump("fts.docs", len(new))
        self._bump("fts.tokens", sum(dl.values()) - old_dl)

    def _unindex_nodes(self, keys: list[int]) -> None:
        r = self._tx().execute("SELECT coalesce(sum(dl), 0) FROM nodes WHERE idx = ANY(%s)", (keys,)).fetchone()
        self._index_text(keys, -1)
        self._bump("fts.docs", -len(keys))
        self._bump("fts.tokens", -(int(r[0]) if r else 0))

    # ------------------------------------------------------------- edges
    def _write_edges(self, edges: list[Edge], idx: dict[str, int], rel: dict[str, int], seq: int, now: float) -> None:
        """One row per ``(src, rel, dst)``: the last occurrence wins, meta merged in order (as repeated
        upserts), all written by one ``unnest``."""
        merged: dict[tuple[int, int, int], list] = {}
        for e in edges:
            key = (idx[e.src], rel[e.rel], idx[e.dst])
            prev = merged.get(key)
            meta = {**prev[3], **e.meta} if prev else dict(e.meta or {})
            merged[key] = [e.polarity, e.weight, e.factuality, meta]
        keys = sorted(merged)
        first = self._take_keys("edges", "eid", len(keys))  # an existing edge keeps its key (gaps are harmless)
        self._tx().execute(
            "INSERT INTO edges(eid, src, rel_id, dst, polarity, weight, factuality, meta, created_at, updated_at,"
            " seq) SELECT k, s, r, d, p, w, f, m, %s, %s, %s FROM unnest(%s::bigint[], %s::bigint[], %s::int[],"
            " %s::bigint[], %s::int[], %s::float8[], %s::float8[], %s::jsonb[]) AS u(k, s, r, d, p, w, f, m)"
            " ON CONFLICT (src, rel_id, dst) DO UPDATE SET polarity = excluded.polarity, weight = excluded.weight,"
            " factuality = excluded.factuality, meta = edges.meta || excluded.meta,"
            " updated_at = excluded.updated_at, seq = excluded.seq",
            (
                now,
                now,
                seq,
                [first + k for k in range(len(keys))],
                [k[0] for k in keys],
                [k[1] for k in keys],
                [k[2] for k in keys],
                [int(merged[k][0]) for k in keys],
                [float(merged[k][1]) for k in keys],
                [float(merged[k][2]) for k in keys],
                [pg_json(merged[k][3]) for k in keys],
            ),
        )

    def _find_edges(self, triples: list[tuple[str, str, str]]) -> list[tuple[int, int, int]]:
        return (
            self._tx()
            .execute(
                "SELECT DISTINCT e.eid, e.src, e.dst FROM unnest(%s::text[], %s::text[], %s::text[]) AS t(s, r, d)"
                " JOIN nodes s ON s.id = t.s JOIN nodes d ON d.id = t.d JOIN relations r ON r.name = t.r"
                " JOIN edges e ON e.src = s.idx AND e.dst = d.idx AND e.rel_id = r.id",
                ([t[0] for t in triples], [t[1] for t in triples], [t[2] for t in triples]),
            )
            .fetchall()
        )

    def _rel_ids(self, names: Iterable[str]) -> dict[str, int]:
        loc = self._local
        out: dict[str, int] = {}
        missing: list[str] = []
        for n in set(names):
            rid = self._rel_cache.get(n, loc.rels.get(n))
            if rid is None:
                missing.append(n)
            else:
                out[n] = rid
        if missing:
            c = self._tx()
            c.execute("INSERT INTO relations(name) SELECT unnest(%s::text[]) ON CONFLICT (name) DO NOTHING", (missing,))
            for name, rid in c.execute("SELECT name, id FROM relations WHERE name = ANY(%s)", (missing,)):
                loc.rels[name] = out[name] = int(rid)
        return out

    _EDGE_JOIN = (
        " FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst JOIN relations r ON r.id = e.rel_id"
    )

    # ---------------------------------------------------------- lexical
    def lexical_search(
        self, terms: list[str], k: int, max_postings: int | None = None
    ) -> tuple[np.ndarray, np.ndarray]:
        """Top-k BM25 matches of the OR of ``terms`` (higher = better), computed in SQL as FTS5 does:
        idf = ln((N - df + 0.5) / (df + 0.5)) (at least 1e-6), k1 = 1.2, b = 0.75, over the ``ngr`` text
        search configuration (snowball English stems, no stop words) of the CJK-split body.  Document
        frequencies come from the ``lexemes`` table, term frequencies and lengths from ``postings`` (an
        inverted index of ``tsv``: one index-only range scan per query term, as FTS5 reads its posting
        lists), N and the mean length from counters; every write keeps all of them.
        With ``max_postings``, the rarest terms are kept until their postings exceed the budget."""
        empty = np.zeros(0, np.int64), np.zeros(0)
        if not terms or k <= 0:
            return empty
        with self._conn() as c:
            # one statement: the query's lexemes, their document frequencies and the corpus counters
            found = c.execute(
                "SELECT u.lexeme, coalesce(l.df, 0), (SELECT value FROM meta WHERE key = 'fts.docs'),"
                " (SELECT value FROM meta WHERE key = 'fts.tokens') FROM (SELECT DISTINCT u.lexeme"
                " FROM unnest(%s::text[]) AS t(term), unnest(to_tsvector('ngr', t.term)) AS u) AS u"
                " LEFT JOIN lexemes l ON l.lexeme = u.lexeme ORDER BY u.lexeme",
                (list(terms),),
            ).fetchall()
            keep = [(str(r[0]), int(r[1])) for r in found if int(r[1]) > 0]
            if max_postings is not None and len(keep) > 1:
                kept: list[tuple[str, int]] = []
                total = 0
                for lex, df in sorted(keep, key=lambda x: x[1]):
                    if kept and total + df > max_postings:
                        break
                    kept.append((lex, df))
                    total += df
                keep = sorted(kept)
            if not keep:
                return empty
            n_docs = max(int(found[0][2] or 0), 1)
            avgdl = max(int(found[0][3] or 0) / n_docs, 1e-9)
            idf = [max(float(np.log((n_docs - df + 0.5) / (df + 0.5))), 1e-6) for _, df in keep]
            rows = c.execute(
                "SELECT p.idx, sum(q.idf * p.tf * (%s + 1) / (p.tf + %s * (1 - %s + %s * p.dl / %s))) AS score"
                " FROM unnest(%s::text[], %s::float8[]) AS q(lexeme, idf) JOIN postings p ON p.lexeme = q.lexeme"
                " GROUP BY p.idx ORDER BY score DESC, p.idx LIMIT %s",
                (BM25_K1, BM25_K1, BM25_B, BM25_B, avgdl, [lex for lex, _ in keep], idf, int(k)),
            ).fetchall()
        if not rows:
            return empty
        return np.array([int(r[0]) for r in rows], np.int64), np.array([float(r[1]) for r in rows])

    # ---------------------------------------------------------- vectors
    def get_vectors(self, model: str, hashes: Iterable[str]) -> dict[str, np.ndarray]:
        hashes = list(dict.fromkeys(hashes))
        if not hashes:
            return {}
        rows = self._all(
            "SELECT content_hash, vector_send(vector) FROM embeddings WHERE model = %s AND content_hash = ANY(%s)",
            (model, hashes),
        )
        return {h: _vec_bytes(b) for h, b in rows}

    def put_vectors(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        if not items:
            return
        latest = {h: np.asarray(v, np.float32) for h, v in items}  # the last vector of a repeated hash wins
        n384 = sum(1 for v in latest.values() if v.shape == (384,))  # the rows the HNSW index covers
        bulk = self.bulk
        if (
            n384
            and self.bulk_enabled
            and not self.in_transaction
            and not bulk.active
            and bulk.wants(n384, self._indexed_vectors)
        ):
            bulk.start()  # drop the index for the load (postgres_bulk.py); False leaves it maintained
        t = time.perf_counter()
        with self.transaction() as c:
            c.execute("CREATE TEMP TABLE vec_in (content_hash text, dim integer, vector vector) ON COMMIT DROP")
            with (
                c.cursor() as cur,
                cur.copy("COPY vec_in (content_hash, dim, vector) FROM STDIN (FORMAT BINARY)") as cp,
            ):
                cp.write(_copy_binary_vectors(latest))
            c.execute(
                "INSERT INTO embeddings(content_hash, model, dim, vector) SELECT content_hash, %s, dim, vector"
                " FROM vec_in ON CONFLICT (content_hash, model) DO UPDATE SET dim = excluded.dim,"
                " vector = excluded.vector",
                (model,),
            )
            c.execute("DROP TABLE vec_in")
        if n384 and bulk.active:
            bulk.touched()
        elif n384:
            bulk.maintained(time.perf_counter() - t)

    def _indexed_vectors(self) -> int:
        r = self._one("SELECT count(*) FROM embeddings WHERE dim = 384")
        return int(r[0]) if r else 0

    def all_node_vectors(self, model: str, dim: int) -> tuple[np.ndarray, np.ndarray]:
        rows = self._all(
            "SELECT n.idx, vector_send(e.vector) FROM nodes n JOIN embeddings e ON e.content_hash = n.content_hash"
            " AND e.model = %s WHERE e.dim = %s ORDER BY n.idx",
            (model, int(dim)),
        )
        if not rows:
            return np.zeros(0, np.int64), np.zeros((0, dim), np.float32)
        idx = np.fromiter((r[0] for r in rows), np.int64, len(rows))
        raw = np.frombuffer(b"".join(bytes(r[1][4:]) for r in rows), dtype=">f4").reshape(len(rows), dim)
        return idx, raw.astype(np.float32)

    def vector_search(self, model: str, query: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Top-k node indices by cosine similarity to ``query`` through pgvector (the HNSW index serves
        384-dimensional vectors; others are scanned).  Not part of the store contract: engines search their
        in-memory matrix; this is for a server-side search or a check of the index."""
        q = np.asarray(query, np.float32).tolist()
        dim = len(q)
        cast = "vector(384)" if dim == 384 else "vector"
        rows = self._all(
            f"SELECT n.idx, 1 - d FROM (SELECT content_hash, e.vector::{cast} <=> %s::real[]::{cast} AS d"
            f" FROM embeddings e WHERE e.model = %s AND e.dim = %s ORDER BY e.vector::{cast} <=> %s::real[]::{cast}"
            " LIMIT %s) AS top JOIN nodes n ON n.content_hash = top.content_hash ORDER BY d, n.idx",
            (q, model, dim, q, int(k)),
        )
        return np.array([int(r[0]) for r in rows], np.int64), np.array([float(r[1]) for r in rows])

    # ------------------------------------------------------------ copies
    def copy_to(self, path: str | Path) -> None:
        """A consistent copy of the whole database as a SQLite file at ``path`` (one snapshot), e.g. to
        try feedback on a scratch copy without touching the shared store."""
        from .postgres_copy import postgres_to_sqlite

        postgres_to_sqlite(self, str(path))


def _copy_binary_vectors(vectors: dict[str, np.ndarray]) -> bytes:
    """``(content_hash, dim, vector)`` rows in COPY's binary format (no per-float text formatting):
    a 19-byte header, per row a field count and length-prefixed fields, pgvector's binary vector form
    (int16 dim, int16 0, big-endian float4), and the -1 trailer."""
    out = [b"PGCOPY\n\xff\r\n\x00", struct.pack("!ii", 0, 0)]
    for h, v in vectors.items():
        key = h.encode("utf-8")
        dim = int(v.shape[0])
        out.append(struct.pack("!hi", 3, len(key)))
        out.append(key)
        out.append(struct.pack("!iiihh", 4, dim, 4 + 4 * dim, dim, 0))
        out.append(v.astype(">f4").tobytes())
    out.append(struct.pack("!h", -1))
    return b"".join(out)


def _driver_errors_as_store_errors(cls: type) -> None:
    """Every public method of ``cls`` (inherited ones included) reports a driver failure (server gone,
    constraint, bad data) as :class:`StoreError` (code ``store_error``), which the CLI, MCP server and
    HTTP API already report as such: no interface needs to know psycopg."""
    for name in dir(cls):
        if name.startswith("_") or name == "transaction":
            continue
        attr = inspect.getattr_static(cls, name)
        if inspect.isfunction(attr):
            setattr(cls, name, raising_store_errors(attr))


for _cls in (PostgresStore, PostgresLedgers, PostgresSchemaTables):
    _driver_errors_as_store_errors(_cls)
