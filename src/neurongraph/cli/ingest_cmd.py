"""``ngr ingest``: a JSONL file of nodes and edges (validated whole, written all or nothing), or real
project history (``ngr ingest git|github|markdown PATH``) as an incremental sync.

A source is read through its adapter (neurongraph.ingest) and the summary says what the sync changed, with a
progress bar per stage (reading, embedding with rate and ETA, writing); the benchmarks that build a store from
a repository use the same stage display (:func:`stage_progress`).
"""

from __future__ import annotations

import os
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
from ..ingest.jsonl import Parsed, read_jsonl, stream, validate_file, write_jsonl
from ..store.base import Store
from .common import (
    CliError,
    Ctx,
    LoggedProgress,
    RateColumn,
    ctx_of,
    end_bulk_load,
    err,
    escape,
    handled,
    is_store_url,
    json_opt,
    open_engine,
    out,
    print_json,
    progress,
    stage_reporter,
)
from .link_cmd import link_summary

__all__ = [
    "SOURCE_KINDS",
    "ingest",
    "ingest_jsonl",
    "ingest_source",
    "print_summary",
    "stage_progress",
    "stage_reporter_for",
]

SOURCE_KINDS = KINDS  # the adapters' kinds, named once in ingest/batch.py


_STAGES = {
    "log": "git log (diffs)",
    "reading": "reading {kind}",
    "embedding": "embedding new text",
    "writing": "writing (one transaction)",
}


_read_jsonl = read_jsonl  # the JSONL reader lives in ingest/jsonl.py; tests import these names from here


_stream = stream


_JSONL_STAGES = {"embedding": "embedding nodes", "writing": "writing nodes and edges (one transaction)"}


def stage_progress(*, transient: bool, disable: bool = False, console: Console | None = None) -> Progress:
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


def stage_reporter_for(prog: Progress, kind: str):
    """``progress(stage, done, total)`` for ``sync_source``: one bar per stage, added when it starts."""
    return stage_reporter(prog, {stage: label.format(kind=kind) for stage, label in _STAGES.items()})


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


def ingest_jsonl(c: Ctx, file: Path, db_path: str, *, show_progress: bool = True, link: bool = False) -> dict:
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
                written["link"] = link_summary(info or {})
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
            summary = ingest_jsonl(c, Path(what), c.db_path(), link=link)
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
        with stage_progress(transient=False, disable=not show_progress) as prog:
            on_progress = stage_reporter_for(prog, kind)
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
