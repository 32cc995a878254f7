"""``ngr ask``, ``ngr cypher`` and ``ngr bench ask``.

Mounted by ``cli/main.py``::

    from .ask_cmd import ask_command, bench_ask, cypher_command
    app.command("ask")(ask_command)
    app.command("cypher")(cypher_command)
    bench_app.command("ask")(bench_ask)

The shared helpers come from ``cli/common.py``.  ``ngr cypher`` opens the store only (no embedding
model); the FalkorDB child it starts is stopped when the command ends.
"""

from __future__ import annotations

import json
from contextlib import closing
from pathlib import Path

import typer
from rich.table import Table

from .. import strict_json
from ..ask.llm import make_llm
from ..graphdb.projection import CypherProjection, cache_dir_for
from ..graphdb.remote import graph_target
from ..graphdb.server import Limits, falkordb_available, launch_early
from ..service.ask import AskRequest
from .common import (
    CliError,
    bench_db,
    check_db_path,
    ctx_of,
    err,
    handled,
    is_store_url,
    json_opt,
    open_engine,
    out,
    print_json,
    quiet_model_loading,
)
from .safe_text import print_safe_json, safe_markup

__all__ = ["ask_command", "cypher_command", "bench_ask", "parse_params"]


def parse_params(items: list[str] | None) -> dict:
    """``k=v`` pairs; ``v`` is read as JSON when it parses (numbers, lists, true), else as a string."""
    out: dict = {}
    for it in items or []:
        k, sep, v = it.partition("=")
        if not sep or not k.strip():
            raise CliError("invalid_argument", f"--param {it!r}: expected NAME=VALUE")
        try:
            out[k.strip()] = strict_json.loads(v)
        except strict_json.StrictJSONError as exc:  # JSON, but a repeated key or NaN: an error, not a string
            raise CliError("invalid_argument", f"--param {k.strip()}: {exc}") from None
        except json.JSONDecodeError:
            out[k.strip()] = v
    return out


def _need_falkordb():
    if not falkordb_available():
        raise CliError("missing_dependency", "ngr cypher/ask need the optional extra: pip install 'neurongraph[ask]'")


def graph_url_opt():
    return typer.Option(
        None,
        "--graph-url",
        help="A shared FalkorDB server (redis://[user:pw@]host:port or unix://[user:pw@]/path.sock; "
        "or NGR_GRAPH_URL) instead of a private child; NGR_GRAPH_WRITE_URL names the writer.",
    )


def _projection(store, target):
    if target is None:
        return CypherProjection(store)
    from ..graphdb.shared import SharedProjection

    return SharedProjection(store, target)


def _fork_graph_child(path: str) -> None:
    """Fork the graph child before the store, the engine and ``falkordb`` are loaded: the child loads its
    persisted dump (~0.4 s on a 25k-node store) in parallel; the projection adopts it."""
    if not is_store_url(path):
        launch_early(cache_dir_for(path), Limits())


def _print_explain(ex: dict) -> None:
    """The answering shape, each phrase and what it was read as, and the words no reading took."""
    shape = f" ({safe_markup(ex['shape'])})" if ex.get("shape") else ""
    out.print(f"[bold]answered by[/]: {safe_markup(str(ex.get('answered_by')))}{shape}")
    for r in ex.get("read") or []:
        out.print(f"  [cyan]{safe_markup(r['phrase'])}[/] → {safe_markup(r['as'])}")
    if ex.get("left"):
        out.print(f"  [dim]not read as a filter: {safe_markup(' '.join(ex['left']))}[/]")


