"""Optional MCP adapter: the engine's search and learning loop as MCP tools over stdio.

Install with ``pip install 'neurongraph[mcp]'`` (the official ``mcp`` SDK 2.x) and run
``ngr mcp --db PATH`` or ``python -m neurongraph.mcp --db PATH``.  See docs/mcp.md.

This package imports the SDK only when a server is built; the core never imports it.
"""

from __future__ import annotations

from typing import Literal

__all__ = ["build_server", "serve"]


def build_server(engine, **kwargs):
    """An ``mcp.server.MCPServer`` exposing ``engine``'s public API as tools (see :mod:`.server`)."""
    from .server import build_server as _build  # lazy: the server module imports the optional SDK

    return _build(engine, **kwargs)


def serve(engine, transport: Literal["stdio", "sse", "streamable-http"] = "stdio") -> None:
    """Serve ``engine`` until the client disconnects, then close it."""
    from .server import serve as _serve  # lazy: the server module imports the optional SDK

    _serve(engine, transport)
