"""The JSON interfaces' request contract: argument models (JSON schemas that reject unknown fields),
input limits, error hints and the trace view, shared by the MCP tools and the HTTP API.

The MCP server publishes these models as tool schemas and the HTTP API as request bodies (its
OpenAPI), so both validate alike; each model turns itself into engine calls (``to_request`` for a
search, ``run`` for the others), the same calls the CLI makes.  Field descriptions are part of the
product: they teach the consuming agent what to pass (a hit is only a candidate; report use honestly;
pass the lines you are changing).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from ..channels import ChannelName
from ..checks import MAX_QUERY_CHARS
from ..graphdb import agent as cypher_limits
from ..graphdb.guard import MAX_QUERY_CHARS as MAX_CYPHER_CHARS
from ..learning.api import MAX_KEY_CHARS, MAX_REASON_CHARS, MAX_REF_CHARS
from ..learning.policy import OUTCOMES
from .ask import AskRequest
from .cypher import CypherRequest, GraphSchemaRequest
from .engine_api import AskEngine, CypherEngine, FailureTarget, FeedbackEngine
from .feedback import FailureRequest, OutcomeRequest, SourceUseRequest
from .search import SearchRequest

__all__ = [
    "LIMITS",
    "ARG_MODELS",
    "HINTS",
    "SearchArgs",
    "SourceUseEvent",
    "RecordSourceUseArgs",
    "RecordOutcomeArgs",
    "RecordRetrievalFailureArgs",
    "GetTraceArgs",
    "GetNodeArgs",
    "AskArgs",
    "GraphSchemaArgs",
    "CypherArgs",
    "trace_view",
]

LIMITS = {
    "query_chars": MAX_QUERY_CHARS,
    "limit": 50,  # hits per search
    "id_chars": 512,  # trace ids, node ids
    "key_chars": MAX_KEY_CHARS,  # idempotency keys (the Python API and the CLI refuse longer ones too)
    "events": 200,  # events per record_source_use call
    "node_ids": 100,  # nodes per record_outcome call
    "text_chars": MAX_REASON_CHARS,  # failure reasons, outcome summaries
    "ref_chars": MAX_REF_CHARS,  # external_ref
    "filter_items": 100,  # types / sources / files / where keys per search
    "filter_chars": 512,  # one type, source, path (with its line range), metadata key or value
    # one unified diff: a diff one past this, JSON-escaped at worst (12 bytes a character), still fits the HTTP
    # body cap (256 KiB), so an over-long diff is told so (400) rather than cut off (413); more lines: `files`
    "diff_chars": 16_000,
    "cypher_chars": MAX_CYPHER_CHARS,  # one Cypher query (the guard's limit)
    "cypher_rows": cypher_limits.MAX_ROWS,  # rows of one cypher answer (the graph child's cap)
    "cypher_answer_chars": cypher_limits.MAX_CHARS,  # characters of one cypher answer as JSON
    "cypher_params": 50,  # $params of one query
}

_STRICT = ConfigDict(extra="forbid", str_strip_whitespace=False)
TraceId = Annotated[
    str, Field(min_length=1, max_length=LIMITS["id_chars"], description="The trace_id returned by `search`.")
]
NodeId = Annotated[str, Field(min_length=1, max_length=LIMITS["id_chars"], description="A hit's `id`.")]
_Name = Annotated[str, Field(min_length=1, max_length=LIMITS["filter_chars"])]
_Names = Annotated[list[_Name], Field(min_length=1, max_length=LIMITS["filter_items"])]
_Finite = Annotated[StrictFloat, Field(allow_inf_nan=False)]  # JSON has no NaN/Infinity: never accept them
_Time = StrictInt | _Finite | Annotated[str, Field(min_length=1, max_length=64)]
_Scalar = StrictBool | StrictInt | _Finite | Annotated[StrictStr, Field(max_length=LIMITS["filter_chars"])]


class _Args(BaseModel):
    """Tool arguments: unknown fields are rejected (``additionalProperties: false``)."""

    model_config = _STRICT


class SourceUseEvent(BaseModel):
    """One step of one hit: the unit of ``record_source_use``."""

    model_config = _STRICT
    node_id: NodeId
    stage: Literal["selected", "validated", "used"] = Field(
        description="selected: you chose to read it; validated: reading the full source confirmed it is "
        "relevant and correct; used: it grounds your final answer or decision."
    )


class SearchArgs(_Args):
    """``search``: the question plus optional filters and the working set (files, lines, diff)."""

    query: Annotated[
        str,
        Field(
            min_length=1, max_length=LIMITS["query_chars"], description="The question or topic, in natural language."
        ),
    ]
    limit: Annotated[StrictInt, Field(ge=1, le=LIMITS["limit"], description="How many hits to return.")] = 10
    channel: ChannelName | None = Field(
        None,
        description="Graph channel (default: the engine's, 'spread'). spread: activation spreading over "
        "typed edges; beam: best paths; ppr: personalised PageRank; eager / mmr / scored: "
        "traversal strategies (mmr diversifies); none: hybrid lexical+dense only, no graph.",
    )
    strategy: ChannelName | None = Field(
        None,
        description="Deprecated: the old name of `channel` (the same option); removed in the next release.",
        json_schema_extra={"deprecated": True},
    )
    as_of: _Time | None = Field(
        None,
        description="Search the store as it was at this time: epoch seconds or ISO-8601 "
        "('2024-05-01T12:00:00Z'). Nodes whose event time (metadata 'time') is later are "
        "invisible, also as graph bridges. Nodes without a time are always visible.",
    )
    since: _Time | None = Field(
        None, description="Only nodes whose event time is at or after this (epoch seconds or ISO-8601)."
    )
    until: _Time | None = Field(
        None,
        description="Deprecated: the old name of `as_of` (the same filter; given both, the earlier wins); "
        "removed in the next release.",
        json_schema_extra={"deprecated": True},
    )
    types: _Names | None = Field(
        None,
        description="Only return hits of these node types (e.g. 'commit', "
        "'issue'); other nodes still link hits together.",
    )
    sources: _Names | None = Field(
        None, description="Only nodes whose metadata 'source' (repository or site name) is one of these."
    )
    where: Annotated[dict[_Name, _Scalar], Field(min_length=1, max_length=LIMITS["filter_items"])] | None = Field(
        None, description='Metadata equality, e.g. {"state": "open"}; a list value matches when one element equals.'
    )
    files: _Names | None = Field(
        None,
        description="The files you are working on, repository-relative, each optionally with the lines you are "
        "changing: 'src/a.c' (the whole file: its `file:<path>` node seeds the search, so earlier changes to it "
        "come up) or 'src/a.c:120-131' / 'src/a.c:7' (1-based, inclusive: the commits that last changed those "
        "lines rank first, scored `blame`). Pass the lines you are about to edit whenever you know them. "
        "Unknown paths are reported in `unknown_files`, not an error.",
    )
    diff: Annotated[str, Field(min_length=1, max_length=LIMITS["diff_chars"])] | None = Field(
        None,
        description="Your change as a unified diff (`git diff`, `git show`, `diff -u` output): the lines it "
        "removes or edits find the commits that last changed them (`blame`), the identifiers it touches "
        "match code (`code`). Pass it when reviewing or continuing a change; combine with `files`. At most "
        f"{LIMITS['diff_chars']:,} characters: for a larger change pass its `files` with the changed line ranges.",
    )

    def to_request(self) -> SearchRequest:
        """The interface-neutral request (the CLI builds the same one from its flags); the deprecated names
        (``strategy``, ``until``) become the current ones, each said once in the result's ``warnings``."""
        return SearchRequest.with_aliases(**{k: getattr(self, k) for k in type(self).model_fields})


