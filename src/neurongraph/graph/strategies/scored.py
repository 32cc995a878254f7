"""Scored: best-first walk by a score function (default: query similarity).

Each step selects the highest-scoring discovered node and traverses it, so the
walk goes where the score is high; hits are returned best score first.
``score_fn(nodes, depths, qsim) -> scores`` is vectorised over a batch of newly
discovered nodes (e.g. ``lambda n, d, q: q[n] * 0.8 ** d`` to prefer short hops).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...errors import InvalidArgument
from .base import Strategy, Tracker, Visit

__all__ = ["Scored"]

ScoreFn = Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray]


def _similarity(nodes: np.ndarray, depths: np.ndarray, qsim: np.ndarray) -> np.ndarray:
    return qsim[nodes]


@dataclass(frozen=True)
class Scored(Strategy):
    """Traversal ranked by a caller's score function over the candidates."""

    kind: ClassVar[str] = "scored"
    score_fn: ScoreFn | None = None

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.score_fn is not None and not callable(self.score_fn):
            raise InvalidArgument(f"score_fn must be a function (nodes, depths, qsim) -> scores, got {self.score_fn!r}")

    def run(self, tracker: Tracker, start: np.ndarray) -> list[Visit]:
        fn = self.score_fn or _similarity

        def score(nodes):
            d = np.fromiter((tracker.depth[n] for n in nodes.tolist()), np.int64, nodes.shape[0])
            return np.asarray(fn(nodes, d, tracker.qsim), np.float64).reshape(nodes.shape[0])

        pool, sc = start, score(start)
        hits: list[Visit] = []
        while len(hits) < tracker.select_k and pool.size:
            b = int(np.argmax(sc))
            node = int(pool[b])
            hits.append(tracker.hit(node, sc[b]))
            pool, sc = np.delete(pool, b), np.delete(sc, b)
            new = tracker.expand([node])
            if new.size:
                pool, sc = np.concatenate([pool, new]), np.concatenate([sc, score(new)])
        hits.sort(key=lambda h: -h.score)
        return hits
