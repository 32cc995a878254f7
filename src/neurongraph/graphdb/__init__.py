"""A Cypher projection of the store's property graph in a private FalkorDB child process (``ngr cypher``,
``ngr ask``).  Optional extra ``neurongraph[ask]``; nothing here is imported by the core at import time."""

from .errors import CypherError, QueryError, QueryTimeout, ReadOnlyViolation

__all__ = ["CypherError", "QueryError", "QueryTimeout", "ReadOnlyViolation"]
