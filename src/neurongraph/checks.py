"""Typed validation of option values: one place for the checks every options object (``SearchConfig``,
the graph channels, traversal strategies, ``LinkerConfig``) runs in its ``__post_init__``.

Every failure is :class:`~neurongraph.errors.InvalidArgument` (stable code ``invalid_argument``), never a
bare ``ValueError``.  Integers must be real ``int`` (not ``bool``); numbers real ``int``/``float`` (not
``bool``) and finite unless stated otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from .errors import InvalidArgument

__all__ = ["MAXIMA", "MAX_QUERY_CHARS", "check_choice", "check_int", "check_number", "check_query", "check_strings"]

# upper bounds of the integer options, by their option name (a beam of depth 1e5 took 5.9 GB; issue 17)
MAXIMA = {
    "limit": 1000,
    "lexical_k": 10_000,
    "dense_k": 10_000,
    "rrf_k": 10_000,
    "seeds": 100,
    "max_depth": 10,
    "explain_paths": 10,
    "beam_width": 256,
    "priming_scope": 10_000,
}


def check_int(name: str, v: Any, *, lo: int = 0, hi: int | None = None) -> int:
    """``v`` as an integer within ``lo..hi`` (``hi`` defaults to the documented maximum of ``name``)."""
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise InvalidArgument(f"{name} must be a non-negative integer, got {v!r}")
    if v < lo:
        raise InvalidArgument(f"{name} must be at least {lo}, got {v}")
    top = MAXIMA.get(name) if hi is None else hi
    if top is not None and v > top:
        raise InvalidArgument(f"{name} must be at most {top}, got {v}")
    return v


def check_number(
    name: str, v: Any, *, lo: float | None = None, hi: float | None = None, hi_open: bool = False, finite: bool = True
) -> float:
    """``v`` as a number within ``lo..hi`` (``lo..hi)`` with ``hi_open``); finite unless ``finite=False``
    (then only NaN and +inf are refused, for bounds such as "no score floor" = -inf)."""
    ok = isinstance(v, (int, float)) and not isinstance(v, bool)
    if ok and finite:
        ok = math.isfinite(v)
    elif ok:
        ok = not math.isnan(v) and v != math.inf
    if ok and lo is not None:
        ok = v >= lo
    if ok and hi is not None:
        ok = v < hi if hi_open else v <= hi
    if not ok:
        rng = "" if lo is None and hi is None else f" within {lo if lo is not None else '-inf'}..{hi}"
        if lo is not None and hi is None:
            rng = f" >= {lo}"
        kind = "a finite number" if finite else "a number"
        raise InvalidArgument(f"{name} must be {kind}{rng}{' (exclusive)' if hi_open else ''}, got {v!r}")
    return v


def check_choice(name: str, v: Any, choices: tuple[str, ...]) -> str:
    """``v``, one of the ``choices`` (the values of a ``Literal`` type)."""
    if not isinstance(v, str) or v not in choices:
        raise InvalidArgument(f"{name} must be one of {choices}, got {v!r}")
    return v


def check_strings(name: str, v: Any, *, allowed: Iterable[str] | None = None) -> tuple[str, ...]:
    """``v`` (one string or a list of them) as a tuple of non-empty strings, each among ``allowed`` if given."""
    if isinstance(v, str):
        v = (v,)
    if not isinstance(v, (list, tuple)):
        raise InvalidArgument(f"{name} must be a list of strings, got {type(v).__name__}")
    known = None if allowed is None else tuple(allowed)
    for x in v:
        if not isinstance(x, str) or not x.strip():
            raise InvalidArgument(f"{name} must hold non-empty strings, got {x!r}")
        if known is not None and x not in known:
            raise InvalidArgument(f"{name}: unknown value {x!r}; known: {list(known)}")
    return tuple(v)


MAX_QUERY_CHARS = 4000  # a search query's length limit (every interface checks it through check_query)


def check_query(query: Any) -> str:
    """A search query: non-empty text, valid Unicode (no lone surrogates from a bad escape or a command
    line), at most ``MAX_QUERY_CHARS`` characters."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgument("query must be a non-empty string")
    try:
        query.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(f"query is not valid Unicode text (position {exc.start}); pass UTF-8 text") from None
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is longer than {MAX_QUERY_CHARS} characters")
    return query
