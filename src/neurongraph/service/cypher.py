"""Cypher written by the agent itself: the graph's schema for its prompt, and a read-only query with limits.

Why here: the MCP tools ``graph_schema`` and ``cypher`` and the HTTP routes ``GET /api/graph/schema`` and
``POST /api/cypher`` ask the same two things; the requests name them once.  Both run through the engine's
Cypher projection (the FalkorDB child ``ngr cypher`` and ``ngr ask`` use: read-only enforced by the graph
engine and the tokenizer guard, the child's time limit); :mod:`neurongraph.graphdb.agent` keeps the schema
small and the answers within their row and size limits.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..graphdb.agent import DEFAULT_CHARS, DEFAULT_ROWS, agent_schema, graph_names, run_query
from .engine_api import CypherEngine

__all__ = ["CypherRequest", "GraphSchemaRequest"]


@dataclass(frozen=True)
class GraphSchemaRequest:
    """The schema an agent writes Cypher against (labels, relations, properties, example queries)."""

    def run(self, engine: CypherEngine) -> dict[str, Any]:
        """At most ``graphdb.agent.SCHEMA_MAX_CHARS`` characters of JSON; kept until the store changes."""
        return agent_schema(engine.cypher_projection(), engine.store)


@dataclass(frozen=True)
class CypherRequest:
    """One read-only query with ``$params``, cut to ``limit`` rows and ``max_chars`` characters of JSON."""

    query: str
    params: dict[str, Any] | None = None
    limit: int = DEFAULT_ROWS
    max_chars: int = DEFAULT_CHARS
    timeout_ms: int | None = None

    def run(self, engine: CypherEngine) -> dict[str, Any]:
        """``columns``, ``rows``, ``row_count``, ``truncated``, ``more`` (see ``graphdb.agent.run_query``)."""
        proj = engine.cypher_projection()
        return run_query(
            proj.query,
            lambda: proj.memo("agent_names", lambda: graph_names(proj.query, engine.store)),
            self.query,
            self.params,
            limit=self.limit,
            max_chars=self.max_chars,
            timeout_ms=self.timeout_ms,
        )
