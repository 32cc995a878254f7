"""An ask request as the interfaces give it, and the engine call it becomes.

Why here: ``ngr ask``, the MCP ``ask`` tool and ``POST /api/ask`` ask the same thing (a question, a route
mode, how many search hits to use, optionally an LLM to phrase the answer); the request names them once
and the engine routes, queries read-only and checks the answer's references (ask/pipeline.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .engine_api import AskEngine

__all__ = ["AskRequest"]


@dataclass(frozen=True)
class AskRequest:
    """One question.  ``llm``: an ``ask.llm`` client, or None for the extractive, LLM-free answer."""

    question: str
    mode: str = "auto"  # auto | graph | vector | hybrid (ask/router.py MODES; the engine checks it)
    limit: int = 5  # search hits to use
    llm: Any = None

    @property
    def needs_graph(self) -> bool:
        """Whether the route may query the Cypher projection (so an interface can start it early)."""
        return self.mode in ("auto", "graph", "hybrid")

    def run(self, engine: AskEngine) -> dict[str, Any]:
        """``Engine.ask``'s answer: route, read-only graph query and/or search, cited answer."""
        return engine.ask(self.question, mode=self.mode, llm=self.llm, limit=self.limit)
