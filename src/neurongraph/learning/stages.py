"""The source-use state machine, pure: retrieved → selected → validated → used.

Kept free of storage so its rules can be property-tested on their own: a node
may repeat its stage (no-op) or advance exactly one step; anything else is an
error, and one bad event rejects the whole request.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .errors import InvalidArgument, InvalidStageTransition, NodeNotInTrace
from .policy import STAGES, USED, stage_index

__all__ = ["Transition", "apply_events", "normalise_events"]


@dataclass(frozen=True)
class Transition:
    """One node's stage change in a source-use report (old and new stage)."""

    node_id: str
    old: int
    new: int

    def to_dict(self) -> dict:
        return {"node_id": self.node_id, "from": STAGES[self.old], "to": STAGES[self.new]}


def normalise_events(events) -> list[tuple[str, str]]:
    """Accept ``[(node_id, stage)]`` or ``[{"node_id": .., "stage": ..}]``; validate shape and stage names."""
    if isinstance(events, (str, bytes)) or not isinstance(events, Iterable):
        raise InvalidArgument("events must be a list of (node_id, stage) pairs")
    out: list[tuple[str, str]] = []
    for e in events:
        node: object
        stage: object
        if isinstance(e, Mapping):
            node, stage = e.get("node_id"), e.get("stage")
        elif isinstance(e, (tuple, list)) and len(e) == 2:
            node, stage = e
        else:
            raise InvalidArgument(f"an event must be (node_id, stage) or {{'node_id', 'stage'}}, got {e!r}")
        if not isinstance(node, str) or not node:
            raise InvalidArgument(f"event node_id must be a non-empty string, got {node!r}")
        stage_index(stage)  # a known stage name, or InvalidArgument
        out.append((node, str(stage)))
    if not out:
        raise InvalidArgument("events must not be empty")
    return out


def apply_events(
    current: Mapping[str, int], hits: set[str], events: list[tuple[str, str]]
) -> tuple[dict[str, int], list[Transition]]:
    """New stages and the transitions that changed something; raises on the first illegal event.

    ``current`` holds stored stages (a hit absent from it is at ``retrieved``)."""
    stages = dict(current)
    moved: dict[str, int] = {}  # node -> stage before this request
    for node, name in events:
        if node not in hits:
            raise NodeNotInTrace(f"node {node!r} is not a hit of this trace", node_id=node)
        new = stage_index(name)
        old = stages.get(node, 0)
        if new == old:
            continue
        if new != old + 1:
            need = "" if new < old else f"; {STAGES[new]!r} requires {STAGES[new - 1]!r} first"
            raise InvalidStageTransition(
                f"node {node!r} cannot go from {STAGES[old]!r} to {STAGES[new]!r}{need}",
                node_id=node,
                current=STAGES[old],
                requested=STAGES[new],
            )
        moved.setdefault(node, old)
        stages[node] = new
    return stages, [Transition(n, o, stages[n]) for n, o in moved.items()]


def newly_used(transitions: list[Transition]) -> list[str]:
    return [t.node_id for t in transitions if t.new == USED and t.old < USED]
