"""``ngr stats``: what the store holds (counts by type and relation, cached vectors, the multilingual
channel's state).  Opens the store only: no model, no index.
"""

from __future__ import annotations

import os
from contextlib import closing

import typer
from rich.table import Table

from .common import (
    ctx_of,
    escape,
    handled,
    is_store_url,
    json_opt,
    out,
    print_json,
)

__all__ = ["stats"]


def stats(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Counts of nodes, edges, relations, traces and cached vectors in the store."""
    c = ctx_of(ctx)
    with handled(as_json):
        path = c.existing_db_path()
        with closing(c.open_store(path)) as store:
            s = store.stats()
            s["embedding_models"] = store.embedding_models()  # cached vectors per embedder
            # the multilingual channel (docs/multilingual.md): "on", "pending" (waiting for --reembed), "off"
            # (the store is marked never to widen), or "none" while it holds no Japanese/Korean/Chinese writing
            s["multilingual"] = store.get_meta("multilingual") or "none"
    s["path"] = s["path"] if is_store_url(s["path"]) else os.path.abspath(s["path"])
    if as_json:
        print_json(s)
        return
    t = Table(title=f"store {s['path']}", show_header=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k in ("schema_version", "nodes", "edges", "relations", "traces", "cached_vectors", "pending_edges"):
        t.add_row(k, str(s[k]))
    t.add_row("multilingual", escape(str(s["multilingual"])))
    out.print(t)
    for key, title in (("node_types", "node types"), ("edge_relations", "edge relations")):
        if s[key]:
            out.print(f"[bold]{title}[/]: " + ", ".join(f"{escape(str(k))} {v}" for k, v in s[key].items()))
