"""The Cypher projection: the store's property graph in a private FalkorDB, kept in step with the store.

The SQLite store stays the source of truth.  Nodes become ``(:Node:<type> {id, idx, type, title, time,
<scalar metadata>})``; edges ``[:<relation> {weight, polarity, factuality, eid}]`` in their stored
direction.  The projection follows the store's change feed (rows stamped with a sequence number greater
than the last one applied, and tombstones), like every other derived index; a large change or a lost
child means a full rebuild.  Queries run as ``GRAPH.RO_QUERY`` through a Redis user that may run nothing
else, after the tokenizer guard (:mod:`.guard`).

Why it is persisted: rebuilding mypy's history (25k nodes, 71k edges) takes ~8 s, paid by every ``ngr ask``
process.  A store on disk gets a cache folder next to it (``<db>.graphdb/``, ``0700``): the child loads
``graph.rdb`` from it at start, and the key ``ngr:state`` inside that dump says which store (a random token
kept in the store's meta) and which sequence number it holds; a matching dump is patched from there, any
other is rebuilt.  ``close()`` writes the dump back (one ``SAVE``) when the projection changed.

The token alone does not tell a store from a *copy* of it (``cp a.db b.db`` carries the token and the
sequence numbers, and the two then diverge at the same numbers), nor a file replaced by such a copy (the
path and often the inode stay).  So every ``save()`` also draws a fresh mark and writes it both into the
store's meta (``graphdb.dump_mark``) and into the dump's state: a store whose mark is not the dump's
was not the store the dump was saved from (or was replaced since), and the dump is rebuilt.  A store that
carries the mark descends from the file as it was when the dump was saved, so patching the dump forward
through its change feed is exact.  Cost: one meta read at open, one meta write per save.  A dump and a
store that both have no mark (written before marks, or a read-only store that never got one) are paired
by the token alone, as before.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import uuid
from typing import Any

import numpy as np

from ..store.base import Store
from . import bulk
from .errors import CypherError, GraphGone, QueryError, QueryTimeout, ReadOnlyViolation
from .guard import check_params, check_read_only
from .server import FalkorChild, Limits, adopt_early, rss_bytes

__all__ = ["CypherProjection", "TIME_KEYS", "cache_dir_for", "default_cache_dir", "label"]

GRAPH = "ngr"
RESERVED = {"id", "idx", "type", "title", "time", "text"}
TIME_KEYS = ("time", "timestamp", "date", "committed_at", "authored_at", "created_at", "merged_at", "updated_at")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_PROP_CHARS = 1000
BATCH = 2000
REBUILD_FRACTION = 0.3  # more changes than this fraction of the projection: rebuild instead of patching
GRACE_S = 1.0  # a query's deadline is its timeout plus this; past it the watchdog kills the child
RSS_POLL_S = 0.01  # how often a query's watchdog reads the child's resident memory
STATE_KEY = "ngr:state"
TOKEN_META = "graphdb.token"
MARK_META = "graphdb.dump_mark"  # pairs the store file with the dump saved from it (see the module docstring)


def default_cache_dir(store: Store) -> str | None:
    """``<db>.graphdb`` next to a store file; none for in-memory or non-file stores (or ``NGR_GRAPH_CACHE=0``)."""
    return cache_dir_for(getattr(store, "path", None))


def cache_dir_for(path) -> str | None:
    """:func:`default_cache_dir` from the store's path alone (the CLI forks the child before opening it)."""
    if os.environ.get("NGR_GRAPH_CACHE", "1") == "0" or not isinstance(path, str) or path in ("", ":memory:"):
        return None
    if not os.path.isfile(path):
        return None
    return path + ".graphdb"


def label(name: str) -> str:
    """A backtick-quoted Cypher label / relation type (FalkorDB cannot escape a backtick: it is dropped)."""
    return "`" + name.replace("`", "") + "`"


_BIG = 2**63
# epoch seconds of 1000-01-01 and 9999-12-31T23:59:59: the years strftime writes with four digits
_FAST_EPOCH = (-30610224000, 253402300799)
_KEY_OK: dict[str, bool] = {}  # metadata key -> projected as a property (keys repeat across nodes)


