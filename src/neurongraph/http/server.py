"""Running the app: bind a socket (port 0 = any free port), check the token rule, run uvicorn."""

from __future__ import annotations

import ipaddress
import os
import socket
from collections.abc import Callable, Sequence

from ..errors import InvalidArgument, NeuronGraphError

__all__ = ["is_loopback", "check_bind", "bind", "serve", "TokenRequired"]


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
            "(--token or the NGR_TOKEN environment variable), or bind to 127.0.0.1"
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


def serve(
    engine,
    host: str = "127.0.0.1",
    port: int = 8765,
    *,
    token: str | None = None,
    search_engines: Sequence = (),
    on_ready: Callable[[str], None] | None = None,
    log_level: str = "warning",
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
    config = uvicorn.Config(
        app,
        log_level=log_level,
        access_log=False,
        server_header=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
        h11_max_incomplete_event_size=64 * 1024,
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
