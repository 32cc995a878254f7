"""The durable store: the contract (:mod:`.base`) and the SQLite implementation (:mod:`.sqlite`)."""

from __future__ import annotations

import sqlite3

__all__ = ["DATABASE_ERRORS"]

# Driver exceptions that mean "the database itself failed" (a corrupt file, disk I/O), not a caller's
# mistake: interfaces (CLI, MCP, HTTP) report them as ``store_error`` without naming a driver.  Each
# store implementation adds its driver's base exception here.
DATABASE_ERRORS: tuple[type[Exception], ...] = (sqlite3.DatabaseError,)
