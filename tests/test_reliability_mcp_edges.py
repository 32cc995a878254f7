"""MCP edges (issue 42 item 6), through a real ``python -m neurongraph.mcp`` subprocess spoken to in raw
JSON-RPC over its stdin and stdout (the SDK client cannot send these messages), and the real SDK client
for the usual path:

* a tool call whose arguments repeat a key ran with the last value: now the tool error invalid_argument;
* an argument nested 5,000 deep got no reply at all: a JSON-RPC error, and the next call is answered;
* a 200 MB message left 650 MB resident: refused while it is read, in bounded pieces;
* a line that is not JSON got no reply: a parse error;
* a client that died mid-burst left ~49 queued calls running (orphan traces) and a ``BrokenPipeError``
  traceback: the queued calls are dropped and the server exits 0 without a traceback.
"""

from __future__ import annotations

import json
import os
import select
import sqlite3
import subprocess
import sys
import time
from contextlib import closing

import anyio
import pytest

pytest.importorskip("mcp.server", reason="the optional extra neurongraph[mcp] (official mcp SDK 2.x) is not installed")

from http_fixtures import QUERY, build_store  # noqa: E402
from neurongraph.mcp.stdio import MAX_DEPTH, MAX_MESSAGE_BYTES, message_id, nesting_exceeds  # noqa: E402


@pytest.fixture
def db(tmp_path):
    return build_store(tmp_path / "s.db")


class Raw:
    """The server as a subprocess, spoken to line by line."""

    def __init__(self, db, env: dict | None = None):
        self.p = subprocess.Popen(
            [sys.executable, "-m", "neurongraph.mcp", "--db", str(db), "--embedder", "hashing"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, "HF_HUB_OFFLINE": "1", **(env or {})},
        )
        self.buf = b""

    def send(self, msg) -> None:
        data = msg if isinstance(msg, bytes) else json.dumps(msg).encode()
        self.p.stdin.write(data + b"\n")
        self.p.stdin.flush()

    def recv(self, timeout: float = 30.0) -> dict:
        end = time.monotonic() + timeout
        while b"\n" not in self.buf:
            left = end - time.monotonic()
            assert left > 0, "no reply from the server"
            r, _, _ = select.select([self.p.stdout], [], [], left)
            if r:
                chunk = os.read(self.p.stdout.fileno(), 1 << 16)
                assert chunk, f"the server closed stdout: {self.p.stderr.read().decode()[-2000:]}"
                self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def start(self) -> Raw:
        self.send(
            {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"},
                },
            }
        )
        assert self.recv()["id"] == 0
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def call(self, msg_id, tool: str, args: dict) -> dict:
        self.send({"jsonrpc": "2.0", "id": msg_id, "method": "tools/call", "params": {"name": tool, "arguments": args}})
        return self.recv()

    def close(self) -> tuple[int, str]:
        if self.p.stdin and not self.p.stdin.closed:
            self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait(timeout=10)
        err = self.p.stderr.read().decode()
        for f in (self.p.stdout, self.p.stderr):
            f.close()
        return self.p.returncode, err


def _node_ok(reply: dict, msg_id) -> None:
    assert reply["id"] == msg_id and not reply["result"].get("isError"), reply
    assert reply["result"]["structuredContent"]["id"] == "pr:40"


def test_repeated_argument_keys_are_invalid_argument(db):
    s = Raw(db).start()
    try:
        s.send(
            b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "get_node", '
            b'"arguments": {"node_id": "issue:77", "node_id": "pr:40"}}}'
        )
        r = s.recv()
        assert r["id"] == 7 and r["result"]["isError"] is True
        err = r["result"]["structuredContent"]["error"]
        assert err["code"] == "invalid_argument" and "duplicate key 'node_id'" in err["message"]
        assert r["result"]["content"][0]["text"].startswith("error[invalid_argument]: ")
        # a repeated key in the envelope of another method: a JSON-RPC error on that id
        s.send(b'{"jsonrpc": "2.0", "id": 8, "method": "tools/list", "method": "tools/list"}')
        r = s.recv()
        assert r["id"] == 8 and r["error"]["code"] == -32600 and "duplicate key 'method'" in r["error"]["message"]
        _node_ok(s.call(9, "get_node", {"node_id": "pr:40"}), 9)
    finally:
        rc, err = s.close()
    assert rc == 0 and "Traceback" not in err


