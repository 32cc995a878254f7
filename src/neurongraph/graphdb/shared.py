"""The projection on a shared FalkorDB server: many engines, one graph per store, kept in step by writers.

Why: a private child per engine process means every process builds or loads its own copy; on a shared
server (:mod:`.remote`) the first engine that finds the graph behind the store brings it up to date
and every other engine reads the same graph.

Keys on the server, all under ``ngr:<token>:<location>`` (the store's random token, ``graphdb.token``
in its meta, the same one the private child's dump records, and :func:`store_location`):

* ``…:state`` — JSON ``{"token", "seq", "nodes", "graph"}``: the store sequence number the
  graph reflects and the graph key that holds it (the dump's ``ngr:state`` mechanism, on the server);
* ``…:g<build>`` — the graph.  A rebuild loads a *new* key and then points the state at it,
  so readers never see a half-built graph; the old key is deleted afterwards.  A patch (the change feed
  since ``seq``) is applied in place, as in the private child;
* ``…:lock`` — held (``SET NX PX``, renewed while held) by the one process updating the graph;
  the others wait for it and then find the state current.  A holder that dies frees it on expiry.
  Renewing and releasing are compare-and-set (``WATCH`` / ``MULTI`` / ``EXEC``): a holder whose lock
  expired mid-update cannot extend or delete its successor's.  A query waits at most
  :data:`QUERY_LOCK_WAIT_S` for another process's update, then answers from the graph as it is (``stale``),
  so a caller that serialises on the engine (``ngr mcp``) is not held for a whole rebuild.

Every query first reads the state key (one ``GET``): at or past the store's sequence number, nothing to
do; behind it, this engine takes the lock and applies the delta with the writer credential.  Without a
usable writer credential the engine answers from the graph as it is and says so (``stale`` in the query
result); with no graph at all it is an error (``graph_not_built``).  Queries are ``GRAPH.RO_QUERY``
through the read URL's user, after the guard, with this engine's timeout and row cap, as with the child.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from ..store.base import Store
from .errors import GraphNotBuilt, GraphServerError, QueryError
from .projection import CypherProjection
from .remote import GraphTarget, RemoteServer, server_error
from .server import Limits

__all__ = ["SharedProjection", "LOCK_TTL_MS", "LOCK_WAIT_S", "QUERY_LOCK_WAIT_S", "SWEEP_SCAN_CALLS"]

LOCK_TTL_MS = 30_000  # the lock's expiry; renewed every third of it while held
LOCK_WAIT_S = 300.0  # a writer waits this long for another's update (a 1M-edge rebuild takes ~10-20 s)
QUERY_LOCK_WAIT_S = 5.0  # a query waits this long for another's update, then answers from the graph as it is
SWEEP_SCAN_CALLS = 200  # a rebuild's sweep for orphaned graph keys: at most this many SCAN calls (1000 keys each)


class _WriteRefused(GraphServerError):
    """The writer credential may not take the lock (a read-only user given as the only URL)."""


class _LockBusy(GraphServerError):
    """Another process held the update lock for longer than this call may wait."""


def store_location(store: Store) -> str:
    """A short digest of where the store lives (a SQLite file's real path, a PostgreSQL URL without its
    password): a *copy* of a store file carries the same token but must not share its graph, since the
    two diverge at the same sequence numbers.  The same file reached by two paths only costs a second graph."""
    path = getattr(store, "path", None)
    if not isinstance(path, str) or path in ("", ":memory:"):
        where = f"memory:{os.getpid()}:{id(store)}"  # nobody else can open it
    else:
        where = path if "://" in path else os.path.realpath(path)  # a store URL's path has no password
    return hashlib.sha256(where.encode("utf-8", "surrogatepass")).hexdigest()[:10]


def _no_permission(exc: BaseException) -> bool:
    low = str(exc).lower()
    return "noperm" in low or "no permissions" in low


class SharedProjection(CypherProjection):
    """:class:`CypherProjection` against a shared server: the graph's state lives on the server."""

    def __init__(self, store: Store, target: GraphTarget, limits: Limits | None = None):
        super().__init__(store, limits, cache_dir=False)
        self.target = target
        self.write_refused: str | None = None  # why the writer credential may not write, once refused
        self.stale: dict | None = None  # the graph is behind the store and this engine cannot update it
        self._reader_db: Any = None
        self._published: str | None = None  # the graph key the server's state points at
        self._key_prefix: str | None = None
        self._store_token = ""
        self._lock_wait_s = LOCK_WAIT_S  # lowered to QUERY_LOCK_WAIT_S while a query syncs
        self._gave_up_at: int | None = None  # the store sequence at which a query last waited the lock out
        self.queries = 0  # queries run (ask tells from it whether its answer came from this graph)
        self._orphans = False  # set by a rebuild without a state: sweep the store's unnamed graph keys
        self.swept: list[str] = []  # the graph keys the last sweep deleted

    # ------------------------------------------------------------------ keys
    def _prefix(self) -> str:
        if self._key_prefix is None:  # read once: every query names these keys
            self._store_token = self._token()
            self._key_prefix = f"ngr:{self._store_token}:{store_location(self.store)}"
        return self._key_prefix

    @property
    def state_key(self) -> str:
        return self._prefix() + ":state"

    @property
    def lock_key(self) -> str:
        return self._prefix() + ":lock"

    # ------------------------------------------------------------------ connections
    def _connect(self) -> None:
        srv = RemoteServer(self.target)
        self._reader_db = srv.reader(self.read_timeout_s)  # typed error when unreachable / refused
        self.child = srv

    def _writer(self):
        assert isinstance(self.child, RemoteServer)
        if self._db_w is None:
            self._db_w = self.child.writer_client()
        return self._db_w

    def save(self) -> None:
        """Nothing to write: the server keeps the graph (persisting it is the server operator's choice)."""

    def close(self) -> None:
        super().close()
        self._reader_db = None
        self._published = None

    def _read_state(self, conn) -> dict | None:
        try:
            raw = conn.get(self.state_key)
        except Exception as exc:
            if _no_permission(exc) and conn is not self._writer_conn_or_none():
                return self._read_state(self._writer().connection)  # the read user may not GET: ask the writer
            raise server_error(exc, self.target.read) from None
        if not raw:
            return None
        try:
            st = json.loads(raw)
            if st["token"] != self._store_token or not isinstance(st["graph"], str):
                return None
            st["seq"], st["nodes"] = int(st["seq"]), int(st.get("nodes", 0))
        except (ValueError, KeyError, TypeError):
            return None
        return st

    def _writer_conn_or_none(self):
        return self._db_w.connection if self._db_w is not None else None

    def _adopt(self, st: dict) -> None:
        """Follow the server's graph as another process left it: its sequence number, its key; the node
        types this process remembered may be out of date, so they are looked up again when patching."""
        if st["graph"] != self._published or st["seq"] != self.seq:
            self._types, self._labels = {}, set()
            self.loaded_seq = st["seq"]
        self.seq, self._n_nodes, self.graph_name = st["seq"], st["nodes"], st["graph"]
        if st["graph"] != self._published or self._g_r is None:
            self._g_r = self._reader_db.select_graph(st["graph"])
        self._published = st["graph"]
        if self._db_w is not None:
            self._g_w = self._db_w.select_graph(st["graph"])

    # ------------------------------------------------------------------ queries
    def query(self, cypher: str, params: dict | None = None, timeout_ms: int | None = None, guard: bool = True) -> dict:
        """:meth:`CypherProjection.query`, plus ``"stale"`` when the graph is behind the store and this
        engine may not update it.  A state pointing at a graph that is gone (deleted by hand, a server
        restarted without its keys) is forgotten and the graph rebuilt, once."""
        self.queries += 1
        with self._answering():
            try:
                res = super().query(cypher, params, timeout_ms, guard)
            except QueryError as exc:
                if "empty key" not in exc.message:
                    raise
                self._forget_missing_graph()
                res = super().query(cypher, params, timeout_ms, guard)
        if self.stale:
            res["stale"] = dict(self.stale)
        return res

    def memo(self, key: str, compute):
        """:meth:`CypherProjection.memo`, syncing as a query does (a bounded wait for another's update)."""
        with self._answering():
            return super().memo(key, compute)

    @contextmanager
    def _answering(self) -> Iterator[None]:
        """While answering a caller: wait at most :data:`QUERY_LOCK_WAIT_S` for another process's update."""
        self._lock_wait_s = QUERY_LOCK_WAIT_S
        try:
            yield
        finally:
            self._lock_wait_s = LOCK_WAIT_S

    def _forget_missing_graph(self) -> None:
        missing = self._published
        try:
            writer = self._writer()
        except GraphServerError as exc:
            raise GraphNotBuilt(f"the graph this store's state names on the server is gone: {exc.message}") from None
        with self._server_lock(writer.connection):
            st = self._read_state(writer.connection)
            if st is not None and st["graph"] == missing:
                writer.connection.delete(self.state_key)
        self._published, self.seq, self._g_r = None, -1, None

    # ------------------------------------------------------------------ sync
    def sync(self) -> dict:
        self._ensure_child()
        cur = self.store.current_seq()
        st = self._read_state(self._reader_db.connection)
        if st is not None and st["seq"] >= cur:
            self._adopt(st)
            self.stale = None
            return {"mode": "none"}
        if self.write_refused:
            return self._serve_stale(st, cur, self.write_refused)
        try:
            writer = self._writer()
        except GraphServerError as exc:
            return self._serve_stale(st, cur, exc.message)
        try:
            return self._update(writer, cur)
        except _WriteRefused as exc:
            self.write_refused = f"the writer credential may not write ({exc.message})"
            return self._serve_stale(st, cur, self.write_refused)
        except _LockBusy as exc:  # another process is updating it: this answer does not wait for that
            self._gave_up_at = cur  # nor the next ones at this sequence (an ask syncs several times): one try each
            return self._serve_stale(self._read_state(self._reader_db.connection), cur, exc.message)

    def _update(self, writer, cur: int) -> dict:
        """Under the server's lock: adopt what another process may have done meanwhile, then apply the
        change feed (or rebuild) and publish the new state."""
        answering = self._lock_wait_s < LOCK_WAIT_S
        wait_s = 0.0 if answering and self._gave_up_at == cur else self._lock_wait_s
        with self._server_lock(writer.connection, wait_s):
            self._gave_up_at = None
            st = self._read_state(writer.connection)
            if st is not None and st["seq"] >= cur:  # another process brought it up to date meanwhile
                self._adopt(st)
                self.stale = None
                return {"mode": "none"}
            if st is not None:
                self._adopt(st)
            else:
                self.seq, self.graph_name, self._published = -1, self._new_graph_name(), None
                self._g_w = writer.select_graph(self.graph_name)
                self._orphans = True  # graph keys of a state deleted by hand may be left: swept after publish
            try:
                info = super().sync()
            except QueryError as exc:
                if not _no_permission(exc):
                    raise
                self.seq = -1
                raise _WriteRefused(exc.message) from None
            self._publish(writer.connection)
        self.stale = None
        return info

    def _serve_stale(self, st: dict | None, cur: int, why: str) -> dict:
        if st is None:
            raise GraphNotBuilt(
                f"the graph server at {self.target.read.redacted()} holds no projection of this store, and this "
                f"engine cannot build one: {why}; give a writer URL (NGR_GRAPH_WRITE_URL) or run a writer first"
            )
        self._adopt(st)
        self.stale = {"graph_seq": st["seq"], "store_seq": cur, "reason": why}
        self.last_sync = {"mode": "stale", **self.stale}
        return self.last_sync

    def _publish(self, conn) -> None:
        """Point the state key at the graph just updated; a rebuilt graph replaces the old key."""
        old = self._published
        state = {"token": self._store_token, "seq": self.seq, "nodes": self._n_nodes, "graph": self.graph_name}
        conn.set(self.state_key, json.dumps(state))
        if old and old != self.graph_name:
            self._delete_graph(old)
        if self._orphans:
            self._orphans = False
            self.swept = self._sweep_orphans(conn)
        self._published = self.graph_name
        self._g_r = self._reader_db.select_graph(self.graph_name)
        self._dirty = False

    def _delete_graph(self, name: str) -> None:
        try:
            self._writer().select_graph(name).delete()
        except Exception:
            pass  # already gone

    def _sweep_orphans(self, conn) -> list[str]:
        """Delete this store's graph keys that the state does not name (left when the state key was deleted
        by hand, or by a rebuild that died before publishing).  Under the update lock, so no other process
        is building one; a bounded ``SCAN`` (:data:`SWEEP_SCAN_CALLS` calls), so a huge keyspace costs at most
        that and leaves the rest for the next rebuild."""
        pattern = re.sub(r"([*?\[\]\\])", r"\\\1", self._prefix()) + ":g*"
        gone: list[str] = []
        cursor: Any = 0
        try:
            for _ in range(SWEEP_SCAN_CALLS):
                cursor, keys = conn.scan(cursor, match=pattern, count=1000)
                for k in keys:
                    name = k.decode() if isinstance(k, bytes) else str(k)
                    if name != self.graph_name:
                        self._delete_graph(name)
                        gone.append(name)
                if int(cursor) == 0:
                    break
        except Exception:
            pass  # a writer without +scan: the orphan stays, as before (docs/ask.md gives the ACL)
        return gone

    def _new_graph_name(self) -> str:
        return f"{self._prefix()}:g{uuid.uuid4().hex[:12]}"

    def _drop(self) -> None:
        """A rebuild goes into a fresh key (readers keep the published one until the state moves)."""
        if self.graph_name != self._published and self.graph_name.startswith(self._prefix() + ":g"):
            self._delete_graph(self.graph_name)  # an earlier, failed attempt of this rebuild
        self.graph_name = self._new_graph_name()
        self._g_w = self._writer().select_graph(self.graph_name)
        self._types, self._labels, self._n_nodes, self.loaded_seq = {}, set(), 0, None

    @contextmanager
    def _server_lock(self, conn, wait_s: float | None = None) -> Iterator[None]:
        """One updater per store on the server: ``SET key nonce NX PX``, renewed while held, released
        only by its holder (compare-and-delete; a holder that died frees it on expiry).  ``wait_s``: how
        long to wait for another holder (default: this call's, see :meth:`_answering`)."""
        nonce = uuid.uuid4().hex
        wait_s = self._lock_wait_s if wait_s is None else wait_s
        deadline = time.monotonic() + wait_s
        key = self.lock_key
        try:
            while not conn.set(key, nonce, nx=True, px=LOCK_TTL_MS):
                if time.monotonic() > deadline:
                    raise _LockBusy(f"another process has held the graph's update lock ({key}) for over {wait_s:g} s")
                time.sleep(0.02)
        except GraphServerError:
            raise
        except Exception as exc:
            if _no_permission(exc):
                raise _WriteRefused(str(exc)) from None
            raise server_error(exc, self.target.writer) from None
        done = threading.Event()

        def renew() -> None:
            while not done.wait(LOCK_TTL_MS / 3000):
                try:
                    if not _if_holder(conn, key, nonce, lambda p: p.pexpire(key, LOCK_TTL_MS)):
                        return  # lost (expired, taken by another): nothing of ours left to renew
                except Exception:
                    return

        keeper = threading.Thread(target=renew, name="ngr-graph-lock", daemon=True)
        keeper.start()
        try:
            yield
        finally:
            done.set()
            keeper.join()
            try:
                _if_holder(conn, key, nonce, lambda p: p.delete(key))
            except Exception:
                pass  # it expires


def _if_holder(conn, key: str, nonce: str, op) -> bool:
    """Run ``op`` on a ``MULTI`` pipeline only while ``key`` still holds ``nonce`` (``WATCH`` makes the
    ``EXEC`` fail if anyone touched the key after the ``GET``): a compare-and-set without a script, so
    the writer user needs no ``EVAL``.  False when the key is not ours (or changed under the check)."""
    import redis

    with conn.pipeline(transaction=True) as pipe:
        try:
            pipe.watch(key)
            cur = pipe.get(key)
            if (cur.decode() if isinstance(cur, bytes) else cur) != nonce:
                return False
            pipe.multi()
            op(pipe)
            pipe.execute()
            return True
        except redis.WatchError:
            return False
