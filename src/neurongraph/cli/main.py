"""The ``ngr`` command line: init, ingest, search, stats, trace, demo, bench.

Every command takes ``--json`` (machine-readable stdout).  User mistakes never
show a traceback: they print one red ``error[code]: message`` line to stderr
(or ``{"error": {...}}`` to stdout with ``--json``) and exit with status 2.
Progress bars always go to stderr, so ``--json`` output can be piped.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
import time
from contextlib import closing
from importlib import resources
from pathlib import Path
from typing import Any

import typer
from rich.table import Table
from typer.core import TyperGroup
from typer.rich_utils import rich_format_error

from ..errors import InvalidArgument
from ..index.embedder import check_embedder_spec
from ..ingest.jsonl import Parsed, read_jsonl, stream, validate_file, write_jsonl
from ..service import SearchRequest, where_pairs
from ..store.base import Store
from .ask_cmd import ask_command, bench_ask, cypher_command
from .common import (
    DEFAULT_DB,
    REEMBED_LIMIT,
    CliError,
    Ctx,
    bench_db,
    check_db_path,
    choose_systems,
    ctx_of,
    end_bulk_load,
    err,
    escape,
    handled,
    int_option,
    is_store_url,
    json_opt,
    open_engine,
    out,
    print_json,
    progress,
    quiet_model_loading,
    stage_reporter,
)
from .common import print_json as _print_json  # noqa: F401  (tests import it from here)
from .feedback import bench_learning, feedback_app, trace_command, traces_app
from .graph_server_cmd import graph_server_command
from .history_cmd import SOURCE_KINDS, bench_code, bench_history, ingest_source, print_summary
from .mcp_cmd import mcp_command
from .migrate_cmd import migrate_command
from .reembed_cmd import reembed_command
from .safe_text import print_safe_json, safe_markup
from .schema_cmd import neighbors_command, schema_app
from .serve_cmd import serve_command
from .show_cmd import show_command

__all__ = ["app", "main"]


class _RootGroup(TyperGroup):
    """The root group, keeping the command line after the root options in ``ctx.meta["ngr.rest"]``: the root
    checks ``--embedder`` before any command runs and answers in JSON when that command was given ``--json``."""

    def invoke(self, ctx: typer.Context) -> Any:
        ctx.meta["ngr.rest"] = [*getattr(ctx, "_protected_args", ()), *ctx.args]  # click keeps the command apart
        return super().invoke(ctx)


app = typer.Typer(
    cls=_RootGroup,
    name="ngr",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    help="Neuron Graph RAG: hybrid search + typed knowledge graph, with explained results.",
)
bench_app = typer.Typer(no_args_is_help=True, help="Benchmarks: performance (perf) and retrieval quality (retrieval).")
app.add_typer(bench_app, name="bench")


@app.callback()
def _root(
    ctx: typer.Context,
    db: str = typer.Option(DEFAULT_DB, "--db", envvar="NGR_DB", help="SQLite database file.", show_default=True),
    embedder: str | None = typer.Option(
        None,
        "--embedder",
        envvar="NGR_EMBEDDER",
        help="Embedding model: default = the real sentence model (all-MiniLM-L6-v2); "
        "'fast' = its distilled static tier for bulk ingest (`ngr reembed` later); "
        "'hashing' = non-semantic test embedder; or a local model directory.",
    ),
    reembed: bool = typer.Option(
        False,
        "--reembed",
        help="Allow embedding every node again when the store was "
        f"built with another embedder (refused above {REEMBED_LIMIT} nodes otherwise).",
    ),
) -> None:
    # a bad --embedder (or NGR_EMBEDDER) is refused for every command, also those that never embed; checked
    # without loading a model, before the command runs, --json aware like every other bad value
    with handled("--json" in ctx.meta.get("ngr.rest", ())):
        try:
            check_embedder_spec(embedder or None)
        except InvalidArgument as exc:
            raise InvalidArgument(f"--embedder: {exc}") from None
    src = ctx.get_parameter_source("db")  # typer may vendor its own click: compare by name
    explicit = src is not None and getattr(src, "name", "") not in ("DEFAULT", "DEFAULT_MAP")
    ctx.obj = Ctx(
        db=db,
        db_explicit=explicit,
        embedder=embedder or None,
        reembed=reembed,
        reembed_limit=None if reembed else REEMBED_LIMIT,
    )


# --------------------------------------------------------------------- init / stats / trace
@app.command()
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


@app.command()
def stats(ctx: typer.Context, as_json: bool = json_opt()) -> None:
    """Counts of nodes, edges, relations, traces and cached vectors in the store."""
    c = ctx_of(ctx)
    with handled(as_json):
        path = c.existing_db_path()
        with closing(c.open_store(path)) as store:
            s = store.stats()
            s["embedding_models"] = store.embedding_models()  # cached vectors per embedder
            # the multilingual channel (docs/multilingual.md): "on", "pending" (waiting for --reembed), "off"
            # (the store is marked never to widen), or "none" while it holds no Japanese/Korean/Chinese writing
            s["multilingual"] = store.get_meta("multilingual") or "none"
    s["path"] = s["path"] if is_store_url(s["path"]) else os.path.abspath(s["path"])
    if as_json:
        print_json(s)
        return
    t = Table(title=f"store {s['path']}", show_header=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    for k in ("schema_version", "nodes", "edges", "relations", "traces", "cached_vectors", "pending_edges"):
        t.add_row(k, str(s[k]))
    t.add_row("multilingual", escape(str(s["multilingual"])))
    out.print(t)
    for key, title in (("node_types", "node types"), ("edge_relations", "edge relations")):
        if s[key]:
            out.print(f"[bold]{title}[/]: " + ", ".join(f"{escape(str(k))} {v}" for k, v in s[key].items()))


# --------------------------------------------------------------------- ingest
_read_jsonl = read_jsonl  # the JSONL reader lives in ingest/jsonl.py; tests import these names from here
_stream = stream
_JSONL_STAGES = {"embedding": "embedding nodes", "writing": "writing nodes and edges (one transaction)"}


def _parse_file(c: Ctx, file: Path, db_path: str) -> tuple[Parsed, Store | None]:
    """Validate ``file`` completely (nothing is written); returns it and the store if checking edge endpoints
    opened one (closed again if the file is bad).  Raises IngestError."""
    if not file.exists():
        raise CliError("file_not_found", f"no such file: {file}")
    store: Store | None = None

    def lookup(ids):
        nonlocal store
        if store is None and not is_store_url(db_path) and not Path(db_path).exists():
            return set()  # no store yet: only the file's own nodes exist (and none is created for a bad file)
        store = store or c.open_store(db_path)
        return store.lookup_idx(ids)

    try:
        parsed = validate_file(file, lookup)
    except BaseException:
        if store is not None:
            store.close()
        raise
    return parsed, store


def _ingest(c: Ctx, file: Path, db_path: str, *, show_progress: bool = True, link: bool = False) -> dict:
    """Validate ``file`` completely, then write it (nodes, then edges in batches).  Raises IngestError."""
    t0 = time.perf_counter()
    parsed, store = _parse_file(c, file, db_path)
    t_parse = time.perf_counter() - t0
    with open_engine(c, db_path, store=store) as engine:
        with progress() as prog:
            if not show_progress:
                prog.stop()
            written = write_jsonl(engine, parsed, file, stage_reporter(prog, _JSONL_STAGES))
            if link:
                t3 = time.perf_counter()
                ltask = prog.add_task("linking (mentions, refs, entities)", total=None)
                info = engine.link(progress=lambda done, total: prog.update(ltask, completed=done, total=total))
                prog.update(ltask, description="linked", completed=1, total=1)
                written["seconds"]["link"] = round(time.perf_counter() - t3, 3)
                written["link"] = _link_summary(info or {})
            built = end_bulk_load(engine, prog)
            if built:
                written["vector_index"] = built
        after = engine.store.stats()
    seconds = written.pop("seconds")
    return {
        "file": str(file),
        "db": os.path.abspath(db_path),
        "lines": parsed.lines,
        "nodes": len(parsed.node_ids),
        "edges": len(parsed.edge_keys),
        "new_nodes": written.pop("new_nodes"),
        "new_edges": written.pop("new_edges"),
        "embedded": written.pop("embedded"),
        "embedder": engine.embedder.model_id,
        "store_nodes": after["nodes"],
        "store_edges": after["edges"],
        "seconds": {"validate": round(t_parse, 3), **seconds},
        **written,
    }


def _link_summary(info: dict) -> dict:
    keep = ("items", "entities", "edges", "edges_by_linker")
    return {k: info[k] for k in keep if k in info}


@app.command()
def ingest(
    ctx: typer.Context,
    what: str = typer.Argument(
        ...,
        metavar="FILE | git REPO | github PATH | markdown DIR",
        help="A JSONL file of nodes and edges, or a source kind followed by its path.",
    ),
    path: Path | None = typer.Argument(
        None,
        metavar="[PATH]",
        show_default=False,
        help="With git/github/markdown: the repository, export file or folder, folder.",
    ),
    refs: list[str] | None = typer.Option(
        None,
        "--ref",
        help="git: a branch to read besides HEAD (a release branch such as origin/stable), or a glob such as "
        "'origin/release-*' (repeatable). Remembered: later syncs read the same refs.",
    ),
    tags: bool | None = typer.Option(
        None,
        "--tags/--no-tags",
        help="git: also read every tag's history (releases on release branches); default on, remembered.",
    ),
    name: str | None = typer.Option(
        None, "--name", help="Source name recorded on every node (default: the repository / folder name)."
    ),
    prune: bool = typer.Option(
        False, "--prune", help="github/markdown: delete this source's items that are no longer in it."
    ),
    full: bool = typer.Option(
        False,
        "--full",
        help="git: read every commit again, not only the new ones "
        "(unchanged commits are still not rewritten or re-embedded).",
    ),
    link: bool = typer.Option(
        False,
        "--link",
        help="Afterwards build LLM-free links over the whole store "
        "(title mentions, #refs, shared entities): see `ngr link`.",
    ),
    strict: bool = typer.Option(
        False,
        "--strict",
        help="git/github/markdown: one item over a size limit fails the whole sync, nothing written "
        "(default: it is skipped and named in the summary, the rest is written). A JSONL file is always strict.",
    ),
    as_json: bool = json_opt(),
) -> None:
    """Add nodes and edges from a JSONL file (all or nothing), or sync real history.

    `ngr ingest FILE.jsonl`: each line is a node {"kind":"node","id","type","title","text","metadata","confidence"}
    or an edge {"kind":"edge","src","rel","dst","weight","polarity","factuality","meta"};
    without "kind", a line with "id" is a node and one with "src"/"dst" an edge.
    The whole file is validated first; if any line is bad, every bad line is reported
    with its number and nothing is written.

    `ngr ingest git REPO [--ref R]...`, `ngr ingest github PATH`, `ngr ingest markdown DIR`:
    read a repository's commits, a folder/file of `gh` JSON, or a Markdown/ADR folder into typed
    nodes and edges (docs/ingest.md). Re-running the same command syncs: only what changed is
    written and embedded; derived edges follow the text; learned weights are kept.
    """
    c = ctx_of(ctx)
    with handled(as_json):
        if what in SOURCE_KINDS:
            if path is None:
                raise CliError("invalid_argument", f"`ngr ingest {what}` needs a path, e.g. `ngr ingest {what} .`")
            summary = ingest_source(
                c, what, path, refs=refs, name=name, prune=prune, link=link, full=full, strict=strict, tags=tags
            )
        else:
            if path is not None or refs or name or prune or full or tags is not None:
                raise CliError(
                    "invalid_argument",
                    f"{what!r} is not a source kind ({', '.join(SOURCE_KINDS)}); "
                    "a JSONL file takes no PATH, --ref, --tags, --name, --prune or --full",
                )
            summary = _ingest(c, Path(what), c.db_path(), link=link)
    if as_json:
        print_json(summary)
    elif what in SOURCE_KINDS:
        print_summary(out, summary)
    else:
        out.print(
            f"ingested {summary['nodes']} nodes ({summary['new_nodes']} new, {summary['embedded']} embedded) "
            f"and {summary['edges']} edges ({summary['new_edges']} new) into {escape(summary['db'])}; "
            f"store now has {summary['store_nodes']} nodes, {summary['store_edges']} edges"
        )
        if link:
            li = summary["link"]
            out.print(
                f"linked: {li['edges']} edges, {li['entities']} entity nodes "
                f"({', '.join(f'{k} {v}' for k, v in li.get('edges_by_linker', {}).items())})"
            )


@app.command()
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
            summary = {**_link_summary(info), "seconds": round(time.perf_counter() - t0, 3)}
    if as_json:
        print_json(summary)
    else:
        out.print(
            f"linked {summary['items']} nodes: {summary['edges']} edges, {summary['entities']} entity nodes "
            f"({', '.join(f'{k} {v}' for k, v in summary.get('edges_by_linker', {}).items())}) "
            f"in {summary['seconds']:.1f}s"
        )


# --------------------------------------------------------------------- search
TITLE_CHARS = 60  # a table row's title: a long commit subject would fill the screen (the full title: --json, --explain)


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


_FULL_SHA_ID = re.compile(r"\bcommit:([0-9a-f]{12})[0-9a-f]{28}(?:[0-9a-f]{24})?\b")


def _short_ids(text: str) -> str:
    """Commit ids in ``text`` by their 12-character short sha (every command taking an id resolves one)."""
    return _FULL_SHA_ID.sub(r"commit:\1", text)


def _hits_table(hits: list[dict], title: str | None) -> None:
    """The hits as a table that fits 80 columns: who and when beside each, the full ids in --json; the score
    parts in --explain."""
    t = Table(title=title, show_lines=False)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("id", overflow="fold", min_width=19, max_width=28)  # commit:<12> on one line
    t.add_column("date", no_wrap=True)
    t.add_column("author", overflow="ellipsis", max_width=14, no_wrap=True)
    t.add_column("title", overflow="fold", ratio=1, min_width=16)
    t.add_column("score", justify="right", no_wrap=True)
    t.add_column("via", overflow="fold", max_width=18)
    for k, h in enumerate(hits, 1):
        via = "seed" if h.get("seed") else "entry"
        if h.get("paths"):
            p = h["paths"][0]
            via = f"{len(p['edges'])} hop(s) from {p['nodes'][0]}" if p["edges"] else "seed"
        meta = h.get("meta") or {}
        t.add_row(
            str(h.get("rank", k)),
            safe_markup(_short_ids(h["id"])),
            safe_markup(meta.get("date", "")),
            safe_markup(meta.get("author", "")),
            safe_markup(_short(h["title"]) + _not_ingested(h.get("refs_not_ingested"))),
            f"{h['scores']['final']:.3f}",
            safe_markup(_short_ids(via)),
        )
    out.print(t)


def _not_ingested(refs) -> str:
    """A hit's title suffix for the issue numbers it names that no ingested node has ("Fixes #7")."""
    return f" (refers to {', '.join(refs)}: not ingested)" if refs else ""


