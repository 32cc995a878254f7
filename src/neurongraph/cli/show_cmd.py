"""``ngr show ID``: one node as a person reads it (title, text, sha, date, author, files, edges by relation).

Why: a search hit is an id and a title; to judge it one needs the change itself, what it touched and how it
is linked, without writing Cypher.  A short sha works (``Store.resolve_node_id``).  It reads the store only
(no embedder, no index), so it answers at once on any store size.  Mounted by ``cli/main.py``.
"""

from __future__ import annotations

import time
from typing import Any

import typer

from ..schema.api import Schema
from ..store.base import Store
from ..times import event_time_of
from .common import ctx_of, handled, json_opt, out
from .safe_text import print_safe_json, safe_markup

__all__ = ["show_command", "node_report"]

TEXT_CHARS = 4000  # text printed in the terminal (--json has all of it)
SHOWN_META = ("sha", "author", "author_email", "repo", "source", "pr", "number", "state", "url")


def _iso_date(t: float | None) -> str | None:
    if t is None:
        return None
    try:
        return time.strftime("%Y-%m-%d", time.gmtime(t))
    except (OverflowError, OSError, ValueError):
        return None


def _files(md: dict) -> list[dict]:
    """A commit's files as the git ingest lists them (``files``: path, added, deleted), well-formed ones only."""
    files = md.get("files")
    if not isinstance(files, list):
        return []
    return [f for f in files if isinstance(f, dict) and isinstance(f.get("path"), str)]


def _pending_refs(store: Store, md: dict) -> list[dict]:
    """Issue numbers the message names (``Fix #N``) with neither an ``issue:N`` nor a ``pr:N`` node: the edge
    waits for an issue export that was never ingested."""
    refs = md.get("refs")
    nums = refs.get("issues") if isinstance(refs, dict) else None
    if not isinstance(nums, list):
        return []
    nums = [str(n) for n in nums if isinstance(n, (int, str)) and str(n).isdigit()]
    known = store.lookup_idx([f"{k}:{n}" for n in nums for k in ("issue", "pr")])
    return [
        {"number": int(n), "note": "named in the message; no issue export with it was ingested"}
        for n in nums
        if f"issue:{n}" not in known and f"pr:{n}" not in known
    ]


def node_report(view: Schema, text: str, limit: int) -> dict[str, Any]:
    """Everything ``ngr show`` prints, as one JSON-ready object; edges at most ``limit`` per direction."""
    store = view.store
    node_id = view.resolve(text)
    row = store.get_node(node_id)
    assert row is not None  # resolve raised unknown_node otherwise
    md = row.metadata if isinstance(row.metadata, dict) else {}
    edges: dict[str, list[dict]] = {}
    truncated: dict[str, bool] = {}
    for direction in ("out", "in"):
        got = view.neighbors(node_id, None, direction, limit=limit + 1)
        truncated[direction] = len(got) > limit
        edges[direction] = [
            {"rel": e["rel"], "node": e["node"], "type": e["type"], "weight": e["weight"]} for e in got[:limit]
        ]
    sha = md.get("sha")
    author = md.get("author")
    return {
        "node": row.to_dict(),
        "meta": {
            k: v
            for k, v in (
                ("sha", sha[:12] if isinstance(sha, str) and sha else None),
                ("date", _iso_date(event_time_of(md))),
                ("author", author if isinstance(author, str) and author else None),
            )
            if v is not None
        },
        "files": _files(md),
        "files_total": md.get("files_total", len(_files(md))),
        "edges": edges,
        "edges_truncated": truncated,
        "pending_refs": _pending_refs(store, md),
    }


def _print(rep: dict) -> None:
    n, m = rep["node"], rep["meta"]
    out.print(f"[bold]{safe_markup(n['id'])}[/] [dim]({safe_markup(n['type'])})[/]")
    if n["title"]:
        out.print(f"[bold]{safe_markup(n['title'])}[/]")
    line = "  ".join(f"{k} {safe_markup(str(m[k]))}" for k in ("sha", "date", "author") if k in m)
    if line:
        out.print(f"[dim]{line}[/]")
    md = n["metadata"] if isinstance(n["metadata"], dict) else {}
    extra = [(k, md[k]) for k in SHOWN_META if k in md and k not in ("sha", "author") and md[k] not in (None, "")]
    if extra:
        out.print("[dim]" + safe_markup("  ".join(f"{k} {v}" for k, v in extra)) + "[/]")
    if n["text"].strip():
        body = n["text"] if len(n["text"]) <= TEXT_CHARS else n["text"][:TEXT_CHARS] + "… (--json has all of it)"
        out.print("")
        out.print(safe_markup(body.rstrip(), layout=True))
    if rep["files"]:
        out.print("")
        out.print(f"[bold]files[/] ({rep['files_total']}):")
        for f in rep["files"]:
            out.print(f"  {safe_markup(f['path'])} [dim](+{f.get('added', '?')} -{f.get('deleted', '?')})[/]")
    for direction, arrow in (("out", "-[{}]->"), ("in", "<-[{}]-")):
        es = rep["edges"][direction]
        if not es:
            continue
        more = " (more: see `ngr neighbors`)" if rep["edges_truncated"][direction] else ""
        out.print("")
        out.print(f"[bold]edges {direction}[/] ({len(es)}{more}):")
        for e in es:
            rel, node, typ = (safe_markup(x) for x in (arrow.format(e["rel"]), e["node"], e["type"]))
            out.print(f"  {rel} {node} [dim]({typ})[/]")
    for p in rep["pending_refs"]:
        out.print(f"[yellow]refers to #{p['number']}[/]: {safe_markup(p['note'])}")


def show_command(
    ctx: typer.Context,
    node_id: str = typer.Argument(..., help="A node id, alias or short commit sha (abc1234, commit:abc1234)."),
    limit: int = typer.Option(50, "--limit", "-n", min=1, max=10_000, help="At most this many edges per direction."),
    as_json: bool = json_opt(),
) -> None:
    """Show one node: title, text, sha, date, author, files, and its edges in and out by relation."""
    c = ctx_of(ctx)
    with handled(as_json):
        view = Schema(c.open_store(c.existing_db_path()))
        try:
            rep = node_report(view, node_id, limit)
        finally:
            view.store.close()
    if as_json:
        print_safe_json(rep)
    else:
        _print(rep)