def cypher_command(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="A read-only Cypher query (MATCH … RETURN …)."),
    params: list[str] | None = typer.Option(None, "--param", "-p", help="NAME=VALUE for $NAME (repeatable)."),
    timeout_ms: int | None = typer.Option(None, "--timeout-ms", help="Lower the time limit (max 2000)."),
    graph_url: str | None = graph_url_opt(),
    as_json: bool = json_opt(),
) -> None:
    """Run a Cypher query read-only over the store's graph (writes, LOAD CSV: error[read_only])."""
    c = ctx_of(ctx)
    with handled(as_json):
        p = parse_params(params)
        _need_falkordb()
        target = graph_target(graph_url)  # a bad URL is error[invalid_argument] before anything starts
        path = c.existing_db_path()
        if target is None:
            _fork_graph_child(path)
        with closing(c.open_store(path)) as store:
            proj = _projection(store, target)
            try:
                res = proj.query(query, p, timeout_ms)
            finally:
                proj.close()
    stale = res.get("stale")
    if stale:  # a shared graph behind the store that this process may not update
        err.print(
            f"warning: the shared graph reflects store sequence {stale['graph_seq']} of {stale['store_seq']}: "
            f"{safe_markup(stale['reason'])}"
        )
    if as_json:
        extra = {"truncated": True} if res["truncated"] else {}
        print_safe_json({"rows": res["rows"], **extra, **({"stale": stale} if stale else {})})
        return
    t = Table()
    for col in res["columns"]:
        t.add_column(safe_markup(col), overflow="fold")
    for r in res["rows"]:
        t.add_row(
            *(
                safe_markup(r[col] if isinstance(r[col], str) else json.dumps(r[col], ensure_ascii=False, default=str))
                for col in res["columns"]
            )
        )
    out.print(t)
    out.print(f"{len(res['rows'])} rows" + (" (truncated at the row cap)" if res["truncated"] else ""))


def ask_command(
    ctx: typer.Context,
    question: str = typer.Argument(..., help="A question about the history."),
    mode: str = typer.Option("auto", "--mode", help="auto | graph | vector | hybrid."),
    llm: str | None = typer.Option(
        None,
        "--llm",
        help="none (default) | anthropic[:MODEL] | openai[:MODEL]; "
        "or NGR_LLM. Keys from ANTHROPIC_API_KEY / OPENAI_API_KEY.",
    ),
    limit: int = typer.Option(5, "--limit", "-n", help="Search hits to use."),
    graph_url: str | None = graph_url_opt(),
    show_explain: bool = typer.Option(
        False, "--explain", help="Also show the shape that answered and what each phrase was read as."
    ),
    as_json: bool = json_opt(),
) -> None:
    """Answer a question from the history: route, read-only Cypher and/or search, cited answer."""
    c = ctx_of(ctx)
    with handled(as_json):
        _need_falkordb()
        req = AskRequest(question, mode, limit, make_llm(llm))  # the request model (service/ask.py)
        target = graph_target(graph_url)  # a bad URL is error[invalid_argument] before the store opens
        path = c.existing_db_path()
        if req.needs_graph and target is None:
            _fork_graph_child(path)
        with open_engine(c, path) as eng:
            if target is not None:
                eng.graph_target = target  # --graph-url over the engine's NGR_GRAPH_URL default
            res = req.run(eng)
    if as_json:
        print_safe_json(res)
        return
    out.print(f"[bold]route[/]: {res['route']['mode']} — {safe_markup(res['route']['reason'])}")
    if show_explain:
        _print_explain(res.get("explain") or {})
    q = res["query"]
    if q:
        if q.get("cypher"):  # a code-history answer (blame, identifiers) runs no graph query
            params = safe_markup(json.dumps(q.get("params") or {}))
            out.print(f"[bold]query[/]: {safe_markup(q['cypher'])}  [dim]{params}[/]")
        out.print(f"[dim]{safe_markup(str(q.get('explanation') or ''))} — {len(res['rows'])} rows[/]")
    for w in res.get("warnings") or []:
        err.print(f"[yellow]warning[/]: {safe_markup(w)}")
    if res["hits"]:
        out.print("[bold]hits[/]: " + ", ".join(safe_markup(h["id"]) for h in res["hits"]))
    out.print()
    out.print(safe_markup(res["answer"], layout=True))
    if res.get("dropped_refs"):
        out.print(f"[yellow]dropped refs not retrieved[/]: {safe_markup(', '.join(res['dropped_refs']))}")
    out.print(f"[dim]trace {res['trace_id']}[/]")


