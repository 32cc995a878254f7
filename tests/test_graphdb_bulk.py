"""The bulk rebuild's stream building (graphdb/bulk.py) and the node properties it encodes: edge streams
from numpy columns (grouped by relation, ends renumbered, edges to unsent nodes left out), node records
interleaved column by column, the background sender's order and errors, and the fast epoch formatting."""

from __future__ import annotations

import datetime as dt
import struct

import numpy as np
import pytest

from neurongraph.graphdb import bulk
from neurongraph.graphdb.projection import _iso_time, node_props


def _parse_header(tok: bytes) -> tuple[str, list[str], bytes]:
    name, rest = tok.split(b"\x00", 1)
    (n,) = struct.unpack("<I", rest[:4])
    rest = rest[4:]
    keys = []
    for _ in range(n):
        k, rest = rest.split(b"\x00", 1)
        keys.append(k.decode())
    return name.decode(), keys, rest


def test_edge_streams_group_by_relation_and_renumber_their_ends():
    rows = [  # (eid, src idx, rel, dst idx, weight, polarity, factuality)
        (10, 5, "fixes", 7, 1.0, 1, 1.0),
        (11, 7, "refs", 5, 0.5, -1, 0.9),
        (12, 9, "fixes", 5, 2.0, 1, 1.0),  # 9 is not sent: left out
        (13, 5, "fixes", 5, 3.0, 1, 0.5),
    ]
    cols = bulk.edge_columns(rows)
    assert cols.rels == ["fixes", "refs"] and cols.rel.tolist() == [0, 1, 0, 0]
    position = np.full(8, -1, np.int64)
    position[[5, 7]] = [1, 0]  # store idx 5 is the second node sent, 7 the first
    toks = list(bulk.edge_tokens(cols, position, chunk=1))
    assert [c for c, _ in toks] == [1, 1, 1]  # chunk=1: one edge per stream
    got = []
    for _, tok in toks:
        rel, keys, body = _parse_header(tok)
        assert keys == ["weight", "polarity", "factuality", "eid"] and len(body) == bulk._EDGE_RECORD.itemsize
        rec = np.frombuffer(body, bulk._EDGE_RECORD)[0]
        assert (rec["t_weight"], rec["t_pol"], rec["t_fact"], rec["t_eid"]) == (2, 4, 2, 4)
        got.append((rel, int(rec["src"]), int(rec["dst"]), float(rec["weight"]), int(rec["pol"]), int(rec["eid"])))
    assert got == [("fixes", 1, 0, 1.0, 1, 10), ("fixes", 1, 1, 3.0, 1, 13), ("refs", 0, 1, 0.5, -1, 11)]
    assert list(bulk.edge_tokens(bulk.edge_columns([]), position)) == []


def test_node_records_are_row_major_with_typed_values():
    rows = {"issue": [{"id": "a", "idx": 1, "ok": True, "w": 0.5}, {"id": "b\x00c", "idx": 2, "tags": ["x", 3]}]}
    ((ntype, count, tok),) = bulk.node_tokens(rows)
    label, keys, body = _parse_header(tok)
    assert (ntype, count, label, keys) == ("issue", 2, "Node:issue", ["id", "idx", "ok", "tags", "w"])
    first = b"\x03a\x00" + b"\x04" + struct.pack("<q", 1) + b"\x01\x01" + b"\x00" + b"\x02" + struct.pack("<d", 0.5)
    second = b"\x03bc\x00" + b"\x04" + struct.pack("<q", 2) + b"\x00"  # NUL dropped; missing ok is null
    second += b"\x05" + struct.pack("<q", 2) + b"\x03x\x00" + b"\x04" + struct.pack("<q", 3) + b"\x00"
    assert body == first + second


class _Conn:
    def __init__(self, fail_at: int | None = None):
        self.calls: list[tuple] = []
        self.fail_at = fail_at

    def execute_command(self, *args):
        if self.fail_at is not None and len(self.calls) == self.fail_at:
            raise RuntimeError("refused")
        self.calls.append(args)


def test_sender_keeps_the_order_begins_once_and_raises_a_failure():
    conn = _Conn()
    with bulk.Sender(conn, "g") as send:
        send(2, 0, b"n")
        send(0, 3, b"e1")
        send(0, 1, b"e2")
    assert conn.calls == [
        ("GRAPH.BULK", "g", "BEGIN", 2, 0, 1, 0, b"n"),
        ("GRAPH.BULK", "g", 0, 3, 0, 1, b"e1"),
        ("GRAPH.BULK", "g", 0, 1, 0, 1, b"e2"),
    ]
    with pytest.raises(RuntimeError, match="refused"):
        with bulk.Sender(_Conn(fail_at=1), "g") as send:
            for _ in range(5):
                send(1, 0, b"n")


def test_epoch_times_format_as_the_datetime_path_does():
    def slow(v):
        try:
            return dt.datetime.fromtimestamp(float(v), dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        except (OverflowError, OSError, ValueError):
            return None

    for v in [0, 1, -1, 1500000000, -30610224000, 253402300799, 10**9 + 7, *range(-(10**10), 10**11, 7_777_777_777)]:
        assert _iso_time(v) == slow(v), v
    assert _iso_time(10**13) is None and _iso_time(1.5) == slow(1.5) and _iso_time("2021-05-01") == "2021-05-01"
    p = node_props(3, "c:1", "commit", "t", '{"time": 1500000000, "bad key": 1, "n": 2, "big": 9223372036854775808}')
    assert p == {"id": "c:1", "idx": 3, "type": "commit", "title": "t", "time": "2017-07-14T02:40:00Z", "n": 2}
