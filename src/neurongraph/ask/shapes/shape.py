"""One question shape as a registry entry: its name, how it plans a :class:`~..question.Question`, and whether
it claims the questions it matches even when it makes no plan.

Why ``claims``: some shapes are the owners of a kind of question without answering every one of them — a
question that names a commit is that commit's question (its author, its PR, its reverts), and when none of
those fits, no later shape may read it as a count of the whole history.  Such a shape stops the search with
"no developer plan" (the caller then falls back to the one-hop translator or to search, said as such).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..devplan import DevPlan
from ..question import Question

__all__ = ["Shape"]


@dataclass(frozen=True)
class Shape:
    """A registry entry: ``plan(engine, q)`` is a plan or None; ``claims(q)``, when given, makes the entry the
    last one tried for the questions it is true of."""

    name: str
    plan: Callable[[object, Question], DevPlan | None]
    claims: Callable[[Question], bool] | None = None
    doc: str = ""
    then: str = ""  # what answers a question the entry claimed without a plan: "search", else the translator
