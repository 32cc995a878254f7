"""Bulk vector writes on PostgreSQL: the HNSW index is dropped for a large import and built once after.

Why: maintaining pgvector's HNSW index costs each inserted vector a walk of the graph, and once the index
outgrows the server's buffers that walk reads pages back from disk (83 nodes/s at 100k on the test
server, docs/performance.md); one ``CREATE INDEX ... USING hnsw`` over the finished table, with
``maintenance_work_mem`` large enough to keep the graph in memory, is far cheaper than that.

The rule (:meth:`HnswBulk.wants`): a handle goes bulk when one write is large relative to the table
(``BULK_MIN_ROWS`` rows and at least ``BULK_FRACTION`` of the vectors already there), or when the time its
recent writes spent maintaining the index reaches what a rebuild of the table is expected to cost (the
ski-rental rule: never more than about twice the better of the two).  Writes more than ``IDLE_S`` apart
start the count again, so a server's occasional small writes never drop the index.

While bulk, the handle holds a *shared* session advisory lock (``BULK_LOCK``) on a connection of its own:
several processes may load at once, and the ``meta`` row ``PENDING`` says a load dropped the index.  The
index is built again by whoever ends the last load (taking the lock exclusively): the handle's
``close()``; a watcher thread ``IDLE_S`` after the last bulk write or ``MAX_LOAD_S`` after the load began;
or the next open of any store on the database when the row is there and no load holds the lock (a loader
killed with ``kill -9`` loses its connection, and with it the lock).  An index dropped by hand (no row)
stays dropped.  Meanwhile searches stay exact: ``vector_search`` scans the vectors instead of walking the
index.  The build takes a SHARE lock on ``embeddings``: reads go on, vector writes wait for it.  Session
advisory locks need a session: behind a pooler in transaction mode, point bulk loads at the server itself.
"""

from __future__ import annotations

import threading
import time
import warnings
from collections.abc import Callable
from typing import Any

import psycopg

__all__ = ["HnswBulk", "HNSW_INDEX", "BULK_LOCK", "PENDING", "index_present", "repair_index"]

HNSW_INDEX = "embeddings_hnsw_384"
# the migration's index (postgres_migrations.py, "vectors"), built again after a bulk load
_HNSW_DDL = (
    "CREATE INDEX IF NOT EXISTS embeddings_hnsw_384 ON embeddings USING hnsw ((vector::vector(384)) vector_cosine_ops)"
    " WHERE dim = 384"
)
PENDING = "hnsw.rebuild"  # meta row: a load dropped the index; whoever ends the last load builds it
BULK_LOCK = 0x6E6762  # "ngb": held shared by every bulk loader, exclusively by the one rebuilding the index
BULK_MIN_ROWS = 1_000  # a write this large may go bulk at once ...
BULK_FRACTION = 0.25  # ... when it adds at least this fraction of the table's vectors
IDLE_S = 30.0  # a bulk load ends this long after its last write; writes further apart are not one load
MAX_LOAD_S = 900.0  # and at the latest after this long: a steady stream of writes gets its index back
BUILD_RATE = 1_200.0  # vectors/s an HNSW build is assumed to run at (measured: docs/postgres.md)
_BYTES_PER_VECTOR = 2_400  # build memory per 384-dim vector: the vector, its neighbour lists, overhead
_MEM_MIN, _MEM_MAX = 64 << 20, 4 << 30


def index_present(conn: psycopg.Connection) -> bool:
    """Whether the HNSW index exists (and is valid) in the store's schema."""
    r = conn.execute(
        "SELECT i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
        " WHERE c.relname = %s AND c.relnamespace = current_schema()::regnamespace",
        (HNSW_INDEX,),
    ).fetchone()
    return bool(r and r[0])


def rebuild_pending(conn: psycopg.Connection) -> bool:
    """Whether a bulk load dropped the index and it was not built since (``meta`` row ``PENDING``)."""
    return conn.execute("SELECT 1 FROM meta WHERE key = %s", (PENDING,)).fetchone() is not None


def build_index(conn: psycopg.Connection) -> dict[str, Any]:
    """``CREATE INDEX`` over the whole table, with the build memory sized to the table (one statement;
    ``conn`` is in autocommit and holds ``BULK_LOCK`` exclusively)."""
    rows = int(conn.execute("SELECT count(*) FROM embeddings WHERE dim = 384").fetchone()[0])
    mem = min(max(int(rows * _BYTES_PER_VECTOR * 1.25), _MEM_MIN), _MEM_MAX)
    conn.execute("SELECT set_config('maintenance_work_mem', %s, false)", (f"{mem // 1024}kB",))
    if not index_present(conn):  # an invalid one (a concurrent build elsewhere died) is built anew
        conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
    t = time.perf_counter()
    conn.execute(_HNSW_DDL)  # IF NOT EXISTS: a build that finished before its meta row went is kept
    built = time.perf_counter() - t
    conn.execute("ANALYZE embeddings")  # the load changed the table: the planner's counts, before autovacuum's
    conn.execute("DELETE FROM meta WHERE key = %s", (PENDING,))
    return {
        "vectors": rows,
        "build_s": round(built, 2),
        "analyze_s": round(time.perf_counter() - t - built, 2),
        "maintenance_work_mem_mb": mem >> 20,
    }