class RecordSourceUseArgs(_Args):
    """``record_source_use``: walk hits of a trace selected → validated → used."""

    trace_id: TraceId
    events: Annotated[
        list[SourceUseEvent],
        Field(min_length=1, max_length=LIMITS["events"], description="Applied in order, all or nothing."),
    ]
    idempotency_key: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS["key_chars"],
            description="Unique per report, e.g. '<conversation>/<turn>/<n>'. Retrying with the same key and the "
            "same events returns the original receipt without applying anything twice.",
        ),
    ]

    def run(self, engine: FeedbackEngine) -> dict[str, Any]:
        """The receipt of ``Engine.record_source_use``."""
        events = [{"node_id": e.node_id, "stage": e.stage} for e in self.events]
        return SourceUseRequest(self.trace_id, events, self.idempotency_key).run(engine)


class RecordOutcomeArgs(_Args):
    """``record_outcome``: a delayed verdict on sources that reached ``used``."""

    trace_id: TraceId
    node_ids: Annotated[
        list[NodeId],
        Field(min_length=1, max_length=LIMITS["node_ids"], description="Hits of the trace that reached 'used'."),
    ]
    outcome: Literal[OUTCOMES] = Field(  # type: ignore[valid-type]
        description="confirmed: it held up (merged, CI green, accepted); corrected: a person or later work "
        "corrected it; rolled_back: the change was reverted; superseded: replaced by newer knowledge."
    )
    summary: Annotated[
        str, Field(min_length=1, max_length=LIMITS["text_chars"], description="One or two sentences: what happened.")
    ]
    external_ref: Annotated[str, Field(min_length=1, max_length=LIMITS["ref_chars"])] | None = Field(
        None, description="Where the verdict can be checked: a PR, commit, issue or URL."
    )

    def run(self, engine: FeedbackEngine) -> dict[str, Any]:
        """The outcome row of ``Engine.record_outcome``."""
        return OutcomeRequest(self.trace_id, self.node_ids, self.outcome, self.summary, self.external_ref).run(engine)


