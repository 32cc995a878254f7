"""Typed errors of the learning loop (stable ``code`` strings, like :mod:`neurongraph.errors`)."""

from __future__ import annotations

from ..errors import InvalidArgument, NeuronGraphError, UnknownTrace

__all__ = [
    "InvalidArgument",
    "UnknownTrace",
    "NodeNotInTrace",
    "InvalidStageTransition",
    "IdempotencyConflict",
    "SourceNotUsed",
]


class NodeNotInTrace(NeuronGraphError):
    code = "node_not_in_trace"


class InvalidStageTransition(NeuronGraphError):
    code = "invalid_stage_transition"


class IdempotencyConflict(NeuronGraphError):
    code = "idempotency_conflict"


class SourceNotUsed(NeuronGraphError):
    code = "source_not_used"
