"""A full projection in a few ``GRAPH.BULK`` calls instead of ``UNWIND … CREATE`` batches.

Why: a rebuild through Cypher pays two index lookups per edge (~10k edges/s here: mypy's 71k edges took
6.8 s of a 9 s cold ``ngr ask``); the module's bulk insert takes nodes and edges as binary streams and
edges by internal node id, which on a fresh graph is the order the nodes were sent in.

Stream format (FalkorDB's bulk insert): a token per label set or relation type, starting with a header —
the label(s) (``Node:commit``) NUL-terminated, a little-endian u32 property count, the property names
NUL-terminated — then one record per entity: for an edge the source and destination node ids (u64), then
each property as a type byte (0 null, 1 bool, 2 double, 3 string, 4 long, 5 array) and its value (bool 1
byte, double/long 8 bytes, string NUL-terminated, array a u64 length then its values).

Edges are built as numpy columns end to end (one structured array per chunk, no per-edge Python); a
node's properties are encoded column by column with one encoder per Python type, then interleaved.
"""

from __future__ import annotations

import queue
import struct
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from operator import itemgetter
from typing import Any

import numpy as np

__all__ = ["CHUNK", "EDGE_CHUNK", "EdgeColumns", "Sender", "edge_columns", "edge_tokens", "node_tokens"]

CHUNK = 20_000  # nodes per token (and per GRAPH.BULK call): a few MB per command
EDGE_CHUNK = 200_000  # edges per token: 52 bytes each, ~10 MB per command (fewer round trips)
_NUL = b"\x00"
# an edge record: its two node ids, then weight (double), polarity (long), factuality (double), eid (long),
# each property led by its type byte, packed: every edge is the same 52 bytes, written as one array
_EDGE_RECORD = np.dtype(
    [
        ("src", "<u8"),
        ("dst", "<u8"),
        ("t_weight", "u1"),
        ("weight", "<f8"),
        ("t_pol", "u1"),
        ("pol", "<i8"),
        ("t_fact", "u1"),
        ("fact", "<f8"),
        ("t_eid", "u1"),
        ("eid", "<i8"),
    ],
    align=False,
)
_LONG = struct.Struct("<q").pack
_DOUBLE = struct.Struct("<d").pack
_NULL = b"\x00"


def _str(v: str) -> bytes:
    if "\x00" in v:
        v = v.replace("\x00", "")
    return b"\x03" + v.encode("utf-8") + _NUL


def _int(v: int) -> bytes:
    return b"\x04" + _LONG(v)


def _float(v: float) -> bytes:
    return b"\x02" + _DOUBLE(v)


def _bool(v: bool) -> bytes:
    return b"\x01\x01" if v else b"\x01\x00"


def _value(v: Any) -> bytes:
    enc = _ENCODERS.get(type(v))
    if enc is not None:
        return enc(v)
    if v is None:
        return _NULL
    if isinstance(v, bool):
        return _bool(v)
    if isinstance(v, int):
        return _int(v)
    if isinstance(v, float):
        return _float(v)
    if isinstance(v, str):
        return _str(v)
    if isinstance(v, (list, tuple)):
        return _list(v)
    return _NULL


def _list(v: list | tuple) -> bytes:
    return b"\x05" + _LONG(len(v)) + b"".join(_value(x) for x in v)


_ENCODERS: dict[type, Any] = {
    str: _str,
    int: _int,
    float: _float,
    bool: _bool,
    type(None): lambda v: _NULL,
    list: _list,
    tuple: _list,
}


def _header(names: str, keys: list[str]) -> bytes:
    return names.encode("utf-8") + _NUL + struct.pack("<I", len(keys)) + b"".join(k.encode() + _NUL for k in keys)


def _column(rows: list[dict], key: str) -> list[bytes]:
    """One property of every row, encoded (a missing key is null)."""
    enc = _ENCODERS
    out = []
    for r in rows:
        v = r.get(key)
        f = enc.get(type(v))
        out.append(f(v) if f is not None else _value(v))
    return out


def node_tokens(props_by_type: dict[str, list[dict]], chunk: int = CHUNK) -> Iterator[tuple[str, int, bytes]]:
    """``(type, count, token)`` per chunk of each type's nodes, in the order their node ids are assigned
    (lazily: a chunk is built while the one before it is being sent)."""
    for ntype, rows in props_by_type.items():
        keys = sorted({k for r in rows for k in r})
        head = _header(f"Node:{ntype}", keys)
        for i in range(0, len(rows), chunk):
            part = rows[i : i + chunk]
            # records are row-major: interleave the encoded columns by strided slice assignment, then one join
            flat: list[bytes] = [b""] * (len(part) * len(keys))
            for c, k in enumerate(keys):
                flat[c :: len(keys)] = _column(part, k)
            yield ntype, len(part), head + b"".join(flat)


