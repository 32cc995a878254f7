"""``ngr feedback use|outcome|failure``: the learning loop from the command line.

Each command builds one request of the request model (service/feedback.py), the same the MCP tools and
the HTTP API send, so the ledgers see the same request whichever interface sent it.
"""

from __future__ import annotations

import typer

from ..learning import OUTCOMES
from ..service.feedback import FailureRequest, OutcomeRequest, SourceUseRequest, check_upto, resolve_hits
from .common import (
    ctx_of,
    escape,
    handled,
    json_opt,
    on_ledger,
    open_engine,
    out,
    print_json,
)

__all__ = ["feedback_app", "print_changes"]

feedback_app = typer.Typer(
    no_args_is_help=True, help="Tell the engine which retrieved sources were used (learning loop)."
)


def print_changes(changes: list[dict]) -> None:
    for ch in changes:
        out.print(
            f"  {escape(ch['src'])} -\\[{escape(ch['rel'])}]-> {escape(ch['dst'])}: "
            f"{ch['old_weight']:.3f} → {ch['new_weight']:.3f} ({ch['kind']}, for {escape(ch['node_id'])})"
        )


@feedback_app.command("use")
def use(
    ctx: typer.Context,
    trace_id: str = typer.Argument(..., help="Trace id printed by `ngr search`."),
    nodes: list[str] = typer.Argument(..., help="Hits of that trace the answer was based on."),
    upto: str = typer.Option("used", "--upto", help="Walk each node up to this stage: selected | validated | used."),
    key: str | None = typer.Option(None, "--key", help="Idempotency key (a retry returns the same receipt)."),
    as_json: bool = json_opt(),
) -> None:
    """Walk each NODE through selected → validated → used, from its current stage, in one atomic request."""
    c = ctx_of(ctx)
    with handled(as_json):
        check_upto(upto)
        with open_engine(c, c.existing_db_path()) as eng:  # the request model (service/feedback.py)
            receipt = SourceUseRequest.walk(eng, trace_id, nodes, upto, key).run(eng)
    if as_json:
        print_json(receipt)
        return
    for t in receipt["transitions"]:
        out.print(f"{escape(t['node_id'])}: {t['from']} → {t['to']}")
    if not receipt["transitions"]:
        out.print("nothing new: every node was already at that stage")
    if receipt["edges_changed"]:
        out.print(f"[bold]{len(receipt['edges_changed'])} edge weight(s) changed[/]:")
        print_changes(receipt["edges_changed"])
    elif receipt["newly_used"]:
        out.print("no edge changed (the used node(s) were entry seeds: nothing on a path to credit)")


@feedback_app.command("outcome")
def outcome(
    ctx: typer.Context,
    trace_id: str = typer.Argument(...),
    nodes: list[str] = typer.Argument(..., help="Nodes of that trace that reached `used`."),
    kind: str = typer.Option(..., "--outcome", help=f"One of {', '.join(OUTCOMES)}."),
    summary: str = typer.Option("", "--summary", help="What happened."),
    ref: str | None = typer.Option(None, "--ref", help="External reference (PR, CI run, commit)."),
    as_json: bool = json_opt(),
) -> None:
    """Record a delayed outcome (separate ledger; changes no weight unless the engine's policy opts in)."""
    c = ctx_of(ctx)
    with handled(as_json):
        with open_engine(c, c.existing_db_path()) as eng:
            ids = resolve_hits(eng, nodes, eng.trace_stages(trace_id))
            r = OutcomeRequest(trace_id, ids, kind, summary, ref).run(eng)
    if as_json:
        print_json(r)
        return
    out.print(
        f"outcome #{r['outcome_id']} {r['outcome']} recorded for {', '.join(map(escape, r['node_ids']))} "
        f"(effect: {r['effect']})"
    )
    print_changes(r["edges_changed"])


@feedback_app.command("failure")
def failure(
    ctx: typer.Context,
    trace_id: str = typer.Argument(...),
    reason: str = typer.Option(..., "--reason", help="Why nothing usable was found."),
    as_json: bool = json_opt(),
) -> None:
    """Record a retrieval failure (own ledger; punishes no node, changes no weight)."""
    c = ctx_of(ctx)
    with handled(as_json):
        r = on_ledger(c, FailureRequest(trace_id, reason).run)
    print_json(r) if as_json else out.print(f"retrieval failure #{r['failure_id']} recorded for {trace_id}")
