"""Small helpers the SQLite store's modules share."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TypeVar

__all__ = ["CHUNK", "FILE_MODE", "DIR_MODE", "chunks", "marks", "private_dirs", "private_file"]

FILE_MODE = 0o600  # a store and its side files (-wal, -shm, the snapshot): every stored query is in them
DIR_MODE = 0o700  # a folder this project creates for a store (``.ngr``)

T = TypeVar("T")

CHUNK = 500  # ids per IN (...) lookup, well under SQLite's variable limit


def chunks(seq: Sequence[T], n: int = CHUNK) -> Iterator[list[T]]:
    """``seq`` in consecutive lists of at most ``n`` items."""
    for i in range(0, len(seq), n):
        yield list(seq[i : i + n])


def marks(n: int) -> str:
    """``?,?,...`` placeholders for an IN list of ``n`` parameters."""
    return ",".join("?" * n)


def private_dirs(folder: Path) -> None:
    """Create ``folder`` and any missing parents with mode 0700, whatever the umask (an existing folder
    keeps its mode: it is somebody's choice)."""
    missing: list[Path] = []
    p = folder
    while not p.exists():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=DIR_MODE)
        except FileExistsError:  # another process made it meanwhile: its mode is its creator's
            continue
        os.chmod(d, DIR_MODE)  # mkdir's mode is masked by the umask; chmod is not


def private_file(path: Path) -> None:
    """Create ``path`` empty with mode 0600 whatever the umask, unless it exists.  SQLite gives its
    ``-wal`` and ``-shm`` files the mode of the database file, so they are private too."""
    if path.exists():
        return
    private_dirs(path.parent)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), FILE_MODE)
    except FileExistsError:
        return
    except OSError:  # a folder we may not write: SQLite's own open says why, as before
        return
    try:
        os.fchmod(fd, FILE_MODE)
    finally:
        os.close(fd)
