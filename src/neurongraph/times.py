"""Event time and source of a node, and the time values search filters accept.

A node's **event time** is ``metadata["time"]``: when the thing happened (a commit's author or commit
time, an issue's ``created_at``), as epoch seconds (a number) or an ISO-8601 string.  Its **source**
is ``metadata["source"]``: the repository or site it comes from (a string).  The store extracts both
into columns (``nodes.event_time``, ``nodes.source``; migration ``0004_event_time``) and the engine
keeps them as arrays for the ``as_of`` / ``since`` / ``until`` / ``sources`` search filters.

One parser for every boundary: a number (or a string of digits, optionally with a fraction) is
epoch seconds; any other string must be ISO-8601 (``2024-05-01``, ``2024-05-01T12:00:00Z``,
``2024-05-01T14:00:00+02:00``); a time without a zone is UTC.  The SQL backfill of the migration
follows the same rules.
"""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime

__all__ = ["to_epoch", "event_time_of", "source_of", "TIME_FIELD", "SOURCE_FIELD"]

TIME_FIELD = "time"
SOURCE_FIELD = "source"
_NUMBER = re.compile(r"\d+(\.\d+)?")


def to_epoch(value) -> float:
    """Epoch seconds of ``value``: a finite number, a digit string, an ISO-8601 string or a
    ``datetime``.  Raises ``ValueError`` (with the reason) for anything else."""
    if isinstance(value, bool):
        raise ValueError(f"expected epoch seconds or an ISO-8601 string, got {value!r}")
    if isinstance(value, (int, float)):
        v = float(value)
        if not math.isfinite(v):
            raise ValueError(f"expected a finite number of epoch seconds, got {value!r}")
        return v
    if isinstance(value, datetime):
        dt = value
    elif isinstance(value, str):
        s = value.strip()
        if _NUMBER.fullmatch(s):
            return float(s)
        try:
            dt = datetime.fromisoformat(s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s)
        except ValueError:
            raise ValueError(
                f"expected epoch seconds or an ISO-8601 date/time (e.g. 2024-05-01T12:00:00Z), got {value!r}"
            ) from None
    else:
        raise ValueError(f"expected epoch seconds or an ISO-8601 string, got {type(value).__name__} {value!r}")
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return dt.timestamp()


def event_time_of(metadata) -> float | None:
    """The node's event time in epoch seconds, or ``None`` when it has none (or one that does not
    parse: such a node is treated as timeless, i.e. always visible to ``as_of``)."""
    if not isinstance(metadata, dict):
        return None
    v = metadata.get(TIME_FIELD)
    if v is None:
        return None
    try:
        return to_epoch(v)
    except ValueError:
        return None


def source_of(metadata) -> str | None:
    """The node's source (repository / site name), or ``None``."""
    if not isinstance(metadata, dict):
        return None
    v = metadata.get(SOURCE_FIELD)
    return v if isinstance(v, str) and v else None
