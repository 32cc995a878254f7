"""What every ``ngr`` command shares: the root context, error handling, JSON output, and the one way to
open a store and build an engine over it.

Command modules (``*_cmd.py``, one per command or command group) import this module at the top; none of
them imports ``main`` (which imports them to mount their commands), so the CLI has no import cycle.

User mistakes never show a traceback: they print one red ``error[code]: message`` line to stderr (or
``{"error": {...}}`` to stdout with ``--json``) and exit with status 2.
"""

from __future__ import annotations

import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ..engine import Engine
from ..errors import InvalidArgument, NeuronGraphError
from ..index.embedder import Embedder, make_embedder
from ..ingest.jsonl import IngestError  # a JSONL file with bad lines: every one is reported
from ..learning import Learning
from ..model import strict_dumps
from ..store import DATABASE_ERRORS, is_postgres_url, open_store
from ..store.base import Store
from .safe_text import json_safe, safe_markup

__all__ = [
    "DEFAULT_DB",
    "REEMBED_LIMIT",
    "CliError",
    "Ctx",
    "IngestError",
    "LoggedProgress",
    "PROGRESS_EVERY_S",
    "check_db_path",
    "choose_systems",
    "bench_db",
    "build_engine",
    "ctx_of",
    "err",
    "escape",
    "handled",
    "int_option",
    "json_opt",
    "open_engine",
    "out",
    "path_str",
    "print_json",
    "progress",
    "progress_every",
    "RateColumn",
    "stage_reporter",
    "quiet_model_loading",
]

DEFAULT_DB = "./.ngr/ngr.db"
REEMBED_LIMIT = 1000  # nodes a command may embed again on open (another embedder) without --reembed
MAX_ERRORS_SHOWN = 100  # text mode; --json lists every bad line

out = Console(highlight=False, soft_wrap=True)
err = Console(stderr=True, highlight=False, soft_wrap=True)


# --------------------------------------------------------------------- errors
class CliError(NeuronGraphError):
    """A user mistake the CLI itself detects (bad path, bad file)."""

    def __init__(self, code: str, message: str, **details):
        super().__init__(message, **details)
        self.code = code


def _fail(exc: NeuronGraphError, as_json: bool) -> None:
    if as_json:
        print(json.dumps({"error": exc.to_dict()}, ensure_ascii=False))
    else:
        err.print(f"[bold red]{escape(f'error[{exc.code}]')}[/]: {escape(exc.message)}")
    raise typer.Exit(2)


def _report_ingest_errors(exc: IngestError, as_json: bool) -> None:
    if not as_json:
        errors = exc.details.get("errors") or []
        for e in errors[:MAX_ERRORS_SHOWN]:
            err.print(f"  [red]line {e['line']}[/]: {escape(e['message'])}")
        if len(errors) > MAX_ERRORS_SHOWN:
            err.print(f"  ... and {len(errors) - MAX_ERRORS_SHOWN} more bad lines (--json lists them all)")
    _fail(exc, as_json)


@contextmanager
def handled(as_json: bool) -> Iterator[None]:
    """Turn user mistakes into ``error[code]: message`` + exit 2; real bugs still show a traceback."""
    try:
        yield
    except IngestError as exc:  # every bad line, then the one-line summary
        _report_ingest_errors(exc, as_json)
    except NeuronGraphError as exc:
        _fail(exc, as_json)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError, PermissionError, FileExistsError) as exc:
        _fail(CliError("io_error", f"{exc.strerror or exc}: {exc.filename}" if exc.filename else str(exc)), as_json)
    except DATABASE_ERRORS as exc:
        _fail(CliError("store_error", f"database error: {exc}"), as_json)
    except UnicodeEncodeError as exc:  # a command-line argument that is not UTF-8 (bytes smuggled as surrogates)
        bad = exc.object[exc.start : exc.end] if isinstance(exc.object, str) else ""
        msg = (
            f"an argument is not valid Unicode text ({bad.encode('utf-8', 'backslashreplace').decode()!s}); pass UTF-8"
        )
        _fail(InvalidArgument(msg), as_json)


# --------------------------------------------------------------------- output
def print_json(obj) -> None:
    """Strict JSON (never NaN/Infinity), with C1 controls and bidi/format characters of stored text written as
    ``\\uXXXX`` escapes: the same value, plain on a terminal (``safe_text.json_safe``)."""
    print(json_safe(strict_dumps(obj, ensure_ascii=False, indent=2, default=str)))


def escape(text) -> str:
    """Stored text for rich markup: control and bidi/format characters written as visible ``\\x1b`` /
    ``\\u202e`` text (a repository's escape sequences never reach the terminal), lines kept."""
    return safe_markup(text, layout=True)


