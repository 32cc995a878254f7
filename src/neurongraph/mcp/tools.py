"""The MCP tools' contract: argument models (JSON schemas that reject unknown fields), input
limits, and the descriptions that teach the consuming AI when to call which tool.

The descriptions are part of the product (seed 001): a hit is only a candidate; retrieval
alone teaches nothing; ``selected → validated → used`` is reported in order and ``used``
only for sources that really ground the final answer or decision; a search that did not
find what was needed is reported as a retrieval failure instead of punishing its hits.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr

from ..channels import ChannelName
from ..engine import MAX_QUERY_CHARS
from ..learning.api import MAX_REASON_CHARS
from ..learning.policy import OUTCOMES

__all__ = ["LIMITS", "INSTRUCTIONS", "DESCRIPTIONS", "ARG_MODELS", "HINTS", "trace_view"]

LIMITS = {
    "query_chars": MAX_QUERY_CHARS,
    "limit": 50,  # hits per search
    "id_chars": 512,  # trace ids, node ids
    "key_chars": 200,  # idempotency keys
    "events": 200,  # events per record_source_use call
    "node_ids": 100,  # nodes per record_outcome call
    "text_chars": MAX_REASON_CHARS,  # failure reasons, outcome summaries
    "ref_chars": 1000,  # external_ref
    "filter_items": 100,  # types / sources / files / where keys per search
    "filter_chars": 512,  # one type, source, path, metadata key or value
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
    model_config = _STRICT
    node_id: NodeId
    stage: Literal["selected", "validated", "used"] = Field(
        description="selected: you chose to read it; validated: reading the full source confirmed it is "
        "relevant and correct; used: it grounds your final answer or decision."
    )


class SearchArgs(_Args):
    query: Annotated[
        str,
        Field(
            min_length=1, max_length=LIMITS["query_chars"], description="The question or topic, in natural language."
        ),
    ]
    limit: Annotated[StrictInt, Field(ge=1, le=LIMITS["limit"], description="How many hits to return.")] = 10
    strategy: ChannelName | None = Field(
        None,
        description="Graph strategy (default: the engine's, 'spread'). spread: activation spreading over "
        "typed edges; beam: best paths; ppr: personalised PageRank; eager / mmr / scored: "
        "traversal strategies (mmr diversifies); none: hybrid lexical+dense only, no graph.",
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
    until: _Time | None = Field(None, description="Only nodes whose event time is at or before this.")
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
        description="Repository-relative paths of the files you are working "
        "on: their `file:<path>` nodes seed the search, so earlier "
        "changes to them come up. Unknown paths are reported in "
        "`unknown_files`, not an error.",
    )


class RecordSourceUseArgs(_Args):
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


class RecordOutcomeArgs(_Args):
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


class RecordRetrievalFailureArgs(_Args):
    trace_id: TraceId
    reason: Annotated[
        str,
        Field(
            min_length=1,
            max_length=LIMITS["text_chars"],
            description="What you looked for, what was missing or wrong, and what fallback you used instead.",
        ),
    ]


class GetTraceArgs(_Args):
    trace_id: TraceId


class GetNodeArgs(_Args):
    node_id: Annotated[
        str,
        Field(
            min_length=1, max_length=LIMITS["id_chars"], description="A node id, usually a hit's `id` from `search`."
        ),
    ]


class AskArgs(_Args):
    question: Annotated[
        str, Field(min_length=1, max_length=LIMITS["query_chars"], description="The question, in natural language.")
    ]
    mode: Literal["auto", "graph", "vector", "hybrid"] = Field(
        "auto",
        description="auto: the engine routes (names + relation words -> graph; 'similar/about' -> vector; "
        "both -> hybrid). Force one only if you know better.",
    )
    limit: Annotated[StrictInt, Field(ge=1, le=LIMITS["limit"], description="Search hits to use.")] = 5


ARG_MODELS: dict[str, type[BaseModel]] = {
    "search": SearchArgs,
    "get_node": GetNodeArgs,
    "record_source_use": RecordSourceUseArgs,
    "record_retrieval_failure": RecordRetrievalFailureArgs,
    "record_outcome": RecordOutcomeArgs,
    "get_trace": GetTraceArgs,
    "ask": AskArgs,
}

INSTRUCTIONS = """\
Neuron Graph RAG finds the few original sources (issues, pull requests, commits, decisions, wiki \
pages) behind a question, and learns from which sources you actually use.

The loop: `search` -> read promising hits in full with `get_node` -> `record_source_use` for the \
hits you selected, validated and used (in that order) -> or `record_retrieval_failure` when the \
search did not give you what you needed. Later, `record_outcome` records how a decision built on \
used sources turned out. Searching alone teaches the engine nothing; only sources you report as \
`used` strengthen the graph paths that found them, so report `used` honestly and only for sources \
that ground your final answer or decision."""

DESCRIPTIONS: dict[str, str] = {
    "search": """\
Search the knowledge graph for the few original sources relevant to a question.

