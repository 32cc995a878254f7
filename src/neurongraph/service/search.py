"""A search request as the interfaces give it, and the engine call it becomes.

One name per option, the CLI's: ``channel`` (``--channel``), ``as_of`` (``--as-of``), ``since``, ``types``
(``--type``), ``rels`` (``--rel``), ``sources``, ``where``, ``files``, ``diff``.  The older names keep working
for one release as deprecated aliases (:data:`DEPRECATED`): ``strategy`` is ``channel``, and ``until`` is
``as_of`` (the same filter: event time after it is hidden; given both, the earlier wins).  Each use is said
once, in the result's ``warnings`` (the CLI prints them on stderr).  Validation that is about meaning
(times, ``where`` keys, line ranges, a diff without hunks) happens here or below in the core, so every
interface reports the same ``invalid_argument`` message; size limits of the JSON interfaces live in
:mod:`.contract`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InvalidArgument
from ..retrieval.changes import WorkingSet
from ..retrieval.results import SearchResult
from ..times import to_epoch
from .engine_api import SearchEngine, SearchOptions

__all__ = ["DEPRECATED", "SearchRequest", "has_range", "where_pairs"]

# old name -> the one name (deprecated aliases, accepted until the next release)
DEPRECATED = {"strategy": "channel", "until": "as_of"}

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
    channel: str | None = None  # the graph channel (CLI --channel)
    as_of: Any = None  # the store as it was then (epoch seconds or ISO-8601); SearchConfig converts and checks
    since: Any = None
    types: Sequence[str] | None = None  # result types (CLI --type)
    rels: Sequence[str] | None = None  # relation types the question is about (CLI --rel)
    sources: Sequence[str] | None = None
    where: Mapping[str, object] | Sequence[tuple[str, object]] | None = None
    files: Sequence[str] | None = None  # PATH or PATH:A[-B] (1-based, inclusive)
    diff: str | None = None  # a unified diff of the change being made
    warnings: tuple[str, ...] = ()  # said with the result: the deprecated names this request was given in

    @classmethod
    def with_aliases(
        cls,
        query: str,
        spell: Callable[[str], str] = str,
        *,
        strategy: str | None = None,
        until: Any = None,
        **fields: Any,
    ) -> SearchRequest:
        """A request from fields that may use the deprecated names (:data:`DEPRECATED`): ``strategy`` becomes
        ``channel`` (disagreeing with a given ``channel`` is an error) and ``until`` becomes ``as_of`` (the
        earlier of the two when both are given).  Each deprecated name used adds one warning, naming the
        options as ``spell`` writes them (the CLI: ``--until``)."""
        req = cls(query, **fields)
        warned: list[str] = []
        if strategy is not None:
            if req.channel is not None and req.channel != strategy:
                raise InvalidArgument(
                    f"{spell('strategy')} {strategy!r} and {spell('channel')} {req.channel!r} disagree: "
                    f"give only {spell('channel')}"
                )
            req = replace(req, channel=strategy)
            warned.append(_deprecation("strategy", spell))
        if until is not None:
            req = replace(req, as_of=_earlier(req.as_of, until, spell))
            warned.append(_deprecation("until", spell))
        return replace(req, warnings=req.warnings + tuple(warned)) if warned else req

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
        o: SearchOptions = {"channel": self.channel} if self.channel else {}
        if self.as_of is not None:
            o["as_of"] = self.as_of
        if self.since is not None:
            o["since"] = self.since
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
        res = engine.search(self.query, self.limit, qvec=qvec, **self.engine_options())
        res.warnings.extend(w for w in self.warnings if w not in res.warnings)
        return res


def _deprecation(old: str, spell: Callable[[str], str]) -> str:
    new = DEPRECATED[old]
    same = "the same filter" if old == "until" else "the same option"
    return f"{spell(old)} is deprecated: it is {spell(new)} ({same}); {spell(old)} will be removed in the next release"


def _earlier(as_of: Any, until: Any, spell: Callable[[str], str]) -> Any:
    """``until`` folded into ``as_of``: the earlier of the two (both hide event times after them)."""
    if as_of is None:
        return _epoch(until, "until", spell)
    return min(_epoch(as_of, "as_of", spell), _epoch(until, "until", spell))


def _epoch(value: Any, name: str, spell: Callable[[str], str]) -> float:
    try:
        return to_epoch(value)
    except ValueError as exc:
        raise InvalidArgument(f"{spell(name)}: {exc}") from None
