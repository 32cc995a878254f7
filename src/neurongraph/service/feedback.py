"""Feedback requests as the interfaces give them, and the engine calls they become.

Why one model: the CLI's ``ngr feedback use|outcome|failure``, the MCP tools and ``POST /api/feedback/...``
report the same three things (which hits were used, a later verdict on them, a search that missed).  Each
request names its fields once and makes one engine call, so the ledgers see the same request whichever
interface sent it.  ``SourceUseRequest.walk`` is the command line's shorthand: walk hits up to a stage from
where they are, derived from the stages *before* an earlier try with the same key, so a retry is the same
request (and the ledger returns its stored receipt) instead of an ``idempotency_conflict``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidArgument
from ..learning import STAGES
from .engine_api import FailureTarget, FeedbackEngine

__all__ = ["FailureRequest", "OutcomeRequest", "SourceUseRequest", "check_upto", "resolve_hits"]


def check_upto(upto: str) -> str:
    """The stage a walk goes up to: selected, validated or used (checked before any store is opened)."""
    if upto not in STAGES[1:]:
        raise InvalidArgument(f"--upto must be one of {STAGES[1:]}")
    return upto


def resolve_hits(engine: FeedbackEngine, nodes: Sequence[str], known: Mapping[str, Any] | Sequence[str]) -> list[str]:
    """Node ids as given: one of ``known`` (a trace's hits) as is, else resolved by the store (a short sha, as
    the search table prints commits; an ambiguous one is an error naming candidates)."""
    return [n if n in known else engine.store.resolve_node_id(n) for n in nodes]


def _stages_before(engine: FeedbackEngine, trace_id: str, key: str | None) -> dict[str, str]:
    """The trace's stages as they were before the request keyed ``key`` (now, without a key or before its
    first use)."""
    current = dict(engine.trace_stages(trace_id))
    if key is None:
        return current
    for r in engine.learning_report(trace_id)["receipts"]:
        if r.get("idempotency_key") == key:
            for t in reversed(r["transitions"]):
                current[t["node_id"]] = t["from"]
    return current


@dataclass(frozen=True)
class SourceUseRequest:
    """Hits of a trace moved along retrieved → selected → validated → used, in order, all or nothing."""

    trace_id: str
    events: Sequence[tuple[str, str] | Mapping[str, str]]  # (node_id, stage) or {"node_id", "stage"}
    idempotency_key: str | None = None  # a retry with the same key returns the stored receipt

    @classmethod
    def walk(
        cls, engine: FeedbackEngine, trace_id: str, nodes: Sequence[str], upto: str, key: str | None
    ) -> SourceUseRequest:
        """Each of ``nodes`` walked from its current stage up to ``upto`` (a node already there: a no-op the
        ledger still validates)."""
        check_upto(upto)
        current = _stages_before(engine, trace_id, key)
        ids = resolve_hits(engine, nodes, current)
        target = STAGES.index(upto)
        events = [(n, STAGES[s]) for n in ids for s in range(STAGES.index(current.get(n, "retrieved")) + 1, target + 1)]
        return cls(trace_id, events or [(n, upto) for n in ids], key)

    def run(self, engine: FeedbackEngine) -> dict[str, Any]:
        """The receipt of ``record_source_use``."""
        return engine.record_source_use(self.trace_id, list(self.events), idempotency_key=self.idempotency_key)


@dataclass(frozen=True)
class OutcomeRequest:
    """A delayed verdict (confirmed, corrected, rolled_back, superseded) on hits that reached ``used``."""

    trace_id: str
    node_ids: Sequence[str]
    outcome: str
    summary: str = ""
    external_ref: str | None = None  # where the verdict can be checked: a PR, commit, CI run

    def run(self, engine: FeedbackEngine) -> dict[str, Any]:
        """The outcome row of ``record_outcome``."""
        return engine.record_outcome(self.trace_id, list(self.node_ids), self.outcome, self.summary, self.external_ref)


@dataclass(frozen=True)
class FailureRequest:
    """A search that found nothing usable: its own ledger, no weight changes."""

    trace_id: str
    reason: str

    def run(self, target: FailureTarget) -> dict[str, Any]:
        """The failure row of ``record_retrieval_failure`` (``target``: an engine, or the ``Learning`` service
        over a bare store, which needs no embedder)."""
        return target.record_retrieval_failure(self.trace_id, self.reason)
