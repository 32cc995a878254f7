"""The one request model every interface speaks: a search, feedback or ask request and how it becomes
engine calls.

The CLI, the MCP server and the HTTP API each used to translate a request into engine options on their
own (three copies that drifted); now they build a :class:`SearchRequest`, a feedback request
(:class:`SourceUseRequest`, :class:`OutcomeRequest`, :class:`FailureRequest`) or an :class:`AskRequest` from
here, so an option is named and checked once and each request makes one engine call.  :mod:`.search`,
:mod:`.feedback` and :mod:`.ask` need nothing beyond the core; :mod:`.contract` (the JSON interfaces'
pydantic argument models) imports pydantic and is imported only by the MCP and HTTP adapters.  Every request
is typed against the engine's protocols in :mod:`.engine_api`, so mypy (strict flags on this package) checks
each engine call.
"""

from __future__ import annotations

from .ask import AskRequest
from .feedback import FailureRequest, OutcomeRequest, SourceUseRequest, check_upto, resolve_hits
from .search import SearchRequest, has_range, where_pairs

__all__ = [
    "AskRequest",
    "FailureRequest",
    "OutcomeRequest",
    "SearchRequest",
    "SourceUseRequest",
    "check_upto",
    "has_range",
    "resolve_hits",
    "where_pairs",
]
