"""A guard in front of a shared FalkorDB server: engines hold the proxy's credentials, never the server's.

Why: on a shared server (``--graph-url``) the engine's guard (:mod:`.guard`) runs on the engine's host,
so anyone holding the reader password could send ``GRAPH.RO_QUERY`` with an 88-character nested
``NOT (`` chain straight to the server; the parser's phase is outside the server's ``TIMEOUT``, two such
queries held both worker threads and every engine's queries timed out from then on.  The proxy re-checks
every query where the server is, so no credential an engine holds can send an unguarded one:

* it speaks RESP on its own socket (and port); ``AUTH user password`` is checked against its own users
  (``ngr_reader`` / ``ngr_writer``), and each client connection gets its own upstream connection as the
  matching *server* user, whose password never leaves the proxy's process;
* ``GRAPH.RO_QUERY`` passes only after :func:`.guard.check_read_only` on the query and a parse-cost
  check of its ``CYPHER name=value`` parameters header (:func:`check_params_header`); the writer's
  ``GRAPH.QUERY`` after :func:`.guard.check_complexity` on the query (its parameters, a patch's rows of
  up to megabytes, are not parsed here: give the writer credential only to the hosts that ingest, it
  can delete graphs anyway); any other command only when the user's list
  (:data:`READER_COMMANDS` / :data:`WRITER_COMMANDS`, the ACLs of :mod:`.serve`) names it;
* a read (``GRAPH.RO_QUERY``) that gets no reply within its deadline (``TIMEOUT_MAX`` + :data:`GRACE_S`)
  is answered ``Query timed out … the shared graph server gave no reply …`` and its upstream connection closed
  (:attr:`GuardProxy.stuck` counts them; :class:`.serve.GraphServer` then reads the server's running
  queries and restarts it when one has run past its time, or it does not answer).

Commands are handled one at a time per connection (a pipeline is served in order); a request over
:data:`MAX_REQUEST_BYTES` or an inline (non-RESP) command closes the connection.
"""

from __future__ import annotations

import asyncio
import hmac
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .errors import CypherError
from .guard import MAX_NESTING, check_complexity, check_read_only, parse_profile
from .server import rss_bytes

__all__ = ["GuardProxy", "ProxyUser", "check_params_header", "split_params_header"]

GRACE_S = 1.0
SERVER_GONE = "the shared graph server closed the connection (it was restarted, or stopped)"
MAX_REQUEST_BYTES = 64 << 20  # one command (a GRAPH.BULK batch is the largest the writer sends)
MAX_PARAMS_CHARS = 4 << 20  # a read's CYPHER header
MAX_PARAMS_PARSE_COST = 1 << 22  # flat parameter lists cost ~0.07 us a unit (guard.py): ~0.3 s at most

READER_COMMANDS = frozenset({b"GRAPH.RO_QUERY", b"GET", b"PING", b"INFO"})
WRITER_COMMANDS = READER_COMMANDS | {
    b"GRAPH.QUERY",
    b"GRAPH.BULK",
    b"GRAPH.DELETE",
    b"SET",
    b"DEL",
    b"PEXPIRE",
    b"WATCH",
    b"UNWATCH",
    b"MULTI",
    b"EXEC",
    b"DISCARD",
    b"SCAN",
}
_GRAPH_QUERIES = (b"GRAPH.RO_QUERY", b"GRAPH.QUERY")
_WRITES = (b"GRAPH.QUERY", b"GRAPH.BULK", b"GRAPH.DELETE")  # the writer's: memory grows legitimately
RSS_POLL_S = 0.01
OFFLOAD_BYTES = 64 << 10  # a query (with its parameters) longer than this is checked on a worker thread


@dataclass(frozen=True)
class ProxyUser:
    """One user of the proxy: its password, and the server user (and password) its connections use."""

    password: str
    upstream_user: str
    upstream_password: str
    commands: frozenset[bytes]


def split_params_header(text: str) -> tuple[str, str]:
    """``("CYPHER `a`=1 ", "MATCH …")``: the parameters header the FalkorDB client puts before a query
    with parameters, and the query; ``("", text)`` when there is none."""
    i, n = 0, len(text)
    while i < n and text[i].isspace():
        i += 1
    if text[i : i + 6].upper() != "CYPHER" or (i + 6 < n and not text[i + 6].isspace()):
        return "", text
    i += 6
    while True:
        j = i
        while j < n and text[j].isspace():
            j += 1
        k = _skip_name(text, j)
        if k is None:
            return text[:j], text[j:]
        while k < n and text[k].isspace():
            k += 1
        if k >= n or text[k] != "=":
            return text[:j], text[j:]
        i = _skip_value(text, k + 1)


