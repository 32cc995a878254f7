"""Typed errors of Cypher queries (stable codes, printed as ``error[code]`` with exit status 2)."""

from __future__ import annotations

from ..errors import NeuronGraphError

__all__ = [
    "CypherError",
    "ReadOnlyViolation",
    "QueryTimeout",
    "QueryError",
    "GraphGone",
    "GraphServerError",
    "GraphServerUnreachable",
    "GraphServerAuth",
    "GraphNotBuilt",
]


class CypherError(NeuronGraphError):
    """A graph query failed; the subclasses say whether it was refused, too slow or malformed."""

    code = "query_error"


class ReadOnlyViolation(CypherError):
    """A write clause, a write procedure, ``LOAD CSV`` or a second statement: refused."""

    code = "read_only"


class QueryTimeout(CypherError):
    """The graph query ran past its time limit and was stopped by the graph engine."""

    code = "query_timeout"


class QueryError(CypherError):
    """A syntax error, an unknown function, a memory cap hit, ... (the engine's message)."""

    code = "query_error"


class GraphGone(QueryError):
    """The graph engine closed the connection mid-query (a child that died, a shared server restarted): the
    service is unavailable for now (HTTP 503), not a fault of the query."""

    code = "graph_gone"


class GraphServerError(NeuronGraphError):
    """A shared graph server (``--graph-url``) could not be used; the subclasses say why."""

    code = "graph_server_error"


class GraphServerUnreachable(GraphServerError):
    """Nothing answers at the graph URL (refused, no such socket, unknown host, timed out)."""

    code = "graph_unreachable"


class GraphServerAuth(GraphServerError):
    """The graph server refused the credentials in the URL (wrong user or password, or none given)."""

    code = "graph_auth"


class GraphNotBuilt(GraphServerError):
    """The server holds no projection of this store, and this engine has no writer credential to build one."""

    code = "graph_not_built"
