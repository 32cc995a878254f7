"""``ngr ingest git|github|markdown PATH``: real project history in, as an incremental sync.

Kept apart from the JSONL reader in main.py: these commands read a source through an
adapter (neurongraph.ingest) and report what the sync changed, with a progress bar per
stage (reading, embedding with rate and ETA, writing).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from ..errors import InvalidArgument
from ..ingest.batch import KINDS
from .common import (
    CliError,
    Ctx,
    LoggedProgress,
    RateColumn,
    bench_db,
    choose_systems,
    ctx_of,
    end_bulk_load,
    err,
    escape,
    handled,
    int_option,
    json_opt,
    open_engine,
    out,
    print_json,
    quiet_model_loading,
    stage_reporter,
)

__all__ = ["ingest_source", "print_summary", "bench_history", "bench_code", "SOURCE_KINDS"]

SOURCE_KINDS = KINDS  # the adapters' kinds, named once in ingest/batch.py
_STAGES = {
    "log": "git log (diffs)",
    "reading": "reading {kind}",
    "embedding": "embedding new text",
    "writing": "writing (one transaction)",
}


def _stage_progress(*, transient: bool, disable: bool = False, console: Console | None = None) -> Progress:
    """The per-stage progress display of a sync (reading, embedding, writing), on stderr: done/total, rate,
    time spent and time left (the ETA a 100k-commit ingest needs to be worth waiting for).  Where stderr is
    not a terminal (a log file, ``nohup``), plain lines instead, at least every 10 s (:class:`LoggedProgress`)."""
    return LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=console or err,
        transient=transient,
        disable=disable,
    )


def _stage_reporter(prog: Progress, kind: str):
    """``progress(stage, done, total)`` for ``sync_source``: one bar per stage, added when it starts."""
    return stage_reporter(prog, {stage: label.format(kind=kind) for stage, label in _STAGES.items()})


def ingest_source(
    c: Ctx,
    kind: str,
    path: Path,
    *,
    refs: list[str] | None,
    name: str | None,
    prune: bool,
    link: bool,
    full: bool = False,
    show_progress: bool = True,
    strict: bool = False,
    tags: bool | None = None,
) -> dict:
    """Open the store (creating it), sync one source into it, optionally re-link; returns the summary."""
    from ..ingest import sync_source  # lazy: the adapters load only when a source is ingested (start-up time)

    if kind not in SOURCE_KINDS:
        raise InvalidArgument(f"unknown source kind {kind!r}; expected one of {SOURCE_KINDS}")
    if not path.exists():
        raise CliError("file_not_found", f"no such {'repository' if kind == 'git' else 'path'}: {path}")
    if (refs or full or tags is not None) and kind != "git":
        raise InvalidArgument("--ref, --tags and --full apply to `ngr ingest git` only")
    t0 = time.perf_counter()
    db = c.db_path()
    with open_engine(c, db) as eng:
        with _stage_progress(transient=False, disable=not show_progress) as prog:
            on_progress = _stage_reporter(prog, kind)
            summary = sync_source(
                eng,
                kind,
                path,
                refs=refs,
                name=name,
                prune=prune,
                full=full,
                progress=on_progress,
                strict=strict,
                tags=tags,
            )
            if link:
                ltask = prog.add_task("linking (mentions, refs, entities)", total=None)
                info = eng.link(progress=lambda done, total: prog.update(ltask, completed=done, total=total))
                prog.update(ltask, completed=1, total=1)
                summary["link"] = {
                    k: info[k]
                    for k in ("items", "entities", "edges", "edges_retracted", "edges_by_linker")
                    if k in info
                }
            built = end_bulk_load(eng, prog)
            if built:
                summary["vector_index"] = built
        st = eng.store.stats()
    summary.update(
        {
            "path": str(path),
            "db": os.path.abspath(db),
            "embedder": eng.embedder.model_id,
            "store_nodes": st["nodes"],
            "store_edges": st["edges"],
            "total_seconds": round(time.perf_counter() - t0, 3),
        }
    )
    return summary


def print_summary(out: Console, s: dict) -> None:
    a = s.get("adapter", {})
    if s["kind"] == "git" and a.get("up_to_date"):
        out.print(
            f"{escape(s['source'])}: already up to date ({', '.join(f'{r} {t[:12]}' for r, t in a['tips'].items())});"
            f" nothing read, nothing embedded ({s['total_seconds']:.2f}s)"
        )
        return
    out.print(
        f"[bold]{escape(s['source'])}[/] ({s['kind']}): {s['nodes']} nodes read — {s['new_nodes']} new, "
        f"{s['updated_nodes']} updated, {s['unchanged_nodes']} unchanged; {s['embedded']} embedded"
    )
    if s["kind"] == "git" and a.get("full_reread") and s["unchanged_nodes"]:
        out.print("  every commit read again (a new reader version, or --full); unchanged ones were not rewritten")
    if s["written_node_types"]:
        out.print("  nodes written: " + ", ".join(f"{escape(k)} {v}" for k, v in s["written_node_types"].items()))
    out.print(
        f"  edges: {s['edges_written']} written"
        + (f" ({s['edges_merged']} repeats merged into them)" if s.get("edges_merged") else "")
        + f", {s['edges_retracted']} retracted, "
        f"{s['edges_pending']} waiting for a node not ingested yet, {s['pending_resolved']} earlier ones resolved"
        + (f"; {s['nodes_pruned']} nodes pruned" if s["nodes_pruned"] else "")
    )
    if s["written_edge_relations"]:
        out.print("  edges written: " + ", ".join(f"{escape(k)} {v}" for k, v in s["written_edge_relations"].items()))
    if s["skipped"]:
        out.print(
            f"  [yellow]skipped {s['skipped']}[/]: "
            + "; ".join(f"{escape(x['item'])} ({escape(x['reason'])})" for x in s["skipped_items"][:5])
            + (" …" if s["skipped"] > 5 else "")
        )
    if "link" in s:
        li = s["link"]
        out.print(f"  linked: {li.get('edges', 0)} edges, {li.get('entities', 0)} entities")
    out.print(
        f"  store {escape(s['db'])}: {s['store_nodes']} nodes, {s['store_edges']} edges "
        f"[dim]({s['total_seconds']:.1f}s)[/]"
    )


def bench_history(
    ctx,
    repo: Path,
    db: str | None,
    limit: int | None,
    systems: list[str] | None,
    learning: bool,
    out_file: Path | None,
    as_json: bool,
    input: str = "text",
    exactness: int = 500,
) -> None:
    """Body of `ngr bench history` (registered in main.py)."""
    from ..bench import history as bh  # lazy: benchmark code loads only when a benchmark runs
    from ..ingest.git import GitRepo

    c = ctx_of(ctx)
    with handled(as_json):
        if not repo.exists():
            raise CliError("file_not_found", f"no such repository: {repo}")
        if limit is not None and limit < 1:
            raise InvalidArgument("--limit must be at least 1")
        if exactness < 0:
            raise InvalidArgument("--exactness must be 0 (off) or more")
        if input not in bh.INPUTS:
            raise InvalidArgument(f"--input must be one of {', '.join(bh.INPUTS)}, got {input!r}")
        chosen = choose_systems(bh.SYSTEMS if input == "text" else bh.DIFF_SYSTEMS, systems)
        quiet_model_loading()
        emb = c.make_embedder()
        path = _bench_store(bench_db(c, db), GitRepo(repo).name, emb.model_id)
        with open_engine(c, path, embedder=emb) as eng, _stage_progress(transient=True) as prog:
            res = bh.run_history_bench(
                repo,
                eng,
                systems=chosen,
                learning=learning,
                limit=limit,
                input=input,
                szz_cache=str(Path(path).with_suffix("")) + "-szz.json",
                exactness=exactness,
                progress=_stage_reporter(prog, "git"),
            )
        res["db"] = path
        if out_file:
            out_file.write_text(json.dumps(res, indent=2))
    if as_json:
        print_json({k: v for k, v in res.items() if k != "per_pair"} if not out_file else res)
    else:
        out.print(bh.markdown_table(res), markup=False)
        if "learning" in res and "before" in res["learning"]:
            lr = res["learning"]
            out.print(
                f"learning: feedback on {lr['past']} earlier questions ({lr['used_reports']} sources reported used); "
                f"later {lr['future']}: recall@10 {lr['before']['recall@10']:.3f} → {lr['after']['recall@10']:.3f}, "
                f"MRR {lr['before']['mrr']:.3f} → {lr['after']['mrr']:.3f}; drift without feedback: "
                f"{lr['drift_changed_rankings']} changed rankings",
                markup=False,
            )
            so = lr.get("shared_origin") or {}
            if "before" in so:  # issue 26: later fixes of an origin an earlier fix of the replay shares
                out.print(
                    f"shared origin: {so['later']} later fixes of {so['origins']} origins with >= 2 fixes "
                    f"({so['used_reports']} sources reported used): recall@10 {so['before']['recall@10']:.3f} → "
                    f"{so['after']['recall@10']:.3f}, MRR {so['before']['mrr']:.3f} → {so['after']['mrr']:.3f}; "
                    f"drift without feedback: {so['drift_changed_rankings']} changed rankings",
                    markup=False,
                )


def _bench_store(db: str | None, name: str, model_id: str) -> str:
    """The benchmark store: ``db`` (the command's ``--db``, else the global one: :func:`bench_db`), else the
    history benchmarks' cache file for this repository and model."""
    if db:
        return db
    cache = Path(".ngr/bench/history")
    cache.mkdir(parents=True, exist_ok=True)
    safe = re.sub(r"[^\w.-]+", "_", f"{name}-{model_id}")  # "pallets/click" names one file, not a folder
    return str(cache / f"{safe}.db")


def bench_code(
    ctx: typer.Context,
    repo: Path = typer.Option(..., "--repo", help="A git repository with its code (working tree or bare)."),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store to build/reuse (default: the global --db / NGR_DB when given, else the history benchmark's "
        "cache file for this repository and model).",
    ),
    n: str = typer.Option("200", "--n", metavar="N", help="Identifiers to sample."),
    seed: str = typer.Option("0", "--seed", metavar="S", help="Sampling seed."),
    out_file: Path | None = typer.Option(None, "--out", help="Write the full JSON (with per-identifier ranks) here."),
    as_json: bool = json_opt(),
) -> None:
    """Which commit introduced X? Identifiers sampled from the code at HEAD, gold from `git log -S`.

    Asks `which commit introduced X` and plain `X` with what `ngr search` runs with no flags; scores
    rank 1, recall@5 and MRR (docs/benchmarks.md, "Real history: code").
    """
    from ..bench import code_bench as bc  # lazy: benchmark code loads only when a benchmark runs
    from ..ingest.git import GitRepo

    c = ctx_of(ctx)
    with handled(as_json):
        if not repo.exists():
            raise CliError("file_not_found", f"no such repository: {repo}")
        count, s = int_option(n, "--n"), int_option(seed, "--seed")
        quiet_model_loading()
        emb = c.make_embedder()
        path = _bench_store(bench_db(c, db), GitRepo(repo).name, emb.model_id)
        with open_engine(c, path, embedder=emb) as eng, _stage_progress(transient=True) as prog:
            res = bc.run_code_bench(repo, eng, n=count, seed=s, progress=_stage_reporter(prog, "git"))
        res["db"] = path
        if out_file:
            out_file.write_text(json.dumps(res, indent=2))
    if as_json:
        print_json({k: v for k, v in res.items() if k != "per_identifier"} if not out_file else res)
    else:
        out.print(bc.markdown_table(res), markup=False)