def json_opt():
    """The ``--json`` option every command takes."""
    return typer.Option(False, "--json", help="Print JSON to stdout.")


class RateColumn(ProgressColumn):
    """Items per second of a task (embedding, ingest): what tells a user whether to wait or stop."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f}/s", style="progress.data.speed")


PROGRESS_EVERY_S = 10.0  # a stderr that is not a terminal gets a plain progress line at least this often
PROGRESS_EVERY_ENV = "NGR_PROGRESS_EVERY"  # seconds, overrides PROGRESS_EVERY_S (tests use 0.2)
_MIN_EVERY_S = 0.05


def progress_every() -> float:
    """Seconds between plain progress lines: ``NGR_PROGRESS_EVERY`` when it is a positive number, else
    :data:`PROGRESS_EVERY_S` (a bad value is ignored: progress is no reason to refuse an ingest)."""
    raw = os.environ.get(PROGRESS_EVERY_ENV, "").strip()
    try:
        every = float(raw) if raw else PROGRESS_EVERY_S
    except ValueError:
        return PROGRESS_EVERY_S
    return max(_MIN_EVERY_S, every) if math.isfinite(every) and every > 0 else PROGRESS_EVERY_S


def _clock(seconds: float | None) -> str:
    if seconds is None or not math.isfinite(seconds):
        return "?"
    s = int(round(seconds))
    return f"{s // 3600}:{s // 60 % 60:02d}:{s % 60:02d}"


def progress_line(task: Task) -> str:
    """One plain line for a task: ``reading git: 1,500/3,000 (50%), 812/s, elapsed 0:00:02, ETA 0:00:02``."""
    try:
        label = Text.from_markup(task.description).plain
    except Exception:  # a description that is not valid markup is shown as it is
        label = task.description
    done, total = task.completed, task.total
    count = f"{done:,.0f}/{total:,.0f} ({100 * done / total:.0f}%)" if total else f"{done:,.0f}/?"
    elapsed = task.finished_time if task.finished else task.elapsed
    speed = task.finished_speed or task.speed or (done / elapsed if elapsed and elapsed >= 1 else None)
    parts = [f"{label}: {count}"]
    if speed and done > 1:  # no rate for a single step (the write transaction)
        parts.append(f"{speed:,.1f}/s" if speed < 10 else f"{speed:,.0f}/s")
    parts.append(f"elapsed {_clock(elapsed)}")
    if task.finished:
        parts.append("done")
    else:
        parts.append(f"ETA {_clock((total - done) / speed) if total and speed else '?'}")
    return ", ".join(parts)


class LoggedProgress(Progress):
    """A progress display that also serves a stderr that is not a terminal (a log file, ``nohup``, a pipe).

    There rich draws nothing until the display stops, so a background ingest said nothing for its whole
    run.  On such a console this writes plain lines (no ANSI codes, each flushed): one when a stage starts
    and one when it ends, and from a background thread at least every :func:`progress_every` seconds
    (10 s; ``NGR_PROGRESS_EVERY``) the running stage's done/total, rate, elapsed time and ETA.  On a
    terminal it is rich's display and nothing else."""

    def __init__(self, *columns: Any, every: float | None = None, **kwargs: Any) -> None:
        super().__init__(*columns, **kwargs)
        self.plain = not self.disable and (not self.console.is_terminal or self.console.is_dumb_terminal)
        self.every = every if every is not None else progress_every()
        self._halt = threading.Event()
        self._beat: threading.Thread | None = None
        self._write = threading.Lock()
        self._last_line = time.monotonic()
        self._ended: set[TaskID] = set()

    def start(self) -> None:
        super().start()
        if self.plain and self._beat is None:
            self._halt.clear()
            self._beat = threading.Thread(target=self._heartbeat, name="ngr-progress-log", daemon=True)
            self._beat.start()

    def stop(self) -> None:
        beat, self._beat = self._beat, None
        if beat is not None:
            self._halt.set()
            beat.join()
        super().stop()

    def add_task(
        self,
        description: str,
        start: bool = True,
        total: float | None = 100.0,
        completed: int = 0,
        visible: bool = True,
        **fields: Any,
    ) -> TaskID:
        task_id = super().add_task(description, start, total, completed, visible, **fields)
        if self.plain and visible and self.live.is_started and not (total and completed >= total):
            self._log([task_id])  # a stage starts: say so at once (one born complete is said done by update)
        return task_id

    def update(self, task_id: TaskID, **kwargs: Any) -> None:
        super().update(task_id, **kwargs)
        if self.plain and task_id not in self._ended and self.live.is_started:
            with self._lock:
                task = self._tasks.get(task_id)
                ended = task is not None and task.finished and task.visible
            if ended:  # a stage ends: its count, rate and time
                self._ended.add(task_id)
                self._log([task_id])

    def _log(self, task_ids: list[TaskID], note: str = "") -> None:
        with self._lock:
            lines = [progress_line(self._tasks[t]) + note for t in task_ids if t in self._tasks]
        if not lines:
            return
        stamp = time.strftime("%H:%M:%S")
        with self._write:
            try:
                f = self.console.file
                for line in lines:
                    f.write(f"[{stamp}] progress: {line}\n")
                f.flush()
            except (OSError, ValueError):  # a closed or broken stderr never stops the work
                pass
            self._last_line = time.monotonic()

    def _heartbeat(self) -> None:
        wait = self.every
        while not self._halt.wait(wait):
            quiet = time.monotonic() - self._last_line
            if quiet < self.every:  # a stage line was written meanwhile
                wait = self.every - quiet
                continue
            with self._lock:
                shown = [t for t in self._tasks.values() if t.visible]
                running = [t.id for t in shown if not t.finished]
            if running:
                self._log(running)
            else:  # between stages: the last one, and that the command still works
                self._log([t.id for t in shown[-1:]], "; working on the next step")
            wait = self.every


