"""Eager: select and traverse everything as soon as it is discovered (BFS).

Predictable and exhaustive around an entity; selects in discovery order, so
similar neighbours are not de-duplicated (use :class:`Mmr` for that).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from .base import Strategy, Tracker, Visit

__all__ = ["Eager"]


@dataclass(frozen=True)
class Eager(Strategy):
    """Breadth-first traversal: selects every node as soon as it is discovered (graph-retriever's Eager)."""

    kind: ClassVar[str] = "eager"

    def run(self, tracker: Tracker, start: np.ndarray) -> list[Visit]:
        hits: list[Visit] = []
        level = start
        while level.size:  # one pass per depth level: the whole level expands in one batch
            take = level[: tracker.select_k - len(hits)]
            hits.extend(tracker.hit(n, tracker.qsim[n]) for n in take.tolist())
            if len(hits) >= tracker.select_k:
                break
            level = tracker.expand(level)
        return hits