@dataclass(frozen=True)
class EdgeColumns:
    """The store's edge records as columns: ends by store index, relation as a code into ``rels``."""

    eid: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    rel: np.ndarray  # int32 codes
    rels: list[str]
    weight: np.ndarray
    pol: np.ndarray
    fact: np.ndarray

    def __len__(self) -> int:
        return int(self.eid.shape[0])


def edge_columns(rows: list[tuple]) -> EdgeColumns:
    """``(eid, src idx, rel name, dst idx, weight, polarity, factuality)`` rows as numpy columns."""
    n = len(rows)
    if not n:
        z = np.zeros(0, np.int64)
        return EdgeColumns(z, z, z, np.zeros(0, np.int32), [], np.zeros(0), z, np.zeros(0))

    def col(k: int, dtype) -> np.ndarray:
        return np.fromiter(map(itemgetter(k), rows), dtype, n)  # C-level column pulls, no per-row Python

    names = list(map(itemgetter(2), rows))
    codes = {r: i for i, r in enumerate(dict.fromkeys(names))}
    return EdgeColumns(
        eid=col(0, np.int64),
        src=col(1, np.int64),
        dst=col(3, np.int64),
        rel=np.fromiter(map(codes.__getitem__, names), np.int32, n),
        rels=list(codes),
        weight=col(4, np.float64),
        pol=col(5, np.int64),
        fact=col(6, np.float64),
    )


def edge_tokens(cols: EdgeColumns, position: np.ndarray, chunk: int = EDGE_CHUNK) -> Iterator[tuple[int, bytes]]:
    """``(count, token)`` per chunk of each relation's edges (lazily).  ``position[store idx]`` is the
    node's internal id in the bulk stream (-1: not sent; its edges are left out)."""
    keys = ["weight", "polarity", "factuality", "eid"]
    if not len(cols):
        return
    size = position.shape[0]
    ok = (cols.src >= 0) & (cols.src < size) & (cols.dst >= 0) & (cols.dst < size)
    sel = np.flatnonzero(ok)
    s_pos, d_pos = position[cols.src[sel]], position[cols.dst[sel]]
    keep = (s_pos >= 0) & (d_pos >= 0)
    sel, s_pos, d_pos = sel[keep], s_pos[keep], d_pos[keep]
    order = np.argsort(cols.rel[sel], kind="stable")  # grouped by relation, store order within each
    sel, s_pos, d_pos = sel[order], s_pos[order], d_pos[order]
    rel_sorted = cols.rel[sel]
    bounds = np.flatnonzero(np.diff(rel_sorted)) + 1
    starts = np.concatenate([[0], bounds]).astype(np.int64)
    ends = np.concatenate([bounds, [sel.shape[0]]]).astype(np.int64)
    for a, b in zip(starts.tolist(), ends.tolist()):
        if a == b:
            continue
        head = _header(cols.rels[int(rel_sorted[a])], keys)
        for i in range(a, b, chunk):
            j = min(b, i + chunk)
            part = sel[i:j]
            rec = np.empty(j - i, _EDGE_RECORD)  # every record has the same 52-byte layout
            rec["src"], rec["dst"] = s_pos[i:j], d_pos[i:j]
            rec["weight"], rec["pol"] = cols.weight[part], cols.pol[part]
            rec["fact"], rec["eid"] = cols.fact[part], cols.eid[part]
            rec["t_weight"], rec["t_fact"] = 2, 2  # double
            rec["t_pol"], rec["t_eid"] = 4, 4  # long
            yield j - i, head + rec.tobytes()


class Sender:
    """``GRAPH.BULK`` calls in order from one background thread (the first with ``BEGIN``), so building
    the next stream overlaps the server loading the last; a failure is raised to the caller at its next
    call or at the end of the ``with`` block.  At most ``depth`` streams wait (memory stays bounded)."""

    def __init__(self, conn, graph: str, depth: int = 2):
        self.conn, self.graph = conn, graph
        self.error: BaseException | None = None
        self._q: queue.Queue = queue.Queue(maxsize=depth)
        self._first = True
        self._thread = threading.Thread(target=self._run, name="ngr-graphdb-bulk", daemon=True)

    def __enter__(self) -> Sender:
        self._thread.start()
        return self

    def _run(self) -> None:
        while True:
            item = self._q.get()
            if item is None:
                return
            if self.error is not None:
                continue  # drain: the caller raises it
            nodes, edges, tok = item
            args = ["BEGIN"] if self._first else []
            self._first = False
            try:
                self.conn.execute_command(
                    "GRAPH.BULK", self.graph, *args, nodes, edges, 1 if nodes else 0, 1 if edges else 0, tok
                )
            except BaseException as exc:
                self.error = exc

    def __call__(self, nodes: int, edges: int, tok: bytes) -> None:
        if self.error is not None:
            raise self.error
        self._q.put((nodes, edges, tok))

    def __exit__(self, exc_type, exc, tb) -> None:
        self._q.put(None)
        self._thread.join()
        if exc is None and self.error is not None:
            raise self.error
