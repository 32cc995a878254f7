"""The stdio transport of ``ngr mcp``: the SDK's ``stdio_server`` fed through a guarded reader and writer.

Issue 42 (fourth pass) found four ways a client could hurt the server through stdio, all before any tool
ran, where the SDK reads a whole line and hands it to pydantic:

* a message of 200 MB was read whole (650 MB resident): a line is now read at most
  :data:`MAX_MESSAGE_BYTES` + 1 bytes at a time; a longer one is read past in 64 KiB pieces, never held,
  and answered with a JSON-RPC error (``-32600``) naming the limit;
* an argument nested 5,000 deep got no reply at all: the nesting depth is counted with a byte scan
  (strings skipped) before any JSON parsing; past :data:`MAX_DEPTH` the message is answered ``-32600``;
* ``{"node_id": "a", "node_id": "b"}`` ran with the last value: a ``tools/call`` whose JSON repeats a key
  is answered with the tool error ``invalid_argument`` naming the key and its column (another method:
  ``-32600``), as every other strict JSON reader does (``neurongraph.strict_json``);
* text that is not JSON got no reply: ``-32700`` (parse error) now;
* a client that died mid-burst left ~49 queued calls running (orphan traces) and the server exited with
  a ``BrokenPipeError`` traceback: :func:`client_gone` (a write failed, or the other end of stdout is
  closed) makes every call that has not started return at once without running, the reader stops, and
  the server exits 0 without a traceback.

The ids of refused messages are read from the message's first 64 KiB by a scan for the top-level
``"id"``, so the client gets its answer on the request it is waiting for.  As the SDK does, file
descriptors 0 and 1 point at ``/dev/null`` and stderr while serving (a child process, or a library
printing, cannot write into the protocol) and are restored afterwards.
"""

from __future__ import annotations

import io
import json
import os
import re
import select
import sys
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import Any

import anyio
import anyio.to_thread
import mcp_types as types
from mcp.server.stdio import stdio_server

from .. import strict_json
from ..errors import InvalidArgument
from .errors import error_result  # the same error shape as every other tool error

__all__ = ["MAX_MESSAGE_BYTES", "MAX_DEPTH", "GuardedStdio", "guarded_stdio", "nesting_exceeds", "message_id"]

MAX_MESSAGE_BYTES = 4 * 1024 * 1024  # one JSON-RPC message (a line); the largest tool argument is ~100 KB
MAX_DEPTH = 64  # brackets deep, envelope included; the deepest tool argument is ~6
_CHUNK = 64 * 1024
_ID_SCAN = 64 * 1024

