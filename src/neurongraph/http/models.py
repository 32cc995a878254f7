"""Request and response models of the HTTP API (they are its OpenAPI schema).

The request bodies are the JSON interfaces' shared argument models (``neurongraph.service.contract``,
which the MCP tools publish too): the same fields, limits, descriptions and ``additionalProperties:
false``, so the two interfaces validate alike.  Search adds ``rels`` (the CLI's ``--rel``).  Responses
are documented here; the search response is exactly ``SearchResult.to_dict()``, the JSON of ``ngr search --json``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..service.contract import (
    LIMITS,
    AskArgs,
    CypherArgs,
    RecordOutcomeArgs,
    RecordRetrievalFailureArgs,
    RecordSourceUseArgs,
    SearchArgs,
)

__all__ = [
    "LIMITS",
    "SearchBody",
    "AskBody",
    "CypherBody",
    "SourceUseBody",
    "OutcomeBody",
    "FailureBody",
    "SearchOut",
    "NodeOut",
    "NeighboursOut",
    "TraceOut",
    "TraceSummary",
    "ReceiptOut",
    "OutcomeOut",
    "FailureOut",
    "StatsOut",
    "AskOut",
    "GraphSchemaOut",
    "CypherOut",
    "JobOut",
    "HealthOut",
]

_Name = Annotated[str, Field(min_length=1, max_length=LIMITS["filter_chars"])]
_Names = Annotated[list[_Name], Field(min_length=1, max_length=LIMITS["filter_items"])]


class SearchBody(SearchArgs):
    """``POST /api/search``: the MCP ``search`` arguments plus ``rels``."""

    rels: _Names | None = Field(
        None,
        description="Relation types the question is about (the CLI's --rel): edges of other types are attenuated.",
    )


AskBody = AskArgs
CypherBody = CypherArgs
SourceUseBody = RecordSourceUseArgs
OutcomeBody = RecordOutcomeArgs
FailureBody = RecordRetrievalFailureArgs


# ----------------------------------------------------------------------------- responses
FRESHNESS = (
    "Only with `ngr serve --repo`: stale, syncing, synced_at, age_s, head, repo_head, waited_ms, repos, note "
    "(docs/http.md)."
)


class _Out(BaseModel):
    model_config = ConfigDict(extra="allow")


class PathEdge(_Out):
    src: str
    rel: str
    dst: str
    weight: float


class HitPath(_Out):
    nodes: list[str]
    edges: list[PathEdge]
    score: float


class HitOut(_Out):
    id: str
    type: str
    title: str
    text: str = Field(description="The node's text, cut to 300 characters (+ '…').")
    seed: bool
    meta: dict[str, str] = Field(
        default_factory=dict, description="sha (12 characters), date (ISO, UTC), author: where the node has them."
    )
    scores: dict[str, float] = Field(
        description="lexical, dense, entry, graph, final; where they apply: priming, recency, repairs, lines_written, "
        "aggregate."
    )
    ranks: dict[str, int | None]
    paths: list[HitPath] = Field(description="The explanation paths: seed → typed weighted edges → this hit.")
    change: dict[str, Any] | None = Field(
        None,
        description="The change this hit stands for, when it is more than this node: pr, landed_by, commits, "
        "commits_total, folded (the other results merged into this hit), placed_by (when another of them ranked "
        "it).  None: the change is this node alone.",
    )


class SearchOut(_Out):
    """Exactly the JSON of ``ngr search --json``."""

    trace_id: str
    query: str
    seeds: list[str]
    hits: list[HitOut]
    timings_ms: dict[str, float]
    unknown_files: list[str] | None = Field(None, description="Only when `files` was given.")
    trace_saved: bool | None = Field(
        None, description="Only when false: the store could not take the trace (a full disk); the hits stand."
    )
    warnings: list[str] | None = Field(None, description="Only when something about the answer needs saying.")
    reading: dict[str, Any] | None = Field(
        None,
        description="Only when the question asks when something began, or which change introduced or removed a "
        "name: intent, asked, topic, rule (what the search did, or why it searched as usual), put_first.",
    )
    freshness: dict[str, Any] | None = Field(None, description=FRESHNESS)


class NodeOut(_Out):
    """``GET /api/node``: one node in full."""

    id: str
    type: str
    title: str
    text: str
    metadata: dict[str, Any]
    confidence: float


class Neighbour(_Out):
    node: str
    type: str | None
    direction: Literal["in", "out"]
    rel: str
    weight: float = Field(description="The edge's base weight.")
    plastic: float | None = Field(None, description="The learned part added by feedback (decays over time).")


class NeighboursOut(_Out):
    """``GET /api/neighbours``: a node's typed edges, with base and learned weights."""

    node: str = Field(description="The node's id (an alias in the request is resolved to it).")
    direction: Literal["in", "out", "both"]
    neighbours: list[Neighbour]


