"""The one request model every interface speaks: a search, feedback or ask request and how it becomes
engine calls.

The CLI, the MCP server and the HTTP API each used to translate a request into engine options on their
own (three copies that drifted); now they build a :class:`SearchRequest` (or run a feedback / ask
request) from here, so an option is named and checked once.  :mod:`.search` needs nothing beyond the
core; :mod:`.contract` (the JSON interfaces' pydantic argument models) imports pydantic and is imported
only by the MCP and HTTP adapters.
"""

from __future__ import annotations

from .search import SearchRequest, has_range, where_pairs

__all__ = ["SearchRequest", "has_range", "where_pairs"]
