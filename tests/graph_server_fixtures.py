"""A real FalkorDB server for the shared-graph tests (``graphdb/serve.start_graph_server``: a Unix socket,
the documented reader and writer ACL users), engines pointed at it, and a small issue/PR corpus."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import neurongraph as ngr
from neurongraph.graphdb.serve import start_graph_server


@contextmanager
def running_graph_server() -> Iterator:
    """A started server, stopped on the way out even when the test failed."""
    srv = start_graph_server()
    try:
        yield srv
    finally:
        srv.stop()
    assert not srv.alive


def engine(db, server, write=True):
    """An engine on ``db`` reading the server's graph (and writing it, unless ``write`` is False)."""
    return ngr.open(
        db,
        embedder="hashing",
        graph_url=server.url("reader"),
        graph_write_url=server.url("writer") if write else None,
    )


def fill(eng, start, n, word="Fix"):
    """``n`` issues and the PRs that fix them, numbered from ``start``."""
    eng.add_nodes([ngr.Node(f"issue:{i}", "issue", f"Issue {i}", "text") for i in range(start, start + n)])
    eng.add_nodes([ngr.Node(f"pr:{i}", "pr", f"{word} {i}", "fix") for i in range(start, start + n)])
    eng.add_edges([(f"pr:{i}", "fixes", f"issue:{i}") for i in range(start, start + n)])