class RecordRetrievalFailureArgs(_Args):
    """``record_retrieval_failure``: the search missed; its own ledger, no weight changes."""

    trace_id: TraceId
    reason: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS["text_chars"],
            description="What you looked for, what was missing or wrong, and what fallback you used instead.",
        ),
    ]

    def run(self, engine: FailureTarget) -> dict[str, Any]:
        """The failure row of ``Engine.record_retrieval_failure``."""
        return FailureRequest(self.trace_id, self.reason).run(engine)


class GetTraceArgs(_Args):
    """``get_trace``: one stored search."""

    trace_id: TraceId


class GetNodeArgs(_Args):
    """``get_node``: one source in full."""

    node_id: Annotated[
        str,
        Field(
            min_length=1, max_length=LIMITS["id_chars"], description="A node id, usually a hit's `id` from `search`."
        ),
    ]


class AskArgs(_Args):
    """``ask``: a cited answer from the history."""

    question: Annotated[
        str, Field(min_length=1, max_length=LIMITS["query_chars"], description="The question, in natural language.")
    ]
    mode: Literal["auto", "graph", "vector", "hybrid"] = Field(
        "auto",
        description="auto: the engine routes (names + relation words -> graph; 'similar/about' -> vector; "
        "both -> hybrid). Force one only if you know better.",
    )
    limit: Annotated[StrictInt, Field(ge=1, le=LIMITS["limit"], description="Search hits to use.")] = 5

    def run(self, engine: AskEngine) -> dict[str, Any]:
        """``Engine.ask``'s answer (rule-based route, read-only graph query, extractive answer)."""
        return AskRequest(self.question, self.mode, self.limit).run(engine)