def repair_index(url: str, check: psycopg.Connection) -> dict[str, Any] | None:
    """Build the index if a bulk load dropped it and no load holds the lock any more (the loader died);
    the build report, else None.  Every store open calls it: one catalog read on ``check`` (a pooled
    connection) when the index is there."""
    if index_present(check) or not rebuild_pending(check):
        return None  # there, or dropped on purpose
    with psycopg.connect(url, autocommit=True) as conn:
        if not conn.execute("SELECT pg_try_advisory_lock(%s)", (BULK_LOCK,)).fetchone()[0]:
            return None  # a load is running: its end builds the index
        try:
            return build_index(conn) if rebuild_pending(conn) else None
        finally:
            conn.execute("SELECT pg_advisory_unlock(%s)", (BULK_LOCK,))


class HnswBulk:
    """One store handle's bulk state: when to start a load, the load's lock and connection, its end."""

    def __init__(self, url: str):
        self.url = url
        self._conn: psycopg.Connection | None = None  # the load's session (holds BULK_LOCK shared)
        self._lock = threading.Lock()
        self._maintain_s = 0.0  # time recent writes spent inserting into the indexed table
        self._last_write = self._started = 0.0
        self._next_check = 0.0  # the maintenance time at which the rebuild estimate is checked again
        self._watcher: threading.Thread | None = None
        self._stop = threading.Event()
        self.last_build: dict[str, Any] | None = None

    @property
    def active(self) -> bool:
        return self._conn is not None

    def wants(self, rows: int, table_rows: Callable[[], int]) -> bool:
        """Whether a write of ``rows`` 384-dim vectors should start a load (``table_rows()``: the vectors
        already there, counted only when the answer depends on it)."""
        now = time.monotonic()
        if now - self._last_write > IDLE_S:
            self._maintain_s, self._next_check = 0.0, 0.0
        self._last_write = now
        if rows >= BULK_MIN_ROWS and rows >= BULK_FRACTION * table_rows():
            return True
        if self._maintain_s >= max(1.0, self._next_check):
            expected = table_rows() / BUILD_RATE
            if self._maintain_s >= expected:
                return True
            self._next_check = expected
        return False

    def maintained(self, seconds: float) -> None:
        """A write into the indexed table took ``seconds`` (the ski-rental's running cost)."""
        self._maintain_s += seconds

    def start(self) -> bool:
        """Take the shared lock and drop the index; False (nothing changed) when a rebuild is running or
        the table stays locked by readers for long."""
        with self._lock:
            if self._conn is not None:
                return True
            conn = psycopg.connect(self.url, autocommit=True)
            try:
                if not conn.execute("SELECT pg_try_advisory_lock_shared(%s)", (BULK_LOCK,)).fetchone()[0]:
                    conn.close()
                    return False
                if not index_present(conn) and not rebuild_pending(conn):
                    conn.close()  # dropped on purpose (no server-side search): nothing to keep up
                    return False
                with conn.transaction():
                    conn.execute("SET LOCAL lock_timeout = '20s'")
                    conn.execute(
                        "INSERT INTO meta(key, value) VALUES (%s, 'pending') ON CONFLICT (key) DO NOTHING", (PENDING,)
                    )
                    conn.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")  # a constant identifier
            except psycopg.Error:
                conn.close()  # the lock goes with the session
                return False
            self._conn = conn
            self._last_write = self._started = time.monotonic()
            self._stop.clear()
            self._watcher = threading.Thread(target=self._watch, name="ngr-hnsw-bulk", daemon=True)
            self._watcher.start()
            return True

    def touched(self) -> None:
        """A bulk write just ended (the idle clock starts again)."""
        self._last_write = time.monotonic()

    def _watch(self) -> None:
        while not self._stop.wait(min(IDLE_S / 3, 5.0)):
            now = time.monotonic()
            if now - self._last_write >= IDLE_S or now - self._started >= MAX_LOAD_S:
                try:
                    self.finish(from_watcher=True)
                except psycopg.Error as exc:  # the server went away: the next open builds the index
                    warnings.warn(f"HNSW index not rebuilt after a bulk load: {exc}", RuntimeWarning, stacklevel=1)
                return

    def finish(self, *, from_watcher: bool = False) -> dict[str, Any] | None:
        """End this handle's load: release the shared lock and, when no other load holds it, build the
        index (the build report; None when another load will build it)."""
        with self._lock:
            conn = self._conn  # still active until the index is built
            if conn is None:
                return None
            self._stop.set()
            watcher, self._watcher = self._watcher, None
            try:
                conn.execute("SELECT pg_advisory_unlock_shared(%s)", (BULK_LOCK,))
                if not conn.execute("SELECT pg_try_advisory_lock(%s)", (BULK_LOCK,)).fetchone()[0]:
                    return None  # another process is still loading: it builds the index when it ends
                try:
                    self.last_build = build_index(conn) if rebuild_pending(conn) else None
                finally:
                    conn.execute("SELECT pg_advisory_unlock(%s)", (BULK_LOCK,))
                return self.last_build
            finally:
                conn.close()
                self._conn = None
                self._maintain_s, self._next_check = 0.0, 0.0
                if watcher is not None and not from_watcher:
                    watcher.join(timeout=5)
