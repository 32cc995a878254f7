"""``ngr neighbors NODE``: a node's edges by relation and direction, through the relation schema
service (inverse relation names work).  Opens the store only: no model, no index.
"""

from __future__ import annotations

import typer

from .common import (
    CliError,
    ctx_of,
    escape,
    handled,
    json_opt,
    out,
    print_json,
)
from .schema_cmd import open_view

__all__ = ["neighbors_command"]


def neighbors_command(
    ctx: typer.Context,
    node_id: str = typer.Argument(..., help="A node id or alias."),
    rels: list[str] | None = typer.Option(
        None, "--rel", "-r", help="Only this relation (repeatable; inverse names work)."
    ),
    incoming: bool = typer.Option(False, "--in", help="Only edges pointing at the node."),
    outgoing: bool = typer.Option(False, "--out", help="Only edges leaving the node."),
    no_superseded: bool = typer.Option(False, "--no-superseded", help="Leave out superseded entry revisions."),
    limit: int | None = typer.Option(None, "--limit", "-n", help="At most this many edges."),
    as_json: bool = json_opt(),
) -> None:
    """Edges of a node by relation and direction (both directions unless --in or --out)."""
    c = ctx_of(ctx)
    with handled(as_json):
        if incoming and outgoing:
            raise CliError("invalid_argument", "give at most one of --in and --out")
        direction = "in" if incoming else "out" if outgoing else "both"
        with open_view(c) as view:
            node = view.resolve(node_id)
            res = view.neighbors(node, rels, direction, include_superseded=not no_superseded, limit=limit)
    if as_json:
        print_json({"node": node, "direction": direction, "neighbors": res})
        return
    if not res:
        out.print(
            f"no {direction if direction != 'both' else ''} edges of {escape(node)}"
            + (f" with relation {', '.join(rels)}" if rels else "")
        )
        return
    for r in res:
        arrow = f"-[{r['rel']}]->" if r["direction"] == "out" else f"<-[{r['rel']}]-"
        out.print(
            f"{escape(node)} {escape(arrow)} {escape(r['node'])} [dim]({escape(r['type'])}, w={r['weight']:.2f})[/]"
        )
