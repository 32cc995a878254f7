"""``ngr mcp``: serve the engine to an MCP client over stdio (optional extra ``neurongraph[mcp]``).

Mounted by ``cli/main.py`` with ``app.command("mcp")(mcp_command)``; also the whole of
``python -m neurongraph.mcp``.  ``--db`` / ``--embedder`` may be given before ``mcp`` (the
root options) or after it; after wins.  Nothing but the protocol is written to stdout:
errors go to stderr as ``error[code]: message`` with exit status 2.
"""

from __future__ import annotations

import contextlib
import sys
from pathlib import Path

import typer

from ..engine import Engine
from .common import CliError, Ctx, build_engine, handled

__all__ = ["mcp_command", "open_for_serving", "open_freshness", "REPO_HELP", "WAIT_HELP"]

REPO_HELP = (
    "A git repository to keep the store fresh with (repeatable): before a search or ask, its refs are compared "
    "with what the store synced and new commits are synced first (see --fresh-wait)."
)
WAIT_HELP = (
    "With --repo: seconds a call waits for a sync of new commits; then it answers from the store as it is "
    "(freshness.stale) and the sync finishes in the background."
)


def open_for_serving(c: Ctx) -> Engine:
    """Check the SDK and the store, then open the engine (stdout kept clean for the protocol)."""
    try:
        from mcp.server import MCPServer  # noqa: F401  (lazy: the optional SDK 2.x API the server is built on)
    except ImportError:
        raise CliError(
            "missing_dependency",
            "the MCP server needs the optional extra: "
            "pip install 'neurongraph[mcp]' (the official mcp SDK, version 2.3 or later)",
        ) from None
    path = c.existing_db_path()  # a file that exists, or a PostgreSQL URL
    with contextlib.redirect_stdout(sys.stderr):  # a model library printing while loading must not corrupt stdio
        return build_engine(c, path)


def open_freshness(c: Ctx, path: str, repos: list[str] | None, wait_s: float):
    """The ``--repo`` checker (service/freshness.py), or None without ``--repo``; a path that is not a git
    repository is ``error[invalid_argument]`` before anything is served."""
    if not repos:
        return None
    if not wait_s >= 0:
        raise CliError("invalid_argument", f"--fresh-wait must be 0 or more seconds, got {wait_s}")
    from ..service.freshness import Freshness

    for r in repos:
        if not Path(r).expanduser().is_dir():
            raise CliError("invalid_argument", f"--repo {r}: no such folder")
    with contextlib.redirect_stdout(sys.stderr):
        return Freshness(path, repos, c.make_embedder, wait_s=wait_s)


def mcp_command(
    ctx: typer.Context,
    db: str | None = typer.Option(
        None, "--db", help="SQLite database file to serve (default: NGR_DB or ./.ngr/ngr.db)."
    ),
    embedder: str | None = typer.Option(
        None,
        "--embedder",
        help="Embedding model: default = the real sentence model; 'hashing' = fast test embedder; "
        "or a local model directory. Must match the one the store was ingested with.",
    ),
    repo: list[str] | None = typer.Option(None, "--repo", help=REPO_HELP),
    fresh_wait: float = typer.Option(3.0, "--fresh-wait", help=WAIT_HELP),
) -> None:
    """Serve search and the learning loop as MCP tools over stdio (for Claude Desktop, Claude Code, ...).

    Tools: search, get_node, record_source_use, record_retrieval_failure, record_outcome,
    get_trace.  Register the exact command with your MCP client; see docs/mcp.md.
    """
    root = ctx.find_root().obj
    if not isinstance(root, Ctx):  # run as `python -m neurongraph.mcp`
        root = Ctx.from_env()
    c = Ctx(db=db or root.db, db_explicit=bool(db) or root.db_explicit, embedder=embedder or root.embedder)
    with handled(False):
        engine = open_for_serving(c)
        try:
            fresh = open_freshness(c, c.existing_db_path(), repo, fresh_wait)
        except BaseException:
            engine.close()
            raise
    from ..mcp.server import serve  # lazy: the server module needs the optional MCP SDK

    serve(engine, freshness=fresh)
