"""The shape of a tool error, shared by the tools (mcp/server.py) and the stdio guard (mcp/stdio.py).

Why its own module: the stdio guard answers a call it refuses before any tool runs in the same shape as
every other tool error; with the shape in server.py, server and stdio imported each other.
"""

from __future__ import annotations

import json

from mcp_types import CallToolResult, TextContent

from ..errors import NeuronGraphError
from ..model import strict_dumps
from .tools import HINTS

__all__ = ["error_result"]


def error_result(exc: NeuronGraphError) -> CallToolResult:
    """``isError: true`` with the text ``error[code]: message (hint)`` and ``{"error": {code, message, hint?,
    details?}}`` as structured content."""
    err = {"code": exc.code, "message": exc.message}
    hint = HINTS.get(exc.code)
    if hint:
        err["hint"] = hint
    if exc.details:
        err["details"] = json.loads(strict_dumps(exc.details, default=str))
    text = f"error[{exc.code}]: {exc.message}" + (f" ({hint})" if hint else "")
    return CallToolResult(
        content=[TextContent(type="text", text=text)], structured_content={"error": err}, is_error=True
    )