# a JSON string (escapes included), or a bracket; everything else is skipped by finditer
_STRING_OR_BRACKET = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}:,]|[^\s\[\]{}:,"]+')


def max_message_bytes() -> int:
    """:data:`MAX_MESSAGE_BYTES`, or ``NGR_MCP_MAX_MESSAGE_BYTES`` when set to a whole number ≥ 1024."""
    raw = os.environ.get("NGR_MCP_MAX_MESSAGE_BYTES", "")
    return int(raw) if raw.isdigit() and int(raw) >= 1024 else MAX_MESSAGE_BYTES


def nesting_exceeds(line: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether ``line`` nests objects and arrays more than ``limit`` deep (brackets inside strings do not
    count).  A regular-expression scan: no parser, no recursion, linear in the line."""
    depth = 0
    for m in _STRING_OR_BRACKET.finditer(line):
        c = m.group()
        if c in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif c in (b"]", b"}"):
            depth -= 1
    return False


def message_id(prefix: bytes) -> Any:
    """The top-level ``"id"`` of a JSON-RPC message from its first bytes (a number or a string), or None."""
    depth, want_value, key = 0, False, None
    for m in _TOKEN.finditer(prefix[:_ID_SCAN]):
        t = m.group()
        if want_value:
            with suppress(ValueError):
                v = json.loads(t)
                if isinstance(v, (int, str)) and not isinstance(v, bool):
                    return v
            return None
        if t in (b"{", b"["):
            depth += 1
        elif t in (b"}", b"]"):
            depth -= 1
        elif t == b":":
            want_value = depth == 1 and key == b'"id"'
        elif t != b",":
            key = t
    return None


def _error(msg_id: Any, code: int, message: str, data: Any = None) -> str:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "error": err}, ensure_ascii=False)


def _tool_error(msg_id: Any, exc: InvalidArgument) -> str:
    result = error_result(exc).model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps({"jsonrpc": "2.0", "id": msg_id, "result": result}, ensure_ascii=False)


class GuardedStdio:
    """The two ends the SDK's ``stdio_server(stdin=, stdout=)`` reads and writes (an async line iterator and
    ``write``/``flush``), over private duplicates of the process's stdin and stdout."""

    def __init__(self, rfd: int, wfd: int, max_bytes: int | None = None, max_depth: int = MAX_DEPTH):
        self.reader = io.BufferedReader(io.FileIO(rfd, "rb", closefd=False), buffer_size=_CHUNK)
        self.wfd = wfd
        self.max_bytes = max_message_bytes() if max_bytes is None else max_bytes
        self.max_depth = max_depth
        self._gone = threading.Event()
        self._write_lock = anyio.Lock()

    # ------------------------------------------------------------------ the client's side
    def client_gone(self) -> bool:
        """True once a write to the client failed or the other end of stdout is closed (the client died);
        a call that has not started then runs nothing."""
        if self._gone.is_set():
            return True
        try:
            p = select.poll()
            p.register(self.wfd, select.POLLOUT)
            for _fd, ev in p.poll(0):
                if ev & (select.POLLERR | select.POLLHUP | select.POLLNVAL):
                    self._gone.set()
        except (OSError, ValueError):
            self._gone.set()
        return self._gone.is_set()

    # ------------------------------------------------------------------ stdout
    async def write(self, text: str) -> None:
        """Write one whole line (the SDK writes a message and its newline at once); never raises for a
        client that has gone: the message is dropped."""
        data = text.encode("utf-8")
        async with self._write_lock:
            if self._gone.is_set():
                return
            try:
                await anyio.to_thread.run_sync(self._write_all, data)
            except OSError:  # BrokenPipeError, EPIPE, EBADF: nobody reads any more
                self._gone.set()

    def _write_all(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            n = os.write(self.wfd, view)
            view = view[n:]

    async def flush(self) -> None:
        return None  # every write goes straight to the descriptor

    # ------------------------------------------------------------------ stdin
    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        while not self._gone.is_set():
            try:
                line = await anyio.to_thread.run_sync(self.reader.readline, self.max_bytes + 1)
            except (OSError, ValueError):  # the descriptor failed: as the end of input
                return
            if not line:
                return  # end of input: the client closed the stream
            if len(line) > self.max_bytes and not line.endswith(b"\n"):
                tail_len = await anyio.to_thread.run_sync(self._skip_line)
                size = len(line) + tail_len
                await self.write(
                    _error(
                        message_id(line),
                        -32600,
                        f"message is over {self.max_bytes:,} bytes ({size:,} read and dropped; "
                        "NGR_MCP_MAX_MESSAGE_BYTES sets the limit)",
                        {"code": "invalid_argument"},
                    )
                    + "\n"
                )
                continue
            reply = self._refusal(line)
            if reply is not None:
                await self.write(reply + "\n")
                continue
            yield line.decode("utf-8", errors="replace")

    def _skip_line(self) -> int:
        """Read past the rest of an overlong line in bounded pieces; how many bytes that was."""
        n = 0
        while True:
            piece = self.reader.readline(_CHUNK)
            n += len(piece)
            if not piece or piece.endswith(b"\n"):
                return n

    def _refusal(self, line: bytes) -> str | None:
        """The reply to a line refused before the SDK sees it, or None to pass it on."""
        if not line.strip():
            return None
        if nesting_exceeds(line, self.max_depth):
            return _error(
                message_id(line),
                -32600,
                f"message nests objects and arrays more than {self.max_depth} deep",
                {"code": "invalid_argument"},
            )
        text = line.decode("utf-8", errors="replace")
        try:
            strict_json.loads(text)
        except strict_json.StrictJSONError as exc:
            if exc.key is None:  # NaN / Infinity: the tools' own models refuse it with invalid_argument
                return None
            try:
                msg = json.loads(text)
            except ValueError:
                msg = None
            msg_id = msg.get("id") if isinstance(msg, dict) else message_id(line)
            if isinstance(msg, dict) and msg.get("method") == "tools/call" and msg_id is not None:
                return _tool_error(msg_id, InvalidArgument(f"invalid arguments: {exc.message}"))
            return _error(msg_id, -32600, f"invalid request: {exc.message}", {"code": "invalid_argument"})
        except ValueError as exc:  # not JSON at all
            return _error(None, types.PARSE_ERROR, f"parse error: {exc}")
        return None


def _claim_std_fds() -> tuple[int, int, Any]:
    """Private duplicates of fds 0 and 1 for the protocol; 0 then reads /dev/null and 1 writes to stderr.
    Returns the duplicates and a function that puts 0 and 1 back."""
    import fcntl

    rfd = fcntl.fcntl(0, fcntl.F_DUPFD_CLOEXEC, 3)
    wfd = fcntl.fcntl(1, fcntl.F_DUPFD_CLOEXEC, 3)
    null = os.open(os.devnull, os.O_RDONLY)
    try:
        os.dup2(null, 0)
        os.dup2(2, 1)
    finally:
        os.close(null)

    def restore(gone: bool) -> None:
        with suppress(OSError):
            os.dup2(rfd, 0)
        if gone:  # the client's end is closed: leave 1 on stderr, so a flush at exit cannot fail
            return
        with suppress(OSError):
            os.dup2(wfd, 1)

    return rfd, wfd, restore


@asynccontextmanager
async def guarded_stdio(max_bytes: int | None = None, max_depth: int = MAX_DEPTH):
    """``(read_stream, write_stream, io)`` for ``Server.run`` over the process's stdin and stdout, guarded
    as described above; ``io.client_gone`` tells the tools whether anyone still reads."""
    sys.stdout.flush()
    rfd, wfd, restore = _claim_std_fds()
    guarded = GuardedStdio(rfd, wfd, max_bytes, max_depth)
    try:
        async with stdio_server(stdin=guarded, stdout=guarded) as (read_stream, write_stream):
            yield read_stream, write_stream, guarded
    finally:
        restore(guarded.client_gone())
        with suppress(OSError):
            os.close(wfd)  # rfd stays open: a reader thread may still wait on it (as the SDK's own transport)
