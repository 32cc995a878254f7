"""The ``ngr`` command line: the root (``--db``, ``--embedder``, ``--reembed``), every command mounted, and
``main()``, the one place click's own errors become ``error[...]`` lines.

Every command takes ``--json`` (machine-readable stdout).  User mistakes never
show a traceback: they print one red ``error[code]: message`` line to stderr
(or ``{"error": {...}}`` to stdout with ``--json``) and exit with status 2.
Progress bars always go to stderr, so ``--json`` output can be piped.

Each command or command group lives in a module named after it (``ngr ingest`` in ingest_cmd.py, ``ngr
bench ...`` in bench_cmd.py, ...); this module only mounts them (``COMMANDS``, in the order ``ngr --help``
lists them), each when it is used, so a command's start imports no other command's module.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Iterator, MutableMapping
from importlib import import_module
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from ..errors import InvalidArgument
from ..index.embedder import check_embedder_spec
from .common import DEFAULT_DB, REEMBED_LIMIT, Ctx, err, escape, handled
from .common import print_json as _print_json  # noqa: F401  (tests import it from here)
from .ingest_cmd import _read_jsonl, _stream, ingest  # noqa: F401  (tests import the reader from here)
from .plain_params import install as _plain_params

__all__ = ["app", "main"]

_plain_params()  # str / list[str] / bool options coerced without importing pydantic (plain_params.py)


# every command and command group: name -> (its module, the function or typer app there), in the order
# `ngr --help` lists them (the commands, then the groups)
COMMANDS: dict[str, tuple[str, str]] = {
    "init": ("init_cmd", "init"),
    "stats": ("stats_cmd", "stats"),
    "ingest": ("ingest_cmd", "ingest"),
    "link": ("link_cmd", "link"),
    "search": ("search_cmd", "search"),
    "demo": ("demo_cmd", "demo"),
    "mcp": ("mcp_cmd", "mcp_command"),
    "serve": ("serve_cmd", "serve_command"),
    "migrate": ("migrate_cmd", "migrate_command"),
    "neighbors": ("neighbors_cmd", "neighbors_command"),
    "trace": ("traces_cmd", "trace_command"),
    "ask": ("ask_cmd", "ask_command"),
    "show": ("show_cmd", "show_command"),
    "reembed": ("reembed_cmd", "reembed_command"),
    "cypher": ("ask_cmd", "cypher_command"),
    "graph-server": ("graph_server_cmd", "graph_server_command"),
    "bench": ("bench_cmd", "bench_app"),
    "feedback": ("feedback_cmd", "feedback_app"),
    "traces": ("traces_cmd", "traces_app"),
    "schema": ("schema_cmd", "schema_app"),
}


def _mount(name: str) -> Any:
    """The click command (or group) ``name``, built as mounting it on the root builds it: its module is
    imported here, when the command runs or a help or completion lists it."""
    module, attr = COMMANDS[name]
    obj = getattr(import_module(f".{module}", __package__), attr)
    holder = typer.Typer(add_completion=False)  # the root's defaults: the same markup, exceptions, suggestions
    if isinstance(obj, typer.Typer):
        holder.add_typer(obj, name=name)
    else:
        holder.command(name)(obj)
    return typer.main.get_group(holder).commands[name]


class _Commands(MutableMapping):
    """The root's commands by name, each built on first use: a cold ``ngr search`` imports no other
    command's module (``ngr ask``'s graph projection, the benchmarks, ...) nor builds their options."""

    def __init__(self) -> None:
        self._built: dict[str, Any] = {}
        self._names = list(COMMANDS)

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in COMMANDS:
                raise KeyError(name)
            self._built[name] = _mount(name)
        return self._built[name]

    def __setitem__(self, name: str, cmd: Any) -> None:
        if name not in self._names:
            self._names.append(name)
        self._built[name] = cmd

    def __delitem__(self, name: str) -> None:
        self._names.remove(name)
        self._built.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)

    def __contains__(self, name: object) -> bool:
        return name in self._names


class _RootGroup(TyperGroup):
    """The root group, keeping the command line after the root options in ``ctx.meta["ngr.rest"]``: the root
    checks ``--embedder`` before any command runs and answers in JSON when that command was given ``--json``.
    Its commands are built when used (:class:`_Commands`)."""

    def __init__(self, *args: Any, commands: Any = None, **kwargs: Any) -> None:
        lazy = _Commands()
        for name, cmd in dict(commands or {}).items():  # any command mounted on ``app`` itself (a test's)
            lazy[name] = cmd
        super().__init__(*args, commands=lazy, **kwargs)

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)  # the names only: listing builds nothing

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
