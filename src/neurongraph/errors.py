"""Typed errors: every user mistake maps to one of these with a readable message.

The ``code`` strings are stable: the CLI prints them, the MCP server returns them.
"""

from __future__ import annotations


class NeuronGraphError(Exception):
    code = "error"

    def __init__(self, message: str, **details):
        super().__init__(message)
        self.message = message
        self.details = details

    def to_dict(self) -> dict:
        return {"code": self.code, "message": self.message, **({"details": self.details} if self.details else {})}


class InvalidArgument(NeuronGraphError):
    code = "invalid_argument"


class UnknownNode(NeuronGraphError):
    code = "unknown_node"


class UnknownTrace(NeuronGraphError):
    code = "unknown_trace"


class SchemaError(NeuronGraphError):
    code = "schema_error"


class StoreError(NeuronGraphError):
    code = "store_error"
