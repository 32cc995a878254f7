"""A search request as the interfaces give it, and the engine call it becomes.

Field names are the JSON interfaces' (``strategy``, ``types``, ``rels``, ``files``, ``diff``); the CLI
maps its flags to them.  Validation that is about meaning (times, ``where`` keys, line ranges, a diff
without hunks) happens here or below in the core, so every interface reports the same
``invalid_argument`` message; size limits of the JSON interfaces live in :mod:`.contract`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..retrieval.changes import WorkingSet
from ..retrieval.results import SearchResult
from .engine_api import SearchEngine, SearchOptions

__all__ = ["SearchRequest", "has_range", "where_pairs"]

_RANGE = re.compile(r":[0-9]+(?:-[0-9]+)?$")  # PATH:A or PATH:A-B (the working-set spec's line part)


def has_range(spec: str) -> bool:
    """Whether a ``files`` entry names lines (``src/a.c:120-131``, ``src/a.c:7``), not a whole file."""
    return bool(_RANGE.search(spec.strip()))


def where_pair(item: str) -> tuple[str, object]:
    """``KEY=VALUE`` of ``--where``: a JSON number, true/false or "quoted string" keeps its type, anything
    else is text (so ``number=12`` matches the integer 12 and ``number='"12"'`` the string)."""
    key, sep, raw = item.partition("=")
    if not sep or not key.strip():
        raise InvalidArgument(f"--where {item!r}: expected KEY=VALUE, e.g. --where state=open")
    try:
        value = json.loads(raw)
    except ValueError:
        value = raw
    if not isinstance(value, (str, int, float, bool)):
        value = raw
    return key.strip(), value


def where_pairs(items: Iterable[str]) -> tuple[tuple[str, object], ...]:
    """The command line's repeated ``--where KEY=VALUE`` as (key, value) pairs (a key twice is an error
    the search configuration reports)."""
    return tuple(where_pair(w) for w in items)


@dataclass(frozen=True)
class SearchRequest:
    """One search, whichever interface asked.  ``None`` / empty means "the engine's default"."""

    query: str
    limit: int | None = None
    strategy: str | None = None  # the graph channel (CLI --channel)
    as_of: Any = None  # epoch seconds or ISO-8601; SearchConfig converts and checks
    since: Any = None
    until: Any = None
    types: Sequence[str] | None = None  # result types (CLI --type)
    rels: Sequence[str] | None = None  # relation types the question is about (CLI --rel)
    sources: Sequence[str] | None = None
    where: Mapping[str, object] | Sequence[tuple[str, object]] | None = None
    files: Sequence[str] | None = None  # PATH or PATH:A[-B] (1-based, inclusive)
    diff: str | None = None  # a unified diff of the change being made

    @property
    def scoped(self) -> bool:
        """Whether the request names files or a change (the result then reports unknown files)."""
        return bool(self.files) or bool(self.diff)

    def working_set(self) -> WorkingSet | None:
        """The lines being changed (``files`` with ranges plus ``diff``) as a ``WorkingSet``, or None when
        the request names none; bad ranges and a diff without hunks raise ``InvalidArgument``."""
        specs = [f for f in self.files or () if has_range(f)]
        if not specs and not self.diff:
            return None
        ws = WorkingSet.from_specs(specs) if specs else None
        if self.diff:
            if not isinstance(self.diff, str) or not self.diff.strip():
                raise InvalidArgument("diff is empty: pass the output of `git diff` (or `diff -u`) for your change")
            d = WorkingSet.from_diff(self.diff)
            ws = d if ws is None else ws.merge(d)
        return ws

    def engine_options(self) -> SearchOptions:
        """``Engine.search`` keyword overrides (only what the request sets; the rest stays the engine's)."""
        o: SearchOptions = {"channel": self.strategy} if self.strategy else {}
        if self.as_of is not None:
            o["as_of"] = self.as_of
        if self.since is not None:
            o["since"] = self.since
        if self.until is not None:
            o["until"] = self.until
        if self.types:
            o["result_types"] = tuple(self.types)
        if self.rels:
            o["query_types"] = tuple(self.rels)
        if self.sources:
            o["sources"] = tuple(self.sources)
        if self.where:
            o["where"] = dict(self.where) if isinstance(self.where, Mapping) else tuple(self.where)
        whole = tuple(f for f in self.files or () if not has_range(f))
        if whole:
            o["files"] = whole
        ws = self.working_set()
        if ws is not None:
            o["changes"] = ws
        return o

    def run(self, engine: SearchEngine, qvec: Any = None) -> SearchResult:
        """The engine's ``SearchResult`` for this request (``qvec``: the query's embedding, if made already)."""
        return engine.search(self.query, self.limit, qvec=qvec, **self.engine_options())
