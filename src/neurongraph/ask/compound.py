"""A question that asks several things at once ("F is gone. when was it split up, in which PR, and how many files
are in the new folder?"), split into its parts, each asked on its own, the answers given together.

Why: one shape answers one question; given three, the first shape that matched answered a fourth ("56 PRs
touched F") and looked like the answer.  A part is an interrogative clause of the question's last sentence,
after a comma ("when ..., in which PR, and how many ..."); sentences before it that ask nothing
("F is gone.") are its context, given to each part that points back at it ("it"), and a period one part says
is the others' too.  A part that is only an interrogative
phrase ("in which PR") borrows the rest of the part before it ("was it split up").
"""

from __future__ import annotations

import re
from collections.abc import Callable

from .question import blank
from .timephrase import parse_time
from .words import FATE

_SENTENCE_END = re.compile(r"(?<=[.?!])\s+")  # a stop then a space: "tests/test_utils.py" is one word
_ASKS = (
    r"(?:(?:in|on|at|from|by|for|since|until)\s+)?"
    r"(?:when|which|what(?:'?s)?|who(?:'?s)?|whom|whose|where|why|how(?:\s+(?:many|much|long|often))?)\b"
)
_ASKING = re.compile(rf"^\s*{_ASKS}", re.I)
# a part starts after a comma (and an "and"), with an interrogative word; a bare "and" is not a break ("how many
# commits and how many authors in 2024?": the period is both parts')
_PART_BREAK = re.compile(rf"\s*,\s*(?:and\s+)?(?={_ASKS})", re.I)
# words that point back ("it", "the last one"): a part holding one needs what it points at
_PRONOUN = re.compile(r"\b(?:it|its|they|them|their|this|that|these|those|one|ones)\b", re.I)
_BARE = re.compile(rf"^\s*{_ASKS}(?:\s+[\w./-]+)?\s*$", re.I)  # "in which PR", "when", "by whom"
_REST = re.compile(rf"^\s*{_ASKS}(?:\s+[\w-]+)?\s+((?:was|were|is|are|did|does|do|has|have|had)\b.*)$", re.I)


# "Guido's first and last commits", "the earliest and the latest change": two ends asked at once, one part each
_BOTH_ENDS = re.compile(
    r"\b(first|earliest|oldest)\s+and\s+(?:the\s+)?(last|latest|newest|most\s+recent)\b"
    r"|\b(last|latest|newest|most\s+recent)\s+and\s+(?:the\s+)?(first|earliest|oldest)\b",
    re.I,
)
_ONE_END = re.compile(r"^(\s*(?:commit|change|patch|contribution)s?)\b", re.I)


def _both_ends(question: str) -> list[str] | None:
    """ "when were P's first and last commits": "… first commit?" and "… last commit?"; None without both ends."""
    m = _BOTH_ENDS.search(question)
    if m is None:
        return None
    ends = [g for g in m.groups() if g]
    after = question[m.end() :]
    one = _ONE_END.match(after)
    if one is not None:  # each part asks for one commit: "first commits" would list many
        after = re.sub(r"s$", "", one.group(1)) + after[one.end() :]
    return [question[: m.start()] + end + after for end in ends]


# "busiest year and month", "the busiest year and the busiest month": one ranking per period unit
_BOTH_UNITS = re.compile(
    r"\b(busiest|most\s+active|quietest|least\s+active)\s+(year|month|week|day)\s+and\s+(?:the\s+)?"
    r"(?:(?:busiest|most\s+active|quietest|least\s+active)\s+)?(year|month|week|day)\b",
    re.I,
)


def _both_units(question: str) -> list[str] | None:
    """ "busiest year and month in X?": "busiest year in X?" and "busiest month in X?"; None otherwise."""
    m = _BOTH_UNITS.search(question)
    if m is None or m.group(2).lower() == m.group(3).lower():
        return None
    return [question[: m.start()] + f"{m.group(1)} {unit}" + question[m.end() :] for unit in (m.group(2), m.group(3))]


def split_parts(question: str) -> list[str] | None:
    """The parts of a question that asks several things, each with the question's context; None for one."""
    return _both_ends(question) or _both_units(question) or _clause_parts(question)


def _clause_parts(question: str) -> list[str] | None:
    """The interrogative clauses of the question's last sentence, each with the context it points back at."""
    pieces = _clause_pieces(question)
    return None if pieces is None else _shared_period([part for part, _ in pieces])


