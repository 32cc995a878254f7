"""``ngr traces list|prune`` and ``ngr trace ID``: the stored searches, one or all.

Every search and ask stores a trace (its hits, later their source-use stages, receipts, outcomes and
failures); these commands read them through the learning service over the bare store (no model, no index).
"""

from __future__ import annotations

import re
import time

import typer

from ..errors import InvalidArgument
from .common import (
    ctx_of,
    escape,
    handled,
    json_opt,
    on_ledger,
    out,
    path_str,
    print_json,
)
from .feedback_cmd import print_changes

__all__ = ["parse_age", "trace_command", "traces_app"]

traces_app = typer.Typer(help="Stored search traces: list, retention.", no_args_is_help=True)


_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 7 * 86400}


def parse_age(raw: str) -> float:
    """``30d``, ``12h``, ``90m``, ``45s``, ``2w`` or plain seconds, as seconds; anything else is invalid_argument."""
    m = re.fullmatch(r"\s*([0-9]{1,9}(?:\.[0-9]{1,6})?)\s*([smhdw]?)\s*", raw)
    if not m:
        raise InvalidArgument(f"--older-than {raw!r}: expected an age such as 30d, 12h, 90m or 3600 (seconds)")
    return float(m.group(1)) * _UNITS[m.group(2) or "s"]


MAX_TRACE_LIST = 10_000


@traces_app.command("list")
def traces_list_command(
    ctx: typer.Context,
    limit: int = typer.Option(20, "--limit", min=1, max=MAX_TRACE_LIST, help="At most this many, newest first."),
    as_json: bool = json_opt(),
) -> None:
    """The newest stored searches and asks (from any process): their trace ids are what `ngr trace`,
    `ngr feedback` and the MCP tools take."""
    c = ctx_of(ctx)
    with handled(as_json):
        items = on_ledger(c, lambda view: view.recent_traces(limit))
    if as_json:
        print_json(items)
        return
    if not items:
        out.print("no stored traces")
    for t in items:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t["created_at"]))
        out.print(f"{escape(t['trace_id'])}  {when}  {t['kind']:<6} {t['hits']:>3} hits  {escape(t['query'][:100])}")


@traces_app.command("prune")
def traces_prune_command(
    ctx: typer.Context,
    older_than: str = typer.Option(..., "--older-than", metavar="AGE", help="e.g. 30d, 12h, 90m (default unit s)."),
    as_json: bool = json_opt(),
) -> None:
    """Delete stored searches older than AGE that carry no feedback (every search stores its hits; traces
    with a source-use stage, receipt, retrieval failure or outcome are the learning history and stay)."""
    c = ctx_of(ctx)
    with handled(as_json):
        r = on_ledger(c, lambda view: view.prune_traces(parse_age(older_than)))
    if as_json:
        print_json(r)
    else:
        out.print(
            f"deleted {r['deleted']} traces older than {older_than}; kept {r['kept_with_feedback']} with feedback"
        )


def trace_command(
    ctx: typer.Context,
    trace_id: str = typer.Argument(..., help="A trace id printed by `ngr search`."),
    as_json: bool = json_opt(),
) -> None:
    """Show a stored search trace: query, hits with their source-use stage and paths, and what feedback changed."""
    c = ctx_of(ctx)
    with handled(as_json):
        rep = on_ledger(c, lambda view: view.learning_report(trace_id))
    if as_json:  # the stored trace's own fields at the top, the learning state beside them
        print_json({**rep["trace"], **{k: v for k, v in rep.items() if k != "trace"}})
        return
    t = rep["trace"]
    out.print(f"[bold]trace[/] {escape(t['id'])}  fingerprint {t['fingerprint']}")
    out.print(f"[bold]query[/]: {escape(t['query'])}")
    for h in t["hits"]:
        stage = rep["stages"][h["id"]]
        mark = {
            "retrieved": "",
            "selected": "[cyan]selected[/]",
            "validated": "[yellow]validated[/]",
            "used": "[bold green]used[/]",
        }[stage]
        out.print(f"{h['rank']:>3}. {escape(h['id'])}  {h['scores']['final']:.3f}  {mark}")
        for p in h.get("paths") or []:
            out.print(f"       path {path_str(p)}")
    for r in rep["receipts"]:
        moves = ", ".join(f"{escape(x['node_id'])} {x['from']}→{x['to']}" for x in r["transitions"])
        out.print(f"[bold]receipt[/] {r['receipt_id']}: {moves or 'no change (repeat)'}")
        print_changes(r["edges_changed"])
    for o in rep["outcomes"]:
        out.print(
            f"[bold]outcome[/] {o['outcome']} for {', '.join(o['node_ids'])}: {escape(o['summary'])}"
            + (f" ({escape(o['external_ref'])})" if o["external_ref"] else "")
        )
    for f in rep["failures"]:
        out.print(f"[bold]retrieval failure[/]: {escape(f['reason'])}")
