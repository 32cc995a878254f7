"""The recency prior of time-scoped searches: how likely is a node of this age to be what a question
about "now" is after?

Why it exists: on real histories the change a fix repairs is usually recent, but *how* recent differs
by an order of magnitude between projects (docs/benchmarks.md, "Real history": the median gap from a
fix to the change it names is ~230 days on a kernel-style tool and ~3 days on a fast-moving Python
project).  So the prior is read from the store itself when it can be: the observed gaps of its repair
edges (``fixes``, ``follows_up``, ``reverts`` — developers' own statements of which earlier change a
later one is about), counting only repairs made before the search's "now" (no look-ahead).  The factor
for a node of age ``a`` is ``(1-w) + w·S(a)``, ``S`` the share of observed gaps at least ``a`` long.
With fewer than ``MIN_OBSERVED`` such gaps it falls back to a half-life: ``S(a) = 0.5^(a / half-life)``.
Timeless nodes get factor 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["RecencyPrior", "RepairGaps", "MIN_OBSERVED", "MAX_OBSERVED"]

DAY = 86400.0
MIN_OBSERVED = 20  # fewer observed repair gaps: use the configured half-life instead
MAX_OBSERVED = 5000  # the most recent repairs before "now" describe the project as it is now


@dataclass
class RepairGaps:
    """Observed (repair time, gap in days) of every repair edge whose two ends have times, by repair time."""

    at: np.ndarray  # float64 epoch seconds of the later (repairing) node, ascending
    gap: np.ndarray  # float64 days between the two ends, aligned with ``at``

    @classmethod
    def from_times(cls, later: np.ndarray, earlier: np.ndarray) -> RepairGaps:
        ok = ~np.isnan(later) & ~np.isnan(earlier) & (later >= earlier)
        later, earlier = later[ok], earlier[ok]
        order = np.argsort(later, kind="stable")
        return cls(later[order], (later[order] - earlier[order]) / DAY)

    def before(self, now: float) -> np.ndarray:
        """Sorted gaps (days) of the repairs made at or before ``now``, at most MAX_OBSERVED of the latest."""
        k = int(np.searchsorted(self.at, now, side="right"))
        return np.sort(self.gap[max(0, k - MAX_OBSERVED) : k])


@dataclass
class RecencyPrior:
    ref: float  # "now" (epoch seconds)
    weight: float  # w
    half_life_days: float  # fallback shape
    gaps: np.ndarray | None = None  # sorted observed gaps (days), when there are enough

    def factor(self, t: np.ndarray) -> np.ndarray:
        """``(1-w) + w·S(age)`` per event time (NaN = timeless → 1)."""
        out = np.ones(t.shape[0])
        timed = ~np.isnan(t)
        if not timed.any():
            return out
        age = np.maximum(self.ref - t[timed], 0.0) / DAY
        if self.gaps is not None:
            surv = 1.0 - np.searchsorted(self.gaps, age, side="left") / self.gaps.shape[0]
        else:
            surv = np.exp2(-age / self.half_life_days)
        out[timed] = (1.0 - self.weight) + self.weight * surv
        return out

    def describe(self) -> dict:
        if self.gaps is not None:
            return {
                "from": "observed repair gaps",
                "n": int(self.gaps.shape[0]),
                "median_days": float(np.median(self.gaps)),
                "weight": self.weight,
            }
        return {"from": "half-life", "half_life_days": self.half_life_days, "weight": self.weight}
