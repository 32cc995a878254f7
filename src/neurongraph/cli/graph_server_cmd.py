"""``ngr graph-server``: run one guarded FalkorDB server that several engines share (``--graph-url``).

Mounted by ``cli/main.py``.  It is :func:`neurongraph.graphdb.serve.start_graph_server` in the
foreground: the server behind a guard proxy (every query re-checked where the server is; the server's own
passwords never leave this process), a stuck or over-memory server restarted.  The reader and writer URLs
(with their passwords) go to ``--urls-file`` (created ``0600``) or, without it, to stdout; engines take
them as ``NGR_GRAPH_URL`` / ``NGR_GRAPH_WRITE_URL``.  SIGINT / SIGTERM stop it (exit 0).
"""

from __future__ import annotations

import json
import os
import signal
import threading

import typer

from .common import CliError, handled

__all__ = ["graph_server_command"]


def graph_server_command(
    port: int = typer.Option(0, "--port", help="Also listen on 127.0.0.1:PORT (default: the Unix socket only)."),
    urls_file: str | None = typer.Option(
        None, "--urls-file", help="Write the reader and writer URLs (JSON, with passwords) to this new 0600 file."
    ),
) -> None:
    """Run a shared graph server for --graph-url behind a guard proxy, until SIGINT or SIGTERM.

    Prints (or writes to --urls-file) {"reader": URL, "writer": URL}: give engines the reader URL as
    NGR_GRAPH_URL and the one that ingests the writer URL as NGR_GRAPH_WRITE_URL.  See docs/ask.md.
    """
    with handled(False):
        if not 0 <= port <= 65535:
            raise CliError("invalid_argument", f"--port must be in 0..65535, got {port}")
        from ..graphdb.serve import start_graph_server

        srv = start_graph_server(port=port)
        try:
            urls = {"reader": srv.url("reader", tcp=bool(port)), "writer": srv.url("writer", tcp=bool(port))}
            text = json.dumps(urls)
            if urls_file:
                fd = os.open(urls_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "w") as fh:
                    fh.write(text + "\n")
            else:
                print(text, flush=True)
            stop = threading.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                signal.signal(sig, lambda *_: stop.set())
            while not stop.wait(1.0):
                pass
        finally:
            srv.stop()