def _skip_name(text: str, i: int) -> int | None:
    n = len(text)
    if i < n and text[i] == "`":
        j = text.find("`", i + 1)
        return None if j < 0 else j + 1
    j = i
    while j < n and (text[j].isalnum() or text[j] == "_"):
        j += 1
    return j if j > i else None


def _skip_value(text: str, i: int) -> int:
    """The end of one literal (string, bracketed list or map, number or word) starting at ``i``."""
    n, depth = len(text), 0
    while i < n and text[i].isspace():
        i += 1
    while i < n:
        c = text[i]
        if c in "'\"":
            i += 1
            while i < n and text[i] != c:
                i += 2 if text[i] == "\\" else 1
            i += 1
        elif c == "`":
            j = text.find("`", i + 1)
            i = n if j < 0 else j + 1
        elif c in "[{":
            depth += 1
            i += 1
        elif c in "]}":
            depth -= 1
            i += 1
        elif c.isspace() and depth <= 0:
            return i
        else:
            i += 1
        if depth <= 0 and i < n and text[i].isspace():
            return i
    return n


def check_params_header(header: str) -> None:
    """Raise :class:`.errors.QueryError` for a parameters header the parser could not finish in time:
    the same nesting limit as a query, a larger parse-cost budget (parameter lists are long and flat)."""
    from .errors import QueryError

    if not header:
        return
    if len(header) > MAX_PARAMS_CHARS:
        raise QueryError(f"the query's parameters take {len(header):,} characters; at most {MAX_PARAMS_CHARS:,}")
    p = parse_profile(header)
    if p.depth > MAX_NESTING:
        raise QueryError(f"the query's parameters nest {p.depth} levels; at most {MAX_NESTING} (MAX_NESTING)")
    if p.cost > MAX_PARAMS_PARSE_COST:
        raise QueryError(
            f"the query's parameters cost {p.cost:,} to parse; "
            f"at most {MAX_PARAMS_PARSE_COST:,} (MAX_PARAMS_PARSE_COST)"
        )


def check_graph_command(args: list[bytes]) -> None:
    """The guard for one ``GRAPH.RO_QUERY`` / ``GRAPH.QUERY`` command (raises a :class:`.errors.CypherError`)."""
    from .errors import QueryError

    if len(args) < 3:
        raise QueryError("a graph query needs a graph key and a query")
    try:
        text = args[2].decode("utf-8")
    except UnicodeDecodeError:
        raise QueryError("the query is not valid UTF-8") from None
    header, query = split_params_header(text)
    if args[0].upper() == b"GRAPH.RO_QUERY":
        check_params_header(header)
        check_read_only(query)
    else:  # the writer's: a patch's rows take megabytes of parameters, and the credential can delete graphs anyway
        check_complexity(query)


# ---------------------------------------------------------------------- RESP
class _Closed(Exception):
    pass


async def _line(r: asyncio.StreamReader) -> bytes:
    line = await r.readline()
    if not line.endswith(b"\r\n"):
        raise _Closed()
    return line


async def _read_command(r: asyncio.StreamReader) -> list[bytes]:
    head = await _line(r)
    if head[:1] != b"*":
        raise _Closed()  # inline commands are not served
    n = int(head[1:-2])
    if not 0 < n <= 1_000_000:
        raise _Closed()
    args, total = [], 0
    for _ in range(n):
        h = await _line(r)
        if h[:1] != b"$":
            raise _Closed()
        size = int(h[1:-2])
        total += size
        if size < 0 or total > MAX_REQUEST_BYTES:
            raise _Closed()
        data = await r.readexactly(size + 2)
        args.append(data[:-2])
    return args


async def _read_reply(r: asyncio.StreamReader) -> bytes:
    """One whole reply (RESP2 and RESP3 types), as raw bytes to pass on."""
    head = await _line(r)
    kind = head[:1]
    if kind in b"+-:_,#(":
        return head
    if kind in b"$=!":
        size = int(head[1:-2])
        return head if size < 0 else head + await r.readexactly(size + 2)
    if kind in b"*~>%|":
        size = int(head[1:-2])
        parts = [head]
        for _ in range(max(size, 0) * (2 if kind in b"%|" else 1)):
            parts.append(await _read_reply(r))
        return b"".join(parts)
    raise _Closed()