def test_deep_nesting_and_text_that_is_not_json_are_answered(db):
    s = Raw(db).start()
    try:
        deep = (
            b'{"jsonrpc": "2.0", "id": "deep-1", "method": "tools/call", "params": {"name": "search", '
            b'"arguments": {"query": "x", "where": ' + b"[" * 5000 + b"]" * 5000 + b"}}}"
        )
        s.send(deep)
        r = s.recv()
        assert r["id"] == "deep-1" and r["error"]["code"] == -32600
        assert f"more than {MAX_DEPTH} deep" in r["error"]["message"]
        s.send(b"this is not json")
        r = s.recv()
        assert r["id"] is None and r["error"]["code"] == -32700
        _node_ok(s.call(11, "get_node", {"node_id": "pr:40"}), 11)
    finally:
        rc, err = s.close()
    assert rc == 0 and "Traceback" not in err


def _peak_rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    raise AssertionError("no VmHWM")


def test_a_200_mb_message_is_refused_while_it_is_read(db):
    s = Raw(db).start()
    try:
        _node_ok(s.call(1, "get_node", {"node_id": "pr:40"}), 1)
        before = _peak_rss_mb(s.p.pid)
        head = b'{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": "search", '
        head += b'"arguments": {"query": "'
        s.p.stdin.write(head)
        block = b"a" * (1 << 20)
        for _ in range(200):
            s.p.stdin.write(block)
        s.p.stdin.write(b'"}}}\n')
        s.p.stdin.flush()
        r = s.recv(120)
        assert r["id"] == 12 and r["error"]["code"] == -32600
        assert f"over {MAX_MESSAGE_BYTES:,} bytes" in r["error"]["message"]
        _node_ok(s.call(13, "get_node", {"node_id": "pr:40"}), 13)
        grew = _peak_rss_mb(s.p.pid) - before
        assert grew < 60, f"peak resident memory grew {grew:.0f} MB reading a 200 MB message"
    finally:
        rc, err = s.close()
    assert rc == 0 and "Traceback" not in err


def test_the_limit_is_configurable(db):
    s = Raw(db, env={"NGR_MCP_MAX_MESSAGE_BYTES": "2048"}).start()
    try:
        r = s.call(14, "search", {"query": "q" * 3000})
        assert r["id"] == 14 and "over 2,048 bytes" in r["error"]["message"]
        _node_ok(s.call(15, "get_node", {"node_id": "pr:40"}), 15)
    finally:
        s.close()


def test_a_client_that_dies_mid_burst_leaves_no_orphan_calls_and_no_traceback(db):
    s = Raw(db).start()
    burst = b"".join(
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 100 + i,
                "method": "tools/call",
                "params": {"name": "search", "arguments": {"query": f"{QUERY} {i}", "limit": 50}},
            }
        ).encode()
        + b"\n"
        for i in range(50)
    )
    s.p.stdin.write(burst)
    s.p.stdin.flush()
    s.p.stdout.close()  # the client dies: nobody reads the replies ...
    s.p.stdin.close()  # ... and its end of the input closes
    try:
        s.p.wait(timeout=60)
    finally:
        if s.p.poll() is None:
            s.p.kill()
    err = s.p.stderr.read().decode()
    s.p.stderr.close()
    assert s.p.returncode == 0, err
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
    with closing(sqlite3.connect(db)) as c:
        stored = c.execute("SELECT count(*) FROM traces").fetchone()[0]
    assert stored <= 5, f"{stored} searches ran for a client that had gone"


def test_the_sdk_client_still_works_end_to_end(db):
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "neurongraph.mcp", "--db", str(db), "--embedder", "hashing"]
    )

    async def main():
        async with Client(params, read_timeout_seconds=30) as c:
            r = await c.call_tool("search", {"query": QUERY, "limit": 3})
            assert not r.is_error and r.structured_content["hits"]
            r = await c.call_tool("get_node", {"node_id": "pr:40"})
            assert not r.is_error and r.structured_content["id"] == "pr:40"

    anyio.run(main)


def test_the_byte_scans():
    assert not nesting_exceeds(b'{"a": "[[[[[[[[[[", "b": [1, {"c": 2}]}', 3)
    assert nesting_exceeds(b'{"a": [[[1]]]}', 3) and not nesting_exceeds(b'{"a": [[1]]}', 3)
    assert not nesting_exceeds(b'{"a": "\\"[[[[[["}', 1)
    assert message_id(b'{"params": {"id": 5}, "jsonrpc": "2.0", "id": 9, "method"') == 9
    assert message_id(b'{"id": "r-1", "params": [[[[') == "r-1"
    assert message_id(b'{"method": "x"}') is None and message_id(b"garbage") is None
