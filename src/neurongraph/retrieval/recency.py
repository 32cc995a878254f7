"""The recency prior of time-scoped searches: how likely is a node of this age to be what a question
about "now" is after?

Why it exists: on real histories the change a fix repairs is usually recent, but *how* recent differs
by an order of magnitude between projects (docs/benchmarks.md, "Real history": the median gap from a
fix to the change it names is ~230 days on a kernel-style tool and ~3 days on a fast-moving Python
project).  So the prior is read from the store itself when it can be: the observed gaps of its repair
edges (``fixes``, ``follows_up``, ``reverts`` — developers' own statements of which earlier change a
later one is about), counting only repairs made before the search's "now" (no look-ahead).  The factor
for a node of age ``a`` is ``(1-w) + w·S(a)^g``, ``S`` the share of observed gaps at least ``a`` long.
With fewer than ``MIN_OBSERVED`` such gaps it falls back to a half-life: ``S(a) = 0.5^(a / half-life)``.
A timeless node (a file, a person) gets the median factor of the timed nodes it is ranked with: neutral,
neither lifted above the typical change for lacking a time (factor 1 did that: on real histories files
outranked the commits a question was about) nor sunk below it.  The exponent ``g`` < 1 tempers the prior:
``S`` falls to nearly 0 past the bulk of a fast-moving project's gaps (mypy: median 3 days), where it could
no longer tell a 30-day-old candidate from a 3,000-day-old one; ``S^g`` keeps that order (docs/benchmarks.md,
"What helped" 6).

The same edges carry a second, independent prior: a change that already needed a repair is more likely
to need another (on iproute2, 156 of 562 fixes name an origin that an earlier fix had already named).
A node repaired ``k`` times before "now" weighs ``1 + r·ln(1 + k)`` (``repair_weight`` r); nothing
repaired later than "now" counts, so a time-scoped search cannot see its own future.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

__all__ = ["RecencyPrior", "RepairGaps", "MIN_OBSERVED", "MAX_OBSERVED"]

DAY = 86400.0
MIN_OBSERVED = 20  # fewer observed repair gaps: use the configured half-life instead
MAX_OBSERVED = 5000  # the most recent repairs before "now" describe the project as it is now


_TIME_BITS = 36  # seconds since the oldest repair fit in 36 bits (2,100 years): node index in the bits above


@dataclass
class RepairGaps:
    """Observed (repair time, gap in days) of every repair edge whose two ends have times, by repair time,
    and the same repairs keyed by the repaired node, to count a node's repairs made before "now"."""

    at: np.ndarray  # float64 epoch seconds of the later (repairing) node, ascending
    gap: np.ndarray  # float64 days between the two ends, aligned with ``at``
    keys: np.ndarray | None = None  # int64 (repaired node << _TIME_BITS) | (repair second - t0), ascending
    t0: float = 0.0

    @classmethod
    def from_times(cls, later: np.ndarray, earlier: np.ndarray, repaired: np.ndarray | None = None) -> RepairGaps:
        ok = ~np.isnan(later) & ~np.isnan(earlier) & (later >= earlier)
        later, earlier = later[ok], earlier[ok]
        order = np.argsort(later, kind="stable")
        out = cls(later[order], (later[order] - earlier[order]) / DAY)
        if repaired is not None and later.size:
            out.t0 = float(np.floor(later.min()))
            # rounded up, and "now" rounded down: a repair within the second after "now" never counts
            secs = np.minimum(np.ceil(later - out.t0), 2**_TIME_BITS - 1).astype(np.int64)
            out.keys = np.sort((np.asarray(repaired)[ok].astype(np.int64) << _TIME_BITS) | secs)
        return out

    def repairs_before(self, nodes: np.ndarray, now: float) -> np.ndarray:
        """How many repairs made at or before ``now`` name each of ``nodes`` (vectorised: two binary searches)."""
        if self.keys is None or self.keys.size == 0 or now < self.t0:
            return np.zeros(nodes.shape[0], np.int64)
        hi_sec = np.int64(min(np.floor(now - self.t0), 2**_TIME_BITS - 1))
        base = np.asarray(nodes, np.int64) << _TIME_BITS
        return np.searchsorted(self.keys, base | hi_sec, side="right") - np.searchsorted(self.keys, base, side="left")

    def before(self, now: float) -> np.ndarray:
        """Sorted gaps (days) of the repairs made at or before ``now``, at most MAX_OBSERVED of the latest."""
        k = int(np.searchsorted(self.at, now, side="right"))
        return np.sort(self.gap[max(0, k - MAX_OBSERVED) : k])


@dataclass
class RecencyPrior:
    """How much a candidate's age counts, shaped by the store's own observed fix-to-origin gaps."""

    ref: float  # "now" (epoch seconds)
    weight: float  # w
    half_life_days: float  # fallback shape
    gaps: np.ndarray | None = None  # sorted observed gaps (days), when there are enough
    repair_weight: float = 0.0  # r: a node already repaired k times before now weighs (1 + r·ln(1+k))
    repairs: RepairGaps | None = None
    exponent: float = 1.0  # g: the age part is (1-w) + w·S(age)^g

    def looking_back(self) -> RecencyPrior:
        """This prior for a question that asks when something began: its age part off (the first change of a
        feature is old by nature; preferring recent ones ranked its follow-ups first), its repair part kept."""
        return replace(self, weight=0.0)

    def factor(self, t: np.ndarray, nodes: np.ndarray | None = None) -> np.ndarray:
        """``((1-w) + w·S(age)^g) · (1 + r·ln(1 + repairs before now))`` per node (NaN time: the age part is
        the median of the timed nodes' in ``t``; 1 when none is timed)."""
        out = self._age_factor(t)
        if self.repair_weight and self.repairs is not None and nodes is not None:
            out = out * (1.0 + self.repair_weight * np.log1p(self.repairs.repairs_before(nodes, self.ref)))
        return out

    def _age_factor(self, t: np.ndarray) -> np.ndarray:
        out = np.ones(t.shape[0])
        timed = ~np.isnan(t)
        if not timed.any():
            return out
        age = np.maximum(self.ref - t[timed], 0.0) / DAY
        if self.gaps is not None:
            surv = 1.0 - np.searchsorted(self.gaps, age, side="left") / self.gaps.shape[0]
        else:
            surv = np.exp2(-age / self.half_life_days)
        if self.exponent != 1.0:
            surv = surv**self.exponent
        out[timed] = (1.0 - self.weight) + self.weight * surv
        if not timed.all():  # neutral: what the typical timed node it competes with gets
            out[~timed] = float(np.median(out[timed]))
        return out

    def describe(self) -> dict[str, str | int | float]:
        if self.gaps is not None:
            return {
                "from": "observed repair gaps",
                "n": int(self.gaps.shape[0]),
                "median_days": float(np.median(self.gaps)),
                "weight": self.weight,
                "exponent": self.exponent,
            }
        return {
            "from": "half-life",
            "half_life_days": self.half_life_days,
            "weight": self.weight,
            "exponent": self.exponent,
        }
