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
    """Feedback named a node that the trace did not return."""

    code = "node_not_in_trace"


class InvalidStageTransition(NeuronGraphError):
    """Feedback skipped a stage or went back (stages go selected, validated, used, in order)."""

    code = "invalid_stage_transition"


class IdempotencyConflict(NeuronGraphError):
    """An idempotency key was reused for a different report."""

    code = "idempotency_conflict"


class SourceNotUsed(NeuronGraphError):
    """An outcome named a source that never reached ``used`` in that trace."""

    code = "source_not_used"
