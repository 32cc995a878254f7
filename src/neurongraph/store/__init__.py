"""The durable store: the contract (:mod:`.base`), the SQLite implementation (:mod:`.sqlite`, the default)
and the PostgreSQL one (:mod:`.postgres`, opened by URL); :func:`open_store` chooses by path."""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING

from .urls import is_postgres_url, redacted_url

if TYPE_CHECKING:
    from pathlib import Path

    from .base import Store

__all__ = ["DATABASE_ERRORS", "open_store", "is_postgres_url", "redacted_url"]

# Driver exceptions that mean "the database itself failed" (a corrupt file, disk I/O), not a caller's
# mistake: interfaces (CLI, MCP, HTTP) report them as ``store_error`` without naming a driver.  Each
# store implementation adds its driver's base exception here (the PostgreSQL store raises StoreError itself).
DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)


def open_store(path: str | Path) -> Store:
    """The store at ``path``: a ``postgresql://`` URL opens a PostgresStore (its driver errors are
    StoreError), anything else a SQLite file; psycopg is imported only for a URL."""
    if is_postgres_url(path):
        from .postgres import PostgresStore

        return PostgresStore(path)
    from .sqlite import SQLiteStore

    return SQLiteStore(path)