def _print_explained(res) -> None:
    for k, h in enumerate(res.hits, 1):
        out.print(f"[bold]{k}. {safe_markup(h.id)}[/] [dim]({safe_markup(h.type)})[/] {safe_markup(h.title)}")
        if h.meta:
            who = "  ".join(h.meta[f] for f in ("sha", "date", "author") if f in h.meta)
            out.print(f"     [dim]{safe_markup(who)}[/]")
        if h.refs_not_ingested:
            out.print(f"     [dim]refers to {safe_markup(', '.join(h.refs_not_ingested))} (not ingested)[/]")
        for line in h.explain(res.config).splitlines():
            out.print(f"     {safe_markup(line)}")


def _read_diff(spec: str | None) -> str | None:
    """``--diff FILE``'s text, or stdin's for ``-`` (``git diff | ngr search ... --diff -``)."""
    if spec is None:
        return None
    if spec == "-":
        return sys.stdin.read()
    p = Path(spec)
    if not p.is_file():
        raise CliError("file_not_found", f"no such file: {spec}")
    try:
        return p.read_text(encoding="utf-8", errors="replace")  # a diff is parsed, not stored
    except OSError as exc:
        raise CliError("file_not_found", f"cannot read {spec}: {exc.strerror}") from None


@app.command()
def search(
    ctx: typer.Context,
    query: str = typer.Argument(..., help="The question or keywords."),
    limit: str = typer.Option("10", "--limit", "-n", metavar="N", help="Hits to return."),
    channel: str = typer.Option(
        "spread", "--channel", help="Graph channel: spread | beam | ppr | eager | mmr | scored | none (hybrid only)."
    ),
    types: list[str] | None = typer.Option(None, "--type", "-t", help="Only return nodes of this type (repeatable)."),
    rels: list[str] | None = typer.Option(None, "--rel", help="Relation types the question is about (repeatable)."),
    explain: bool = typer.Option(False, "--explain", help="Print each hit's score breakdown and graph path."),
    as_of: str | None = typer.Option(
        None,
        "--as-of",
        help="Search the store as it was then: nodes whose "
        "event time (metadata 'time') is later are invisible, also as graph "
        "bridges. Epoch seconds or ISO-8601 (2024-05-01T12:00:00Z).",
    ),
    since: str | None = typer.Option(None, "--since", help="Only nodes whose event time is at or after this."),
    until: str | None = typer.Option(None, "--until", help="Only nodes whose event time is at or before this."),
    sources: list[str] | None = typer.Option(
        None, "--source", help="Only nodes whose metadata 'source' (repository / site) is this (repeatable)."
    ),
    where: list[str] | None = typer.Option(
        None,
        "--where",
        help="Metadata equality KEY=VALUE (repeatable); "
        "VALUE is read as JSON when it is a number, true/false or a "
        '"quoted string", else as text.',
    ),
    files: list[str] | None = typer.Option(
        None,
        "--file",
        metavar="PATH[:A-B]",
        help="A repository-relative path you are working on (repeatable): its file:<path> node seeds the graph. "
        "With lines (src/a.c:120-131, src/a.c:7; 1-based, inclusive) the commits that last changed them rank first.",
    ),
    diff: str | None = typer.Option(
        None,
        "--diff",
        metavar="FILE|-",
        help="Your change as a unified diff (a file, or - for stdin: git diff | ngr search Q --diff -): the lines it "
        "edits find the commits that last changed them.",
    ),
    as_json: bool = json_opt(),
) -> None:
    """Explained hybrid + graph search; stores a trace (see `ngr trace`).

    Filtered nodes (--as-of, --since, --until, --source, --where) are not in the graph for this search:
    never hits nor seeds, and activation never flows through them. A filter judges only nodes that
    carry its field (files and entities usually have no time)."""
    c = ctx_of(ctx)
    with handled(as_json):
        n = int_option(limit, "--limit")
        path = c.existing_db_path()
        req = SearchRequest(
            query,
            limit=n,
            strategy=channel,
            as_of=as_of,
            since=since,
            until=until,
            types=types,
            rels=rels,
            sources=sources,
            where=where_pairs(where or ()),
            files=files,
            diff=_read_diff(diff),
        )
        with open_engine(c, path) as eng:
            res = req.run(eng)
    if as_json:
        print_safe_json(res.to_dict())
        return
    if not res.hits:
        out.print(f"no hits for {safe_markup(query)!s}")
    elif explain:
        _print_explained(res)
    else:
        _hits_table([h.to_dict() for h in res.hits], title=f"{safe_markup(query)}")
    if res.unknown_files:
        err.print(f"[yellow]no file node for: {safe_markup(', '.join(res.unknown_files))}[/] (ignored)")
    for w in res.warnings:
        err.print(f"[yellow]warning: {safe_markup(w)}[/]")
    ms = res.timings_ms
    out.print(
        f"[dim]trace {res.trace_id}  seeds: {safe_markup(_short_ids(', '.join(res.seeds))) or '-'}  "
        + "  ".join(f"{k} {v:.1f}ms" for k, v in ms.items())
        + "[/]"
    )