class TraceHit(_Out):
    rank: int | None
    id: str
    type: str | None
    title: str | None
    stage: Literal["retrieved", "selected", "validated", "used"]
    seed: bool
    scores: dict[str, float]
    paths: list[HitPath]


class TraceOut(_Out):
    """``GET /api/traces/{id}``: one stored search, its feedback and every weight it changed."""

    trace_id: str
    query: str
    created_at: float
    hits: list[TraceHit]
    receipts: list[dict[str, Any]]
    outcomes: list[dict[str, Any]]
    failures: list[dict[str, Any]]
    weight_changes: list[dict[str, Any]] = Field(
        description="Every edge weight this trace's feedback changed (ledger rows: eid, kind, node_id, old_weight, "
        "new_weight, at; src/rel/dst where a receipt names the edge)."
    )


class TraceSummary(_Out):
    """One row of ``GET /api/traces``."""

    trace_id: str
    query: str
    kind: Literal["search", "ask"]
    created_at: float
    hits: int


class EdgeChange(_Out):
    src: str
    rel: str
    dst: str
    kind: str
    node_id: str
    old_weight: float
    new_weight: float


class Transition(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    node_id: str
    from_: str = Field(alias="from")
    to: str


class ReceiptOut(_Out):
    """``POST /api/source-use``: the transitions applied and the edge weights they changed."""

    receipt_id: str
    trace_id: str
    idempotency_key: str | None
    transitions: list[Transition]
    newly_used: list[str]
    edges_changed: list[EdgeChange]
    created_at: float


class OutcomeOut(_Out):
    """``POST /api/outcome``: the recorded verdict and any weight it changed."""

    outcome_id: int
    trace_id: str
    node_ids: list[str]
    outcome: str
    effect: str | None
    edges_changed: list[EdgeChange]
    created_at: float


class FailureOut(_Out):
    """``POST /api/retrieval-failure``: the recorded failure (it changes no weight)."""

    failure_id: int
    trace_id: str
    reason: str
    created_at: float


class StatsOut(_Out):
    """``GET /api/stats``: the store's counts."""

    nodes: int
    edges: int
    traces: int


class AskOut(_Out):
    """``POST /api/ask``: the route, the graph query, rows, hits and the cited answer."""

    route: dict[str, Any]
    query: dict[str, Any] | None
    rows: list[Any]
    hits: list[dict[str, Any]]
    answer: str
    refs: list[str]
    trace_id: str
    freshness: dict[str, Any] | None = Field(None, description=FRESHNESS)


class GraphSchemaOut(_Out):
    """``GET /api/graph/schema``: what ``POST /api/cypher`` queries are written against (at most ~6,000
    characters: the MCP tool ``graph_schema``)."""

    labels: dict[str, int] = Field(description="Node label -> count (every node also has the label Node).")
    relations: list[str] = Field(description="'(:source)-[:type]->(:target) count', most common first.")
    properties: dict[str, dict[str, str]] = Field(description="Label -> property -> 'type example'.")
    notes: list[str]
    examples: list[dict[str, Any]] = Field(description="what, cypher, params: queries that run on this store.")


class CypherOut(_Out):
    """``POST /api/cypher``: the rows of one read-only query, cut to its limits."""

    columns: list[str]
    rows: list[dict[str, Any]]
    row_count: int = Field(description="Rows in this answer.")
    truncated: bool = Field(description="Rows were cut: by `limit`, `max_chars` or the engine's 1,000-row cap.")
    more: bool = Field(description="More rows exist than this answer holds.")
    cut_by: Literal["limit", "max_chars", "engine_cap"] | None = Field(None, description="Only when truncated.")
    note: str | None = Field(
        None, description="When truncated: how to ask for less; with no rows: a hop that points against its relation."
    )
    stale: dict[str, Any] | None = Field(None, description="Only when a shared graph is behind the store.")
    freshness: dict[str, Any] | None = Field(None, description=FRESHNESS)


class JobOut(_Out):
    """A search or ask running in the background, for the page's progress display."""

    job_id: str
    kind: Literal["search", "ask"]
    state: Literal["queued", "running", "done", "error"]
    phase: str = Field(description="What it is doing now, e.g. 'waiting (2 ahead)', 'embedding the query'.")
    queue_position: int = Field(description="Engine calls ahead of it (0 once it runs).")
    elapsed_ms: float
    result: dict[str, Any] | None = Field(None, description="The search/ask response once state is 'done'.")
    error: dict[str, Any] | None = Field(None, description="The error body's 'error' once state is 'error'.")


class HealthOut(_Out):
    """``GET /api/health``: liveness, version, whether POSTs need a token, and the input limits."""

    status: Literal["ok"]
    version: str
    token_required: bool = Field(description="Whether POST requests need `Authorization: Bearer <token>`.")
    reads_need_token: bool = Field(
        description="Whether the GETs (nodes, neighbours, traces, stats, jobs) need the token too "
        "(a server with a token, not started with --public-reads)."
    )
    limits: dict[str, int]
