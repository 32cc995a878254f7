"""MMR: balance relevance and diversity while walking (seed 002, §1.3).

``mmr(d) = λ · qsim[d] − (1 − λ) · max_{s ∈ selected} cos(d, s)`` (the redundancy
term is 0 before anything is selected).  Each step selects the best candidate,
then traverses it, so the walk follows diverse nodes.  ``cos`` is a dot product of
the caller's L2-normalised ``vectors`` rows; each selection updates the running
max-similarity of the pool with one mat-vec instead of recomputing all pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ...checks import check_number
from ...errors import InvalidArgument
from .base import Strategy, Tracker, Visit

__all__ = ["Mmr"]


@dataclass(frozen=True)
class Mmr(Strategy):
    """Traversal that picks by maximal marginal relevance, so near-duplicate neighbours do not crowd out others."""

    kind: ClassVar[str] = "mmr"
    lambda_mult: float = 0.5
    min_mmr_score: float = float("-inf")  # candidates scoring at or below this are not selected

    def __post_init__(self) -> None:
        super().__post_init__()
        check_number("lambda_mult", self.lambda_mult)
        check_number("min_mmr_score", self.min_mmr_score, finite=False)

    def run(self, tracker: Tracker, start: np.ndarray) -> list[Visit]:
        V = tracker.vectors
        if V is None:
            raise InvalidArgument("Mmr needs `vectors` (L2-normalised rows indexed by node)")
        lam = float(self.lambda_mult)
        pool = start
        red = np.zeros(pool.shape[0])  # max cosine to the selected set
        selected: list[int] = []
        hits: list[Visit] = []
        while len(hits) < tracker.select_k and pool.size:
            score = lam * tracker.qsim[pool] - (1.0 - lam) * red
            b = int(np.argmax(score))
            if score[b] <= self.min_mmr_score:
                break
            node = int(pool[b])
            hits.append(tracker.hit(node, score[b]))
            selected.append(node)
            pool, red = np.delete(pool, b), np.delete(red, b)
            if pool.size:
                red = np.maximum(red, V[pool] @ V[node])
            new = tracker.expand([node])
            if new.size:
                pool = np.concatenate([pool, new])
                red = np.concatenate([red, (V[new] @ V[selected].T).max(axis=1)])
        return hits