# --------------------------------------------------------------------- demo
DEMO_QUERIES = [
    # (query, the source the question is really after, why hybrid search alone ranks it low)
    (
        "was the Redis page cache decision ever reversed?",
        "decision:adr-009",
        "the reversal is a later ADR about event invalidation that never names Redis; "
        "chain: ADR-004 -> PR 118 -> stale-price incident -> PR 162 + ADR-009",
    ),
    (
        "what replaced the nightly export job?",
        "pr:305",
        "the replacement PR talks about change-data-capture and never says 'nightly' or 'job'",
    ),
    (
        "ログインが遅い原因は?",
        "pr:198",
        "a Japanese report; its cause is an English PR raising the bcrypt work factor, no shared words",
    ),
    (
        "결제 페이지 가격 오류의 원인은?",
        "issue:141",
        "a Korean support ticket; the root-cause incident is an English issue it duplicates",
    ),
]


def _demo_corpus_path():
    return resources.files("neurongraph.cli").joinpath("demo_corpus.jsonl")


@app.command()
def demo(
    ctx: typer.Context,
    db: str | None = typer.Option(None, "--db", help="Database to use (default: a temporary one, deleted afterwards)."),
    as_json: bool = json_opt(),
) -> None:
    """Ingest a small built-in software-history corpus and run explained searches on it.

    Each query runs twice: hybrid entry only (--channel none) and with the graph
    channel, to show a graph path bringing up the source the question is after.
    """
    c = ctx_of(ctx)
    tmp = None
    with handled(as_json):
        if db is None and c.db_explicit:
            db = c.db
        if db is None:
            tmp = tempfile.TemporaryDirectory(prefix="ngr-demo-")
            db = os.path.join(tmp.name, "demo.db")
        db = check_db_path(db)
        try:
            with resources.as_file(_demo_corpus_path()) as corpus:
                summary = _ingest(c, Path(corpus), db, show_progress=not as_json)
            queries: list[dict[str, Any]] = []
            report: dict[str, Any] = {"db": None if tmp else os.path.abspath(db), "ingest": summary, "queries": queries}
            with open_engine(c, db) as eng:
                for query, target, why in DEMO_QUERIES:
                    qvec = eng.embed_query(query)
                    base = eng.search(query, limit=eng.store.stats()["nodes"], channel="none", qvec=qvec, record=False)
                    res = eng.search(query, limit=5, qvec=qvec)
                    base_rank = next((k for k, h in enumerate(base.hits, 1) if h.id == target), None)
                    rank = next((k for k, h in enumerate(res.hits, 1) if h.id == target), None)
                    queries.append(
                        {
                            "query": query,
                            "target": target,
                            "why": why,
                            "target_rank_hybrid_only": base_rank,
                            "target_rank_with_graph": rank,
                            "hybrid_only_top5": [h.id for h in base.hits[:5]],
                            "result": res.to_dict(snippet_chars=160),
                        }
                    )
                    if not as_json:
                        _print_demo_query(query, target, why, base, res, base_rank, rank)
        finally:
            if tmp is not None:
                tmp.cleanup()
    if as_json:
        print_json(report)
        return
    t = Table(title="where the source the question is after ranks")
    t.add_column("query", overflow="fold", max_width=50)
    t.add_column("source")
    t.add_column("hybrid only", justify="right")
    t.add_column("with graph", justify="right")
    for q in report["queries"]:
        t.add_row(
            escape(q["query"]),
            escape(q["target"]),
            str(q["target_rank_hybrid_only"] or "-"),
            str(q["target_rank_with_graph"] or "> 5"),
        )
    out.print(t)
    where = report["db"] or "a temporary database (deleted); pass --db PATH to keep it"
    out.print(
        f"[dim]{summary['nodes']} nodes, {summary['edges']} edges, embedder {escape(summary['embedder'])}; "
        f"store: {escape(where)}[/]"
    )