def _clause_pieces(question: str) -> list[tuple[str, str]] | None:
    """(part with its context, the clause as written) for each interrogative clause of the last sentence."""
    sentences = [s.strip() for s in _SENTENCE_END.split(question.strip()) if s.strip()]
    if not sentences:
        return None
    context = [s for s in sentences[:-1] if not _ASKING.match(s)]
    # "how many commits between A and B? how many authors?": the last two sentences ask, one thing each
    asks_two = len(sentences) >= 2 and bool(_ASKING.match(sentences[-2]) and _ASKING.match(sentences[-1]))
    if asks_two and len(context) == len(sentences) - 2 and all(s.rstrip().endswith("?") for s in sentences[-2:-1]):
        two = [sentences[-2].rstrip("?!. "), sentences[-1].rstrip("?!. ")]
        if any(_PART_BREAK.search(t) for t in two) or _BARE.match(two[0]) or _PRONOUN.search(two[1]):
            return None  # a sentence asks several things, or the second points back: not read as parts here
        return [(_pointed(t + "?", context), t + "?") for t in two]  # (a period or range one says: both's)
    elif len(context) != len(sentences) - 1:
        return None  # more asking sentences than that: not read as parts here
    last = sentences[-1].rstrip("?!. ")
    pieces = [p.strip() for p in _PART_BREAK.split(last) if p.strip()]
    if len(pieces) < 2:  # "who started the repo and what was the first PR merged?": two asks, each whole
        halves = [h.strip() for h in _AND_BREAK.split(last)]
        whole = len(halves) == 2 and not any(_BARE.match(h) or _PRONOUN.search(h) for h in halves)
        pieces = halves if whole and len(halves[1].split()) >= 4 else pieces
    if len(pieces) < 2 or not all(_ASKING.match(p) for p in pieces):
        return None
    if not context and any(_PRONOUN.search(p) for p in pieces[1:]):
        thing = _THING.search(pieces[0]) or _SHA.search(pieces[0])
        if thing is None or any(_PRONOUN.search(p) and not _IT.search(p) for p in pieces[1:]):
            return None  # "when was F created, and who created it?": no path or sha the later "it" can be
        context = [thing.group(0)]  # "which files did 830e0d01 touch, and who wrote it?": "it" is 830e0d01
    parts: list[tuple[str, str]] = []
    rest = ""
    for piece in pieces:
        if _BARE.match(piece):
            if not rest and not (context and not parts and _PRONOUN.search(piece)):
                return None  # "..., and why?": nothing to borrow, not read as parts
            piece = f"{piece} {rest}" if rest else piece  # "X fixes an older commit. which one, …": the context's
        elif m := _REST.match(piece):
            rest = m.group(1)
        parts.append((_pointed(piece + "?", context), piece + "?"))
    return parts


_IT = re.compile(r"\bit\b", re.I)
_SHA = re.compile(r"\b[0-9a-f]{7,40}\b")
_THING = re.compile(r"[\w-]*[/.][\w./-]*\w")  # what a context sentence is about: a path, a dotted name


def _pointed(part: str, context: list[str]) -> str:
    """The part with what it points back at: "it" becomes the context's path ("ip/x.c exists. when was it
    created?" → "when was ip/x.c created?"); a context that says what became of it ("F is gone.") is kept
    whole, as is one without a path.  A part that points at nothing gets no context: "F is gone." would make
    "how many files are in folder D?" a count of removed files."""
    if not context or not _PRONOUN.search(part):
        return part
    said = " ".join(context)
    thing = _THING.search(said) or _SHA.search(said)
    if FATE.search(said) or thing is None or not _IT.search(part):
        return f"{said} {part}"
    return _IT.sub(thing.group(0), part, count=1)


# a range between two names (tags, shas, quoted subjects): "between 'Prepare for 3.6.0.' and 'Prepare for 3.7.0.'"
_RANGE = re.compile(
    r"\b(?:between|from)\s+(?:the\s+)?(?:(['\"“‘]).+?['\"”’]|\S+)\s+(?:and|to)\s+(?:the\s+)?"
    r"(?:(['\"“‘]).+?['\"”’]|[^\s?,]+)(?:\s+(?:tags?|releases?|versions?|commits?))?",
    re.I,
)


_RELEASES = re.compile(r"\b(?:tags?|releases?|versions?)\b", re.I)  # a part about the releases themselves


