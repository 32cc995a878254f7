"""``ngr serve``: the HTTP API and web page over one store (optional extra ``neurongraph[serve]``).

Mounted by ``cli/main.py`` with ``app.command("serve")(serve_command)``.  ``--db`` / ``--embedder``
may be given before ``serve`` (the root options) or after it; after wins.  User mistakes print
``error[code]: message`` to stderr and exit with status 2 (``--json``: ``{"error": {...}}`` on stdout).
Once listening it prints one line, ``serving http://HOST:PORT/ ...`` (``--json``: ``{"url": ...}``), so
a caller can start it with ``--port 0`` and read the port it got.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import typer

from .common import CliError, Ctx, build_engine, handled

__all__ = ["serve_command"]


def serve_command(
    ctx: typer.Context,
    db: str | None = typer.Option(
        None, "--db", help="SQLite database file to serve (default: NGR_DB or ./.ngr/ngr.db)."
    ),
    embedder: str | None = typer.Option(
        None, "--embedder", help="Embedding model; must match the one the store was ingested with."
    ),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind. Anything but loopback needs a token."),
    port: int = typer.Option(8765, "--port", help="TCP port (0 = any free port; the line printed names it)."),
    token: str | None = typer.Option(
        None,
        "--token",
        envvar="NGR_TOKEN",
        show_envvar=True,
        help="Every POST (search, ask, feedback) then needs `Authorization: Bearer TOKEN`. Required when --host "
        "is not loopback; at least 16 characters.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the ready line (and errors) as JSON."),
) -> None:
    """Serve the HTTP API (OpenAPI at /openapi.json) and the web page at http://HOST:PORT/.

    Search, explanation paths drawn as graphs, nodes, traces and the learning loop (selected → validated → used).

    Loopback only by default; beyond it a token is required. See docs/http.md.
    """
    root = ctx.find_root().obj
    if not hasattr(root, "db"):  # not run under the `ngr` root (no --db/--embedder parsed)
        root = Ctx.from_env()
    c = Ctx(
        db=db or root.db,
        db_explicit=bool(db) or root.db_explicit,
        embedder=embedder or root.embedder,
        reembed=getattr(root, "reembed", False),
    )
    with handled(as_json):
        try:
            from ..http.server import check_bind, serve
        except ImportError:
            raise CliError(
                "missing_dependency", "the HTTP server needs the optional extra: pip install 'neurongraph[serve]'"
            ) from None
        check_bind(host, port, token)
        path = c.db_path()
        if not Path(path).exists():
            raise CliError("no_store", f"no store at {path}; run `ngr ingest FILE` first (or pass --db)")
        engine = build_engine(c, path)

    def ready(url: str) -> None:
        info = {"url": url, "db": os.path.abspath(path), "token_required": token is not None}
        if as_json:
            print(json.dumps(info), flush=True)
        else:
            lock = "every POST needs the token" if token else "no token: loopback users may write"
            print(f"serving {url} (db {info['db']}; {lock}; Ctrl-C stops)", flush=True)

    with handled(as_json):
        try:
            serve(engine, host, port, token=token, on_ready=ready)
        except OSError as exc:  # the port is taken, the address is not ours
            raise CliError("bind_error", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