def _print_demo_query(query, target, why, base, res, base_rank, rank) -> None:
    out.rule(f"[bold]{escape(query)}")
    out.print(f"[dim]looking for {escape(target)}: {escape(why)}[/]")
    where = (
        f"ranked [bold]{base_rank}[/]"
        if base_rank
        else "[bold]not among the hits[/] (no shared words; similarity below the corpus median)"
    )
    out.print(
        f"hybrid only (--channel none): {escape(target)} {where}; top 3: "
        + ", ".join(escape(h.id) for h in base.hits[:3])
    )
    out.print(
        f"with the graph channel: {escape(target)} ranked "
        f"[bold {'green' if rank else 'red'}]{rank if rank else 'not in top 5'}[/]"
    )
    _print_explained(res)
    out.print(f"[dim]trace {res.trace_id}[/]")


# --------------------------------------------------------------------- bench
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
            "link": _link_summary(info.get("link", {})),
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
    bench_history(ctx, repo, db, n, systems, learning, out_file, as_json, input_kind, ex)


app.add_typer(feedback_app, name="feedback")
app.add_typer(traces_app, name="traces")
app.command("mcp")(mcp_command)
app.command("serve")(serve_command)
app.command("migrate")(migrate_command)
app.add_typer(schema_app, name="schema")
app.command("neighbors")(neighbors_command)
app.command("trace")(trace_command)
bench_app.command("learning")(bench_learning)
bench_app.command("code")(bench_code)
app.command("ask")(ask_command)
app.command("show")(show_command)
app.command("reembed")(reembed_command)
app.command("cypher")(cypher_command)
app.command("graph-server")(graph_server_command)
bench_app.command("ask")(bench_ask)


