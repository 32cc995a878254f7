"""``ngr [--embedder SPEC] reembed``: give every node of a store a vector of one embedder, now.

Why a command: a store ingested with the fast tier (``--embedder fast``, index/static_embedder.py) is
searched with the static vectors until the exact model has embedded every node; that costs minutes on a
big history, so it is asked for once, here, not done silently by whichever command opens the store next.
It is the ``--reembed`` consent made explicit: the engine opens with the command line's embedder (the
exact model by default) and no limit, the vectors go to the store's cache (one row per text and model,
so the fast vectors stay there for ``--embedder fast``), and later commands use them without embedding.
Mounted by ``cli/main.py`` with ``app.command("reembed")(reembed_command)``.
"""

from __future__ import annotations

import dataclasses
import os
import time

import typer

from .common import build_engine, ctx_of, handled, is_store_url, json_opt, out, print_json

__all__ = ["reembed_command"]


def reembed_command(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Embed every node of the store with the command line's embedder (default: the exact model) now."""
    c = ctx_of(ctx)
    with handled(as_json):
        path = c.existing_db_path()
        t0 = time.perf_counter()
        consent = dataclasses.replace(c, reembed=True, reembed_limit=None)
        store = consent.open_store(path)
        before = store.embedding_models()
        eng = build_engine(consent, path, store=store)  # the open embeds what has no vector (a progress bar)
        try:
            model, n_nodes = eng.embedder.model_id, eng.store.stats()["nodes"]
            after = eng.store.embedding_models()
        finally:
            eng.close()
    summary = {
        "db": path if is_store_url(path) else os.path.abspath(path),
        "embedder": model,
        "nodes": n_nodes,
        "embedded": after.get(model, 0) - before.get(model, 0),  # distinct texts newly cached
        "embedding_models": after,
        "seconds": round(time.perf_counter() - t0, 3),
    }
    if as_json:
        print_json(summary)
        return
    out.print(
        f"{summary['nodes']} nodes now have {model} vectors: {summary['embedded']} texts embedded "
        f"({summary['seconds']:.1f}s); cached vectors per embedder: "
        + ", ".join(f"{m} {n}" for m, n in sorted(after.items()))
    )
