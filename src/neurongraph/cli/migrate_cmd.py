"""``ngr migrate --from sqlite:PATH --to postgresql://…`` (and back): copy a whole store, then verify it.

The copy keeps every key,
ledger and learned weight (store/postgres_copy.py); the target must be empty.  Verification: the rows of
every table are counted on both sides, and a sample of searches (titles of the first nodes as queries)
must rank the same ids on both (``--verify-queries 0`` skips it; it loads the store's embedder).
"""

from __future__ import annotations

import os
from contextlib import closing
from pathlib import Path

import typer

from ..engine import Engine
from ..store import is_postgres_url, redacted_url
from .common import CliError, Ctx, ctx_of, handled, json_opt, out, print_json

__all__ = ["migrate_command", "parse_store_spec"]


def parse_store_spec(spec: str, option: str) -> tuple[str, str]:
    """``("sqlite", path)`` for ``sqlite:PATH``, ``("postgres", url)`` for ``postgresql://…``."""
    if is_postgres_url(spec):
        return "postgres", spec
    if spec.startswith("sqlite:") and len(spec) > len("sqlite:"):
        return "sqlite", os.path.expanduser(spec[len("sqlite:") :])
    raise CliError("invalid_argument", f"{option} {spec!r}: expected sqlite:PATH or postgresql://…")


def _open(kind: str, where: str, create: bool):
    if kind == "postgres":
        from ..store.postgres import PostgresStore

        return PostgresStore(where)
    from ..store.sqlite import SQLiteStore

    p = Path(where)
    if create and p.exists():
        raise CliError("invalid_argument", f"--to sqlite:{where}: the file exists; give a new path")
    if not create and not p.is_file():
        raise CliError("no_store", f"--from sqlite:{where}: no store there")
    return SQLiteStore(where)


def _rankings(kind: str, where: str, embedder, queries: list[str]) -> list[list[str]]:
    with closing(Engine(_open(kind, where, create=False), embedder)) as eng:
        return [[h.id for h in eng.search(q, limit=10, record=False).hits] for q in queries]


def migrate_command(
    ctx: typer.Context,
    source: str = typer.Option(..., "--from", help="The store to copy: sqlite:PATH or postgresql://…"),
    target: str = typer.Option(..., "--to", help="An empty store: postgresql://… (a new database) or sqlite:NEWPATH"),
    verify_queries: int = typer.Option(5, "--verify-queries", help="Searches compared after the copy (0: none)."),
    as_json: bool = json_opt(),
) -> None:
    """Copy a whole store between SQLite and PostgreSQL with its ledgers and learned weights, then verify."""
    c: Ctx = ctx_of(ctx)
    with handled(as_json):
        s_kind, s_where = parse_store_spec(source, "--from")
        t_kind, t_where = parse_store_spec(target, "--to")
        if {s_kind, t_kind} != {"sqlite", "postgres"}:
            raise CliError("invalid_argument", "--from and --to must be one SQLite store and one PostgreSQL store")
        if verify_queries < 0:
            raise CliError("invalid_argument", "--verify-queries must be 0 or more")
        report = _migrate(c, s_kind, s_where, t_kind, t_where, verify_queries)
    if as_json:
        print_json(report)
    else:
        ok = "identical" if report["verified"] else "DIFFERENT"
        out.print(
            f"copied {report['rows']['nodes']} nodes, {report['rows']['edges']} edges, {report['rows']['traces']}"
            f" traces ({sum(report['rows'].values())} rows) to {report['to']}; counts and"
            f" {report['queries_compared']} rankings {ok}"
        )
    if not report["verified"]:
        raise typer.Exit(1)


def _migrate(c: Ctx, s_kind: str, s_where: str, t_kind: str, t_where: str, verify_queries: int) -> dict:
    try:  # the store raises StoreError for a database failure: the CLI never names the driver
        from ..store.postgres_copy import postgres_to_sqlite, sqlite_to_postgres, table_counts
    except ImportError:
        raise CliError("missing_extra", "the PostgreSQL store needs `pip install 'neurongraph[postgres]'`") from None
    with closing(_open(s_kind, s_where, create=False)) as src:
        if t_kind == "postgres":
            with closing(_open(t_kind, t_where, create=True)) as dst:
                sqlite_to_postgres(src, dst)
        else:
            if Path(t_where).exists():
                raise CliError("invalid_argument", f"--to sqlite:{t_where}: the file exists; give a new path")
            postgres_to_sqlite(src, t_where)
        want = table_counts(src)
        queries = [r.title for r in src.iter_nodes(batch=max(verify_queries, 1)) if r.title.strip()]
        queries = queries[:verify_queries]
    with closing(_open(t_kind, t_where, create=False)) as dst:
        got = table_counts(dst)
    same = [True]
    if queries:
        emb = c.make_embedder()
        a = _rankings(s_kind, s_where, emb, queries)
        b = _rankings(t_kind, t_where, emb, queries)
        same = [x == y for x, y in zip(a, b)]
    return {
        "from": s_where if s_kind == "sqlite" else redacted_url(s_where),
        "to": t_where if t_kind == "sqlite" else redacted_url(t_where),
        "rows": want,
        "counts_match": want == got,
        "queries_compared": len(queries),
        "verified": want == got and all(same),
    }