def main() -> None:
    try:
        rv = app(standalone_mode=False)
    except typer.BadParameter as exc:
        if type(exc).__name__ == "MissingParameter":  # a usage mistake, not a bad value: click's own help
            rich_format_error(exc)
            sys.exit(exc.exit_code)
        # a value click could not convert (`--limit ten`): the same error[invalid_argument] as every other
        # bad value, --json aware, instead of click's usage box
        name = exc.param.opts[0] if exc.param is not None and exc.param.opts else (exc.param_hint or "option")
        what = exc.message.rstrip(".")
        _bad_value(InvalidArgument(f"{name}: {what}"), "--json" in sys.argv[1:])
    except typer.TyperException as exc:  # usage mistakes (unknown option, missing argument): click's own help
        rich_format_error(exc)  # a ClickException (typer vendors click)
        sys.exit(getattr(exc, "exit_code", 2))
    except typer.Abort:
        err.print("Aborted!")
        sys.exit(1)
    except KeyboardInterrupt:  # click normally turns this into "Aborted!"; this covers the rest
        err.print(f"[bold red]{escape('error[interrupted]')}[/]: interrupted")
        sys.exit(130)
    sys.exit(rv if isinstance(rv, int) else 0)


def _bad_value(exc: InvalidArgument, as_json: bool) -> None:
    try:
        with handled(as_json):
            raise exc
    except typer.Exit as e:
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