Returns a `trace_id` and ranked hits. Each hit has `id`, `type`, `title`, a text `snippet`, \
`scores` (lexical, dense, entry, graph, final; and where they apply priming, recency, repairs, lines_written, \
aggregate), `paths` (the typed edges, with their weights, \
that led to it) and a one-line-per-path `explanation`. Every hit starts at stage `retrieved`.

A hit is only a CANDIDATE, not evidence: the snippet is truncated and ranking can be wrong. \
Read a hit in full with `get_node` before relying on it. Being retrieved teaches the engine \
nothing; keep the `trace_id` and report afterwards with `record_source_use` which hits you \
selected, validated and used, or with `record_retrieval_failure` if nothing here was what you \
needed.

Filters: `as_of` searches history as it was at a time (nothing later leaks in); `since` / `until`, \
`sources`, `where` and `types` narrow it. A filtered node is not in the graph for that search (it \
neither appears nor links other hits); nodes that lack the filtered field (files, entities) are not \
judged by it. Pass `files` you are editing to bring up the history of that code.""",
    "get_node": """\
Read one source in full: id, type, title, the complete text and metadata.

Call it after choosing (selecting) a hit from `search`, to check the original before you rely \
on it. Reading a node changes nothing and does not count as use; report what you did with \
`record_source_use`.""",
    "record_source_use": """\
Report how far hits of one search got: `selected` -> `validated` -> `used`. This is the only \
signal the engine learns from.

- selected: you chose the hit to read in full (e.g. with `get_node`).
- validated: reading the full source confirmed it is relevant and correct for the task.
- used: it actually grounds your final answer, implementation or review decision.

Rules: stages go in order, one step at a time per node; one call may walk a node through \
several steps (events [{node_id, stage: "selected"}, {.., "validated"}, {.., "used"}]). Repeating \
a node's current stage is a harmless no-op; skipping a stage or going back is rejected \
(`invalid_stage_transition`) and then the whole call changes nothing. Only hits of that trace \
are accepted (`node_not_in_trace`).

Report `used` ONLY for sources your final answer or decision really rests on - not for hits you \
merely read, nor for ones you judged irrelevant or wrong (leave those at `selected` or \
`validated`). Do not mark anything used to make up for a poor search: use \
`record_retrieval_failure` for that.

When a node newly reaches `used`, the edges of the path that brought it are strengthened \
(bounded). The receipt lists every transition, `newly_used` nodes and `edges_changed` with old \
and new weight. Always pass an `idempotency_key` unique to this report: a retry with the same \
key and events returns the same receipt and applies nothing twice; the same key with different \
events is `idempotency_conflict`.""",
    "record_retrieval_failure": """\
Record that a search did not give you what you needed: the exact source was missing, the hits \
were off-topic or too broad, or you had to fall back (rephrase, another tool, ask the user, \
read the repository directly).

Use this INSTEAD of punishing or withholding hits: a failure is about the query or the index, \
not evidence that the returned sources are wrong, so it is kept in its own ledger, changes no \
weight and demotes no node. Describe what you looked for, what was missing, and the fallback. \
Sources that you did use from the same trace can still be reported with `record_source_use`; \
if a later search succeeds, report use on that later trace.""",
    "record_outcome": """\
Record a delayed verdict, once it is known, on sources that reached `used` in a trace: \
`confirmed` (held up: merged, CI green, accepted), `corrected` (a person or later work \
corrected it), `rolled_back` (the change was reverted), `superseded` (replaced by newer \
knowledge).

Only nodes that reached `used` in that trace are accepted (`source_not_used`). Outcomes are a \
separate ledger from source use: by default they change no weight; they keep the history of \
what was right. Do not use this for a search that found nothing useful - that is \
`record_retrieval_failure`.""",
    "get_trace": """\
The stored record of one search: the query, its hits with scores and explanation paths, the \
current stage of every hit, the receipts of source-use reports (with weight changes), outcomes \
and retrieval failures. Use it to see what was already reported before reporting again.""",
}

DESCRIPTIONS["ask"] = """\
Answer a question from the history with cited sources: the engine routes it (graph / vector / \
hybrid), turns a structural question into a READ-ONLY Cypher query over the typed graph (writes are \
refused by the graph engine itself), searches when meaning matters, and answers only from what came \
back, ending with `[refs: ...]`.

Use it for questions about concrete structure: which commit/PR fixes an issue, what touched a file \
before a date, what a change reverted or superseded, how two items are connected, the latest items of \
a type. For open "find me material about X" exploration, `search` gives you ranked candidates with \
explanations instead.

Returns `route` (mode + reason), `query` (the Cypher, its params and a one-line explanation, or null), \
`rows`, `hits`, `answer`, `refs` (only ids that were actually retrieved; `dropped_refs` lists any \
others a model cited) and a `trace_id`. "Not found in the history" means nothing retrieved answers it. \
The answer is a summary, not proof: read the cited sources with `get_node`, then report the ones your \
final answer rests on with `record_source_use` on this `trace_id` (every cited id is part of that \
trace), or `record_retrieval_failure` if the answer was not what you needed."""

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
}


def trace_view(report: dict, scores: Callable[[dict], dict] = dict, paths: Callable[[list], list] = list) -> dict:
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