def bench_ask(
    ctx: typer.Context,
    dataset: Path | None = typer.Option(None, "--dataset", help="QA folder (corpus.jsonl + queries.jsonl)."),
    history: str | None = typer.Option(
        None,
        "--history",
        help="Instead: a store built by `ngr ingest git "
        "REPO`; measures NL->Cypher exact-answer accuracy on questions "
        "generated from its typed edges.",
    ),
    per_kind: int = typer.Option(100, "--per-kind", help="With --history: questions per kind."),
    repo: Path | None = typer.Option(
        None,
        "--repo",
        help="Instead: a git checkout already ingested into --db; developer questions whose exact answers "
        "git computes (who last changed F, commits touching F in YEAR, files of PR N, ...), accuracy per shape.",
    ),
    per_shape: int = typer.Option(20, "--per-shape", help="With --repo: questions per shape."),
    seed: int = typer.Option(0, "--seed", help="With --repo: the wording and sampling seed."),
    limit_queries: int | None = typer.Option(None, "--limit-queries", help="Only the first N questions."),
    db: str | None = typer.Option(
        None,
        "--db",
        help="Store to build/reuse (default: the global --db / NGR_DB when given, "
        "else the retrieval benchmark's cache under .ngr/bench).",
    ),
    out_file: Path | None = typer.Option(None, "--out", help="Also write the JSON result here."),
    as_json: bool = json_opt(),
) -> None:
    """ask on a QA set: answer-support recall and citation precision, against a hybrid-only baseline;
    or (--history DB) the LLM-free NL->Cypher translator's exact-answer accuracy on a real git history;
    or (--repo DIR) developer questions with answers computed by git, exact accuracy per shape."""
    c = ctx_of(ctx)
    if repo is not None:
        with handled(as_json):
            _need_falkordb()
            from ..bench import ask_git as bg  # lazy: benchmark code loads only when a benchmark runs

            if per_shape < 1:
                raise CliError("invalid_argument", "--per-shape must be at least 1")
            path = check_db_path(db) if db else c.existing_db_path()
            if not Path(path).exists():
                raise CliError("no_store", f"no store at {path}; build it with `ngr --db {path} ingest git {repo}`")
            with open_engine(c, path) as eng:
                res = bg.run_repo(eng, repo, per_shape, seed, limit_queries)
            _report(res, bg.repo_table, out_file, as_json)
        return
    if history is not None:
        with handled(as_json):
            _need_falkordb()
            from ..bench import ask as ba  # lazy: benchmark code loads only when a benchmark runs

            path = check_db_path(history)
            if not Path(path).exists():
                raise CliError("no_store", f"no store at {path}; build it with `ngr --db {path} ingest git REPO`")
            with open_engine(c, path) as eng:  # use the embedder the store was built with
                res = ba.run_history(eng, per_kind)
            _report(res, ba.history_table, out_file, as_json)  # inside: a bad --out path is error[io_error]
        return
    with handled(as_json):
        if dataset is None:
            raise CliError("invalid_argument", "give --dataset FOLDER or --history DB")
        _need_falkordb()
        from ..bench import ask as ba  # lazy: benchmark code loads only when a benchmark runs
        from ..bench import retrieval as br

        ds = br.load_dataset(dataset, limit_queries)
        quiet_model_loading()
        eng = br.open_for_dataset(ds, bench_db(c, db), embedder=c.embedder)
        try:
            br.ingest_dataset(eng, ds, link=True)
            res = ba.run_qa(eng, ds)
        finally:
            eng.close()
        _report(res, ba.markdown_table, out_file, as_json)


def _report(res: dict, table, out_file: Path | None, as_json: bool) -> None:
    """A benchmark result: written to ``--out`` if given, then printed as JSON or as a table."""
    if out_file:
        out_file.write_text(json.dumps(res, indent=2))
    if as_json:
        print_json(res)
    else:
        out.print(table(res), markup=False)
