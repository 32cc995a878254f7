"""Whole-store copies between SQLite and PostgreSQL: ``ngr migrate`` and ``PostgresStore.copy_to``.

A copy moves every row (nodes with their indices, edges with their keys and learned weights, tombstones,
the change-feed number and key counters, vectors, traces, ledgers, receipts, schema tables), so rankings,
trace ids, idempotency keys and the change feed read the same after.  The source is read in one
consistent snapshot; the target must be empty (a new database), and is written in one transaction.
The full-text index is rebuilt on the target from the same ``lexical_text`` form.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Any, Protocol

import numpy as np

from ..errors import StoreError
from ..model import body_of
from .lexical import lexical_text
from .postgres_bulk import PENDING
from .postgres_errors import raising_store_errors
from .sqlite import SQLiteStore

__all__ = ["sqlite_to_postgres", "postgres_to_sqlite", "TABLES"]


class PostgresStore(Protocol):
    """What a copy uses of :class:`~.postgres.PostgresStore` (a protocol: postgres.py's ``copy_to`` calls this
    module, so importing that class here would be an import cycle)."""

    path: str
    pool: Any
    sql: Any
    bulk: Any

    def transaction(self) -> AbstractContextManager[Any]: ...

    def stats(self) -> dict: ...

    def current_seq(self) -> int: ...

    def finish_bulk(self) -> dict | None: ...


# (table, columns) in foreign-key order; the columns both stores have.  Rows keep their keys.
TABLES: list[tuple[str, list[str]]] = [
    ("relations", ["id", "name"]),
    (
        "nodes",
        "idx id type title text metadata confidence content_hash created_at updated_at seq event_time source".split(),
    ),
    (
        "edges",
        "eid src rel_id dst polarity weight plastic plastic_at factuality meta reinforce_count created_at updated_at"
        " seq dormant".split(),
    ),
    ("tombstones", ["seq", "kind", "key"]),
    ("embeddings", ["content_hash", "model", "dim", "vector"]),
    ("traces", ["pos", "id", "created_at", "query", "params", "fingerprint", "hits"]),
    ("pending_edges", ["missing", "owner", "edge"]),
    ("trace_stages", ["trace_id", "node_id", "stage", "updated_at"]),
    (
        "source_use_receipts",
        ["pos", "receipt_id", "trace_id", "idempotency_key", "payload_hash", "receipt", "created_at"],
    ),
    (
        "weight_changes",
        "id receipt_id trace_id node_id eid kind old_weight new_weight at reversed_by".split(),
    ),
    ("retrieval_failures", ["id", "trace_id", "reason", "created_at"]),
    ("outcomes", "id trace_id node_ids outcome summary external_ref policy created_at".split()),
    ("node_stats", ["node_idx", "retrieved_count", "used_count", "activation", "activation_at"]),
    ("relation_types", ["rel_id", "directed", "inverse", "default_weight", "description"]),
    ("relation_rules", ["rel_id", "src_type", "dst_type", "position"]),
    ("invariants", ["name", "position", "spec"]),
    ("entity_state", ["node_idx", "state", "revision", "updated_at"]),
    ("aliases", ["alias", "node_idx"]),
    ("superseded", ["node_idx", "by_idx", "at"]),
    ("meta", ["key", "value"]),
]
# serial columns of the PostgreSQL tables, moved past the copied keys
_SERIALS = [
    ("relations", "id"),
    ("traces", "pos"),
    ("source_use_receipts", "pos"),
    ("weight_changes", "id"),
    ("retrieval_failures", "id"),
    ("outcomes", "id"),
]
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_PG_ONLY_META = ("fts.docs", "fts.tokens")


def _sqlite_select(table: str, cols: list[str]) -> str:
    sel = ["rowid" if c == "pos" else c for c in cols]
    order = " ORDER BY rowid" if "pos" in cols else ""
    return f"SELECT {', '.join(sel)} FROM {table}{order}"  # constant identifiers only


def _pg_select(table: str, cols: list[str]) -> str:
    sel = [
        "vector_send(vector)" if c == "vector" else "meta::text" if (table, c) == ("edges", "meta") else c for c in cols
    ]
    order = " ORDER BY pos" if "pos" in cols else ""
    return f"SELECT {', '.join(sel)} FROM {table}{order}"


@contextmanager
def _pg_snapshot(store: PostgresStore) -> Iterator[Any]:
    with store.pool.connection() as c:
        with c.transaction():
            c.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield c


@raising_store_errors  # a driver failure is StoreError, as from every store method
def sqlite_to_postgres(src: SQLiteStore, dst: PostgresStore) -> dict[str, int]:
    """Copy the SQLite store ``src`` into the empty PostgreSQL store ``dst``; rows copied per table."""
    if dst.stats()["nodes"] or dst.stats()["traces"] or dst.current_seq():
        raise StoreError(f"{dst.path} is not empty: migrate into a new database")
    with src.transaction():  # one snapshot of the source (and no writer meanwhile)
        data = {t: src.conn.execute(_sqlite_select(t, cols)).fetchall() for t, cols in TABLES}
    # a bulk load (postgres_bulk.py): the vectors go in without HNSW maintenance, the index is built once after
    bulk = bool(data["embeddings"]) and dst.bulk.start()
    try:
        return _copy_into(dst, data)
    finally:
        if bulk:
            dst.finish_bulk()


def _copy_into(dst: PostgresStore, data: dict[str, list[tuple]]) -> dict[str, int]:
    counts: dict[str, int] = {}
    with dst.transaction() as c:
        # the new database's own counters stay, and the bulk load's mark (the index is built after the copy)
        c.execute("DELETE FROM meta WHERE key <> ALL(%s)", ([*_PG_ONLY_META, PENDING],))
        for table, cols in TABLES:
            rows = data[table]
            counts[table] = len(rows)
            if table == "meta":
                rows = [r for r in rows if r[0] != PENDING]  # a copy of a copy taken mid-load
            if not rows:
                continue
            if table == "nodes":
                _pg_nodes(dst, rows)
                c.execute(
                    "INSERT INTO lexemes(lexeme, df) SELECT u.lexeme, count(*) FROM nodes, unnest(tsv) AS u"
                    " GROUP BY u.lexeme ON CONFLICT (lexeme) DO UPDATE SET df = excluded.df"
                )
                c.execute(
                    "INSERT INTO postings(lexeme, idx, tf, dl) SELECT u.lexeme, n.idx,"
                    " coalesce(array_length(u.positions, 1), 1), n.dl FROM nodes n, unnest(n.tsv) AS u"
                )
                continue
            vals = []
            for c_name in cols:
                if c_name == "vector":
                    vals.append("%s::real[]::vector")
                elif (table, c_name) == ("edges", "meta"):
                    vals.append("%s::jsonb")
                else:
                    vals.append("%s")
            if table == "embeddings":
                rows = [(h, m, d, np.frombuffer(v, np.float32).tolist()) for h, m, d, v in rows]
            dst.sql.executemany(f"INSERT INTO {table}({', '.join(cols)}) VALUES ({', '.join(vals)})", rows)
        for table, col in _SERIALS:
            c.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{col}'), coalesce(max({col}), 0) + 1, false)"
                f" FROM {table}"
            )
        c.execute(
            "UPDATE meta SET value = CASE key WHEN 'fts.docs' THEN (SELECT count(*) FROM nodes)::text"
            " ELSE (SELECT coalesce(sum(dl), 0) FROM nodes)::text END WHERE key = ANY(%s)",
            (list(_PG_ONLY_META),),
        )
    return counts


def _pg_nodes(dst: PostgresStore, rows: list[tuple]) -> None:
    lex = [lexical_text(body_of(r[3], r[4])) for r in rows]
    dst.sql.executemany(
        "INSERT INTO nodes(idx, id, type, title, text, metadata, confidence, content_hash, created_at, updated_at,"
        " seq, event_time, source, tsv, dl) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,"
        " to_tsvector('ngr', %s), %s)",
        [(*r, x, len(_TOKEN.findall(x))) for r, x in zip(rows, lex)],
    )


@raising_store_errors
def postgres_to_sqlite(src: PostgresStore, path: str) -> dict[str, int]:
    """Copy the PostgreSQL store ``src`` (one snapshot) into a new SQLite file at ``path``."""
    dst = SQLiteStore(path)
    try:
        if dst.stats()["nodes"] or dst.stats()["traces"] or dst.current_seq():
            raise StoreError(f"{path} is not empty: copy into a new file")
        with _pg_snapshot(src) as c:
            data = {t: c.execute(_pg_select(t, cols)).fetchall() for t, cols in TABLES}
        counts: dict[str, int] = {}
        with dst.transaction() as conn:
            conn.execute("DELETE FROM meta")
            for table, cols in TABLES:
                rows = data[table]
                counts[table] = len(rows)
                if table == "meta":
                    rows = [r for r in rows if r[0] not in _PG_ONLY_META]
                if table == "embeddings":
                    rows = [
                        (h, m, d, np.frombuffer(bytes(v), ">f4", offset=4).astype(np.float32).tobytes())
                        for h, m, d, v in rows
                    ]
                names = ["rowid" if c_name == "pos" else c_name for c_name in cols]
                conn.executemany(f"INSERT INTO {table}({', '.join(names)}) VALUES ({', '.join('?' * len(cols))})", rows)
                if table == "nodes":
                    conn.executemany(
                        "INSERT INTO nodes_fts(rowid, body) VALUES (?, ?)",
                        [(r[0], lexical_text(body_of(r[3], r[4]))) for r in rows],
                    )
        return counts
    finally:
        dst.close()


@raising_store_errors
def table_counts(store: SQLiteStore | PostgresStore) -> dict[str, int]:
    """Rows per copied table (``meta`` without the PostgreSQL-only full-text counters): what a copy must
    reproduce exactly."""
    out: dict[str, int] = {}
    for table, _ in TABLES:
        if not isinstance(store, SQLiteStore):
            where = " WHERE key <> ALL(%s)" if table == "meta" else ""
            r = store.sql.execute(f"SELECT count(*) FROM {table}{where}", (list(_PG_ONLY_META),) if where else ())
            out[table] = int(r.fetchone()[0])
        else:
            out[table] = int(store.conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    return out