def _scalar(v: Any):
    t = type(v)  # the exact JSON types first: this runs for every metadata value of every node
    if t is str:
        return v[:MAX_PROP_CHARS]
    if t is int:
        return v if -_BIG < v < _BIG else None
    if t is float or t is bool:
        return v
    if isinstance(v, bool) or isinstance(v, int) and abs(v) < _BIG or isinstance(v, float):
        return v
    if isinstance(v, str):
        return v[:MAX_PROP_CHARS]
    return None


def _key_ok(k: Any) -> bool:
    if type(k) is not str:
        return False
    ok = _KEY_OK.get(k)
    if ok is None:
        ok = bool(_IDENT.match(k)) and k not in RESERVED
        if len(_KEY_OK) < 10_000:
            _KEY_OK[k] = ok
    return ok


def _iso_time(v):
    """``time`` is always comparable as text: epoch seconds become ISO-8601 UTC (``2021-05-01T12:00:00Z``)."""
    if type(v) is int and _FAST_EPOCH[0] <= v <= _FAST_EPOCH[1]:  # what the datetime path writes, 4x faster
        tm = time.gmtime(v)
        return f"{tm.tm_year:04d}-{tm.tm_mon:02d}-{tm.tm_mday:02d}T{tm.tm_hour:02d}:{tm.tm_min:02d}:{tm.tm_sec:02d}Z"
    if isinstance(v, (int, float)):
        import datetime as dt

        try:
            return dt.datetime.fromtimestamp(float(v), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None
    return v


RENAMES_LISTED = 100  # a commit node's renamed_from / renamed_into hold its first 100 renames


def node_props(idx: int, node_id: str, ntype: str, title: str, metadata: str | dict) -> dict:
    meta = json.loads(metadata) if isinstance(metadata, str) else (metadata or {})
    props: dict[str, Any] = {"id": node_id, "idx": int(idx), "type": ntype, "title": title[:MAX_PROP_CHARS]}
    if isinstance(meta, dict):
        for k in TIME_KEYS:
            v = _scalar(meta.get(k))
            if v is not None and not isinstance(v, bool):
                props["time"] = _iso_time(v)
                if props["time"] is None:
                    del props["time"]
                    continue
                break
        ren = meta.get("renames")
        if isinstance(ren, list) and ren and all(isinstance(r, list) and len(r) == 2 for r in ren):
            # a git commit's [[old, new], ...]: as two scalar lists, so a query can ask which commit renamed a path
            props["renamed_from"] = [str(o)[:MAX_PROP_CHARS] for o, _ in ren[:RENAMES_LISTED]]
            props["renamed_into"] = [str(n)[:MAX_PROP_CHARS] for _, n in ren[:RENAMES_LISTED]]
        for k, v in meta.items():
            if not _key_ok(k):
                continue
            if isinstance(v, list):
                vals = [_scalar(x) for x in v[:100]]
                if vals and all(x is not None for x in vals):
                    props[k] = vals
            else:
                s = _scalar(v)
                if s is not None:
                    props[k] = s
    return props


def _convert(v: Any) -> Any:
    from falkordb import Edge, Node, Path

    if isinstance(v, Node):
        return {
            **{k: _convert(x) for k, x in v.properties.items()},
            "_labels": [lab for lab in v.labels if lab != "Node"],
        }
    if isinstance(v, Edge):
        return {"rel": v.relation, **{k: _convert(x) for k, x in v.properties.items() if k != "eid"}}
    if isinstance(v, Path):
        return {"nodes": [_convert(n) for n in v.nodes()], "edges": [_convert(e) for e in v.edges()]}
    if isinstance(v, list):
        return [_convert(x) for x in v]
    if isinstance(v, dict):
        return {k: _convert(x) for k, x in v.items()}
    return v


def _map_error(exc: Exception) -> CypherError:
    msg = str(exc)
    low = msg.lower()
    if "timed out" in low or "timeout" in low and "exceed" not in low:
        return QueryTimeout(f"the query ran past its time limit: {msg}")
    if "graph server closed the connection" in low:  # a guard proxy's server restarted (graphdb/guard_proxy.py)
        return GraphGone(msg)
    if "read-only" in low or "noperm" in low or "no permissions" in low:
        return ReadOnlyViolation(f"refused by the graph engine: only read queries are allowed ({msg})")
    return QueryError(msg)


class _Watchdog:
    """Kills ``child`` unless cancelled within ``seconds``, or as soon as its resident memory passes
    ``rss_limit`` (checked every :data:`RSS_POLL_S`): a deadline and a memory bound that hold whatever
    the query does (the server's own checks miss a parse that never ends and one huge allocation)."""

    def __init__(self, child: FalkorChild | None, seconds: float, rss_limit: int | None = None):
        self.child = child
        self.fired = False
        self.mem_fired: int | None = None  # the resident bytes seen when the memory bound fired
        self._lock = threading.Lock()
        self._done = threading.Event()
        self._deadline = time.monotonic() + seconds
        self._rss_limit = rss_limit
        self._thread = threading.Thread(target=self._watch, name="ngr-graphdb-watchdog", daemon=True)
        self._thread.start()

    def _watch(self) -> None:
        pid = getattr(self.child, "pid", None) if self._rss_limit is not None else None
        while True:
            left = self._deadline - time.monotonic()
            if self._done.wait(min(left, RSS_POLL_S) if pid is not None else left):
                return
            if time.monotonic() >= self._deadline:
                self._fire(None)
                return
            rss = rss_bytes(pid)
            if rss is not None and self._rss_limit is not None and rss > self._rss_limit:
                self._fire(rss)
                return

    def _fire(self, rss: int | None) -> None:
        with self._lock:
            if self._done.is_set():
                return
            self.fired = rss is None
            self.mem_fired = rss
        if self.child is not None:
            self.child.kill()

    def cancel(self) -> None:
        with self._lock:
            self._done.set()


class CypherProjection:
    """One engine's projection: lazily started child, incremental sync, read-only queries."""

    graph_name = GRAPH  # the graph key (a shared server names one per store and build: graphdb/shared.py)

    def __init__(self, store: Store, limits: Limits | None = None, cache_dir: str | None | bool = True):
        self.store = store
        self.limits = limits or Limits()
        self.cache_dir = default_cache_dir(store) if cache_dir is True else (cache_dir or None)
        self.child: Any = None  # a FalkorChild (or a shared server's handle, graphdb/remote.py)
        self.seq = -1  # last store sequence number applied
        self.loaded_seq: int | None = None  # the sequence number a loaded dump held (None: nothing loaded)
        self.dump_refused: str | None = None  # why a loaded dump of this store was not adopted (diagnostics)
        self._dirty = False  # changed since the dump was written
        self._types: dict[int, str] = {}  # projected node idx -> type label (a loaded dump: only those looked up)
        self._n_nodes = 0
        self._prefetch: threading.Thread | None = None
        self._memo: dict[str, tuple[int, Any]] = {}  # derived answers (ask's author list) per store sequence
        self._labels: set[str] = set()  # labels with an id index
        self.last_sync: dict = {}
        self.batch = BATCH
        self.bulk = True  # rebuild through GRAPH.BULK (off after the first refusal)
        self._rss_base: tuple[tuple[int | None, int], int] | None = None  # ((child pid, seq), resident bytes)
        # FalkorDB client objects (untyped package), set by _ensure_child
        self._db_w: Any = None
        self._g_w: Any = None
        self._g_r: Any = None

    # ------------------------------------------------------------------ lifecycle
    def close(self) -> None:
        t = self._prefetch
        if t is not None and t is not threading.current_thread():
            t.join()  # a child being started in the background is stopped too
            self._prefetch = None
        child = self.child  # (read once: a watchdog beside this call may discard it meanwhile)
        if child is not None:
            if self._dirty and child.alive:
                self.save()
            child.stop()
        self.child = None
        self._db_w = self._g_w = self._g_r = None

    def _discard_child(self) -> None:
        """Kill the child without saving (it may be stuck) and start a fresh one in the background; the
        dump on disk is older but says which sequence number it holds, so the new child patches forward."""
        child, self.child = self.child, None
        self._db_w = self._g_w = self._g_r = None
        if child is not None:
            child.kill()
            child.stop()
        self.prefetch()

    def prefetch(self) -> None:
        """Start the child in the background (loading a dump takes ~0.5 s on 25k nodes), so a caller's own
        work overlaps it; the next query waits for it.  The store is read here, in the caller's thread."""
        if self.child is not None or self._prefetch is not None:
            return
        token, cur = (self._token(), self.store.current_seq()) if self.cache_dir else (None, -1)
        mark = self.store.get_meta(MARK_META) if self.cache_dir else None

        def run() -> None:
            try:
                self._ensure_child(token, cur, mark)
            except Exception:
                pass  # the next query starts it again and reports what failed

        self._prefetch = threading.Thread(target=run, name="ngr-graphdb-prefetch", daemon=True)
        self._prefetch.start()

    def _ensure_child(self, token: str | None = None, cur: int | None = None, mark: str | None = None) -> None:
        """Start (or adopt) the child and take over its loaded dump when it matches the store; ``token``,
        ``cur`` and ``mark`` come from the caller's thread when read there (the prefetch), else now."""
        t = self._prefetch
        if t is not None and t is not threading.current_thread():
            t.join()
            self._prefetch = None
        if self.child is not None and self.child.alive:
            return
        self.close()
        self._connect()
        self.seq = -1
        self._types, self._labels, self._n_nodes = {}, set(), 0
        if self.cache_dir:
            if token is None:
                token, mark = self._token(), self.store.get_meta(MARK_META)
            self._load_state(token, self.store.current_seq() if cur is None else cur, mark)

    def _connect(self) -> None:
        """Start the private child and open the loader's and the reader's clients on it."""
        from falkordb import FalkorDB

        child = self._start_child()
        self.child = child
        self._db_w = FalkorDB(unix_socket_path=child.socket, password=child.password, socket_timeout=600)
        self._g_w = self._db_w.select_graph(self.graph_name)
        # the socket timeout is only a backstop: the watchdog in query() kills a child past the deadline
        self._g_r = child.reader(self.read_timeout_s).select_graph(self.graph_name)

    @property
    def read_timeout_s(self) -> float:
        return self.limits.timeout_ms / 1000 + GRACE_S + 2

    def _start_child(self) -> FalkorChild:
        """A child that loads the cached dump; a dump it cannot load is removed and the child started bare."""
        early = adopt_early(self.cache_dir, self.limits)
        if early is not None:
            try:
                return early.wait_ready()
            except Exception:
                early.stop()  # e.g. a dump it cannot load: the ordinary start below handles it
        if self.cache_dir:
            try:
                os.makedirs(self.cache_dir, mode=0o700, exist_ok=True)
                return FalkorChild(self.limits, persist_dir=self.cache_dir).start()
            except Exception:
                try:
                    os.remove(os.path.join(self.cache_dir, "graph.rdb"))
                    return FalkorChild(self.limits, persist_dir=self.cache_dir).start()
                except Exception:
                    self.cache_dir = None
        return FalkorChild(self.limits).start()

    def _token(self) -> str:
        tok = self.store.get_meta(TOKEN_META)
        if not tok:
            tok = uuid.uuid4().hex
            self.store.set_meta(TOKEN_META, tok)
        return tok

    def _load_state(self, token: str, cur: int, mark: str | None) -> None:
        """Adopt a loaded dump when it holds this store: same token, the mark of the save that wrote it
        (a copy of another store, or a file replaced by one, has another), a sequence number it has reached."""
        self.loaded_seq = None
        self.dump_refused = None
        raw = self._db_w.connection.get(STATE_KEY)
        if not raw:
            return
        try:
            st = json.loads(raw)
            ok = st["token"] == token and int(st["seq"]) <= cur
            if ok and st.get("mark") != mark:  # both None: a dump and a store from before marks (token only)
                ok, self.dump_refused = False, "the store file is not the one the dump was saved from"
        except (ValueError, KeyError, TypeError):
            ok = False
        if ok:
            self.seq = self.loaded_seq = int(st["seq"])
            self._n_nodes = int(st.get("nodes", 0))
            self._types = {}
        else:
            self._db_w.connection.delete(STATE_KEY)

    def save(self) -> None:
        """Write the dump (with its state key) into the cache folder; a failure only costs a rebuild later."""
        if not self.cache_dir or self.child is None or not self.child.alive or self.seq < 0:
            return
        try:
            fresh = uuid.uuid4().hex
            mark: str | None = fresh
            try:
                self.store.set_meta(MARK_META, fresh)  # first: a dump is never paired with a store that lacks it
            except Exception:
                if self.store.get_meta(MARK_META) is not None:
                    return  # a read-only store with a mark: no new pairing can be made, so no dump
                mark = None  # a read-only store that never had one: token only, as before marks
            state = {"token": self._token(), "seq": self.seq, "nodes": self._n_nodes, "mark": mark}
            self._db_w.connection.set(STATE_KEY, json.dumps(state))
            self._db_w.connection.save()
            self._dirty = False
        except Exception:
            pass

    # ------------------------------------------------------------------ sync
    def _w(self, q: str, params: dict | None = None) -> None:
        self._g_w.query(q, params)

    def _batched(self, q: str, rows: list, key: str = "rows") -> None:
        for i in range(0, len(rows), self.batch):
            self._w(q, {key: rows[i : i + self.batch]})

    def _index(self, lbl: str) -> None:
        if lbl in self._labels:
            return
        for prop in ("id",) if lbl != "Node" else ("id", "idx"):
            try:
                self._w(f"CREATE INDEX FOR (n:{label(lbl)}) ON (n.{prop})")
            except Exception as exc:
                if "already" not in str(exc).lower():
                    raise
        self._labels.add(lbl)

    def sync(self) -> dict:
        """Apply the store's changes since the last sync (or rebuild); returns what was done."""
        self._ensure_child()
        cur = self.store.current_seq()
        if cur == self.seq:
            return {"mode": "none"}
        t0 = time.perf_counter()
        for attempt in range(4):
            try:
                info = self._apply(cur)
                break
            except Exception as exc:
                # a write batch is capped by TIMEOUT_MAX too, and a timed-out write may be partly applied:
                # never retry a batch in place; rebuild from scratch with smaller batches instead
                self.seq = -1
                if "timed out" not in str(exc).lower() or attempt == 3:
                    raise QueryError(f"could not build the Cypher projection: {exc}") from None
                self.batch = max(50, self.batch // 4)
        info["ms"] = round((time.perf_counter() - t0) * 1000, 1)
        self.last_sync = info
        self._dirty = True
        return info

    def _apply(self, cur: int) -> dict:
        if self.seq < 0:
            info = self._rebuild(cur)
        else:
            n_changed = self.store.change_count_since(self.seq)
            size = self._n_nodes + self.store.edge_count()
            if n_changed > max(5000, REBUILD_FRACTION * size):
                info = self._rebuild(cur)
            else:
                info = self._patch(cur)
        return info

    def _create_nodes(self, rows: list[tuple]) -> None:
        by_type: dict[str, list] = {}
        for idx, nid, ntype, title, meta in rows:
            by_type.setdefault(ntype, []).append(node_props(idx, nid, ntype, title, meta))
            self._types[idx] = ntype
        self._n_nodes += len(rows)
        for ntype, props in by_type.items():
            self._index(ntype)
            self._batched(f"UNWIND $rows AS r CREATE (n:Node:{label(ntype)}) SET n = r", props)

    def _create_edges(self, rows: list[tuple], merge: bool) -> None:
        by_rel: dict[str, list] = {}
        for eid, s, rel, d, w, pol, fact in rows:
            by_rel.setdefault(rel, []).append([int(s), int(d), float(w), int(pol), float(fact), int(eid)])
        verb = "MERGE" if merge else "CREATE"
        for rel, items in by_rel.items():
            self._batched(
                f"UNWIND $rows AS r MATCH (a:Node {{idx: r[0]}}), (b:Node {{idx: r[1]}}) "
                f"{verb} (a)-[e:{label(rel)}]->(b) SET e.weight = r[2], e.polarity = r[3], "
                "e.factuality = r[4], e.eid = r[5]",
                items,
            )

    def _rebuild(self, cur: int) -> dict:
        t0 = time.perf_counter()
        nodes = self.store.node_records(-1, cur)
        edges = self.store.edge_records(-1, cur)
        read_s = time.perf_counter() - t0
        if self.bulk:
            try:
                self._drop()
                phases = self._bulk_load(nodes, edges)
                self.seq = cur
                phases = {"read_s": round(read_s, 3), **phases}
                return {"mode": "rebuild", "nodes": len(nodes), "edges": len(edges), "bulk": True, "phases": phases}
            except Exception:
                self.bulk = False  # this server refused the bulk stream: Cypher batches from now on
        self._drop()
        self._index("Node")
        self._create_nodes(nodes)
        self._create_edges(edges, merge=False)
        self.seq = cur
        return {"mode": "rebuild", "nodes": len(nodes), "edges": len(edges)}

    def _drop(self) -> None:
        try:
            self._g_w.delete()
        except Exception:
            pass  # no graph yet
        self._types, self._labels, self._n_nodes, self.loaded_seq = {}, set(), 0, None

    def _bulk_load(self, nodes: list[tuple], edges: list[tuple]) -> dict:
        """Nodes then edges through ``GRAPH.BULK`` (:mod:`.bulk`); on a fresh graph a node's internal id is
        its position in the stream, which is how edges name their ends.  Indexes are built afterwards.

        The streams are sent from a second thread while the next ones are built, so the server's load
        (its own process) overlaps this process's encoding.  Returns the phases' times in seconds:
        ``streams_s`` building the streams, ``wait_s`` waiting for the server after the last one,
        ``index_s`` the indexes."""
        t0 = time.perf_counter()
        by_type: dict[str, list[dict]] = {}
        idx_by_type: dict[str, list[int]] = {}
        for idx, nid, ntype, title, meta in nodes:
            by_type.setdefault(ntype, []).append(node_props(idx, nid, ntype, title, meta))
            idx_by_type.setdefault(ntype, []).append(idx)
        # internal id of each store idx: the position in the stream, types in the order node_tokens sends them
        order = [i for ntype in by_type for i in idx_by_type[ntype]]
        sent = np.asarray(order, dtype=np.int64)
        position = np.full(int(sent.max()) + 1 if sent.size else 0, -1, np.int64)
        position[sent] = np.arange(sent.size, dtype=np.int64)
        self._types = {i: ntype for ntype, idxs in idx_by_type.items() for i in idxs}
        with bulk.Sender(self._db_w.connection, self.graph_name) as send:
            for _, count, tok in bulk.node_tokens(by_type):
                send(count, 0, tok)
            for count, tok in bulk.edge_tokens(bulk.edge_columns(edges), position):
                send(0, count, tok)
            t1 = time.perf_counter()
        t2 = time.perf_counter()
        self._n_nodes = int(sent.size)
        self._index("Node")
        for ntype in by_type:
            self._index(ntype)
        return {
            "streams_s": round(t1 - t0, 3),
            "wait_s": round(t2 - t1, 3),
            "index_s": round(time.perf_counter() - t2, 3),
        }

    def _patch(self, cur: int) -> dict:
        tomb = self.store.tombstones_between(self.seq, cur)
        dead_nodes = [k for kind, k in tomb if kind == "node"]
        dead_edges = [k for kind, k in tomb if kind == "edge"]
        if dead_edges:
            self._w("MATCH ()-[e]->() WHERE e.eid IN $ids DELETE e", {"ids": dead_edges})
        if dead_nodes:
            self._w("UNWIND $ids AS i MATCH (n:Node {idx: i}) DETACH DELETE n", {"ids": dead_nodes})
            for i in dead_nodes:
                self._types.pop(i, None)
            self._n_nodes = max(0, self._n_nodes - len(dead_nodes))
        nodes = self.store.node_records(self.seq, cur)
        if self.loaded_seq is not None:  # a loaded dump: ask it which of these nodes it holds
            self._look_up_types([r[0] for r in nodes if r[0] not in self._types])
        new, same = [], []
        for row in nodes:
            old = self._types.get(row[0])
            if old is None:
                new.append(row)
            else:
                if old != row[2]:
                    self._index(row[2])
                    self._w(f"MATCH (n:Node {{idx: $i}}) REMOVE n:{label(old)} SET n:{label(row[2])}", {"i": row[0]})
                    self._types[row[0]] = row[2]
                same.append(node_props(*row))
        self._create_nodes(new)
        if same:
            self._batched("UNWIND $rows AS r MATCH (n:Node {idx: r.idx}) SET n = r", same)
        edges = self.store.edge_records(self.seq, cur)
        self._create_edges(edges, merge=True)
        self.seq = cur
        return {
            "mode": "patch",
            "nodes": len(nodes),
            "edges": len(edges),
            "deleted_nodes": len(dead_nodes),
            "deleted_edges": len(dead_edges),
        }

    def _look_up_types(self, idxs: list[int]) -> None:
        for i in range(0, len(idxs), 500):  # under the server's RESULTSET_SIZE
            res = self._g_w.query(
                "UNWIND $ids AS i MATCH (n:Node {idx: i}) RETURN n.idx, n.type", {"ids": idxs[i : i + 500]}
            )
            for idx, ntype in res.result_set:
                self._types[int(idx)] = ntype

    # ------------------------------------------------------------------ queries
    def query(self, cypher: str, params: dict | None = None, timeout_ms: int | None = None, guard: bool = True) -> dict:
        """Run ``cypher`` read-only; ``{"columns", "rows" (dicts), "truncated"}``.

        ``guard=False`` skips the tokenizer (tests use it to show the engine's own enforcement)."""
        if not isinstance(cypher, str) or not cypher.strip():
            raise QueryError("the query must be a non-empty string")
        if params is not None and not isinstance(params, dict):
            raise QueryError("params must be an object")
        if guard:
            check_read_only(cypher)
            check_params(params)
        if timeout_ms is not None and not (isinstance(timeout_ms, int) and 0 < timeout_ms <= self.limits.timeout_ms):
            raise QueryError(f"timeout_ms must be an integer in 1..{self.limits.timeout_ms}")
        self.sync()
        limit_ms = timeout_ms or self.limits.timeout_ms
        watch = _Watchdog(self.child, limit_ms / 1000 + GRACE_S, self._rss_limit())
        try:
            res = self._g_r.ro_query(cypher, params or None, timeout=limit_ms)
        except (ValueError, TypeError) as exc:
            raise QueryError(f"bad parameters: {exc}") from None
        except Exception as exc:
            import redis

            if watch.mem_fired is not None:
                self._discard_child()
                raise QueryError(
                    f"the query took the graph engine to {watch.mem_fired >> 20} MiB resident, over its bound "
                    f"({self.limits.mem_headroom_bytes >> 20} MiB above its size after the last update: "
                    "Limits.mem_headroom_bytes); the engine was stopped and is restarted"
                ) from None
            if watch.fired or isinstance(exc, redis.TimeoutError):
                # the server's timeout does not cover every phase (parsing is not), so a query past its
                # deadline may hold a worker thread for good: the child is killed and started afresh (a
                # shared server's handle only drops this engine's connections: what happened is its note)
                note = getattr(self.child, "timeout_note", "the graph engine; the engine was stopped and is restarted")
                self._discard_child()
                raise QueryTimeout(
                    f"the query ran past its deadline ({limit_ms} ms + {GRACE_S:g} s) without an answer from {note}"
                ) from None
            if isinstance(exc, redis.ConnectionError):
                if watch.child is not None and self.child is not watch.child:
                    # a query beside this one passed a bound and its watchdog stopped the engine they shared
                    raise GraphGone(
                        "the graph engine was stopped while this query ran (another query passed its time or "
                        "memory bound); it is restarted"
                    ) from None
                self.close()  # restart on the next call; nothing is lost: the store is the truth
                raise GraphGone(f"the graph engine went away ({exc}); it restarts on the next query") from None
            raise _map_error(exc) from None
        finally:
            watch.cancel()
        cols = [h[1] if isinstance(h, (list, tuple)) else h for h in res.header]
        cols = [c.decode() if isinstance(c, bytes) else str(c) for c in cols]
        cap = self.limits.resultset_size  # the child's server truncates there; a shared one may not: cut here too
        rows = [{c: _convert(v) for c, v in zip(cols, r)} for r in res.result_set[:cap]]
        return {"columns": cols, "rows": rows, "truncated": len(res.result_set) >= cap}

    def _rss_limit(self) -> int | None:
        """The child's resident-memory bound for a query: its size after the last update (sampled once
        per store sequence and child) plus ``Limits.mem_headroom_bytes``; ``None`` for a shared server."""
        child = self.child
        if not isinstance(child, FalkorChild):
            return None
        key = (child.pid, self.seq)
        if self._rss_base is None or self._rss_base[0] != key:
            rss = rss_bytes(child.pid)
            if rss is None:
                return None
            self._rss_base = (key, rss)
        return self._rss_base[1] + self.limits.mem_headroom_bytes

    def memo(self, key: str, compute):
        """``compute()`` once per projection state: recomputed only after the store's nodes or edges change."""
        self.sync()
        hit = self._memo.get(key)
        if hit is None or hit[0] != self.seq:
            hit = self._memo[key] = (self.seq, compute())
        return hit[1]

    def counts(self) -> dict:
        """Nodes and edges in the projection (through :meth:`query`: the same deadline as any query)."""
        n = self.query("MATCH (n) RETURN count(n) AS c")["rows"][0]["c"]
        e = self.query("MATCH ()-[e]->() RETURN count(e) AS c")["rows"][0]["c"]
        return {"nodes": n, "edges": e}
