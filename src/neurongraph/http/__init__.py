"""The HTTP API and web page (optional extra ``neurongraph[serve]``: FastAPI + uvicorn).

``ngr serve --db PATH`` runs it; :func:`create_app` builds the ASGI app over an engine for
embedding elsewhere.  See docs/http.md.  The core never imports this package.
"""

from __future__ import annotations

__all__ = ["create_app", "serve", "is_loopback"]


def create_app(engine, **kwargs):
    """The FastAPI app over ``engine`` (see :func:`neurongraph.http.app.create_app`)."""
    from .app import create_app as _create

    return _create(engine, **kwargs)


def serve(engine, host: str = "127.0.0.1", port: int = 8765, **kwargs) -> None:
    """Serve ``engine`` until interrupted (see :func:`neurongraph.http.server.serve`)."""
    from .server import serve as _serve

    _serve(engine, host, port, **kwargs)


def is_loopback(host: str) -> bool:
    from .server import is_loopback as _is

    return _is(host)
