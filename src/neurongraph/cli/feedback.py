"""``ngr feedback ...`` and ``ngr trace``: the learning loop from the command line.

Mounted by ``cli/main.py`` (``app.add_typer(feedback_app, name="feedback")``,
``app.command("trace")(trace_command)``, ``bench_app.command("learning")(bench_learning)``);
the shared helpers come from ``cli/common.py``.
"""

from __future__ import annotations

import json
import re
import time
from contextlib import closing
from pathlib import Path

import typer

from ..errors import InvalidArgument
from ..learning import OUTCOMES, Learning
from ..service.feedback import FailureRequest, OutcomeRequest, SourceUseRequest, check_upto, resolve_hits
from .common import bench_db, ctx_of, err, escape, handled, json_opt, open_engine, out, path_str, print_json

__all__ = ["feedback_app", "trace_command", "bench_learning"]

feedback_app = typer.Typer(
    no_args_is_help=True, help="Tell the engine which retrieved sources were used (learning loop)."
)


def _on_ledger(c, call):
    """Run ``call(learning)`` with the learning service over a bare store: ledgers need no embedder or index."""
    with closing(c.open_store(c.existing_db_path())) as store:
        return call(Learning(store))


def _print_changes(changes: list[dict]) -> None:
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
        _print_changes(receipt["edges_changed"])
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
    _print_changes(r["edges_changed"])


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
        r = _on_ledger(c, FailureRequest(trace_id, reason).run)
    print_json(r) if as_json else out.print(f"retrieval failure #{r['failure_id']} recorded for {trace_id}")


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
        items = _on_ledger(c, lambda view: view.recent_traces(limit))
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
        r = _on_ledger(c, lambda view: view.prune_traces(parse_age(older_than)))
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
        rep = _on_ledger(c, lambda view: view.learning_report(trace_id))
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
        _print_changes(r["edges_changed"])
    for o in rep["outcomes"]:
        out.print(
            f"[bold]outcome[/] {o['outcome']} for {', '.join(o['node_ids'])}: {escape(o['summary'])}"
            + (f" ({escape(o['external_ref'])})" if o["external_ref"] else "")
        )
    for f in rep["failures"]:
        out.print(f"[bold]retrieval failure[/]: {escape(f['reason'])}")


def bench_learning(
    ctx: typer.Context,
    dataset: Path = typer.Option(..., "--dataset", help="Folder with corpus.jsonl + queries.jsonl."),
    db: Path | None = typer.Option(
        None,
        "--template-db",
        help="An ingested+linked store of the dataset to copy (default: the global --db / NGR_DB when given, "
        "else the retrieval bench's cache; built when it lacks the dataset).",
    ),
    top: int = typer.Option(20, "--top", help="Hits the simulated consumer reads."),
    rounds: int = typer.Option(3, "--rounds", help="Extra retrieval rounds in the drift check."),
    seed: int = typer.Option(0, "--seed", help="Train/test split seed (transfer)."),
    as_json: bool = json_opt(),
) -> None:
    """Learning benchmark: repeat, transfer, drift and decay (each on a private copy of the store)."""
    c = ctx_of(ctx)
    with handled(as_json):
        # lazy: benchmark code loads only when a benchmark runs
        from ..bench.learning import run_learning_benchmark
        from ..bench.retrieval import ingest_dataset, load_dataset, open_for_dataset

        ds = load_dataset(dataset)
        if db is None:  # build (or reuse) the global --db, else the cached, linked store the retrieval bench uses
            eng = open_for_dataset(ds, bench_db(c, None), embedder=c.embedder)
            try:
                if eng.store.stats()["nodes"] < len(ds.passages):
                    ingest_dataset(eng, ds)
                db = Path(eng.store.path)
                embedder = eng.embedder
            finally:
                eng.close()
        else:
            embedder = c.make_embedder()
        r = run_learning_benchmark(
            ds, db, embedder, top=top, rounds=rounds, seed=seed, progress=lambda msg: err.print(f"[dim]{msg}[/]")
        )
    if as_json:
        print(json.dumps(r, indent=2))
        return
    rep, tr = r["repeat"], r["transfer"]
    out.print(
        f"repeat    R@5 {rep['before']['recall@5']:.3f} → {rep['after']['recall@5']:.3f}   "
        f"R@2 {rep['before']['recall@2']:.3f} → {rep['after']['recall@2']:.3f}"
    )
    for g in ("related", "unrelated"):
        if tr[g]["n"]:
            out.print(
                f"transfer  {g:<9} (n={tr[g]['n']}) ΔR@5 {tr[g]['delta_recall@5']:+.3f}  "
                f"ΔR@2 {tr[g]['delta_recall@2']:+.3f}"
            )
    out.print(f"drift     changed rankings {r['drift']['changed_rankings']} over {r['drift']['rounds']} rounds")
    out.print(
        f"decay     R@5 after one half-life {r['decay']['after_half_life']['recall@5']:.3f}, "
        f"after the long gap {r['decay']['after_gap']['recall@5']:.3f}"
    )
