"""The MCP server: the engine's public API as MCP tools (official ``mcp`` SDK 2.x, ``MCPServer``).

Depends only on the core's public API (``Engine.search``, ``get_node``, ``get_trace``,
``record_source_use``, ``record_outcome``, ``record_retrieval_failure``, ``learning_report``)
and its typed errors; the core never imports this module or the SDK.

* Arguments are validated against strict pydantic models (``additionalProperties: false``);
  any violation, and every :class:`~neurongraph.errors.NeuronGraphError`, comes back as an MCP
  tool error (``isError: true``) whose text is ``error[code]: message`` and whose structured
  content is ``{"error": {"code", "message", "hint", "details"}}``.
* ``ask`` (issue 13) runs ``Engine.ask`` without an LLM (rule-based route, NL->Cypher, extractive answer).
* One engine per server process; calls are serialised on it (the engine's in-memory indexes
  are not thread-safe).  A call that cannot have the engine within ``NGR_MCP_CALL_WAIT_S`` seconds
  (default :data:`CALL_WAIT_S`) answers ``error[timeout]`` instead of queueing behind a stuck one; a graph
  query on a shared server waits at most ``graphdb.shared.QUERY_LOCK_WAIT_S`` for another process's
  update and then answers from the graph as it is (``stale``), so no call holds the engine for a
  whole rebuild elsewhere.  Several processes may serve one SQLite file: every feedback call is
  one ``BEGIN IMMEDIATE`` transaction in the core, so concurrent clients lose nothing and an
  idempotency key is applied once.
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from collections.abc import Callable
from typing import Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.tools import Tool
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import ConfigDict, ValidationError

from .. import __version__
from ..errors import InvalidArgument, NeuronGraphError
from ..model import strict_dumps
from ..service.contract import AskArgs, GetNodeArgs, GetTraceArgs, SearchArgs
from ..store import DATABASE_ERRORS
from .errors import error_result  # (the shape stdio.py shares; importable from here as before)
from .tools import ARG_MODELS, DESCRIPTIONS, INSTRUCTIONS, LIMITS, trace_view

__all__ = ["build_server", "NGRTools", "serve", "error_result", "LIMITS", "TOOL_NAMES"]

SNIPPET_CHARS = 300
_ROUND = 4
CALL_WAIT_S = 30.0  # a call waits this long for the engine (another call holds it), then error[timeout]
# with --repo (service/freshness.py): these tools first sync new commits; the first three answer with `freshness`
FRESH_TOOLS = ("search", "ask", "cypher", "graph_schema")


class EngineBusy(NeuronGraphError):
    """Another tool call has held the engine for longer than this call may wait."""

    code = "timeout"


class ClientGone(NeuronGraphError):
    """The client closed its end of stdout: a call that has not started is dropped, not run."""

    code = "cancelled"


def _never_gone() -> bool:
    return False


def _call_wait_s() -> float:
    raw = os.environ.get("NGR_MCP_CALL_WAIT_S")
    if not raw:
        return CALL_WAIT_S
    try:
        wait = float(raw)
        if wait > 0 and wait == wait:
            return wait
    except ValueError:
        pass
    warnings.warn(
        f"NGR_MCP_CALL_WAIT_S={raw!r} is not a positive number of seconds; using {CALL_WAIT_S:g}", stacklevel=3
    )
    return CALL_WAIT_S


# ----------------------------------------------------------------------------- results
def _result(payload: dict) -> CallToolResult:
    text = strict_dumps(payload, ensure_ascii=False, default=str)  # strict JSON: text and structured agree
    return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=json.loads(text))


def _where(loc: tuple) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "arguments"


def describe_validation(tool: str, exc: ValidationError, model) -> InvalidArgument:
    """One readable sentence per problem; unknown fields name the allowed ones."""
    problems, unknown = [], []
    for e in exc.errors():
        where = _where(tuple(e["loc"]))
        if e["type"] == "extra_forbidden":
            unknown.append(where)
        elif e["type"] == "missing":
            problems.append(f"{where} is required")
        else:
            problems.append(f"{where}: {e['msg']}")
    if unknown:
        problems.insert(
            0,
            f"unknown field(s) {', '.join(repr(u) for u in unknown)} "
            f"(top-level fields: {', '.join(model.model_fields)})",
        )
    return InvalidArgument(f"invalid arguments for {tool}: " + "; ".join(problems), problems=problems)


# ----------------------------------------------------------------------------- tool handlers
def _round(d: dict) -> dict:
    return {k: round(float(v), _ROUND) for k, v in d.items()}


def _paths(paths: list[dict]) -> list[dict]:
    return [
        {
            "nodes": p["nodes"],
            "score": round(float(p.get("score", 0.0)), _ROUND),
            "edges": [
                {"src": e["src"], "rel": e["rel"], "dst": e["dst"], "weight": round(float(e["weight"]), _ROUND)}
                for e in p["edges"]
            ],
        }
        for p in paths
    ]


class NGRTools:
    """The tools over one engine.  ``search``, ``get_node``, ``get_trace`` and ``ask`` shape their
    results for an agent; the feedback tools return the engine's receipt as it is."""

    def __init__(self, engine, snippet_chars: int = SNIPPET_CHARS, call_wait_s: float | None = None, freshness=None):
        self.engine = engine
        self.snippet_chars = snippet_chars
        self.lock = threading.Lock()
        self.call_wait_s = _call_wait_s() if call_wait_s is None else call_wait_s
        self.gone: Callable[[], bool] = _never_gone  # the stdio transport's client_gone (mcp/stdio.py)
        self.freshness = freshness  # service/freshness.Freshness with --repo: sync new commits before a read

    def search(self, args: SearchArgs) -> dict:
        req = args.to_request()
        res = req.run(self.engine)
        hits = []
        for h in res.hits:
            d = h.to_dict(self.snippet_chars)
            hits.append(
                {
                    "id": h.id,
                    "type": h.type,
                    "title": h.title,
                    "snippet": d["text"],
                    "stage": "retrieved",
                    "seed": h.seed,
                    "meta": h.meta,  # sha (12), date, author where the node has them
                    "scores": _round(h.scores),
                    "paths": _paths(h.paths),
                    "change": h.change,  # the PR and commits this hit stands for (retrieval/change_groups.py)
                    "explanation": h.explain(),
                }
            )
        extra: dict[str, Any] = {"unknown_files": res.unknown_files} if req.scoped else {}
        if res.warnings:  # e.g. a deprecated argument name (strategy, until), said once
            extra["warnings"] = res.warnings
        if res.reading is not None:  # what a "when did X start" / "which change removed X" was read as
            extra["reading"] = res.reading
        return {
            "trace_id": res.trace_id,
            "query": res.query,
            "hits": hits,
            **extra,
            "next": "Hits are candidates. Read one in full with get_node; report selected -> validated -> used "
            "with record_source_use (trace_id above), or record_retrieval_failure if none fits.",
        }

    def get_node(self, args: GetNodeArgs) -> dict:
        return self.engine.get_node(args.node_id)

    def get_trace(self, args: GetTraceArgs) -> dict:
        return trace_view(self.engine.learning_report(args.trace_id), scores=_round, paths=_paths)

    def ask(self, args: AskArgs) -> dict:
        res = args.run(self.engine)
        res["next"] = (
            "Read cited sources with get_node; report the ones your answer rests on with "
            "record_source_use (trace_id above), or record_retrieval_failure if none fits."
        )
        return res

    # ------------------------------------------------------------------ dispatch
    def call(self, name: str, **kwargs) -> CallToolResult:
        """Run one tool under the engine lock; typed errors become MCP tool errors.  ``kwargs`` are the
        tool's arguments (validated again here, so an embedding application may call this directly); the
        feedback tools are their request model's own engine call."""
        try:
            args = ARG_MODELS[name].model_validate(kwargs)
            handler = getattr(self, name, None)
            if self.gone():
                raise ClientGone("the client has gone; the call was not run")
            fresh = self.freshness.before_call() if self.freshness is not None and name in FRESH_TOOLS else None
            if not self.lock.acquire(timeout=self.call_wait_s):
                raise EngineBusy(
                    f"another tool call has held the engine for over {self.call_wait_s:g} s (NGR_MCP_CALL_WAIT_S); "
                    "nothing was run: call again"
                )
            try:
                if self.gone():  # it died while this call waited behind others: no orphan trace
                    raise ClientGone("the client has gone; the call was not run")
                out = handler(args) if handler else args.run(self.engine)  # type: ignore[attr-defined]
                if fresh is not None and name != "graph_schema" and isinstance(out, dict):
                    out["freshness"] = fresh
                return _result(out)
            finally:
                self.lock.release()
        except NeuronGraphError as exc:
            return error_result(exc)
        except DATABASE_ERRORS as exc:
            err = NeuronGraphError(f"database error: {exc}")
            err.code = "store_error"
            return error_result(err)


