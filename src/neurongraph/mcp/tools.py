"""The MCP tools' texts: the server instructions and the descriptions that teach the consuming AI
when to call which tool.  The argument models, limits and hints are the JSON interfaces' shared
contract (:mod:`neurongraph.service.contract`), re-exported here.

The descriptions are part of the product (seed 001): a hit is only a candidate; retrieval
alone teaches nothing; ``selected → validated → used`` is reported in order and ``used``
only for sources that really ground the final answer or decision; a search that did not
find what was needed is reported as a retrieval failure instead of punishing its hits.
"""

from __future__ import annotations

from ..service.contract import ARG_MODELS, HINTS, LIMITS, SearchArgs, SourceUseEvent, trace_view

__all__ = [
    "LIMITS",
    "INSTRUCTIONS",
    "DESCRIPTIONS",
    "ARG_MODELS",
    "HINTS",
    "SearchArgs",
    "SourceUseEvent",
    "trace_view",
]

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
aggregate, blame, code), `paths` (the typed edges, with their weights, \
that led to it) and a one-line-per-path `explanation`. Every hit starts at stage `retrieved`. \
A hit is one change: a PR, the commit that landed it and its branch commits come as one hit whose \
`change` names them (`pr`, `landed_by`, `commits`, `folded`: the other results merged into it); \
ask for one `types` entry to get each node apart.

A hit is only a CANDIDATE, not evidence: the snippet is truncated and ranking can be wrong. \
Read a hit in full with `get_node` before relying on it. Being retrieved teaches the engine \
nothing; keep the `trace_id` and report afterwards with `record_source_use` which hits you \
selected, validated and used, or with `record_retrieval_failure` if nothing here was what you \
needed.

Filters: `as_of` searches history as it was at a time (nothing later leaks in); `since`, \
`sources`, `where` and `types` narrow it (`until` and `strategy` are the old names of `as_of` and \
`channel`). A filtered node is not in the graph for that search (it \
neither appears nor links other hits); nodes that lack the filtered field (files, entities) are not \
judged by it.

Working on code? Pass what you are changing: `files` with the lines you are editing \
(["ip/ipaddress.c:120-131"]; a bare path for a whole file) and/or your `diff` (unified, as `git diff` \
prints it). The commits that last changed those lines then rank first (`scores.blame`, and the \
explanation says which lines), and code that names the identifiers you touch scores `code`.""",
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
explanations instead. When the question needs counts, joins, several filters at once or a shape `ask` \
does not read (its `query` is null or its rows do not answer it), write the Cypher yourself: call \
`graph_schema` once, then `cypher`.

Returns `route` (mode + reason), `query` (the Cypher, its params and a one-line explanation, or null), \
`rows`, `hits`, `answer`, `refs` (only ids that were actually retrieved; `dropped_refs` lists any \
others a model cited), a `trace_id` and `explain` (`answered_by`: the question shape that answered, or \
`route:<mode>` for the translator or a search; `read`: each phrase and what it was read as; `left`: the words \
no reading took). An answer that starts "Not understood" or carries "no exact answer" read part of the \
question only: its hits are a search, not the answer. "Not found in the history" means nothing retrieved \
answers it. \
The answer is a summary, not proof: read the cited sources with `get_node`, then report the ones your \
final answer rests on with `record_source_use` on this `trace_id` (every cited id is part of that \
trace), or `record_retrieval_failure` if the answer was not what you needed."""


DESCRIPTIONS["graph_schema"] = """\
The graph you can query with `cypher`, small enough to keep in context (at most ~1,500 tokens): node \
`labels` with counts; `relations` with their direction, (:source)-[:type]->(:target), and counts; \
`properties` of each label with their type and an example value; `notes` (ids, times, lists); and \
`examples`: queries with their params that run on this store and return rows (commits touching a file, \
what fixed an issue, tags on a commit, PRs of an author, ... as the store holds them).

Call it once before writing your first `cypher` query; it changes nothing and stays the same until \
the store changes."""

DESCRIPTIONS["cypher"] = """\
Run one READ-ONLY openCypher query (FalkorDB) over the history graph and get its rows. Use it when \
`ask` does not cover the question: counts, aggregations, joins across relations, several filters at \
once. Call `graph_schema` first and use only the labels, relation types (in their direction) and \
properties it lists; pass values as `params` ($name), never pasted into the query.

Read-only is enforced by the graph engine: CREATE, MERGE, SET, DELETE, REMOVE, write procedures and \
LOAD CSV are refused (`read_only`). A query runs at most 2 s (`query_timeout`: start from a node by id, \
bound variable-length paths, LIMIT early). An unknown label, relation type or property is a \
`query_error` naming the closest known ones; an empty answer whose arrow points against its relation \
says so in `note`.

The answer: `columns`, `rows` (objects keyed by column; a node comes back as its properties), \
`row_count`. It holds at most `limit` rows (default 100, at most 1,000) and `max_chars` characters \
(default 20,000, at most 50,000); when rows were cut, `truncated` is true, `cut_by` says which limit, \
and `more` says whether further rows exist: aggregate (count, collect), filter or ORDER BY … LIMIT \
instead of paging. Row ids (`commit:<sha>`, `issue:N`) can be read in full with `get_node`."""
