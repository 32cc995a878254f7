"""What the request model needs of the engine, as typed protocols.

Why: the requests in this package each make one engine call; typed against these protocols (not ``Any``),
mypy checks every such call — the option names and types a search passes (:class:`SearchOptions`), the
arguments of ask, feedback and Cypher calls — and "go to definition" leads from a request to the method it
calls.  ``neurongraph.engine.Engine`` fits all of them (checked below, for mypy only: the service layer sits
above the engine, so importing it costs no cycle).  A protocol, not the class itself, so a test or the
freshness writer can stand in with what it has.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypedDict, TypeVar, Unpack

from ..retrieval.changes import WorkingSet
from ..retrieval.results import SearchResult
from ..store.base import Store

__all__ = [
    "AskEngine",
    "CypherEngine",
    "FailureTarget",
    "FeedbackEngine",
    "Projection",
    "SearchEngine",
    "SearchOptions",
]

T = TypeVar("T")


class SearchOptions(TypedDict, total=False):
    """``Engine.search`` keyword overrides a request sets: fields of ``config.SearchConfig`` (the test
    test_service_types.py checks each name is one)."""

    channel: str  # a channel kind name (channels.py)
    as_of: object  # epoch seconds or ISO-8601: SearchConfig converts and checks
    since: object
    result_types: tuple[str, ...]
    query_types: tuple[str, ...]
    sources: tuple[str, ...]
    where: dict[str, object] | tuple[tuple[str, object], ...]
    files: tuple[str, ...]
    changes: WorkingSet


class SearchEngine(Protocol):
    """``Engine.search``: explained hybrid + graph search over the store."""

    def search(
        self, query: str, limit: int | None = None, *, qvec: Any = None, **overrides: Unpack[SearchOptions]
    ) -> SearchResult: ...


class AskEngine(Protocol):
    """``Engine.ask``: route a question, query read-only, answer with checked references."""

    def ask(self, question: str, mode: str = "auto", llm: Any = None, limit: int = 5) -> dict[str, Any]: ...


class FailureTarget(Protocol):
    """An engine, or the ``learning.Learning`` service over a bare store: records a missed search."""

    def record_retrieval_failure(self, trace_id: str, reason: str) -> dict[str, Any]: ...


class FeedbackEngine(FailureTarget, Protocol):
    """The learning loop's ledgers as the engine exposes them (``learning/api.py``), and its store."""

    @property
    def store(self) -> Store: ...

    def trace_stages(self, trace_id: str) -> Mapping[str, str]: ...

    def learning_report(self, trace_id: str) -> dict[str, Any]: ...

    def record_source_use(
        self, trace_id: str, events: list[Any], *, idempotency_key: str | None = None
    ) -> dict[str, Any]: ...

    def record_outcome(
        self, trace_id: str, node_ids: Sequence[str], outcome: str, summary: str = "", external_ref: str | None = None
    ) -> dict[str, Any]: ...


class Projection(Protocol):
    """The read-only Cypher projection (``graphdb/projection.py`` ``CypherProjection``)."""

    def query(self, cypher: str, params: dict[str, Any] | None = None, timeout_ms: int | None = None) -> dict[str, Any]:
        """Run one read-only query: ``{"columns", "rows", "truncated"}``."""
        ...

    def memo(self, key: str, compute: Callable[[], T]) -> T:
        """``compute()``, kept until the store changes."""
        ...


class CypherEngine(Protocol):
    """The engine's one Cypher projection (started on first use) and its store."""

    @property
    def store(self) -> Store: ...

    def cypher_projection(self) -> Projection: ...


if TYPE_CHECKING:  # the engine fits every protocol (mypy checks this function; it never runs)
    from ..engine import Engine

    def _engine_fits(e: Engine) -> tuple[SearchEngine, AskEngine, FeedbackEngine, CypherEngine]:
        return e, e, e, e
