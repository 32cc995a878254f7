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
import sys

import typer

from ..engine import Engine
from .common import CliError, Ctx, build_engine, handled, is_store_url
from .mcp_cmd import REPO_HELP, WAIT_HELP, open_freshness

__all__ = ["serve_command"]

MAX_SEARCH_THREADS = 16


TOKEN_ENV = "NGR_TOKEN"
ARGV_WARNING = (
    "warning: --token is visible to other users of this machine (ps, /proc/PID/cmdline); "
    "use --token-file PATH or the NGR_TOKEN environment variable"
)


def _resolve_token(token: str | None, token_file: str | None) -> str | None:
    """The token from ``--token-file``, ``--token`` (with a warning on stderr) or ``NGR_TOKEN``, in that order;
    two of the options at once is a mistake."""
    if token is not None and token_file is not None:
        raise CliError("invalid_argument", "give the token once: --token-file or --token, not both")
    if token_file is not None:
        try:
            with open(token_file, encoding="utf-8") as fh:
                mode = os.fstat(fh.fileno()).st_mode
                text = fh.read(4096)
        except FileNotFoundError:
            raise CliError("file_not_found", f"--token-file {token_file}: no such file") from None
        except (OSError, UnicodeDecodeError) as exc:
            raise CliError("invalid_argument", f"--token-file {token_file}: cannot read it ({exc})") from None
        lines = text.splitlines()
        if not lines or not lines[0].strip():
            raise CliError("invalid_argument", f"--token-file {token_file}: the file holds no token")
        if mode & 0o077:
            print(
                f"warning: --token-file {token_file} may be read by other users (mode {mode & 0o777:03o}); "
                f"chmod 600 {token_file}",
                file=sys.stderr,
                flush=True,
            )
        return lines[0].strip()
    if token is not None:
        print(ARGV_WARNING, file=sys.stderr, flush=True)
        return token
    return os.environ.get(TOKEN_ENV) or None


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
    token_file: str | None = typer.Option(
        None,
        "--token-file",
        help="Read the token from this file (its first line; keep the file 0600). Every /api request but "
        "/api/health (searches, feedback, and the GETs: nodes, traces, stats) then needs `Authorization: Bearer "
        "TOKEN`. A token is required when --host is not loopback; at least 16 characters. Or set NGR_TOKEN.",
    ),
    token: str | None = typer.Option(
        None,
        "--token",
        help="The token itself. Visible to every user of this machine (ps, /proc): prefer --token-file or NGR_TOKEN.",
    ),
    public_reads: bool = typer.Option(
        False, "--public-reads", help="With --token: GETs (nodes, neighbours, traces, stats) need no token; POSTs do."
    ),
    search_threads: int = typer.Option(
        1,
        "--search-threads",
        help="Searches that may run at once (1..16). Each extra one opens another engine over the store, with its "
        "own in-memory indexes and embedder (memory grows accordingly); feedback and ask stay on one engine.",
    ),
    repo: list[str] | None = typer.Option(None, "--repo", help=REPO_HELP),
    fresh_wait: float = typer.Option(3.0, "--fresh-wait", help=WAIT_HELP),
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
        token = _resolve_token(token, token_file)
        check_bind(host, port, token)
        if not 1 <= search_threads <= MAX_SEARCH_THREADS:
            raise CliError(
                "invalid_argument", f"--search-threads must be 1..{MAX_SEARCH_THREADS}, got {search_threads}"
            )
        path = c.existing_db_path()  # a file that exists, or a PostgreSQL URL
        engines: list[Engine] = []
        try:
            for _ in range(search_threads):
                engines.append(build_engine(c, path))
            fresh = open_freshness(c, path, repo, fresh_wait)  # --repo: sync new commits before a search
        except BaseException:
            for e in engines:
                e.close()
            raise

    def ready(url: str) -> None:
        info = {
            "url": url,
            "db": path if is_store_url(path) else os.path.abspath(path),
            "token_required": token is not None,
            "reads_need_token": token is not None and not public_reads,
            "search_threads": search_threads,
            **({"repos": [str(r.path) for r in fresh.repos]} if fresh is not None else {}),
        }
        if as_json:
            print(json.dumps(info), flush=True)
        else:
            lock = (
                ("every POST needs the token" if public_reads else "every /api request needs the token")
                if token
                else "no token: loopback users may read and write"
            )
            print(f"serving {url} (db {info['db']}; {lock}; Ctrl-C stops)", flush=True)

    with handled(as_json):
        try:
            serve(
                engines[0],
                host,
                port,
                token=token,
                search_engines=engines[1:],
                on_ready=ready,
                public_reads=public_reads,
                freshness=fresh,
            )
        except OSError as exc:  # the port is taken, the address is not ours
            raise CliError("bind_error", f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
