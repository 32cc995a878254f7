"""Time phrases of a question → one ``[since, until)`` window on ``time`` (ISO-8601 UTC text).

Why a window and not the translator's single ``before/after <date>``: developers ask "in 2023", "last
month", "between March and May 2022", "since v2.0"; each must become a filter, and a phrase that looks like
time but is not understood must be *said*, never dropped (an answer over all time that looks scoped is
wrong without saying so).  Relative phrases count from ``now`` (UTC).  A tag phrase (``since v2.0``,
``before v2.0``, ``between v1.1 and v1.2``, ``in v6.1``) is no date: it becomes a set of commits by
ancestry (:mod:`.tags`, ``commits``), and a tag the store lacks is reported, never read as a date.
"""

from __future__ import annotations

import calendar
import datetime as dt
import re
from dataclasses import dataclass, field

from .tags import looks_like_version
from .year_parts import PART, part_of_year

__all__ = ["TimeWindow", "parse_time"]

MONTHS = (
    {m.lower(): i for i, m in enumerate(calendar.month_name) if m}
    | {m.lower(): i for i, m in enumerate(calendar.month_abbr) if m}
    | {"sept": 9}
)
_MON = "|".join(sorted(MONTHS, key=len, reverse=True))
DATE = rf"(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{4}}-\d{{2}}|(?:{_MON})\.?\s+\d{{4}}|\d{{4}})"
_BETWEEN = re.compile(rf"\b(?:between|from)\s+({DATE})\s+(?:and|to|until|through)\s+({DATE})\b", re.I)
# "for 2025" too, but only a date or a year of this era ("for 1000 commits" is no period)
_IN = re.compile(
    rf"\b(?:(?:in|during|throughout|from|of)\s+|for\s+(?=(?:19|20)\d\d\b|(?:19|20)\d\d-|(?:{_MON})\.?\s+\d))({DATE})\b",
    re.I,
)
# "between March and June 2025": two months of the year named once, at the end
_MONTHS_OF = re.compile(  # "between March and June 2025", "sept-nov 2019", "in may to july 2018"
    rf"\b(?:(?:between|from|in|during|over)\s+)?({_MON})\.?(?:\s+(?:and|to|until|through|thru)\s+|\s*[-–]\s*)"
    rf"({_MON})\.?\s*,?\s+((?:19|20)\d\d)\b",
    re.I,
)
_BOUND = re.compile(rf"\b(before|after|since|until|till|prior to|as of)\s+({DATE})\b", re.I)
_REL = re.compile(r"\b(?:in\s+)?(?:the\s+)?(?:last|past)\s+(\d{1,4})\s+(day|week|month|year)s?\b", re.I)
_REL1 = re.compile(r"\b(last|this|past)\s+(week|month|year)\b", re.I)
_DAYWORD = re.compile(r"\b(today|yesterday)\b", re.I)
# "release 2.0", "v2.0", "the 8.1.0 release": a name, with its keyword before or after it
_TAGREF = r"((?:the\s+)?(?:(?:release|tag|version)\s+)?\w(?:[\w.+/-]*\w)?(?:\s+(?:release|tag|version)\b)?)"
_TAG_BETWEEN = re.compile(rf"\b(?:between|from)\s+{_TAGREF}\s+(?:and|to|until|through)\s+{_TAGREF}", re.I)
_HALF_BETWEEN = re.compile(rf"\b(?:between|from)\s+{_TAGREF}\s+(?:and|to|until|through)\s+[\w.'-]+", re.I)
_TAG_BOUND = re.compile(rf"\b(since|after|before|until|till|up to|prior to|as of)\s+{_TAGREF}", re.I)
_TAG_IN = re.compile(rf"\b(in|of|for|into)\s+{_TAGREF}", re.I)
# "what changed in click 8.1.8", "who contributed to 8.2.0", "what went into v2.0": the same, with the project's
# name before the version, or a verb of contributing before "to"
_TAG_IN_MORE = re.compile(
    r"\b(?:(in|of|for|into)\s+(?!(?:between|from|since|after|before|until|till|and|or|to)\b)[A-Za-z][\w-]*\s+"
    r"(v?\d[\w.+-]*\w)|"
    rf"(?:contribut\w*|went|gone|goes|landed|lands|merged|shipped)\s+((?:in)?to)\s+{_TAGREF})",
    re.I,
)
_KEYWORD = re.compile(r"^(?:the\s+)?(?:release|tag|version)\s+", re.I)
_KEYWORD_AFTER = re.compile(r"\s+(?:release|tag|version)$", re.I)
_THE = re.compile(r"^the\s+(?!(?:release|tag|version)\b)", re.I)
# "since the last release", "in the first tag": the newest / oldest stored tag (by its time), named by position
_ORDINAL = (
    r"(?:the\s+)?(?P<which>last|latest|newest|most\s+recent|current|first|oldest|earliest)\s+"
    r"(?:git\s+)?(?:release|tag|version)\b"
)
_TAG_ORDINAL = re.compile(rf"\b(?P<op>since|after|before|until|till|up to|prior to|as of|in|into)\s+{_ORDINAL}", re.I)
FIRST_WORDS = ("first", "oldest", "earliest")
_DATELIKE = re.compile(r"\d{4}(?:-\d{2}){0,2}")
_ISO = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
# words that say "time" even when no rule above read them
_TIMEY = re.compile(
    r"\b(?:(?<!most )recent(?:ly)?(?!\s+\d)|lately|ago|quarter|"
    r"last\s+(?:release|tag|version|sprint)|this\s+(?:quarter|release)|"
    r"(?:since|before|after|until|during)\s+(?!the\b)[\w.-]+|"
    # a day of the week or an hour is no window on dates ("on weekends", "on Fridays", "at night")
    r"(?:on\s+)?(?:week-?ends?|weekdays?|(?:mon|tues|wednes|thurs|fri|satur|sun)days?)|"
    r"(?:at|during\s+the)\s+night|in\s+the\s+(?:morning|evening|afternoon)|after\s+hours|business\s+hours)",
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
    commits: list[str] | None = None  # tag phrases: the commit ids they allow (or exclude, ``negated``)
    negated: bool = False
    tag_said: list[str] = field(default_factory=list)  # the tag phrases, in words
    # other conditions on the commits that the words give, each (Cypher on ``c``, in words): "fixes bugs"
    # (a fix subject), "more than 10 files"; every scoped match applies them (ask/devplan.py commit_match)
    conditions: list[tuple[str, str]] = field(default_factory=list)

    def describe(self) -> str:
        tags = "; ".join(self.tag_said)
        if self.since and self.until:
            dates = f"from {self.since[:10]} to before {self.until[:10]}"
        elif self.since:
            dates = f"from {self.since[:10]}"
        elif self.until:
            dates = f"before {self.until[:10]}"
        else:
            return tags or "all time"
        return f"{dates}; {tags}" if tags else dates

    @property
    def active(self) -> bool:
        return bool(self.since or self.until or self.commits is not None)


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


# said once when the releases a phrase names are commits titled by a version (tags.titled_releases)
_TITLED_SAID = "; a release here is the commit titled by its version (this history has no tags)"


class _Reader:
    """One pass per kind of phrase over the question; a span read once is never read again."""

    def __init__(self, question: str, today: dt.date, tags):
        self.q, self.today, self.graph = question, today, tags
        self.w = TimeWindow()
        self.taken: list[tuple[int, int]] = []
        self.mask = None  # the tag phrases' commits, over ``tags.ids``

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

    def _tag(self, text: str, strict: bool) -> tuple[str | None, str | None]:
        """``(stored name, None)``, ``(None, name)`` for a tag the store lacks, or ``(None, None)``: not a
        tag at all ("since the parser", "in 2023", "in the release notes"); a missing tag must look like a
        version, and with ``strict`` ("in X") also be named with a keyword ("in release 2.0") or a leading
        ``v`` ("in v2"): "in 3.11" is only a tag when the store has it."""
        text = _THE.sub("", text)
        keyword = bool(_KEYWORD.match(text) or _KEYWORD_AFTER.search(text))
        name = _KEYWORD_AFTER.sub("", _KEYWORD.sub("", text))
        if not keyword and _DATELIKE.fullmatch(name):
            return None, None
        stored = self.graph.name(name) if self.graph is not None else None
        if stored and stored in self.graph.tags:  # (a tag whose commit the store lacks names no commits)
            return stored, None
        named = looks_like_version(name) and (not strict or keyword or name[:1] in "vV")  # not "release notes"
        return None, (name if named else None)

    def _apply(self, m: re.Match, mask, said: str) -> None:
        if getattr(self.graph, "titled", False) and not any(_TITLED_SAID in s for s in self.w.tag_said):
            said += _TITLED_SAID
        self.taken.append((m.start(), m.end()))
        self.w.phrases.append(m.group(0))
        self.w.tag_said.append(said)
        self.mask = mask if self.mask is None else self.mask & mask

    def _missing(self, m: re.Match, name: str) -> None:
        self.taken.append((m.start(), m.end()))
        self.w.not_understood.append(f"'{m.group(0)}' (no tag or release {name} in the store; not applied)")

    def newest_tag(self, first: bool = False) -> tuple[str | None, str]:
        """The stored tag with the latest time (``first``: the earliest), ties to the larger name, and how it
        was chosen; None when the store has no tag.  "The last release" is the newest tag in the default
        branch's history (what ``git describe`` names), when the store knows that branch: a newer tag on a
        release branch or past ``HEAD`` is not the last release *of* it."""
        try:
            tags = self.graph.tags if self.graph is not None else None
            in_head = self.graph.in_head() if tags and not first else None
        except AttributeError:  # (LazyTags over a store without tags)
            return None, ""
        if not tags:
            return None, ""
        pick = min if first else max
        if in_head is not None and (mine := [n for n in tags if in_head[tags[n][0]]]):
            return pick(mine, key=lambda name: (tags[name][1], name)), ", the newest tag in HEAD's history"
        return pick(tags, key=lambda name: (tags[name][1], name)), f", the {'oldest' if first else 'newest'} tag"

    def _bound(self, m: re.Match, op: str, name: str, how: str = "") -> None:
        """Apply "since / before / until ``name``" (``how``: how the question named it, for the answer)."""
        g = self.graph
        if op in ("since", "after"):  # git log NAME..HEAD: the default branch's commits past NAME
            in_head = g.in_head()
            if in_head is None:
                self._apply(m, ~g.reach(name), f"since {name}{how} (not reachable from {name})")
            else:
                self._apply(m, ~g.reach(name) & in_head, f"since {name}{how} ({name}..HEAD)")
        elif op in ("before", "prior to"):
            mask = g.reach(name)
            mask[g.tags[name][0]] = False
            self._apply(m, mask, f"before {name}{how} (reachable from {name}, its own commit left out)")
        else:
            self._apply(m, g.reach(name), f"up to {name}{how} (reachable from {name})")

    def _in(self, m: re.Match, name: str, how: str = "") -> None:
        mask, prev = self.graph.release(name)
        since = f"not from {prev}" if prev else "no earlier tag"
        self._apply(m, mask, f"in {name}{how} (reachable from {name}, {since})")

    def ordinal_tags(self) -> None:
        """ "since the last release", "in the first tag": the newest (oldest) stored tag, then as if named."""
        for m in _TAG_ORDINAL.finditer(self.q):
            if not self.free(m):
                continue
            first = m.group("which").lower() in FIRST_WORDS
            name, how = self.newest_tag(first)
            if name is None:
                self.taken.append((m.start(), m.end()))
                self.w.not_understood.append(f"'{m.group(0)}' (the store holds no tags; not applied)")
                continue
            op = m.group("op").lower()
            if op in ("in", "into"):
                self._in(m, name, how)
            else:
                self._bound(m, op, name, how)

    def tags(self) -> None:
        """Tag phrases, as commit sets by ancestry: by position, between, since/before, then "in vX"."""
        self.ordinal_tags()
        g = self.graph
        for m in _TAG_BETWEEN.finditer(self.q):
            (a, ma), (b, mb) = self._tag(m.group(1), False), self._tag(m.group(2), False)
            if not self.free(m) or (a or ma) is None or (b or mb) is None:
                continue
            if a is None or b is None:
                self._missing(m, str(ma or mb))
                continue
            if g.tags[a][1] > g.tags[b][1]:
                a, b = b, a
            self._apply(m, g.reach(b) & ~g.reach(a), f"between {a} and {b} (reachable from {b}, not from {a})")
        for m in _HALF_BETWEEN.finditer(self.q):  # "between v7.0.0 and that": one end is no release
            if self.free(m) and any(self._tag(m.group(1), False)):
                self.taken.append((m.start(), m.end()))
                # (said as a range, not as the quoted words: a pointer back such as "that" is read as no window)
                end = m.group(0).split()[-1]
                self.w.not_understood.append(
                    f"a range from {m.group(1)} to '{end}' (no tag or release '{end}'; not applied)"
                )
        for m in _TAG_BOUND.finditer(self.q):
            name, missing = self._tag(m.group(2), False)
            if not self.free(m) or (name or missing) is None:
                continue
            if name is None:
                self._missing(m, str(missing))
                continue
            self._bound(m, m.group(1).lower(), name)
        ins = [(m, m.group(2)) for m in _TAG_IN.finditer(self.q)]
        ins += [(m, m.group(2) or m.group(4)) for m in _TAG_IN_MORE.finditer(self.q)]
        for m, ref in ins:
            name, missing = self._tag(ref, True)
            if not self.free(m) or (name or missing) is None:
                continue
            if name is None:
                self._missing(m, str(missing))
                continue
            self._in(m, name)

    def parts(self) -> None:
        """A part of a named year ("the first quarter of 2023", "the last 3 months of 2025", "Q3 2022"): read
        before the relative phrases, which would count "the last 3 months" back from today."""
        for m in PART.finditer(self.q):
            if self.free(m) and (span := part_of_year(m)) is not None:
                self.take(m, *span)
        for m in _MONTHS_OF.finditer(self.q):
            a, b, year = MONTHS[m.group(1).lower()], MONTHS[m.group(2).lower()], int(m.group(3))
            if self.free(m) and a <= b:
                self.take(m, dt.date(year, a, 1), _next_month(dt.date(year, b, 1)))

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


def parse_time(question: str, now: dt.datetime | None = None, tags=None) -> TimeWindow:
    """The window the question's time phrases ask for; ``tags`` (a :class:`.tags.TagGraph`) resolves tags."""
    r = _Reader(question, (now or dt.datetime.now(dt.UTC)).date(), tags)
    for step in (r.tags, r.parts, r.between, r.relative, r.bounds, r.periods, r.leftovers):
        step()
    r.w.spans = r.taken
    if r.mask is not None:
        r.w.commits, r.w.negated = tags.select(r.mask)
    return r.w
