"""Small helpers the SQLite store's modules share."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

__all__ = ["CHUNK", "chunks", "marks"]

T = TypeVar("T")

CHUNK = 500  # ids per IN (...) lookup, well under SQLite's variable limit


def chunks(seq: Sequence[T], n: int = CHUNK) -> Iterator[list[T]]:
    """``seq`` in consecutive lists of at most ``n`` items."""
    for i in range(0, len(seq), n):
        yield list(seq[i : i + n])


def marks(n: int) -> str:
    """``?,?,...`` placeholders for an IN list of ``n`` parameters."""
    return ",".join("?" * n)