# ----------------------------------------------------------------------------- SDK glue
class _StrictTool(Tool):
    """An ``MCPServer`` tool whose argument violations come back as typed ``invalid_argument`` errors
    (the SDK's own message would be a bare pydantic dump without a code)."""

    async def run(self, arguments: dict[str, Any], context, convert_result: bool = False) -> Any:
        try:
            self.fn_metadata.validate_arguments(arguments)
        except ValidationError as exc:
            return error_result(describe_validation(self.name, exc, self.fn_metadata.arg_model))
        return await super().run(arguments, context, convert_result)


def _inline_refs(schema: dict) -> dict:
    """Inline ``$defs`` (no model here is recursive): some MCP clients do not follow ``$ref``."""
    defs = schema.pop("$defs", {})

    def walk(node):
        if isinstance(node, dict):
            if "$ref" in node and node["$ref"].startswith("#/$defs/"):
                return walk(dict(defs[node["$ref"].rsplit("/", 1)[1]]))
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    return walk(schema)


def _arg_model(name: str):
    """The tool's pydantic model as the SDK's argument-model type (kwargs = its fields, one level)."""
    base = ARG_MODELS[name]
    return type(base.__name__, (ArgModelBase, base), {"model_config": ConfigDict(extra="forbid")})


_ANNOTATIONS = {
    "search": ToolAnnotations(
        title="Search sources", read_only_hint=False, idempotent_hint=False, open_world_hint=False
    ),  # stores a trace
    "get_node": ToolAnnotations(title="Read a source in full", read_only_hint=True, open_world_hint=False),
    "get_trace": ToolAnnotations(title="Show a search trace", read_only_hint=True, open_world_hint=False),
    "record_source_use": ToolAnnotations(
        title="Report source use",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=True,
        open_world_hint=False,
    ),
    "record_retrieval_failure": ToolAnnotations(
        title="Report a retrieval failure",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "record_outcome": ToolAnnotations(
        title="Report a delayed outcome",
        read_only_hint=False,
        destructive_hint=False,
        idempotent_hint=False,
        open_world_hint=False,
    ),
    "ask": ToolAnnotations(
        title="Ask the history (cited answer)", read_only_hint=False, idempotent_hint=False, open_world_hint=False
    ),  # stores a trace; the graph query itself is read-only
    "graph_schema": ToolAnnotations(
        title="The graph's schema for Cypher", read_only_hint=True, idempotent_hint=True, open_world_hint=False
    ),
    "cypher": ToolAnnotations(
        title="Run a read-only Cypher query", read_only_hint=True, idempotent_hint=True, open_world_hint=False
    ),
}


def _make_tool(tools: NGRTools, name: str) -> Tool:
    model = _arg_model(name)

    def fn(**kwargs) -> CallToolResult:
        return tools.call(name, **kwargs)

    fn.__name__ = name
    return _StrictTool(
        fn=fn,
        name=name,
        title=_ANNOTATIONS[name].title,
        description=DESCRIPTIONS[name],
        parameters=_inline_refs(model.model_json_schema(by_alias=True)),
        fn_metadata=FuncMetadata(arg_model=model),
        is_async=False,
        context_kwarg=None,
        annotations=_ANNOTATIONS[name],
    )


class _Server(MCPServer):
    """The SDK server plus ``ngr_tools``, the tool implementations (for embedding applications)."""

    ngr_tools: NGRTools


def build_server(engine, *, name: str = "neurongraph", snippet_chars: int = SNIPPET_CHARS, freshness=None) -> _Server:
    """An ``MCPServer`` exposing ``engine`` (anything with the Engine's public API) as tools; ``freshness``
    (service/freshness.py) syncs new commits before a search, ask, cypher or graph_schema call."""
    tools = NGRTools(engine, snippet_chars, freshness=freshness)
    server = _Server(
        name,
        title="Neuron Graph RAG",
        instructions=INSTRUCTIONS,
        version=__version__,
        log_level="WARNING",
        tools=[_make_tool(tools, n) for n in ARG_MODELS],
    )
    server.ngr_tools = tools
    return server


def serve(engine, transport: Literal["stdio", "sse", "streamable-http"] = "stdio", freshness=None) -> None:
    """Serve ``engine`` over stdio until the client closes the stream; closes the engine (and ``freshness``)
    afterwards.

    stdio goes through :mod:`.stdio` (bounded message size and nesting, duplicate keys refused, queued
    calls dropped and a clean exit when the client dies)."""
    try:
        server = build_server(engine, freshness=freshness)
        if transport == "stdio":
            anyio.run(_serve_stdio, server)
        else:
            server.run(transport)
    finally:
        try:
            if freshness is not None:
                freshness.close()
        finally:
            engine.close()


async def _serve_stdio(server: _Server) -> None:
    from .stdio import guarded_stdio

    lowlevel = server._lowlevel_server  # what MCPServer.run_stdio_async runs; the SDK has no public name for it
    async with guarded_stdio() as (read_stream, write_stream, wire):
        server.ngr_tools.gone = wire.client_gone
        await lowlevel.run(read_stream, write_stream, lowlevel.create_initialization_options())


TOOL_NAMES: tuple[str, ...] = tuple(ARG_MODELS)
