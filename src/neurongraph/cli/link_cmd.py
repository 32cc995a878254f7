"""``ngr link``: graph edges built without an LLM over the whole store (mentions, references, shared
entities); ``ngr ingest --link`` and the retrieval benchmark report the same summary (:func:`link_summary`).
"""

from __future__ import annotations

import time

import typer

from .common import (
    ctx_of,
    handled,
    json_opt,
    open_engine,
    out,
    print_json,
    progress,
)

__all__ = ["link", "link_summary"]


def link_summary(info: dict) -> dict:
    keep = ("items", "entities", "edges", "edges_by_linker")
    return {k: info[k] for k in keep if k in info}


def link(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Build graph edges without an LLM over everything in the store.

    Title/alias mentions become `mentions` edges, `#123` / `issue 123` become
    `references`, name-like phrases shared by a few nodes become `entity` nodes
    (`has_entity` / `entity_in`).  (Synonym links between entities, `similar_to`, are
    opt-in through the Python API: `engine.link(LinkerConfig(similarity=True))`.)
    Every edge records its linker in meta.  Idempotent: re-running rebuilds and
    upserts, keeping learned weights.  Afterwards, titles and entities named in a
    query become extra seeds.
    """
    c = ctx_of(ctx)
    with handled(as_json):
        with open_engine(c, c.existing_db_path()) as eng:
            t0 = time.perf_counter()
            with progress() as prog:
                task = prog.add_task("linking", total=None)
                info = eng.link(progress=lambda done, total: prog.update(task, completed=done, total=total))
                prog.update(task, completed=1, total=1)
            summary = {**link_summary(info), "seconds": round(time.perf_counter() - t0, 3)}
    if as_json:
        print_json(summary)
    else:
        out.print(
            f"linked {summary['items']} nodes: {summary['edges']} edges, {summary['entities']} entity nodes "
            f"({', '.join(f'{k} {v}' for k, v in summary.get('edges_by_linker', {}).items())}) "
            f"in {summary['seconds']:.1f}s"
        )