def progress() -> Progress:
    """A progress display on stderr, so ``--json`` output on stdout can be piped: done/total, rate, elapsed
    and time left (plain lines at least every 10 s where stderr is not a terminal: :class:`LoggedProgress`)."""
    return LoggedProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err,
        transient=False,
    )


def stage_reporter(prog: Progress, labels: dict[str, str]):
    """``progress(stage, done, total)`` for an ingest (``sync_source``, ``write_jsonl``): one bar per stage,
    added when it starts, labelled from ``labels`` (the stage name otherwise)."""
    tasks: dict[str, TaskID] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = prog.add_task(labels.get(stage, stage), total=total or None, completed=done)
        prog.update(tasks[stage], completed=done, total=total or None)

    return on_progress


def end_bulk_load(engine: Engine, prog: Progress) -> dict | None:
    """End a PostgreSQL bulk load now, behind its own progress line: its HNSW build (~85 s at 100k vectors)
    would otherwise be a silent wait inside the engine's close.  The build's report, or None (no load)."""
    finish = getattr(engine.store, "finish_bulk", None)
    bulk = getattr(engine.store, "bulk", None)
    if finish is None or bulk is None or not bulk.active:
        return None
    task = prog.add_task("building the vector index (HNSW, after the bulk load)", total=None)
    built = finish()
    prog.update(task, completed=1, total=1)
    return built


def path_str(p: dict) -> str:
    """One explanation path of a hit as ``a -[rel]-> b -[rel]-> c``."""
    hops = " ".join(f"-[{e['rel']}]-> {e['dst']}" for e in p["edges"])
    return f"{p['nodes'][0]} {hops}"


# --------------------------------------------------------------------- options
def int_option(raw: str, option: str) -> int:
    """A whole-number option parsed here, so ``--limit ten`` is ``error[invalid_argument]`` (exit 2, --json
    aware) like every other bad value, not click's usage box; the range is the engine's to check."""
    if not re.fullmatch(r"[+-]?[0-9]{1,12}", raw.strip()):
        raise InvalidArgument(f"{option} {raw!r}: expected a whole number, e.g. {option} 10")
    return int(raw.strip())


def choose_systems(known: dict, wanted: list[str] | None) -> dict:
    """The benchmark systems named by repeated ``--system`` (all when none); unknown names are an error."""
    if not wanted:
        return known
    unknown = sorted(set(wanted) - set(known))
    if unknown:
        raise InvalidArgument(f"unknown system(s) {unknown}; known: {sorted(known)}")
    return {k: v for k, v in known.items() if k in wanted}


is_store_url = is_postgres_url  # ``--db postgresql://…``: a server store, not a file


def check_db_path(db: str) -> str:
    if is_store_url(db):  # a PostgreSQL store: no file to check
        return db
    if db == ":memory:":
        raise CliError("invalid_argument", "--db :memory: would be lost when the command exits; give a file path")
    p = Path(db).expanduser()
    if p.is_dir():
        raise CliError("invalid_argument", f"--db {db} is a directory; give a database file path, e.g. {p / 'ngr.db'}")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise CliError("invalid_argument", f"--db {db}: {parent} is not a directory")
            break
    return str(p)


