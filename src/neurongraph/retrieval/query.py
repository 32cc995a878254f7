"""The search query read once: one object that every step of a search takes instead of the text.

Why: a search's steps each need something of the query — its BM25 terms, whether it is written in CJK
script, the structural nodes it names, the identifiers it names and whether it asks for one's introduction or
removal, whether it asks when something began — and each used to read the text again with its own regex.
:meth:`Query.read` checks the text once (``checks.check_query``) at the entry of ``Engine.search``; each
reading is a lazy field computed on first use and kept, so a step that is off (no code history, no
structural types) costs nothing, and two steps that need the same reading share it.  The steps take a
``Query``; the functions that also serve other callers with a plain string (``SearchScope.build``,
``code_evidence``, ``QueryLinker.seeds``, ``rank``) turn one into a ``Query`` with :meth:`Query.of`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ..checks import check_query
from ..index.code_terms import query_identifiers
from ..index.language import is_cjk
from ..index.tokenize import query_terms
from .origin import asks_origin

__all__ = ["Query", "read_intent"]

_VERSION_NUMBER = re.compile(r"\bv?\d+\.\d+(?:\.\d+)*\b")  # "v1.8", "3.12": a version dates the instance asked
_WORD_EDGES = "\"'`.,;:!?()[]{}<>"  # stripped from a query word before it is read as a node key
_QUOTED = re.compile(r"[\"'`]([^\"'`]{1,300})[\"'`]")  # a quoted phrase of a query: a title it names

_ASKING = r"^\s*(?:which|what|who|when|where|how)\b.*"
# "why was X removed / added?": the change that did it, whose message says why (a passive: not "why does it drop")
_WHY = r"^\s*why\b.*\b(?:was|were|is|are|got|get|been)\b.*"
_INTRODUCED = re.compile(
    r"\bintroduc\w*|" + _ASKING + r"\b(?:add(?:ed|s)?|creat\w*|first\w*)\b|" + _WHY + r"\b(?:added|introduced)\b",
    re.I,
)
_REMOVED = re.compile(
    _ASKING + r"\b(?:remov\w*|delet\w*|dropp?\w*|got rid|eliminat\w*)\b|" + _WHY + r"\b(?:removed|deleted|dropped)\b",
    re.I,
)


def read_intent(text: str, identifiers: list[str] | tuple[str, ...] | None = None) -> str:
    """``"introduced"`` / ``"removed"`` when the question asks for the change that added / removed something;
    a bare identifier (``ensure_sync``) asks for its history from the start, like ``git log -S``
    (``identifiers``: the question's, when already read)."""
    if _REMOVED.search(text):
        return "removed"
    if _INTRODUCED.search(text):
        return "introduced"
    if len(text.split()) == 1 and (query_identifiers(text) if identifiers is None else identifiers):
        return "introduced"
    return ""


@dataclass(frozen=True)
class Query:
    """One search query and its readings; ``text`` is the query as given (checked by :meth:`read`)."""

    text: str

    @classmethod
    def read(cls, text: Any) -> Query:
        """The query of one search: ``text`` checked (non-empty, valid Unicode, at most ``MAX_QUERY_CHARS``;
        ``InvalidArgument`` otherwise)."""
        return cls(check_query(text))

    @classmethod
    def of(cls, query: Query | str) -> Query:
        """``query`` itself, or a plain string's ``Query`` (unchecked, as the callers that pass strings were)."""
        return query if isinstance(query, Query) else cls(query)

    @cached_property
    def words(self) -> tuple[str, ...]:
        """The text split on white space."""
        return tuple(self.text.split())

    @cached_property
    def terms(self) -> tuple[str, ...]:
        """BM25 terms: the store's query terms, plus the CJK characters of a CJK question (index/tokenize.py)."""
        return tuple(query_terms(self.text))

    @cached_property
    def cjk(self) -> bool:
        """Written mostly in CJK script (index/language.py): the CJK entry weights, the cross-lingual index."""
        return is_cjk(self.text)

    @cached_property
    def quoted(self) -> tuple[str, ...]:
        """Phrases in quotes or backticks, as written (a title the question names)."""
        return tuple(_QUOTED.findall(self.text))

    @cached_property
    def keys(self) -> tuple[str, ...]:
        """Words and quoted phrases that may be a node key (``src/x/app.py`` of ``file:src/x/app.py``), with
        surrounding punctuation stripped; sorted, no repeats, no empty ones."""
        words = {w.strip(_WORD_EDGES) for w in self.words}
        words.update(m.strip() for m in self.quoted)
        words.discard("")
        return tuple(sorted(words))

    @cached_property
    def identifiers(self) -> tuple[str, ...]:
        """Tokens that look like code (index/code_terms.py ``query_identifiers``), first occurrence order."""
        return tuple(query_identifiers(self.text))

    @cached_property
    def intent(self) -> str:
        """``"introduced"`` / ``"removed"`` when the question asks which change added / removed something
        (:func:`read_intent`), else ``""``."""
        return read_intent(self.text, self.identifiers)

    @cached_property
    def names_code(self) -> bool:
        """Whether identifiers can come from the question: code-looking tokens, a question about an introduction
        or removal, or a one- or two-word query (a prose question never reads the code history)."""
        return bool(self.identifiers) or bool(self.intent) or len(self.words) <= 2

    @cached_property
    def asks_origin(self) -> bool:
        """Whether the question asks when something began (retrieval/origin.py)."""
        return asks_origin(self.text)

    @cached_property
    def looks_back(self) -> bool:
        """Whether recent changes are not to be preferred: a question about a beginning, unless a version number
        dates what began ("when did the v1.8 development cycle start?" asks for the v1.8 one, not the oldest)."""
        return self.asks_origin and not _VERSION_NUMBER.search(self.text)