def _shared_period(parts: list[str]) -> list[str]:
    """A period (or a range between two names) said in one part only is the whole question's ("how many commits
    were made in 2024, and who made the most?": the most in 2024)."""
    ranges = [_RANGE.search(p) for p in parts]
    said_range = [r for r in ranges if r is not None]
    if len(said_range) == 1 and not any(parse_time(p).spans for p in parts):
        phrase = said_range[0].group(0)
        return [p if r is not None or _RELEASES.search(p) else f"{p[:-1]} {phrase}?" for p, r in zip(parts, ranges)]
    spans = [parse_time(p).spans for p in parts]
    said = [(p, sp) for p, sp in zip(parts, spans) if sp]
    if len(said) != 1:
        return parts
    part, sp = said[0]
    period = " ".join(part[a:b] for a, b in sorted(sp))
    tagged = bool(_RELEASES.search(period))  # "since the last release": not a window of "the newest tag"
    return [p if s or tagged and _RELEASES.search(p) else f"{p[:-1]} {period}?" for p, s in zip(parts, spans)]


# a person's activity asked as a whole, or two or more of its facts at once ("what has P been doing - when did he
# start and how many commits?", "P - how many commits, first and most recent?")
_ACTIVITY = re.compile(
    r"\bwhat\s+(?:has|have|did|does|is)\s+.+?\s+(?:been\s+)?(?:doing|working\s+on|worked\s+on|up\s+to)\b", re.I
)
_PERSON_ASKS = (
    ("count", re.compile(r"\bhow\s+many(?:\s+commits)?\b(?!\s+(?:files?|lines?|authors?|people|prs?)\b)", re.I)),
    ("first", re.compile(r"\b(?:start(?:ed)?|began|begin|join(?:ed)?|first|earliest)\b", re.I)),
    ("last", re.compile(r"\b(?:last|latest|most\s+recent|still\s+active)\b", re.I)),
    ("busiest", re.compile(r"\b(?:most\s+active|busiest)\s+year\b", re.I)),
)


def profile_parts(question: str, person: str) -> list[str] | None:
    """A person's activity, one part per fact the question asks (all four for "what has P been doing"): how many
    commits, the first, the last, the most active year; None when it asks fewer than two of them."""
    spans = sorted(parse_time(question).spans)
    words = blank(question, spans)
    asked = [k for k, rx in _PERSON_ASKS if rx.search(words)]  # "the first half of 2023" is a period, not an ask
    if _ACTIVITY.search(words):
        asked = [k for k, _ in _PERSON_ASKS]
    if len(asked) < 2:
        return None
    period = " ".join(question[a:b] for a, b in spans)
    said = {
        "count": f"how many commits did {person} make",
        "first": f"when was {person}'s first commit",
        "last": f"when was {person}'s last commit",
        "busiest": f"which year was {person} most active",
    }
    return [f"{said[k]} {period}?" if period else f"{said[k]}?" for k in asked]


_FACT_WORDS = frozenset(
    "how many commits commit and or the his her their its was were is are did does when what which first last latest "
    "most recent active year start started contributing contributions total number of".split()
)


def _elliptical(part: str) -> bool:
    """A part that names nothing of its own ("how many commits, and most active year?"): it asks about whoever
    the question named before it."""
    return not [w for w in re.findall(r"[a-z']+", part.lower()) if w not in _FACT_WORDS]


# a part that points at the commit the part before it answered: "… and what did that commit change?", "… who
# wrote that one?", "… who wrote that?"
_CHAIN = re.compile(
    r"\b(?:that|this|the\s+same)\s+(?:one|commit|change|patch|fix)\b|\b(?:that|this)(?=\s*[?.!]*\s*$)", re.I
)
_AND_BREAK = re.compile(rf"\s+and\s+(?={_ASKS})", re.I)


def _chained(question: str) -> tuple[str, str] | None:
    """(first ask, second ask) when the question's last ask points at what the ask before it answers: two asks
    joined by "and" ("when was the release date set and what did that commit change?") or the last two asking
    sentences ("what does its Fixes: point at? who wrote that one"); sentences before them that ask nothing are the
    first ask's context.  None otherwise."""
    sentences = [s.strip() for s in _SENTENCE_END.split(question.strip()) if s.strip()]
    if not sentences:
        return None
    last = sentences[-1]
    halves = _AND_BREAK.split(last)
    if len(halves) == 2 and _CHAIN.search(halves[1]) and not _CHAIN.search(halves[0]):
        first = " ".join([*sentences[:-1], halves[0].rstrip(" ,")]).rstrip(" ?") + "?"
        return first, halves[1].strip()
    if len(sentences) >= 2 and _ASKING.match(last) and _CHAIN.search(last) and not _CHAIN.search(sentences[-2]):
        return " ".join(sentences[:-1]), last
    return None


