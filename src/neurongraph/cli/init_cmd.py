"""``ngr init``: create the store (or open an existing one) and say where it is."""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

import typer

from .common import (
    ctx_of,
    escape,
    handled,
    is_store_url,
    json_opt,
    out,
    print_json,
)

__all__ = ["init"]


def init(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Create the store (or open an existing one) and print its path and schema version."""
    c = ctx_of(ctx)
    with handled(as_json):
        existed = is_store_url(c.db_path()) or Path(c.db_path()).exists()
        with closing(c.open_store()) as store:
            info = {
                "path": store.path if is_store_url(store.path) else os.path.abspath(store.path),
                "schema_version": store.schema_version,
                "created": not existed,
                "nodes": store.stats()["nodes"],
            }
    if as_json:
        print_json(info)
    else:
        verb = "created" if info["created"] else "opened existing"
        out.print(
            f"{verb} store {escape(info['path'])} (schema version {info['schema_version']}, {info['nodes']} nodes)"
        )
