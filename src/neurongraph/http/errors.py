"""Errors over HTTP: the engine's stable ``error[code]`` codes as JSON bodies with HTTP status codes.

Every error response, whatever raised it, has one shape (the MCP server's structured error)::

    {"error": {"code": "unknown_trace", "message": "...", "hint": "...", "details": {...}}}

``hint`` comes from the JSON interfaces' table (``neurongraph.service.contract.HINTS``): one table for
MCP and HTTP.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import InvalidArgument, NeuronGraphError
from ..model import strict_dumps
from ..service.contract import HINTS

__all__ = [
    "STATUS",
    "ApiError",
    "ErrorBody",
    "error_payload",
    "error_response",
    "error_responses",
    "describe_validation",
    "status_of",
]

# the HTTP status of every stable code; a code not listed is a server-side failure (500)
STATUS: dict[str, int] = {
    "invalid_argument": 400,
    "invalid_json": 400,
    "invalid_host": 400,
    "unauthorized": 401,
    "not_found": 404,
    "unknown_node": 404,
    "unknown_trace": 404,
    "unknown_job": 404,
    "method_not_allowed": 405,
    "node_not_in_trace": 409,
    "invalid_stage_transition": 409,
    "idempotency_conflict": 409,
    "source_not_used": 409,
    "schema_violation": 409,
    "invariant_violation": 409,
    "query_error": 400,
    "read_only": 400,
    "payload_too_large": 413,
    "busy": 429,
    "internal_error": 500,
    "store_error": 503,
    "missing_dependency": 503,
    "embedder_unavailable": 503,
    "graph_server_error": 503,
    "graph_unreachable": 503,
    "graph_auth": 503,
    "graph_not_built": 503,
    "graph_gone": 503,
    "query_timeout": 504,
}

HTTP_HINTS = {
    "unauthorized": "Send the server's token as `Authorization: Bearer <token>` (see `ngr serve --token-file`).",
    "payload_too_large": "Request bodies are capped; send less (fewer events, a shorter text).",
    "busy": "Too many requests are waiting for the engine; retry in a moment.",
}


class ApiError(NeuronGraphError):
    """An error the HTTP layer itself raises (token, size, unknown route), with an explicit code."""

    def __init__(self, code: str, message: str, **details):
        super().__init__(message, **details)
        self.code = code


class ErrorDetail(BaseModel):
    model_config = ConfigDict(extra="forbid")
    code: str
    message: str
    hint: str | None = None
    details: dict[str, Any] | None = None


class ErrorBody(BaseModel):
    """The body of every error response."""

    model_config = ConfigDict(extra="forbid")
    error: ErrorDetail


def status_of(code: str) -> int:
    return STATUS.get(code, 500)


def error_payload(exc: NeuronGraphError) -> dict:
    err: dict[str, Any] = {"code": exc.code, "message": exc.message}
    hint = HINTS.get(exc.code) or HTTP_HINTS.get(exc.code)
    if hint:
        err["hint"] = hint
    if exc.details:
        err["details"] = json.loads(strict_dumps(exc.details, default=str))
    return {"error": err}


def error_response(exc: NeuronGraphError, headers: dict[str, str] | None = None):
    from starlette.responses import Response

    body = strict_dumps(error_payload(exc), ensure_ascii=False).encode()
    return Response(body, status_code=status_of(exc.code), media_type="application/json", headers=headers)


def _where(loc: tuple) -> str:
    parts = list(loc[1:] if loc and loc[0] in ("body", "query", "path", "header") else loc) or ["body"]
    out = ""
    for part in parts:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def describe_validation(errors: list[dict], fields: tuple[str, ...] = ()) -> NeuronGraphError:
    """One readable sentence per problem of a request that failed validation (FastAPI/pydantic errors)."""
    problems: list[str] = []
    unknown: list[str] = []
    for e in errors:
        where = _where(tuple(e.get("loc") or ()))
        if e.get("type") == "json_invalid":
            ctx = e.get("ctx") or {}
            return ApiError("invalid_json", f"the request body is not valid JSON ({ctx.get('error', 'parse error')})")
        if e.get("type") == "extra_forbidden":
            unknown.append(where)
        elif e.get("type") == "missing":
            problems.append("a JSON object body is required" if where == "body" else f"{where} is required")
        else:
            problems.append(f"{where}: {e.get('msg', 'invalid')}")
    if unknown:
        allowed = f" (allowed: {', '.join(fields)})" if fields else ""
        problems.insert(0, f"unknown field(s) {', '.join(repr(u) for u in unknown)}{allowed}")
    return InvalidArgument("invalid request: " + "; ".join(problems), problems=problems)


def error_responses(*statuses: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for the given error statuses (all share :class:`ErrorBody`)."""
    by_status: dict[int, list[str]] = {}
    for code, st in STATUS.items():
        by_status.setdefault(st, []).append(code)
    return {
        st: {"model": ErrorBody, "description": "error codes: " + ", ".join(by_status.get(st, ["internal_error"]))}
        for st in statuses
    }