def _one_commit(out: dict) -> str | None:
    """The one commit an answer names (its result's only item), else None."""
    items = (out.get("result") or {}).get("items") or []
    return items[0] if len(items) == 1 and str(items[0]).startswith("commit:") else None


def _combined(parts: list[str], outs: list[dict]) -> dict:
    """The parts' answers as one answer (see :func:`ask_parts`)."""
    answer = f"The question asks {len(parts)} things, each answered on its own:\n" + "\n".join(
        f"{k}. {p}\n{o['answer']}" for k, (p, o) in enumerate(zip(parts, outs), 1)
    )
    refs = list(dict.fromkeys(r for o in outs for r in o.get("refs") or []))
    return {
        "route": {"mode": "parts", "reason": f"{len(parts)} questions in one: " + " | ".join(parts)},
        "query": None,
        "rows": [r for o in outs for r in o.get("rows") or []],
        "hits": [h for o in outs for h in o.get("hits") or []],
        "answer": answer,
        "refs": refs,
        "trace_id": outs[0]["trace_id"],
        "trace_ids": [o["trace_id"] for o in outs],
        "parts": [{"question": p, **o} for p, o in zip(parts, outs)],
        "explain": {"answered_by": "parts", "parts": [o.get("explain") for o in outs]},
    }


def ask_chained(run: Callable[[str], dict], question: str) -> dict | None:
    """A question whose second ask points at the commit its first ask answers ("9a30fc4 … what does its Fixes:
    point at? who wrote that one"): the first is asked, and when its answer is one commit the second is asked about
    that commit ("who wrote 422e904378?"); None when the question is not such a pair or the first answer is not one
    commit (the question is then asked as before)."""
    pair = _chained(question)
    if pair is None:
        return None
    first = run(pair[0])
    commit = _one_commit(first)
    if commit is None:
        return None
    sha = commit.removeprefix("commit:")[:10]
    second = _CHAIN.sub(sha, pair[1], count=1)
    return _combined([pair[0], second], [first, run(second)])


def _ask_pieces(run: Callable[[str], dict], pieces: list[tuple[str, str]]) -> dict:
    """Clauses asked in order; one that points at the answer before it ("…, which one, who wrote that, …") is asked
    about that answer's commit when it is one, else as written with the question's context."""
    parts: list[str] = []
    outs: list[dict] = []
    first, first_raw = pieces[0]
    context = first[: -len(first_raw)].strip() if first.endswith(first_raw) else ""
    for part, raw in pieces:
        commit = _one_commit(outs[-1]) if outs and _CHAIN.search(raw) else None
        if commit is not None:
            part = _CHAIN.sub(commit.removeprefix("commit:")[:10], raw, count=1)
        elif part == raw and _SHA.search(context) and not (_SHA.search(raw) or _THING.search(raw)):
            part = f"{context} {raw}"  # "… who reported the bug?": the bug of the commit the context names
        parts.append(part)
        outs.append(run(part))
    return _combined(parts, outs)


def ask_parts(
    run: Callable[[str], dict], question: str, person: Callable[[str], str | None] | None = None
) -> dict | None:
    """Each part's answer (``run`` asks one question) and the whole: the answers in order, the rows, refs and hits
    of every part, the first part's trace (every trace id listed); None when the question has one part.
    ``person`` names the author a question names (or None): a question about a person's activity is asked fact by
    fact (:func:`profile_parts`)."""
    chained = ask_chained(run, question)
    if chained is not None:
        return chained
    pieces = _clause_pieces(question)
    if pieces is not None and any(_CHAIN.search(raw) for _, raw in pieces[1:]):
        return _ask_pieces(run, pieces)
    who = person(question) if person is not None else None
    parts = _clause_parts(question)
    if who and (parts is None or any(_elliptical(p) for p in parts[1:])):
        parts = profile_parts(question, who) or parts  # "When did P start contributing, how many commits, and …"
    parts = parts or _both_ends(question) or _both_units(question)
    if parts is None:
        return None
    return _combined(parts, [run(p) for p in parts])
