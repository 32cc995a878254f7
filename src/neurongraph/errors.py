"""Typed errors: every user mistake maps to one of these with a readable message.

The ``code`` strings are stable: the CLI prints them, the MCP server returns them.
"""

from __future__ import annotations


class NeuronGraphError(Exception):
    """The base of every user-facing error: a stable ``code`` interfaces print, a message and details."""

    code = "error"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **({"details": self.details} if self.details else {})}


class InvalidArgument(NeuronGraphError):
    """The caller passed something unusable; the message says what to pass instead."""

    code = "invalid_argument"


class UnknownNode(NeuronGraphError):
    """No node has that id (or alias)."""

    code = "unknown_node"


class UnknownTrace(NeuronGraphError):
    """No stored search has that trace id."""

    code = "unknown_trace"


class SchemaError(NeuronGraphError):
    """The relation schema refused a write or a definition."""

    code = "schema_error"


class StoreError(NeuronGraphError):
    """The database itself failed (I/O, a dropped connection), not the caller."""

    code = "store_error"


class EmbedderUnavailable(NeuronGraphError):
    """The requested embedding model cannot be loaded (not installed, not exported).  Here, not in
    index/embedder.py: the embedder implementations raise it and embedder.py chooses among them."""

    code = "embedder_unavailable"
