"""A part of a named year in a question: "the first quarter of 2023", "the second half of 2024", "the last 3
months of 2025", "2020's second half", "Q3 2022", "H1 2024" -> one ``[start, end)`` window.

Why apart from the relative phrases (timephrase.py): "the last 3 months of 2023" read as "the last 3 months"
counts back from today (or the history's newest commit) and then meets 2023 in an empty window, a count of 0
that looks like an answer; "the first half of 2024" read as "2024" is the whole year.  Read first, the whole
phrase is its part of the year.
"""

from __future__ import annotations

import datetime as dt
import re

__all__ = ["PART", "part_of_year"]

_NUMBER_WORDS = {
    w: i for i, w in enumerate("one two three four five six seven eight nine ten eleven twelve".split(), 1)
}
_ORDINALS = {"first": 1, "second": 2, "third": 3, "fourth": 4}

PART = re.compile(
    r"\b(?:the\s+)?(?P<which>first|second|third|fourth|last|final)\s+"
    rf"(?:(?P<n>\d{{1,2}}|{'|'.join(_NUMBER_WORDS)})\s+)?(?P<unit>quarter|half|months?|weeks?)\s+(?:of\s+)?"
    r"(?P<year>(?:19|20)\d\d)\b"
    # "2020's second half", "2019's first quarter"
    r"|\b(?P<year4>(?:19|20)\d\d)['’]s\s+(?P<which2>first|second|third|fourth|last|final)\s+"
    rf"(?:(?P<n2>\d{{1,2}}|{'|'.join(_NUMBER_WORDS)})\s+)?(?P<unit2>quarter|half|months?|weeks?)\b"
    r"|\b(?P<qh>[QH])(?P<k>[1-4])\s*(?P<year2>(?:19|20)\d\d)\b"
    r"|\b(?P<year3>(?:19|20)\d\d)\s*(?P<qh2>[QH])(?P<k2>[1-4])\b",
    re.I,
)


def part_of_year(m: re.Match) -> tuple[dt.date, dt.date] | None:
    """``[start, end)`` of the part of the year a :data:`PART` match names, or None when it names none ("the
    third half of 2023", "the second 3 months of 2023")."""
    if m.group("qh") or m.group("qh2"):
        year = int(m.group("year2") or m.group("year3"))
        kind, k = (m.group("qh"), int(m.group("k"))) if m.group("qh") else (m.group("qh2"), int(m.group("k2")))
        unit = "quarter" if kind.upper() == "Q" else "half"
        if unit == "half" and k > 2:
            return None
        return _span(year, unit, k)
    g = "2" if m.group("year4") else ""  # the possessive form's groups
    year, unit = int(m.group("year" + ("4" if g else ""))), m.group("unit" + g).lower().rstrip("s")
    which = m.group("which" + g).lower()
    last = which in ("last", "final")
    given = m.group("n" + g)
    raw = (given or "1").lower()
    n = int(raw) if raw.isdigit() else _NUMBER_WORDS[raw]
    if unit in ("quarter", "half"):
        if given:
            return None  # "the first 2 quarters of 2023": not read
        k = (4 if unit == "quarter" else 2) if last else _ORDINALS[which]
        return None if unit == "half" and k > 2 else _span(year, unit, k)
    if not last and which != "first" or n < 1:
        return None
    start, end = dt.date(year, 1, 1), dt.date(year + 1, 1, 1)
    if unit == "month":
        n = min(n, 12)
        return (dt.date(year, 13 - n, 1), end) if last else (start, _months_after(start, n))
    n = min(n, 52)
    return (end - dt.timedelta(weeks=n), end) if last else (start, start + dt.timedelta(weeks=n))


def _span(year: int, unit: str, k: int) -> tuple[dt.date, dt.date]:
    """The ``k``-th quarter or half of ``year``."""
    months = 3 if unit == "quarter" else 6
    start = dt.date(year, 1 + months * (k - 1), 1)
    return start, _months_after(start, months)


def _months_after(d: dt.date, n: int) -> dt.date:
    y, m = divmod(d.year * 12 + d.month - 1 + n, 12)
    return dt.date(y, m + 1, 1)