def _encode(args: list[bytes]) -> bytes:
    out = [b"*%d\r\n" % len(args)]
    for a in args:
        out += [b"$%d\r\n" % len(a), a, b"\r\n"]
    return b"".join(out)


def _error(msg: str) -> bytes:
    return b"-" + " ".join(msg.split()).encode("utf-8", "replace") + b"\r\n"


class GuardProxy:
    """The proxy: :meth:`start` listens (a Unix socket, and ``127.0.0.1:port`` when ``port`` is given) on a
    thread of its own; :meth:`stop` closes every connection."""

    def __init__(self, upstream_socket: str, socket_path: str, users: dict[str, ProxyUser], timeout_ms: int, port=0):
        self.upstream_socket = upstream_socket
        self.socket_path = socket_path
        self.users = users
        self.deadline_s = timeout_ms / 1000 + GRACE_S
        self.port = port
        self.on_stuck: Callable[[], object] | None = None  # run (in a thread) after each stuck query
        self.stuck = 0  # graph queries that got no reply within their deadline
        self.refused = 0  # graph queries the guard refused
        # the memory bound (set by the server's owner): while a read runs and no write does, the server's
        # resident memory is read every RSS_POLL_S; past its size after the last write plus the headroom,
        # the server is killed (and restarted through on_stuck)
        self.server_pid: Callable[[], int | None] | None = None
        self.mem_headroom_bytes: int | None = None
        self.mem_kills = 0
        self._mem_note: str | None = None
        self._mem_note_at = 0.0
        self._reads = self._writes = 0
        self._rss_base: tuple[int | None, int] | None = None  # (server pid, resident bytes after the last write)
        self._monitor: asyncio.Task | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._servers: list[asyncio.AbstractServer] = []
        self._writers: set[asyncio.StreamWriter] = set()

    def start(self) -> GuardProxy:
        ready = threading.Event()
        failed: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self._loop = loop
            try:
                loop.run_until_complete(self._listen())
            except BaseException as exc:  # noqa: BLE001 - handed to the starting thread
                failed.append(exc)
                ready.set()
                return
            ready.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=run, name="ngr-graph-guard-proxy", daemon=True)
        self._thread.start()
        ready.wait(10)
        if failed:
            raise failed[0]
        return self

    async def _listen(self) -> None:
        self._servers.append(await asyncio.start_unix_server(self._serve, path=self.socket_path, limit=1 << 20))
        os.chmod(self.socket_path, 0o700)
        if self.port:
            self._servers.append(await asyncio.start_server(self._serve, "127.0.0.1", self.port, limit=1 << 20))

    def stop(self) -> None:
        loop = self._loop
        if loop is None:
            return

        async def close() -> None:
            for s in self._servers:
                s.close()
            for w in list(self._writers):
                w.close()
            tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for t in tasks:  # connections mid-command and the memory monitor: ended, not left pending
                t.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

        try:
            asyncio.run_coroutine_threadsafe(close(), loop).result(5)
        except Exception:
            pass
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        self._loop = None

    async def _serve(self, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        self._writers.add(w)
        user: ProxyUser | None = None
        up: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        try:
            while True:
                args = await _read_command(r)
                name = args[0].upper()
                if name == b"AUTH":
                    user, up = await self._auth(args, up)
                    w.write(b"+OK\r\n" if user else _error("WRONGPASS invalid username-password pair"))
                elif name == b"QUIT":
                    w.write(b"+OK\r\n")
                    break
                elif name == b"CLIENT" and len(args) > 1 and args[1].upper() == b"SETINFO":
                    w.write(b"+OK\r\n")
                elif user is None:
                    w.write(b"-NOAUTH Authentication required.\r\n")
                elif name not in user.commands:
                    cmd = args[0].decode(errors="replace")
                    w.write(_error(f"NOPERM this user has no permissions to run the '{cmd}' command"))
                else:
                    try:  # a server that went away (restarted) costs this command, not the client's connection
                        if up is None or up[0].at_eof():  # none yet, or its server went away since
                            if up is not None:
                                up[1].close()
                            up = await self._connect_up(user)
                        reply, up = await self._forward(name, args, up, user)
                    except (_Closed, asyncio.IncompleteReadError, OSError, TimeoutError):
                        if up is not None:
                            up[1].close()
                        up = None
                        reply = _error(f"ERR {self.gone_message()}; the next command reconnects")
                    w.write(reply)
                await w.drain()
        except (_Closed, asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        except asyncio.CancelledError:  # stop(): ended quietly (Python 3.11 logs a handler that ends cancelled)
            pass
        finally:
            self._writers.discard(w)
            w.close()
            if up is not None:
                up[1].close()

    async def _auth(self, args: list[bytes], up):
        if up is not None:
            up[1].close()
        if len(args) != 3:
            return None, None
        name, pw = args[1].decode(errors="replace"), args[2].decode(errors="replace")
        user = self.users.get(name)
        if user is None or not hmac.compare_digest(user.password.encode(), pw.encode()):
            return None, None
        try:
            return user, await self._connect_up(user)
        except (_Closed, asyncio.IncompleteReadError, OSError):
            return user, None  # the server is restarting: the first command connects

    async def _connect_up(self, user: ProxyUser):
        """A fresh upstream connection as the server user behind ``user``."""
        ur, uw = await asyncio.open_unix_connection(self.upstream_socket, limit=1 << 20)
        uw.write(_encode([b"AUTH", user.upstream_user.encode(), user.upstream_password.encode()]))
        await uw.drain()
        if not (await _read_reply(ur)).startswith(b"+OK"):
            uw.close()
            raise _Closed()
        return ur, uw

    async def _forward(self, name: bytes, args: list[bytes], up, user: ProxyUser):
        ur, uw = up
        if name in _GRAPH_QUERIES:
            try:
                if len(args) > 2 and len(args[2]) > OFFLOAD_BYTES:  # a long check must not hold every connection
                    await asyncio.get_running_loop().run_in_executor(None, check_graph_command, args)
                else:
                    check_graph_command(args)
            except CypherError as exc:
                self.refused += 1
                kind = "read-only: " if exc.code == "read_only" else ""
                return _error(f"ERR {kind}{exc.message} (refused by the graph server's guard)"), up
        write = name in _WRITES
        if name in _GRAPH_QUERIES or write:
            self._writes += write
            self._reads += not write
            self._watch_memory()
        try:
            uw.write(_encode(args))
            await uw.drain()
            if name != b"GRAPH.RO_QUERY":  # the writer's batches wait for their answer (TIMEOUT_MAX caps them)
                return await _read_reply(ur), up
            return await asyncio.wait_for(_read_reply(ur), self.deadline_s), up
        except TimeoutError:
            self.stuck += 1
            uw.close()  # its reply may still come: this connection is not used again
            if self.on_stuck is not None:
                threading.Thread(target=self.on_stuck, name="ngr-graph-recover", daemon=True).start()
            msg = (
                f"ERR Query timed out: the shared graph server gave no reply within {self.deadline_s:g} s "
                "(its time limit plus grace); the server's owner checks it and restarts it if it is stuck"
            )
            return _error(msg), None  # the next command connects afresh
        finally:
            if name in _GRAPH_QUERIES or write:
                self._writes -= write
                self._reads -= not write
                if write and not self._writes:
                    self._rss_base = None  # resampled at the next read: the graph may have grown

    def gone_message(self) -> str:
        """What a client is told when the server closed its connection mid-command."""
        recent = self._mem_note is not None and time.monotonic() - self._mem_note_at < 30
        return self._mem_note if recent and self._mem_note else SERVER_GONE

    def _watch_memory(self) -> None:
        if self.server_pid is None or self.mem_headroom_bytes is None:
            return
        if self._monitor is None or self._monitor.done():
            self._monitor = asyncio.get_running_loop().create_task(self._memory_monitor())

    async def _memory_monitor(self) -> None:
        assert self.server_pid is not None and self.mem_headroom_bytes is not None
        while self._reads or self._writes:
            pid = self.server_pid()
            if self._rss_base is None or self._rss_base[0] != pid:
                if self._writes:
                    await asyncio.sleep(RSS_POLL_S)
                    continue
                rss = rss_bytes(pid)
                self._rss_base = (pid, rss or 0) if rss is not None else None
            await asyncio.sleep(RSS_POLL_S)
            if self._writes or self._rss_base is None:
                continue
            rss = rss_bytes(pid)
            limit = self._rss_base[1] + self.mem_headroom_bytes
            if pid is not None and rss is not None and rss > limit:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
                self.mem_kills += 1
                self._mem_note = (
                    f"the shared graph server closed the connection: it was stopped because a query took it to "
                    f"{rss >> 20} MiB resident, over its bound ({self.mem_headroom_bytes >> 20} MiB above its size "
                    "after the last update), and its owner restarts it"
                )
                self._mem_note_at = time.monotonic()
                self._rss_base = None
                if self.on_stuck is not None:
                    threading.Thread(target=self.on_stuck, name="ngr-graph-recover", daemon=True).start()