def quiet_model_loading() -> None:
    """The model libraries print progress bars and notices while loading; keep stderr for our own output."""
    for k, v in (
        ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
        ("TRANSFORMERS_VERBOSITY", "error"),
        ("TOKENIZERS_PARALLELISM", "false"),
        ("HF_HUB_OFFLINE", "1"),
        ("TRANSFORMERS_OFFLINE", "1"),
    ):
        os.environ.setdefault(k, v)


# --------------------------------------------------------------------- context
@dataclass
class Ctx:
    """The root options (``--db``, ``--embedder``, ``--reembed``), shared by every command."""

    db: str
    db_explicit: bool
    embedder: str | None
    reembed: bool = False
    reembed_limit: int | None = REEMBED_LIMIT  # nodes an open may embed again (None with --reembed)

    @classmethod
    def from_env(cls) -> Ctx:
        """The root options when no ``ngr`` root ran (``python -m neurongraph.mcp``): the environment's."""
        return cls(
            db=os.environ.get("NGR_DB") or DEFAULT_DB,
            db_explicit="NGR_DB" in os.environ,
            embedder=os.environ.get("NGR_EMBEDDER") or None,
        )

    def db_path(self) -> str:
        return check_db_path(self.db)

    def existing_db_path(self) -> str:
        """The database path, which must already hold a store (read-only commands)."""
        path = self.db_path()
        if not is_store_url(path) and not Path(path).exists():
            raise CliError("no_store", f"no store at {path}; run `ngr ingest FILE` first (or pass --db)")
        return path

    def open_store(self, path: str | None = None) -> Store:
        return open_store(path or self.db_path())

    def make_embedder(self) -> Embedder:
        """The command line's embedder; ``make_embedder`` validates the spec (error[invalid_argument])."""
        quiet_model_loading()
        return make_embedder(self.embedder)


def ctx_of(ctx: typer.Context) -> Ctx:
    """The root options of this invocation."""
    return ctx.find_root().obj


def on_ledger(c: Ctx, call: Callable[[Learning], Any]) -> Any:
    """Run ``call(learning)`` with the learning service over a bare store: ledgers need no embedder or index
    (``ngr trace``, ``ngr traces``, ``ngr feedback failure``)."""
    with closing(c.open_store(c.existing_db_path())) as store:
        return call(Learning(store))


def bench_db(c: Ctx, db: str | None) -> str | None:
    """The store a benchmark builds or reuses: the command's own ``--db``, else the global ``--db`` (or
    ``NGR_DB``) when one was given, else None: the benchmark's own cache file.  (``ngr --db COPY bench
    history`` ignored COPY and started a fresh ingest into the cache.)"""
    if db:
        return check_db_path(db)
    return c.db_path() if c.db_explicit else None


def build_engine(
    c: Ctx, path: str | None = None, *, store: Store | None = None, embedder: Embedder | None = None
) -> Engine:
    """The store at ``path`` (default: ``--db``; or an already open ``store``) with an engine over it, built
    with the command line's embedder (or ``embedder``); if building the engine fails, the store is closed
    before the error propagates.  The caller owns the engine: :func:`open_engine` is the usual way to
    hold one."""
    store = store or c.open_store(path)
    try:
        emb = embedder or c.make_embedder()
        if not c.reembed:
            eng = Engine(store, emb, reembed_limit=c.reembed_limit)
        else:
            with progress() as prog:  # --reembed: opening may embed the whole store again; show it
                task = prog.add_task("re-embedding the store (--reembed)", total=None)

                def on_embed(done: int, total: int) -> None:
                    prog.update(task, completed=done, total=total)

                eng = Engine(store, emb, reembed_limit=None, progress=on_embed)
        eng.widen_progress = cross_lingual_progress  # the first CJK question on an English store: shown
        return eng
    except BaseException:
        store.close()
        raise


@contextmanager
def cross_lingual_progress() -> Iterator[Callable[[int, int], None]]:
    """The progress display of the one-off embedding a first Japanese/Korean/Chinese question starts on a
    store kept on the English model (index/multilingual.py ``CrossLingual``)."""
    with progress() as prog:
        task = prog.add_task("cross-lingual vectors (once per store)", total=None)
        yield lambda done, total: prog.update(task, completed=done, total=total)


@contextmanager
def open_engine(
    c: Ctx, path: str | None = None, *, store: Store | None = None, embedder: Embedder | None = None
) -> Iterator[Engine]:
    """``with open_engine(c, path) as eng:`` — :func:`build_engine`, closed (with its store) when the
    block ends, whether it ends normally or by an error."""
    eng = build_engine(c, path, store=store, embedder=embedder)
    try:
        yield eng
    finally:
        eng.close()
