"""PostgreSQL driver failures as the store's own :class:`~neurongraph.errors.StoreError`: what the PostgreSQL
store (postgres.py) and its copies (postgres_copy.py) raise, so no interface needs to know psycopg."""

from __future__ import annotations

import functools
import inspect

import psycopg
from psycopg_pool import PoolTimeout

from ..errors import StoreError

__all__ = ["DRIVER_ERRORS", "raising_store_errors", "store_error"]

DRIVER_ERRORS = (psycopg.Error, PoolTimeout)  # what the store turns into StoreError


def store_error(exc: BaseException) -> StoreError:
    return StoreError(f"database error: {str(exc).strip()}")


def raising_store_errors(fn):
    """``fn`` (a function or a generator function) with a driver failure raised as :class:`StoreError`."""
    if inspect.isgeneratorfunction(fn):

        @functools.wraps(fn)
        def rows(*args, **kwargs):
            try:
                yield from fn(*args, **kwargs)
            except DRIVER_ERRORS as exc:
                raise store_error(exc) from exc

        return rows

    @functools.wraps(fn)
    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except DRIVER_ERRORS as exc:
            raise store_error(exc) from exc

    return call
