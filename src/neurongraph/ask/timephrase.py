"""Time phrases of a question → one ``[since, until)`` window on ``time`` (ISO-8601 UTC text).

Why a window and not the translator's single ``before/after <date>``: developers ask "in 2023", "last
month", "between March and May 2022", "since v2.0"; each must become a filter, and a phrase that looks like
time but is not understood must be *said*, never dropped (an answer over all time that looks scoped is
wrong without saying so).  Relative phrases count from ``now`` (UTC).  A tag (``since v2.0``) resolves
through a ``tag:<name>`` / ``release:<name>`` node's time when the store has one, else it is reported.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field

__all__ = ["TimeWindow", "parse_time"]

MONTHS = {m.lower(): i for i, m in enumerate(calendar.month_name) if m} | {
    m.lower(): i for i, m in enumerate(calendar.month_abbr) if m
}
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
DATE = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}-\d{{2}}|(?:{_MON})\.?\s+\d{{4}}|\d{{4}})"
_BETWEEN = re.compile(rf"\b(?:between|from)\s+({DATE})\s+(?:and|to|until|through)\s+({DATE})\b", re.I)
_IN = re.compile(rf"\b(?:in|during|throughout|from|of)\s+({DATE})\b", re.I)
_BOUND = re.compile(rf"\b(before|after|since|until|till|prior to|as of)\s+({DATE})\b", re.I)
_REL = re.compile(r"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+(\d{1,4})\s+(day|week|month|year)s?\b", re.I)
_REL1 = re.compile(r"\b(last|this|past)\s+(week|month|year)\b", re.I)
_DAYWORD = re.compile(r"\b(today|yesterday)\b", re.I)
_TAG = re.compile(r"\b(since|after|before|until)\s+(v?\d+(?:\.\d+)+\w*|v\d+\w*|[\w.-]*\d[\w.-]*-rc\d+)\b", re.I)
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# words that say "time" even when no rule above read them
_TIMEY = re.compile(
    r"\b(?:(?<!most )recent(?:ly)?(?!\s+\d)|lately|ago|quarter|"
    r"last\s+(?:release|tag|version|sprint)|this\s+(?:quarter|release)|"
    r"(?:since|before|after|until|during)\s+(?!the\b)[\w.-]+)",
    re.I,
)


@dataclass
class TimeWindow:
    """The time bounds a question's words give ("last month", "before 2024"), and what could not be read."""

    since: str | None = None  # inclusive, ISO text
    until: str | None = None  # exclusive, ISO text
    phrases: list[str] = field(default_factory=list)  # what was read
    not_understood: list[str] = field(default_factory=list)
    spans: list[tuple[int, int]] = field(default_factory=list)

    def describe(self) -> str:
        if self.since and self.until:
            return f"from {self.since[:10]} to before {self.until[:10]}"
        if self.since:
            return f"from {self.since[:10]}"
        if self.until:
            return f"before {self.until[:10]}"
        return "all time"

    @property
    def active(self) -> bool:
        return bool(self.since or self.until)


def _start_end(text: str) -> tuple[dt.date, dt.date]:
    """A date phrase's first day and the day after its last (year, month or day)."""
    t = text.strip().rstrip(".").lower()
    m = re.fullmatch(rf"({_MON})\.?\s+(\d{{4}})", t)
    if m:
        y, mo = int(m.group(2)), MONTHS[m.group(1)]
        return dt.date(y, mo, 1), _next_month(dt.date(y, mo, 1))
    parts = [int(p) for p in t.split("-")]
    if len(parts) == 1:
        return dt.date(parts[0], 1, 1), dt.date(parts[0] + 1, 1, 1)
    if len(parts) == 2:
        return dt.date(parts[0], parts[1], 1), _next_month(dt.date(parts[0], parts[1], 1))
    d = dt.date(*parts)
    return d, d + dt.timedelta(days=1)


def _next_month(d: dt.date) -> dt.date:
    return dt.date(d.year + (d.month == 12), d.month % 12 + 1, 1)


def _minus(now: dt.date, n: int, unit: str) -> dt.date:
    if unit == "day":
        return now - dt.timedelta(days=n)
    if unit == "week":
        return now - dt.timedelta(weeks=n)
    months = n * (12 if unit == "year" else 1)
    y, m = divmod(now.year * 12 + now.month - 1 - months, 12)
    return dt.date(y, m + 1, min(now.day, calendar.monthrange(y, m + 1)[1]))


def _iso(d: dt.date) -> str:
    return d.isoformat()


