"""The ``ngr`` command line: the root (``--db``, ``--embedder``, ``--reembed``), every command mounted, and
``main()``, the one place click's own errors become ``error[...]`` lines.

Every command takes ``--json`` (machine-readable stdout).  User mistakes never
show a traceback: they print one red ``error[code]: message`` line to stderr
(or ``{"error": {...}}`` to stdout with ``--json``) and exit with status 2.
Progress bars always go to stderr, so ``--json`` output can be piped.

Each command or command group lives in a module named after it (``ngr ingest`` in ingest_cmd.py, ``ngr
bench ...`` in bench_cmd.py, ...); this module only mounts them, in the order ``ngr --help`` lists them.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from ..errors import InvalidArgument
from ..index.embedder import check_embedder_spec
from .ask_cmd import ask_command, cypher_command
from .bench_cmd import bench_app
from .common import DEFAULT_DB, REEMBED_LIMIT, Ctx, err, escape, handled
from .common import print_json as _print_json  # noqa: F401  (tests import it from here)
from .demo_cmd import demo
from .feedback_cmd import feedback_app
from .graph_server_cmd import graph_server_command
from .ingest_cmd import _read_jsonl, _stream, ingest  # noqa: F401  (tests import the reader from here)
from .init_cmd import init
from .link_cmd import link
from .mcp_cmd import mcp_command
from .migrate_cmd import migrate_command
from .neighbors_cmd import neighbors_command
from .plain_params import install as _plain_params
from .reembed_cmd import reembed_command
from .schema_cmd import schema_app
from .search_cmd import search
from .serve_cmd import serve_command
from .show_cmd import show_command
from .stats_cmd import stats
from .traces_cmd import trace_command, traces_app

__all__ = ["app", "main"]

_plain_params()  # str / list[str] / bool options coerced without importing pydantic (plain_params.py)


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


# the commands, in the order `ngr --help` lists them (then the groups, in the order added)
app.command("init")(init)
app.command("stats")(stats)
app.command("ingest")(ingest)
app.command("link")(link)
app.command("search")(search)
app.command("demo")(demo)
app.add_typer(feedback_app, name="feedback")
app.add_typer(traces_app, name="traces")
app.command("mcp")(mcp_command)
app.command("serve")(serve_command)
app.command("migrate")(migrate_command)
app.add_typer(schema_app, name="schema")
app.command("neighbors")(neighbors_command)
app.command("trace")(trace_command)
app.command("ask")(ask_command)
app.command("show")(show_command)
app.command("reembed")(reembed_command)
app.command("cypher")(cypher_command)
app.command("graph-server")(graph_server_command)


def main() -> None:
    try:
        rv = app(standalone_mode=False)
    except typer.BadParameter as exc:
        if type(exc).__name__ == "MissingParameter":  # a usage mistake, not a bad value: click's own help
            _usage_error(exc)
            sys.exit(exc.exit_code)
        # a value click could not convert (`--limit ten`): the same error[invalid_argument] as every other
        # bad value, --json aware, instead of click's usage box
        name = exc.param.opts[0] if exc.param is not None and exc.param.opts else (exc.param_hint or "option")
        what = exc.message.rstrip(".")
        _bad_value(InvalidArgument(f"{name}: {what}"), "--json" in sys.argv[1:])
    except typer.TyperException as exc:  # usage mistakes (unknown option, missing argument): click's own help
        _usage_error(exc)  # a ClickException (typer vendors click)
        sys.exit(getattr(exc, "exit_code", 2))
    except typer.Abort:
        err.print("Aborted!")
        sys.exit(1)
    except KeyboardInterrupt:  # click normally turns this into "Aborted!"; this covers the rest
        err.print(f"[bold red]{escape('error[interrupted]')}[/]: interrupted")
        sys.exit(130)
    _exit(rv if isinstance(rv, int) else 0)


def _exit(code: int) -> NoReturn:
    """End a finished command without tearing the interpreter down: the exit handlers run and the output
    is flushed as at a normal exit, but the modules and objects are not freed one by one (~0.06 s of CPU
    after numpy, ONNX Runtime and a loaded engine, a tenth of a cold ``ngr search``).  A command that left
    a thread running (a server's) exits the normal way, which waits for it."""
    if any(t.is_alive() and not t.daemon for t in threading.enumerate() if t is not threading.main_thread()):
        sys.exit(code)
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (`ngr search ... | head`): nothing more to say
            pass
    os._exit(code)


def _usage_error(exc: Exception) -> None:
    """Click's own usage box; typer's rich module is imported here only (~0.05 s of every start otherwise)."""
    from typer.rich_utils import rich_format_error

    rich_format_error(exc)


def _bad_value(exc: InvalidArgument, as_json: bool) -> None:
    try:
        with handled(as_json):
            raise exc
    except typer.Exit as e:
        sys.exit(e.exit_code)


if __name__ == "__main__":
    main()
