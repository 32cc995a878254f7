"""The second layer of read-only enforcement: a Cypher *tokenizer*, not a keyword regex.

The first layer is the engine itself (``GRAPH.RO_QUERY`` through a Redis user that may run nothing
else).  This layer exists for the one hole measured in that engine — ``LOAD CSV FROM 'https://…'`` is
accepted by ``RO_QUERY`` — and to give a clear ``read_only`` error before a round trip.  It reads the
query the way the parser does: string literals, backtick identifiers and comments are skipped (so a
title containing "create" is fine, and ``/* */CREATE`` is still seen), the rest is NFKC-normalised
(so full-width ``ＣＲＥＡＴＥ`` reads as ``CREATE``), and property names after ``.`` or map keys before
``:`` are not keywords.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import QueryError, ReadOnlyViolation

__all__ = ["check_read_only", "code_tokens"]

WRITE_WORDS = {"CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "DROP", "FOREACH"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
MAX_QUERY_CHARS = 20_000


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


def check_read_only(query: str) -> None:
    """Raise :class:`ReadOnlyViolation` for a write clause, ``LOAD CSV`` or a second statement."""
    if len(query) > MAX_QUERY_CHARS:
        raise QueryError(f"the query is longer than {MAX_QUERY_CHARS} characters")
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
