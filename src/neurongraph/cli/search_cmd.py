"""``ngr search``: explained hybrid + graph search from the command line.

The flags become one :class:`neurongraph.service.SearchRequest` (the same request the MCP tool and the HTTP
API build), so an option is checked once; this module only prints the result: a table that fits 80
columns, or each hit's score breakdown and graph path with ``--explain`` (:func:`print_explained`, which
``ngr demo`` shares).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import typer
from rich.table import Table

from ..service import SearchRequest, where_pairs
from .common import (
    CliError,
    ctx_of,
    err,
    handled,
    int_option,
    json_opt,
    open_engine,
    out,
)
from .safe_text import print_safe_json, safe_markup

__all__ = ["print_explained", "search", "short_ids"]

TITLE_CHARS = 60  # a table row's title: a long commit subject would fill the screen (the full title: --json, --explain)


def _short(title: str) -> str:
    title = " ".join(title.split())
    return title if len(title) <= TITLE_CHARS else title[: TITLE_CHARS - 1].rstrip() + "…"


_FULL_SHA_ID = re.compile(r"\bcommit:([0-9a-f]{12})[0-9a-f]{28}(?:[0-9a-f]{24})?\b")


def short_ids(text: str) -> str:
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
            safe_markup(short_ids(h["id"])),
            safe_markup(meta.get("date", "")),
            safe_markup(meta.get("author", "")),
            safe_markup(_short(h["title"]) + _change_said(h.get("change")) + _not_ingested(h.get("refs_not_ingested"))),
            f"{h['scores']['final']:.3f}",
            safe_markup(short_ids(via)),
        )
    out.print(t)


def _change_said(change: dict | None) -> str:
    """A grouped hit's suffix: the PR it stands for and how many commits it landed ("[PR #7, 3 commits]")."""
    if not change or not change.get("pr"):
        return ""
    n = int(change.get("commits_total") or 0)
    return f" [PR #{str(change['pr']).split(':', 1)[-1]}, {n} commit{'' if n == 1 else 's'}]"


def _not_ingested(refs) -> str:
    """A hit's title suffix for the issue numbers it names that no ingested node has ("Fixes #7")."""
    return f" (refers to {', '.join(refs)}: not ingested)" if refs else ""


def print_explained(res) -> None:
    if getattr(res, "read_as", ""):  # a question that asks for a beginning, an introduction or a removal
        out.print(f"[dim]{safe_markup(res.read_as)}[/]")
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


def _flag(name: str) -> str:
    """An option's name as this command spells it (``as_of`` -> ``--as-of``), for the request's messages."""
    return "--" + name.replace("_", "-")


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
    until: str | None = typer.Option(
        None, "--until", help="Deprecated: the old name of --as-of (the same filter; given both, the earlier wins)."
    ),
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

    Filtered nodes (--as-of, --since, --source, --where) are not in the graph for this search:
    never hits nor seeds, and activation never flows through them. A filter judges only nodes that
    carry its field (files and entities usually have no time)."""
    c = ctx_of(ctx)
    with handled(as_json):
        n = int_option(limit, "--limit")
        path = c.existing_db_path()
        req = SearchRequest.with_aliases(
            query,
            _flag,
            limit=n,
            channel=channel,
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
        print_explained(res)
    else:
        _hits_table([h.to_dict() for h in res.hits], title=f"{safe_markup(query)}")
    if res.unknown_files:
        err.print(f"[yellow]no file node for: {safe_markup(', '.join(res.unknown_files))}[/] (ignored)")
    for w in res.warnings:
        err.print(f"[yellow]warning: {safe_markup(w)}[/]")
    ms = res.timings_ms
    out.print(
        f"[dim]trace {res.trace_id}  seeds: {safe_markup(short_ids(', '.join(res.seeds))) or '-'}  "
        + "  ".join(f"{k} {v:.1f}ms" for k, v in ms.items())
        + "[/]"
    )
