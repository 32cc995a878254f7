"""Running the app: bind a socket (port 0 = any free port), check the token rule, run uvicorn.

Slow clients (issue 27): uvicorn has no deadline for reading a request, so 1,100 connections that each
sent half a request head ("slowloris") all stayed open.  :func:`guarded_protocol` is uvicorn's h11
protocol with two limits: a request (head and body) must arrive within ``read_timeout`` seconds of the
connection opening or of the previous response ending (else ``408`` and the connection closes), and at
most ``max_connections`` connections are open at once (one more is answered ``503`` and closed at once,
before anything is read).  Fourth pass (issue 42): one client holding ~300 half-sent connections took
the whole cap, so 19 of 20 other clients' requests got ``503``; now one client address (an IPv4 address,
or an IPv6 /64 network) may hold at most ``max_per_client`` of them, and one more from it is answered
``503`` at once while other addresses are served.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

from ..errors import InvalidArgument, NeuronGraphError

__all__ = [
    "is_loopback",
    "check_bind",
    "bind",
    "serve",
    "TokenRequired",
    "guarded_protocol",
    "client_key",
    "uvicorn_config",
    "READ_TIMEOUT",
    "MAX_CONNECTIONS",
    "MAX_PER_CLIENT",
]

READ_TIMEOUT = 10.0  # seconds a client has to send one whole request
MAX_CONNECTIONS = 256  # open connections at once (each costs a socket and a few KB, never an engine thread)
MAX_PER_CLIENT = 32  # of those, from one client address (a browser opens ~6 per site)


class TokenRequired(NeuronGraphError):
    """Serving beyond loopback without a token would let anyone write; refused at start."""

    code = "token_required"


def is_loopback(host: str) -> bool:
    """127.0.0.0/8, ::1 and ``localhost``; every other address (0.0.0.0 included) is reachable from outside."""
    h = host.strip().strip("[]")
    if h.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def check_bind(host: str, port: int, token: str | None) -> None:
    """The safety rule: beyond loopback, writes must need a token, so serving without one is refused."""
    if not host or len(host) > 255:
        raise InvalidArgument(f"--host {host!r}: expected an address such as 127.0.0.1")
    if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
        raise InvalidArgument(f"--port {port!r}: expected 0..65535 (0 = any free port)")
    if token is not None and (len(token) < 16 or not token.isprintable() or token.strip() != token):
        raise InvalidArgument("the token must be at least 16 printable characters without surrounding spaces")
    if not is_loopback(host) and token is None:
        raise TokenRequired(
            f"--host {host} is reachable from other machines: give a token for writes "
            "(--token-file PATH or the NGR_TOKEN environment variable), or bind to 127.0.0.1"
        )


def bind(host: str, port: int) -> socket.socket:
    """A listening socket (so port 0 resolves to a real port before anything is printed)."""
    infos = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    family, _, _, _, addr = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(128)
        sock.set_inheritable(True)
    except OSError:
        sock.close()
        raise
    return sock


def client_key(peer: Any) -> str:
    """Whose connection this is, for the per-client cap: the IPv4 address (an IPv4-mapped IPv6 address
    as IPv4), or the /64 network of an IPv6 address (one host usually has a whole /64)."""
    host = peer[0] if isinstance(peer, (tuple, list)) and peer else str(peer)
    try:
        ip = ipaddress.ip_address(str(host).split("%", 1)[0])
    except ValueError:
        return str(host)  # a Unix socket path, or nothing: one key for all of them
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((int(ip) >> 64 << 64, 64)))
    return str(ip)


def _canned(status: str, code: str, message: str) -> bytes:
    body = json.dumps({"error": {"code": code, "message": message}}).encode()
    head = f"HTTP/1.1 {status}\r\ncontent-type: application/json\r\nconnection: close\r\n"
    return (head + f"content-length: {len(body)}\r\n\r\n").encode() + body


class _Guard:
    """The limits, mixed in before uvicorn's ``H11Protocol`` (whose ``connections``, ``cycle``,
    ``transport`` and ``loop`` it reads); the class attributes are set by :func:`guarded_protocol`."""

    read_timeout: float
    max_connections: int
    max_per_client: int
    per_client: dict[str, int]  # open connections by client_key, shared by every connection of one server
    busy: bytes
    busy_client: bytes
    slow: bytes
    _refused = False
    _client: str | None = None
    _deadline: asyncio.TimerHandle | None = None
    connections: set
    cycle: Any
    transport: Any
    loop: asyncio.AbstractEventLoop

    def connection_made(self, transport) -> None:
        key = client_key(transport.get_extra_info("peername"))
        held = self.per_client.get(key, 0)
        refusal = (
            self.busy
            if len(self.connections) >= self.max_connections
            else self.busy_client
            if held >= self.max_per_client
            else None
        )
        if refusal is not None:
            self._refused = True
            transport.write(refusal)
            transport.close()
            return
        self._client = key
        self.per_client[key] = held + 1
        super().connection_made(transport)  # type: ignore[misc]
        self._watch()

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused:
            return
        if self._client is not None:
            left = self.per_client.get(self._client, 1) - 1
            if left > 0:
                self.per_client[self._client] = left
            else:
                self.per_client.pop(self._client, None)
            self._client = None
        self._disarm()
        super().connection_lost(exc)  # type: ignore[misc]

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        super().data_received(data)  # type: ignore[misc]
        self._watch()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # type: ignore[misc]
        self._watch()

    def _reading(self) -> bool:
        """True while a request is still arriving (no request running, or its body not complete)."""
        c = self.cycle
        return c is None or c.response_complete or c.more_body

    def _watch(self) -> None:
        if self.transport is None or self.transport.is_closing() or not self._reading():
            self._disarm()
        elif self._deadline is None:  # counted from the start of this request: dribbling does not extend it
            self._deadline = self.loop.call_later(self.read_timeout, self._expire)

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None

    def _expire(self) -> None:
        self._deadline = None
        if self.transport.is_closing() or not self._reading():
            return
        c = self.cycle
        if c is None or c.response_complete:  # no response started: say why before closing
            self.transport.write(self.slow)
        self.transport.close()


def guarded_protocol(
    read_timeout: float = READ_TIMEOUT, max_connections: int = MAX_CONNECTIONS, max_per_client: int = MAX_PER_CLIENT
) -> type:
    """uvicorn's h11 protocol with a per-request read deadline, a cap on open connections and a cap per
    client address (see above)."""
    if not (read_timeout > 0 and max_connections >= 1 and max_per_client >= 1):
        raise InvalidArgument("read_timeout must be > 0 seconds, max_connections and max_per_client at least 1")
    from uvicorn.protocols.http.h11_impl import H11Protocol

    return type(
        "GuardedH11Protocol",
        (_Guard, H11Protocol),
        {
            "read_timeout": read_timeout,
            "max_connections": max_connections,
            "max_per_client": max_per_client,
            "per_client": {},
            "busy": _canned("503 Service Unavailable", "busy", f"over {max_connections} open connections; retry"),
            "busy_client": _canned(
                "503 Service Unavailable",
                "busy",
                f"over {max_per_client} open connections from your address; close some and retry",
            ),
            "slow": _canned("408 Request Timeout", "request_timeout", f"no whole request within {read_timeout:g} s"),
        },
    )


def uvicorn_config(
    app,
    *,
    log_level: str = "warning",
    read_timeout: float = READ_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
    max_per_client: int = MAX_PER_CLIENT,
):
    """The uvicorn configuration ``serve`` runs (also what the tests start in-process)."""
    import uvicorn

    return uvicorn.Config(
        app,
        http=guarded_protocol(read_timeout, max_connections, max_per_client),
        log_level=log_level,
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=64 * 1024,
    )


def serve(
    engine,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    token: str | None = None,
    search_engines: Sequence = (),
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
    read_timeout: float = READ_TIMEOUT,
    max_connections: int = MAX_CONNECTIONS,
    max_per_client: int = MAX_PER_CLIENT,
    **app_kwargs,
) -> None:
    """Serve ``engine`` (and ``search_engines``, see :func:`create_app`) until interrupted; every engine
    is closed when the server stops, or at once when it cannot start."""
    import uvicorn

    from .app import create_app

    def close_all() -> None:
        for e in (engine, *search_engines):
            e.close()

    try:
        check_bind(host, port, token)
        sock = bind(host, port)
    except BaseException:
        close_all()
        raise
    try:
        app = create_app(engine, search_engines=search_engines, token=token, loopback=is_loopback(host), **app_kwargs)
    except BaseException:
        sock.close()
        close_all()
        raise
    real_port = sock.getsockname()[1]
    shown = f"[{host.strip('[]')}]" if ":" in host.strip("[]") else host
    url = f"http://{shown}:{real_port}/"
    config = uvicorn_config(
        app,
        log_level=log_level,
        read_timeout=read_timeout,
        max_connections=max_connections,
        max_per_client=max_per_client,
    )
    server = uvicorn.Server(config)
    if on_ready is not None:
        startup = server.startup

        async def announce(sockets=None):
            await startup(sockets=sockets)
            on_ready(url)

        server.startup = announce
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()


def env_token() -> str | None:
    return os.environ.get("NGR_TOKEN") or None