class _Reader:
    """One pass per kind of phrase over the question; a span read once is never read again."""

    def __init__(self, question: str, today: dt.date, tag_time):
        self.q, self.today, self.tag_time = question, today, tag_time
        self.w = TimeWindow()
        self.taken: list[tuple[int, int]] = []

    def free(self, m: re.Match) -> bool:
        return not any(s < m.end() and m.start() < e for s, e in self.taken)

    def take(self, m: re.Match, since: dt.date | str | None, until: dt.date | str | None) -> None:
        w = self.w
        self.taken.append((m.start(), m.end()))
        w.phrases.append(m.group(0))
        if since is not None:
            s = since if isinstance(since, str) else _iso(since)
            w.since = max(w.since, s) if w.since else s
        if until is not None:
            u = until if isinstance(until, str) else _iso(until)
            w.until = min(w.until, u) if w.until else u

    def tags(self) -> None:
        for m in _TAG.finditer(self.q):
            if re.fullmatch(r"\d{4}", m.group(2)) or not self.free(m):
                continue
            name = m.group(2)
            t = self.tag_time(name) if self.tag_time else None
            if t is None:
                self.taken.append((m.start(), m.end()))
                self.w.not_understood.append(f"'{m.group(0)}' (no tag or release {name} in the store; not applied)")
            elif m.group(1).lower() in ("since", "after"):
                self.take(m, t, None)
            else:
                self.take(m, None, t)

    def between(self) -> None:
        for m in _BETWEEN.finditer(self.q):
            if self.free(m):
                try:
                    a, _ = _start_end(m.group(1))
                    _, b = _start_end(m.group(2))
                except ValueError:
                    continue
                self.take(m, a, b)

    def relative(self) -> None:
        today = self.today
        for m in _REL.finditer(self.q):
            if self.free(m):
                self.take(m, _minus(today, int(m.group(1)), m.group(2).lower()), today + dt.timedelta(days=1))
        for m in _REL1.finditer(self.q):
            if self.free(m):
                self.take(m, *_calendar_span(today, m.group(1).lower(), m.group(2).lower()))
        for m in _DAYWORD.finditer(self.q):
            if self.free(m):
                d = today - dt.timedelta(days=1 if m.group(1).lower() == "yesterday" else 0)
                self.take(m, d, d + dt.timedelta(days=1))

    def bounds(self) -> None:
        for m in _BOUND.finditer(self.q):
            if not self.free(m):
                continue
            try:
                a, b = _start_end(m.group(2))
            except ValueError:
                continue
            op = m.group(1).lower()
            if op in ("before", "prior to"):
                self.take(m, None, a)
            elif op in ("until", "till", "as of"):
                self.take(m, None, b)
            else:  # after: from the period's end; since: from its start
                self.take(m, b if op == "after" else a, None)

    def periods(self) -> None:
        for m in _IN.finditer(self.q):
            if self.free(m):
                try:
                    a, b = _start_end(m.group(1))
                except ValueError:
                    continue
                if 1970 <= a.year <= 2100:
                    self.take(m, a, b)

    def leftovers(self) -> None:
        for m in _TIMEY.finditer(self.q):
            if self.free(m) and not _ISO.search(m.group(0)):
                self.w.not_understood.append(f"'{m.group(0)}' (not read as a time filter)")


def _calendar_span(today: dt.date, which: str, unit: str) -> tuple[dt.date, dt.date]:
    """ "last/this/past week|month|year": the calendar period before this one, this one so far, or a
    rolling period ending today."""
    end = today + dt.timedelta(days=1)
    if which == "past":
        return _minus(today, 1, unit), end
    if unit == "week":
        start = today - dt.timedelta(days=today.weekday())
        prev = start - dt.timedelta(weeks=1)
    elif unit == "month":
        start = today.replace(day=1)
        prev = _minus(start, 1, "month")
    else:
        start = dt.date(today.year, 1, 1)
        prev = dt.date(today.year - 1, 1, 1)
    return (prev, start) if which == "last" else (start, end)


def parse_time(question: str, now: dt.datetime | None = None, tag_time=None) -> TimeWindow:
    """The window the question's time phrases ask for.  ``tag_time(name) -> ISO | None`` resolves tags."""
    r = _Reader(question, (now or dt.datetime.now(dt.UTC)).date(), tag_time)
    for step in (r.tags, r.between, r.relative, r.bounds, r.periods, r.leftovers):
        step()
    r.w.spans = r.taken
    return r.w
