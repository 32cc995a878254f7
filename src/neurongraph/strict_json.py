"""The one parser for JSON a user hands us (JSONL ingest, GitHub exports, HTTP bodies): strict RFC 8259.

Why its own module: Python's ``json`` accepts two things JSON does not promise — ``NaN``/``Infinity``
literals and repeated keys in one object, where the last one silently wins (``{"id": "a", "id": "b"}``
is node ``b``).  Both are refused here with the key and, where the text is at hand, the line and column
of the object that repeats it, so every interface rejects the same input with the same message.
"""

from __future__ import annotations

import json
from typing import Any

from .errors import InvalidArgument

__all__ = ["StrictJSONError", "loads", "raw_decode", "decoder", "line_col"]


class StrictJSONError(InvalidArgument):
    """JSON that parses in Python but breaks the strict rules (a repeated key, a non-finite literal).
    ``key``: the repeated key (None for a non-finite number); ``pos``: the offset of its repetition, or -1."""

    def __init__(self, message: str, key: str | None = None, pos: int = -1):
        super().__init__(message)
        self.key, self.pos = key, pos


class _Repeated(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


class _NonFinite(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen: set[str] = set()
        for k, _ in pairs:
            if k in seen:
                raise _Repeated(k)
            seen.add(k)
    return out


def _constant(name: str):
    raise _NonFinite(name)


def decoder() -> json.JSONDecoder:
    """A decoder that raises on a repeated key and on NaN/Infinity (see :func:`raw_decode` for messages)."""
    return json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)


_DECODER = decoder()


def _short(key: str) -> str:
    return repr(key if len(key) <= 80 else key[:77] + "...")


def _repeat_at(text: str, start: int, key: str) -> int:
    """Offset of the second ``"key"`` after ``start``, or -1 (best effort: a key written with escapes is
    not found, and the message then names only the key)."""
    needle = json.dumps(key, ensure_ascii=False)
    first = text.find(needle, start)
    return text.find(needle, first + 1) if first >= 0 else -1


def line_col(text: str, pos: int) -> tuple[int, int]:
    """(line, column), both from 1, of offset ``pos`` in ``text``."""
    return text.count("\n", 0, pos) + 1, pos - text.rfind("\n", 0, pos)


def raw_decode(text: str, pos: int = 0) -> tuple[Any, int]:
    """``json.JSONDecoder.raw_decode`` with the strict rules; a repeated key or a non-finite literal is
    :class:`StrictJSONError` (its message names the key and its line), other errors stay
    ``json.JSONDecodeError``."""
    try:
        return _DECODER.raw_decode(text, pos)
    except _Repeated as exc:
        at = _repeat_at(text, pos, exc.key)
        where = " (line {}, column {})".format(*line_col(text, at)) if at >= 0 else ""
        raise StrictJSONError(
            f"duplicate key {_short(exc.key)} in one JSON object{where}; "
            "JSON objects must not repeat a key (the last one would silently win)",
            exc.key,
            at,
        ) from None
    except _NonFinite as exc:
        raise StrictJSONError(f"non-finite number {exc.args[0]} is not allowed (JSON has no NaN/Infinity)") from None


def loads(text: str | bytes) -> Any:
    """One JSON document, strictly (see :func:`raw_decode`); trailing text is a ``json.JSONDecodeError``."""
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text).decode("utf-8")
    value, end = raw_decode(text, len(text) - len(text.lstrip(" \t\r\n")))
    rest = text[end:]
    if rest.strip(" \t\r\n"):
        raise json.JSONDecodeError("Extra data", text, end + len(rest) - len(rest.lstrip(" \t\r\n")))
    return value
