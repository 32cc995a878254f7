"""Typed errors of Cypher queries (stable codes, printed as ``error[code]`` with exit status 2)."""

from __future__ import annotations

from ..errors import NeuronGraphError

__all__ = ["CypherError", "ReadOnlyViolation", "QueryTimeout", "QueryError"]


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