_ParamScalar = (
    StrictBool
    | Annotated[StrictInt, Field(ge=-(2**63), lt=2**63)]
    | _Finite
    | Annotated[StrictStr, Field(max_length=LIMITS["query_chars"])]
)
_ParamName = Annotated[str, Field(min_length=1, max_length=64, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")]


class GraphSchemaArgs(_Args):
    """``graph_schema``: no arguments."""

    def run(self, engine: CypherEngine) -> dict[str, Any]:
        """Labels with counts, relations with direction and counts, properties per label, example queries."""
        return GraphSchemaRequest().run(engine)


class CypherArgs(_Args):
    """``cypher``: one read-only query, its ``$params`` and the answer's limits."""

    query: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS["cypher_chars"],
            description="One read-only openCypher query (MATCH … RETURN …; FalkorDB dialect). Write the labels, "
            "relation types and properties `graph_schema` lists; pass values as $name parameters.",
        ),
    ]
    params: (
        Annotated[
            dict[_ParamName, _ParamScalar | None | Annotated[list[_ParamScalar], Field(max_length=1000)]],
            Field(max_length=LIMITS["cypher_params"]),
        ]
        | None
    ) = Field(None, description='Values for the query\'s $names, e.g. {"file": "file:src/a.c", "number": 12}.')
    limit: Annotated[
        StrictInt, Field(ge=1, le=LIMITS["cypher_rows"], description="At most this many rows in the answer.")
    ] = cypher_limits.DEFAULT_ROWS
    max_chars: Annotated[
        StrictInt,
        Field(
            ge=cypher_limits.MIN_CHARS,
            le=LIMITS["cypher_answer_chars"],
            description="At most this many characters of JSON in the answer: rows past it are cut (truncated).",
        ),
    ] = cypher_limits.DEFAULT_CHARS
    timeout_ms: Annotated[StrictInt, Field(ge=1, le=cypher_limits.MAX_TIMEOUT_MS)] | None = Field(
        None,
        description=f"A lower time limit in ms (the graph engine stops every query at {cypher_limits.MAX_TIMEOUT_MS}).",
    )

    def run(self, engine: CypherEngine) -> dict[str, Any]:
        """The rows, cut to the limits, saying whether they were cut and whether more exist."""
        return CypherRequest(self.query, self.params, self.limit, self.max_chars, self.timeout_ms).run(engine)


ARG_MODELS: dict[str, type[BaseModel]] = {
    "search": SearchArgs,
    "get_node": GetNodeArgs,
    "record_source_use": RecordSourceUseArgs,
    "record_retrieval_failure": RecordRetrievalFailureArgs,
    "record_outcome": RecordOutcomeArgs,
    "get_trace": GetTraceArgs,
    "ask": AskArgs,
    "graph_schema": GraphSchemaArgs,
    "cypher": CypherArgs,
}

HINTS = {
    "unknown_trace": "Use the trace_id returned by `search`.",
    "unknown_node": "Use a hit `id` returned by `search`.",
    "node_not_in_trace": "Only hits of that trace can be reported; `get_trace` lists them.",
    "invalid_stage_transition": "Report selected, then validated, then used, one step at a time; `get_trace` "
    "shows each hit's current stage. Nothing from this call was applied.",
    "idempotency_conflict": "That key was already used for a different report; use a new idempotency_key.",
    "source_not_used": "An outcome can only judge sources that reached 'used'; report source use first.",
    "schema_violation": "The store's relation schema rejects this edge; nothing from this call was applied. "
    "`ngr schema show` lists the allowed relations.",
    "invariant_violation": "The write would break an invariant of the store's schema; nothing from this call "
    "was applied.",
    "read_only": "Only read queries run (MATCH, OPTIONAL MATCH, WITH, RETURN, read procedures); the store is "
    "changed only by ingesting and by feedback.",
    "query_error": "`graph_schema` lists the labels, relation types (with their direction) and properties, "
    "and example queries that run on this store.",
    "query_timeout": "Narrow the query: start from one node by id ({id: $id}), bound variable-length paths "
    "(*1..3), LIMIT early.",
}


def trace_view(
    report: dict[str, Any],
    scores: Callable[[dict[str, Any]], dict[str, Any]] = dict,
    paths: Callable[[list[Any]], list[Any]] = list,
) -> dict[str, Any]:
    """What an interface shows of ``Engine.learning_report``: the trace's hits with their source-use stage,
    and its receipts, outcomes and failures.  One view for MCP and HTTP; ``scores``/``paths`` shape the
    numbers (MCP rounds them)."""
    t, stages = report["trace"], report["stages"]
    hits = [
        {
            "rank": h.get("rank"),
            "id": h["id"],
            "type": h.get("type"),
            "title": h.get("title"),
            "stage": stages.get(h["id"], "retrieved"),
            "seed": bool(h.get("seed", False)),
            "scores": scores(h.get("scores") or {}),
            "paths": paths(h.get("paths") or []),
        }
        for h in t["hits"]
    ]
    return {
        "trace_id": t["id"],
        "query": t["query"],
        "created_at": t["created_at"],
        "hits": hits,
        "receipts": report["receipts"],
        "outcomes": report["outcomes"],
        "failures": report["failures"],
    }
