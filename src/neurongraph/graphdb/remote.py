"""A shared FalkorDB server named by URL, in place of the engine's private child.

Why: every engine process otherwise builds and holds its own projection (seconds to load, the memory
of a copy each); a team with several agents on one store can point them all at one server instead.
The URL is ``redis://[user:password@]host:port`` (``rediss://`` for TLS) or
``unix://[user:password@]/path/to/socket``; ``--graph-url`` / ``NGR_GRAPH_URL`` is the one queries
use (give a read-only ACL user here), ``NGR_GRAPH_WRITE_URL`` the one that keeps the server's graph in
step with the store (a writer user; without it the read URL is tried for writes too).  The ACL lines
for both users are in docs/ask.md.  Nothing here imports ``redis`` or ``falkordb`` at import time.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlsplit

from ..errors import InvalidArgument
from .errors import GraphServerAuth, GraphServerError, GraphServerUnreachable

__all__ = ["GraphURL", "GraphTarget", "RemoteServer", "graph_target", "parse_graph_url", "server_error"]

CONNECT_TIMEOUT_S = 5.0
SCHEMES = ("redis", "rediss", "unix")


@dataclass(frozen=True)
class GraphURL:
    """One parsed graph URL: where the server is and as whom to connect."""

    host: str | None = None
    port: int | None = None
    socket: str | None = None
    username: str | None = None
    password: str | None = None
    tls: bool = False

    def redacted(self) -> str:
        """The URL without its password (for messages: a password never goes to a log or an answer)."""
        who = f"{self.username or ''}{':***' if self.password else ''}@" if self.username or self.password else ""
        if self.socket:
            return f"unix://{who}{self.socket}"
        return f"{'rediss' if self.tls else 'redis'}://{who}{self.host}:{self.port}"

    def _kwargs(self, socket_timeout: float) -> dict[str, Any]:
        kw: dict[str, Any] = {
            "username": self.username,
            "password": self.password,
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": CONNECT_TIMEOUT_S,
        }
        if self.socket:
            kw["unix_socket_path"] = self.socket
        else:
            kw.update(host=self.host, port=self.port, ssl=self.tls)
        return kw

    def client(self, socket_timeout: float):
        """A FalkorDB client (its ``connection`` is a ``redis.Redis``) for this URL; the client asks the
        server at once (``INFO``: sentinel or cluster?), so a refusal is a typed error here."""
        from falkordb import FalkorDB

        try:
            return FalkorDB(**self._kwargs(socket_timeout))
        except Exception as exc:
            raise server_error(exc, self) from None


def parse_graph_url(url: str, option: str = "--graph-url") -> GraphURL:
    """Parse a graph URL, or raise :class:`InvalidArgument` saying what a valid one looks like."""
    hint = "expected redis://[user:password@]host:port or unix://[user:password@]/path/to/socket"
    if not isinstance(url, str) or not url.strip():
        raise InvalidArgument(f"{option}: empty URL; {hint}")
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise InvalidArgument(f"{option}: {exc}; {hint}") from None
    if parts.scheme not in SCHEMES:
        raise InvalidArgument(f"{option}: unknown scheme {parts.scheme or '(none)'!r}; {hint}")
    user = unquote(parts.username) if parts.username else None
    pw = unquote(parts.password) if parts.password is not None else None
    if parts.scheme == "unix":
        path = unquote(parts.path)
        if not path.startswith("/"):
            raise InvalidArgument(f"{option}: a unix:// URL needs an absolute socket path; {hint}")
        return GraphURL(socket=path, username=user, password=pw)
    if not parts.hostname:
        raise InvalidArgument(f"{option}: no host in the URL; {hint}")
    if parts.path not in ("", "/", "/0"):
        raise InvalidArgument(f"{option}: FalkorDB keeps graphs in database 0 only; drop {parts.path!r} from the URL")
    return GraphURL(host=parts.hostname, port=port or 6379, username=user, password=pw, tls=parts.scheme == "rediss")


@dataclass(frozen=True)
class GraphTarget:
    """The shared server as this engine uses it: ``read`` for queries, ``write`` for keeping it in step."""

    read: GraphURL
    write: GraphURL | None = None  # None: writes are tried with the read URL's user

    @property
    def writer(self) -> GraphURL:
        return self.write or self.read


def graph_target(
    url: str | None = None, write_url: str | None = None, env: Mapping[str, str] | None = None
) -> GraphTarget | None:
    """The configured shared server: the arguments, else ``NGR_GRAPH_URL`` / ``NGR_GRAPH_WRITE_URL``;
    ``None`` when neither names one (the private child is used).  A bad URL is an error here, at open."""
    env = os.environ if env is None else env
    url = url or env.get("NGR_GRAPH_URL") or None
    write_url = write_url or env.get("NGR_GRAPH_WRITE_URL") or None
    if not url and not write_url:
        return None
    write = parse_graph_url(write_url, "NGR_GRAPH_WRITE_URL") if write_url else None
    read = parse_graph_url(url) if url else write
    assert read is not None
    return GraphTarget(read, write)


def server_error(exc: BaseException, url: GraphURL) -> GraphServerError:
    """A connection failure as a typed error naming the (redacted) URL."""
    import redis

    where = url.redacted()
    msg = str(exc) or type(exc).__name__
    if isinstance(exc, redis.AuthenticationError) or "WRONGPASS" in msg or "NOAUTH" in msg:
        return GraphServerAuth(f"the graph server at {where} refused the credentials: {msg}")
    if isinstance(exc, (redis.ConnectionError, redis.TimeoutError, OSError)):
        return GraphServerUnreachable(f"cannot reach the graph server at {where}: {msg}")
    return GraphServerError(f"the graph server at {where} failed: {msg}")


class RemoteServer:
    """The projection's handle on a shared server, in the place of a :class:`~.server.FalkorChild`:
    the same ``alive`` / ``kill`` / ``stop`` and connections, but ``kill`` and ``stop`` only drop this
    process's connections — the server belongs to nobody here."""

    persist_dir = None

    def __init__(self, target: GraphTarget):
        self.target = target
        self._stopped = False
        self._readers: list[Any] = []
        self._writer: Any = None

    @property
    def alive(self) -> bool:
        return not self._stopped

    @property
    def timeout_note(self) -> str:
        """What a query past its deadline did here (the end of its ``query_timeout`` message)."""
        return (
            f"the shared graph server at {self.target.read.redacted()}; this engine dropped its connection and "
            "reconnects on the next query (the server is not this engine's to restart: a query stuck in it "
            "may still hold one of its worker threads)"
        )

    def writer_client(self):
        """The writer's FalkorDB client, checked with one ``PING`` (a typed error when that fails)."""
        if self._writer is None:
            db = self.target.writer.client(600)
            self._ping(db, self.target.writer)
            self._writer = db
        return self._writer

    def reader(self, socket_timeout: float):
        """The read URL's FalkorDB client (every user query goes through it, as ``GRAPH.RO_QUERY``)."""
        db = self.target.read.client(socket_timeout)
        self._ping(db, self.target.read)
        self._readers.append(db)
        return db

    @staticmethod
    def _ping(db, url: GraphURL) -> None:
        try:
            db.connection.ping()
        except Exception as exc:
            raise server_error(exc, url) from None

    def kill(self) -> None:
        """Drop the readers' sockets (the watchdog: a blocked read returns at once); the server runs on."""
        for db in self._readers:
            try:
                db.connection.connection_pool.disconnect()
            except Exception:
                pass

    def stop(self) -> None:
        self._stopped = True
        self.kill()
        self._readers = []
        if self._writer is not None:
            try:
                self._writer.connection.connection_pool.disconnect()
            except Exception:
                pass
            self._writer = None
