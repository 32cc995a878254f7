"""``ngr demo``: a small built-in software-history corpus, ingested into a temporary store and searched
twice per question (hybrid entry only, then with the graph channel) to show a graph path bringing up the
source the question is after.
"""

from __future__ import annotations

import os
import tempfile
from importlib import resources
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from .common import (
    check_db_path,
    ctx_of,
    escape,
    handled,
    json_opt,
    open_engine,
    out,
    print_json,
)
from .ingest_cmd import ingest_jsonl
from .search_cmd import print_explained

__all__ = ["demo"]

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
                summary = ingest_jsonl(c, Path(corpus), db, show_progress=not as_json)
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
    print_explained(res)
    out.print(f"[dim]trace {res.trace_id}[/]")
