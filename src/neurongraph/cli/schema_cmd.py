"""``ngr schema load|show|blockers|evidence``: the relation schema and relation queries from the command line.

None of these commands loads an embedding model: they open the store only (and, for path queries, build the
CSR graph from it); ``ngr neighbors`` (neighbors_cmd.py) reads the store through the same view (:func:`open_view`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer
from rich.table import Table

from ..graphdb.schema import build_schema
from ..schema import Schema
from ..schema.invariants import parse_invariant
from .common import CliError, Ctx, ctx_of, escape, handled, json_opt, out, print_json

__all__ = ["open_view", "schema_app"]

schema_app = typer.Typer(
    no_args_is_help=True, help="Relation schema: load/show it, query blockers and evidence chains."
)


@contextmanager
def open_view(c: Ctx, path: str | None = None) -> Iterator[Schema]:
    """The schema service over the store at ``path`` (default: the existing database), which attaches the
    store's schema validator; the CSR graph of path queries is rebuilt from the store (``StoreGraph``).
    The store is closed afterwards."""
    view = Schema(c.open_store(path or c.existing_db_path()))
    try:
        yield view
    finally:
        view.store.close()


@schema_app.command("load")
def load(
    ctx: typer.Context,
    file: Path = typer.Argument(..., help="Schema document (.toml or .json)."),
    mode: str | None = typer.Option(None, "--mode", help="Override the file's mode: strict | permissive."),
    no_check: bool = typer.Option(False, "--no-check", help="Do not check the stored edges and nodes against it."),
    as_json: bool = json_opt(),
) -> None:
    """Replace the store's relation schema with FILE (rejected, changing nothing, if stored data breaks it)."""
    c = ctx_of(ctx)
    with handled(as_json):
        if not file.exists():
            raise CliError("file_not_found", f"no such file: {file}")
        path = c.db_path()
        with open_view(c, path) as view:
            info = view.load_schema(file, mode=mode, check_existing=not no_check)
    if as_json:
        print_json(info)
    else:
        out.print(
            f"loaded schema {escape(str(file))}: {info['relations']} relations, {info['invariants']} "
            f"invariants, mode {info['mode']} (generation {info['generation']})"
        )


@schema_app.command("show")
def show(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Print the stored schema: relation types, allowed combinations, inverses, invariants, and the graph
    schema that `ngr ask` generates Cypher against (labels, relation type pairs, properties)."""
    c = ctx_of(ctx)
    with handled(as_json):
        with open_view(c) as view:
            doc = view.relation_schema().to_dict()
            graph = build_schema(view.store)  # labels/relations/properties from the store (issue 13)
    if as_json:
        print_json({**doc, "graph": graph.to_dict()})
        return
    out.print(
        f"[bold]mode[/]: {doc['mode']}"
        + (f"   [bold]entry types[/]: {', '.join(doc['entry_types'])}" if doc["entry_types"] else "")
    )
    t = Table(title="relations")
    for col in ("name", "direction", "inverse", "weight", "allowed (src -> dst)"):
        t.add_column(col, overflow="fold")
    for name, r in doc["relations"].items():
        allow = ", ".join(f"{s} -> {d}" for s, d in r["allow"]) or "any"
        t.add_row(
            escape(name),
            "directed" if r["directed"] else "symmetric",
            escape(r.get("inverse") or "-"),
            f"{r['default_weight']:g}",
            escape(allow),
        )
    out.print(t)
    for k, inv in enumerate(doc["invariants"]):
        out.print(f"[bold]invariant[/] {escape(inv['name'])}: {escape(parse_invariant(inv, k).rule_text())}")
    out.print("[bold]graph schema for ask / cypher[/] (from the store):")
    out.print(escape(graph.prompt()))


@schema_app.command("blockers")
def blockers(
    ctx: typer.Context, task: str = typer.Argument(..., help="A task id or alias."), as_json: bool = json_opt()
) -> None:
    """Effective blockers of a task: blocked_by targets, conditions expanded along resolves_to."""
    c = ctx_of(ctx)
    with handled(as_json):
        with open_view(c) as view:
            res = view.effective_blockers(task)
    if as_json:
        print_json(res)
        return
    if not res:
        out.print(f"{escape(task)} has no blockers")
    for b in res:
        out.print(f"{escape(b['id'])} [dim]({escape(str(b['type']))})[/]  via {escape(' -> '.join(b['via']))}")


@schema_app.command("evidence")
def evidence(
    ctx: typer.Context,
    entry: str = typer.Argument(..., help="An entry id."),
    rel: str = typer.Option("evidence_of", "--rel", help="The evidence relation."),
    include_superseded: bool = typer.Option(False, "--include-superseded", help="Also superseded revisions."),
    as_json: bool = json_opt(),
) -> None:
    """Evidence chain: entry -evidence_of-> entity <-evidence_of- other entries."""
    c = ctx_of(ctx)
    with handled(as_json):
        with open_view(c) as view:
            res = view.evidence_chain(entry, rel, include_superseded)
    if as_json:
        print_json([{"entity": r["entity"], "entry": r["entry"]} for r in res])
        return
    if not res:
        out.print(f"no other entries share evidence with {escape(entry)}")
    for r in res:
        out.print(f"{escape(entry)} -> {escape(r['entity'])} <- {escape(r['entry'])}")
