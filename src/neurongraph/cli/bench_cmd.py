"""``ngr bench ...``: every benchmark command (perf, retrieval, history, learning, code, ask).

Benchmark code (neurongraph.bench) loads lazily, only when a benchmark runs; ``bench ask`` lives with
``ngr ask`` in ask_cmd.py and is mounted here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer
from rich.table import Table

from ..errors import InvalidArgument
from .ask_cmd import bench_ask
from .common import (
    CliError,
    bench_db,
    check_db_path,
    choose_systems,
    ctx_of,
    err,
    escape,
    handled,
    int_option,
    json_opt,
    open_engine,
    out,
    print_json,
    progress,
    quiet_model_loading,
)
from .ingest_cmd import stage_progress, stage_reporter_for
from .link_cmd import link_summary

__all__ = ["bench_app"]

bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: performance (perf) and retrieval quality (retrieval).")


@bench_app.command("perf")
def bench_perf(
    ctx: typer.Context,
    nodes: int = typer.Option(10_000, "--nodes", help="Synthetic nodes."),
    edges_per_node: float = typer.Option(3.0, "--edges-per-node", help="Typed edges per node (average)."),
    queries: int = typer.Option(200, "--queries", help="Timed searches."),
    dim: int = typer.Option(384, "--dim", help="Vector dimension (384 = the real model's)."),
    seed: int = typer.Option(0, "--seed", help="Random seed of the synthetic corpus."),
    blas_threads: int | None = typer.Option(
        None,
        "--blas-threads",
        help="Limit BLAS threads for the dense matrix-vector product "
        "(needs threadpoolctl; default: the library's own choice).",
    ),
    db: str | None = typer.Option(None, "--db", help="Fresh database file to build (default: a temporary one)."),
    real_model: bool = typer.Option(
        True,
        "--real-model/--no-real-model",
        help="Also measure the real model: embedding passages/s and a cold `ngr search` process.",
    ),
    compare_embedders: bool = typer.Option(
        False, "--compare-embedders", help="With the real model: also the torch and int8 paths, same run."
    ),
    peers: bool = typer.Option(
        False,
        "--peers",
        help="Instead: search latency of ngr, graph-retriever (extra `bench`) and the numpy/scipy floor "
        "side by side on one corpus per --peer-sizes, one run (docs/performance.md).",
    ),
    peer_sizes: str = typer.Option("1000,10000", "--peer-sizes", help="With --peers: corpus sizes, comma-separated."),
    as_json: bool = json_opt(),
) -> None:
    """Synthetic ingest and search latency benchmark (embedding excluded; see the output's notes)."""
    from ..bench.perf import run_perf  # lazy: benchmark code loads only when a benchmark runs

    if peers:
        _bench_peers(peer_sizes, edges_per_node, queries, seed, blas_threads, as_json)
        return
    with handled(as_json):
        if nodes < 10:
            raise InvalidArgument("--nodes must be at least 10")
        if queries < 1:
            raise InvalidArgument("--queries must be at least 1")
        if edges_per_node < 0:
            raise InvalidArgument("--edges-per-node must be >= 0")
        if db is not None:
            db = check_db_path(db)
            if Path(db).exists():
                raise CliError("invalid_argument", f"--db {db} exists; the benchmark builds a fresh database")
        if blas_threads is not None and blas_threads < 1:
            raise InvalidArgument("--blas-threads must be at least 1")
        try:
            res = run_perf(
                nodes=nodes,
                edges_per_node=edges_per_node,
                queries=queries,
                dim=dim,
                seed=seed,
                db=db,
                console=err,
                blas_threads=blas_threads,
                real_model=real_model,
                compare_embedders=compare_embedders,
            )
        except RuntimeError as exc:
            raise CliError("unavailable", str(exc)) from None
    if as_json:
        print_json(res)
        return
    t = Table(title=f"ngr bench perf: {nodes} nodes", show_header=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k, v in res.items():
        if isinstance(v, dict):
            v = ", ".join(f"{a} {b}" for a, b in v.items())
        t.add_row(k, escape(str(v)))
    out.print(t)


def _bench_peers(
    sizes: str, edges_per_node: float, queries: int, seed: int, blas_threads: int | None, as_json: bool
) -> None:
    from ..bench import peers as bp  # lazy, like run_perf

    with handled(as_json):
        if queries < 1:
            raise InvalidArgument("--queries must be at least 1")
        if blas_threads is not None and blas_threads < 1:
            raise InvalidArgument("--blas-threads must be at least 1")
        try:
            res = bp.run_peers(
                bp.parse_sizes(sizes), edges_per_node, queries, seed=seed, console=err, blas_threads=blas_threads
            )
        except bp.MissingPeer as exc:
            raise CliError("missing_dependency", str(exc)) from None
        except RuntimeError as exc:
            raise CliError("unavailable", str(exc)) from None
    if as_json:
        print_json(res)
    else:
        out.print(bp.render_table(res))


@bench_app.command("retrieval")
def bench_retrieval(
    ctx: typer.Context,
    dataset: Path = typer.Option(..., "--dataset", help="Folder with corpus.jsonl + queries.jsonl."),
    limit_queries: int | None = typer.Option(None, "--limit-queries", help="Only the first N questions."),
    systems: list[str] | None = typer.Option(None, "--system", help="Only these systems (repeatable)."),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store to build/reuse (default: the global --db / NGR_DB when given, "
        "else a cache file under .ngr/bench keyed by dataset and model).",
    ),
    out_file: Path | None = typer.Option(None, "--out", help="Also write the JSON result here."),
    as_json: bool = json_opt(),
) -> None:
    """Recall@2/5/10, MRR and cost to full recall of every system on a multi-hop QA set.

    Ingests the corpus (embeddings cached, so a re-run does not re-embed), links it
    without an LLM, then runs bm25, dense, hybrid, the default `ngr` configuration,
    the other graph channels and ablations over the whole corpus.
    """
    from ..bench import retrieval as br  # lazy: benchmark code loads only when a benchmark runs

    c = ctx_of(ctx)
    with handled(as_json):
        if limit_queries is not None and limit_queries < 1:
            raise InvalidArgument("--limit-queries must be at least 1")
        ds = br.load_dataset(dataset, limit_queries)
        chosen = choose_systems(br.SYSTEMS, systems)
        quiet_model_loading()
        eng = br.open_for_dataset(ds, bench_db(c, db), embedder=c.embedder)
        try:
            with progress() as prog:
                t = prog.add_task(f"embedding {ds.name}", total=len(ds.passages))
                info = br.ingest_dataset(eng, ds, link=True, progress=lambda d, n: prog.update(t, completed=d, total=n))
                prog.update(t, description=f"ingested + linked {ds.name}", completed=prog.tasks[t].total)
                q = prog.add_task("searching", total=len(chosen) * len(ds.queries))
                res = br.run_benchmark(eng, ds, chosen, progress=lambda d, n: prog.update(q, completed=d, total=n))
        finally:
            eng.close()
        res["ingest"] = {
            "embedded": info.get("embedded"),
            "ingest_s": round(info["ingest_s"], 2),
            "link_s": round(info.get("link_s", 0.0), 2),
            "link": link_summary(info.get("link", {})),
        }
        if out_file:
            out_file.write_text(json.dumps(res, indent=2))
    if as_json:
        print_json(res)
    else:
        out.print(br.markdown_table(res), markup=False)


@bench_app.command("history")
def bench_history_command(
    ctx: typer.Context,
    repo: Path = typer.Option(..., "--repo", help="A git repository (working tree or bare)."),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store to build/reuse (default: the global --db / NGR_DB when given, "
        "else a cache file under .ngr/bench/history keyed by repository and model).",
    ),
    limit: str | None = typer.Option(None, "--limit", metavar="N", help="Only the first N questions."),
    systems: list[str] | None = typer.Option(None, "--system", help="Only these systems (repeatable)."),
    learning: bool = typer.Option(True, "--learning/--no-learning", help="Also run the 70/30 feedback split."),
    out_file: Path | None = typer.Option(None, "--out", help="Write the full JSON (with per-pair ranks) here."),
    input_kind: str = typer.Option(
        "text", "--input", help="text: subject + paths; diff: subject + the fix's own diff (with szz)."
    ),
    exactness: str = typer.Option(
        "500", "--exactness", metavar="N", help="With --input diff: stored-hunk blame vs git blame on N lines."
    ),
    as_json: bool = json_opt(),
) -> None:
    """Which earlier change is this fix about? Fix → origin retrieval on a real git history.

    Ingests the repository (incrementally), takes every fix that names its origin
    (`Fixes: <sha>`, "follow-up to #N", ...), asks with the fix's subject stripped of
    references plus its paths (or, --input diff, plus its own diff), as of the fix's parent,
    and scores every system (docs/benchmarks.md, "Real history").
    """
    with handled(as_json):
        n = None if limit is None else int_option(limit, "--limit")
        ex = int_option(exactness, "--exactness")
    _bench_history(ctx, repo, db, n, systems, learning, out_file, as_json, input_kind, ex)


def _bench_history(
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
    """Body of `ngr bench history`."""
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
        with open_engine(c, path, embedder=emb) as eng, stage_progress(transient=True) as prog:
            res = bh.run_history_bench(
                repo,
                eng,
                systems=chosen,
                learning=learning,
                limit=limit,
                input=input,
                szz_cache=str(Path(path).with_suffix("")) + "-szz.json",
                exactness=exactness,
                progress=stage_reporter_for(prog, "git"),
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


@bench_app.command("learning")
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


@bench_app.command("code")
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
        with open_engine(c, path, embedder=emb) as eng, stage_progress(transient=True) as prog:
            res = bc.run_code_bench(repo, eng, n=count, seed=s, progress=stage_reporter_for(prog, "git"))
        res["db"] = path
        if out_file:
            out_file.write_text(json.dumps(res, indent=2))
    if as_json:
        print_json({k: v for k, v in res.items() if k != "per_identifier"} if not out_file else res)
    else:
        out.print(bc.markdown_table(res), markup=False)


bench_app.command("ask")(bench_ask)
