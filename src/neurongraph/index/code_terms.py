"""Code tokens: the identifiers, ``--long-options`` and string-literal words a piece of code names.

Why a tokenizer of its own: the lexical index's word splitting (``store/lexical.py``) is made for prose,
and loses what makes a code token findable: ``ensure_sync`` whole, ``parseHTTPResponse`` as both the whole
name and its parts, ``--json`` with its dashes.  The git reader counts these tokens over a commit's added
and removed lines (pickaxe semantics, ``ingest/git.py``); the engine expands them into search terms and
uses :func:`query_identifiers` to tell a question that names code.

Everything is compiled regexes over whole texts (``re.findall`` runs in C), so a commit's diff is
tokenised without a Python step per character.  Escape sequences (``\\n``, ``\\t``, troff's ``\\fB``) are
blanked first, so ``"\\nError"`` yields ``Error`` and not ``nError``; words inside string literals (error
messages) then come out like any other word.
"""

from __future__ import annotations

import re
from collections import Counter

__all__ = [
    "identifiers",
    "count_identifiers",
    "count_identifiers_bytes",
    "is_term",
    "expand",
    "query_identifiers",
    "STOP",
    "STOP_BYTES",
]

# language keywords and builtin type names of C, Python, Rust, Go, JS (length >= 3: shorter never match),
# plus a few English function words that fill comments and messages
STOP = frozenset(
    """
    and are as asm async auto await bool break case catch char class const continue def default defer del
    delete do double elif else enum export extern false fallthrough final finally float fn for from func
    global goto impl import inline int interface lambda let long loop match mod move mut new nil none
    nonlocal not null or pass pub raise ref register restrict return self short signed sizeof static
    struct super switch this throw trait true try type typedef typeof union unsafe unsigned use var void
    volatile where while with yield
    None True False Self NULL
    u8 u16 u32 u64 i8 i16 i32 i64 usize isize str
    the that was were has have had but its into than then them they there these those also which when
    can will would should could been being our your you
    """.split()
)

# backslash escapes in string literals and troff man pages; blanked before tokenising
_ESCAPE_SRC = r"\\(?:f[A-Z1-4]|f\(..|[A-Za-z0-9\"'\\])"
# a long option (dashes kept; not when a word character follows: `--foo_bar` is the word foo_bar) or a word
# of >= 3 ASCII word characters; a word starting with a digit is a number.  ASCII on purpose: the str and
# bytes forms must agree, and bytes regexes are ~4x faster on diffs
_TOKEN_SRC = r"(?<![\w-])--(?>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?!\w)|\b[A-Za-z_]\w{2,}"
_ESCAPE = re.compile(_ESCAPE_SRC, re.ASCII)
_TOKEN = re.compile(_TOKEN_SRC, re.ASCII)
_ESCAPE_B = re.compile(_ESCAPE_SRC.encode())
# the bytes hot path scans words and options separately: each pattern alone starts with something the
# regex engine can search for fast ("--" literally), which the alternation above hides (~2.5x slower)
_WORD_B = re.compile(rb"\b[A-Za-z_][A-Za-z0-9_]{2,}")
_OPTION_B = re.compile(rb"--(?<![\w-]--)(?>[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*)(?!\w)")
STOP_BYTES = _STOP_B = frozenset(w.encode() for w in STOP)  # STOP as bytes, for the ingest hot path
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+[0-9]*|[A-Z]+[0-9]*|[0-9]+")
_SPLIT = re.compile(r"[_\-]+")
# in a question: a backtick-quoted span, or a whitespace-delimited word
_QUOTED = re.compile(r"`([^`\n]+)`")
_WORD = re.compile(r"[^\s`\"'“”‘’,;?!]+")
_CODE_LIKE = re.compile(r"_|[a-z][A-Z]|--|::|\(\)")


def identifiers(text: str) -> list[str]:
    """The code tokens of ``text`` in order, with repeats (callers count them): identifiers of length
    >= 3 (case kept), ``--long-options`` and the words of string literals; keywords and numbers dropped."""
    return [t for t in _TOKEN.findall(_ESCAPE.sub(" ", text)) if t not in STOP]


def count_identifiers(text: str) -> Counter[str]:
    """``Counter(identifiers(text))``, counting first and dropping keywords after (the hot path of ingest)."""
    c = Counter(_TOKEN.findall(_ESCAPE.sub(" ", text)))
    for t in STOP.intersection(c):
        del c[t]
    return c


def count_identifiers_bytes(data: bytes) -> Counter[bytes]:
    """The raw token counts of ASCII-compatible bytes (a diff's added or removed lines), keywords
    included and nothing decoded: the ingest hot path, which subtracts counts first and then keeps
    :func:`is_term` tokens only (``identifiers`` = these minus :data:`STOP`, decoded)."""
    if b"\\" in data:
        data = _ESCAPE_B.sub(b" ", data)
    c = Counter(_WORD_B.findall(data))
    if b"--" in data:
        for opt in _OPTION_B.findall(data):  # an option is one token, not also its words
            c[opt] += 1
            for w in _WORD_B.findall(opt):
                c[w] -= 1
                if not c[w]:
                    del c[w]
    return c


def is_term(token: bytes) -> bool:
    """Whether a raw token from :func:`count_identifiers_bytes` is a code term (not a keyword)."""
    return token not in _STOP_B


def expand(token: str) -> list[str]:
    """The lowercase search terms one token stands for: the whole token first, then its snake_case,
    kebab and camelCase parts (``parseHTTPResponse`` -> parse, http, response); parts shorter than 2 and
    repeats dropped."""
    whole = token.strip()
    if not whole:
        return []
    out = {whole.lower(): None}
    for piece in _SPLIT.split(whole):
        for part in _CAMEL.findall(piece):
            if len(part) >= 2:
                out.setdefault(part.lower())
    return list(out)


def query_identifiers(text: str) -> list[str]:
    """The tokens of a natural-language question that look like code: backtick-quoted, or containing
    ``_``, an inner capital (camelCase), ``--``, ``::`` or ``()``.  Backticks, a trailing ``()`` and
    surrounding punctuation are stripped; first occurrence order, no repeats."""
    found: dict[str, None] = {}
    for span in _QUOTED.findall(text):
        t = _clean(span)
        if t:
            found.setdefault(t)
    for w in _WORD.findall(_QUOTED.sub(" ", text)):
        if _CODE_LIKE.search(w):
            t = _clean(w)
            if t and t.strip("-_:()"):
                found.setdefault(t)
    return list(found)


def _clean(t: str) -> str:
    t = t.strip().strip(".:,)(")
    if t.endswith("()"):
        t = t[:-2]
    return t.strip()
