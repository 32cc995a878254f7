"""Learning policy: every knob of the loop in one frozen dataclass (no flags read by ``getattr``).

The defaults follow seed 001: only a *newly used* source reinforces, only its
credited paths, bounded by ``w_max``; delayed outcomes are recorded and change no
weight unless an :class:`OutcomePolicy` explicitly opts in.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..errors import InvalidArgument
from ..model import MAX_WEIGHT

__all__ = ["STAGES", "OUTCOMES", "OutcomePolicy", "LearningPolicy", "stage_index"]

STAGES = ("retrieved", "selected", "validated", "used")
USED = 3
OUTCOMES = ("confirmed", "corrected", "rolled_back", "superseded")


def _non_negative(name: str, v) -> None:
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v) or v < 0:
        raise InvalidArgument(f"{name} must be a finite number >= 0, got {v!r}")


def stage_index(stage) -> int:
    if isinstance(stage, str) and stage in STAGES:
        return STAGES.index(stage)
    raise InvalidArgument(f"unknown stage {stage!r}; stages are {', '.join(STAGES)}")


@dataclass(frozen=True)
class OutcomePolicy:
    """What a delayed outcome does to weights.  The default records only (seed 001's initial contract).

    * ``confirmed="reinforce"``: the node's credited path edges in that trace get a
      further, diminishing increment ``confirm_delta / (1 + reinforce_count)``.
    * ``corrected`` / ``rolled_back`` ``="reverse"``: the trace's own contribution for the
      node is taken back exactly (each recorded increase, decayed as the plastic part
      decayed since), once.
    * ``superseded="dormant"``: the credited edges entering the node stop carrying
      activation (effective weight 0) until re-ingested or reinforced again.
    """

    confirmed: str = "record"
    corrected: str = "record"
    rolled_back: str = "record"
    superseded: str = "record"
    confirm_delta: float = 0.05

    _ALLOWED = {
        "confirmed": ("record", "reinforce"),
        "corrected": ("record", "reverse"),
        "rolled_back": ("record", "reverse"),
        "superseded": ("record", "dormant"),
    }

    def __post_init__(self):
        for name, allowed in self._ALLOWED.items():
            if getattr(self, name) not in allowed:
                raise InvalidArgument(f"OutcomePolicy.{name} must be one of {allowed}, got {getattr(self, name)!r}")
        _non_negative("confirm_delta", self.confirm_delta)

    @classmethod
    def strict(cls) -> OutcomePolicy:
        """Every opt-in effect on: confirmed reinforces, corrections reverse, superseded goes dormant."""
        return cls(confirmed="reinforce", corrected="reverse", rolled_back="reverse", superseded="dormant")

    def effect(self, outcome: str) -> str:
        return {
            "confirmed": self.confirmed,
            "corrected": self.corrected,
            "rolled_back": self.rolled_back,
            "superseded": self.superseded,
        }[outcome]

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class LearningPolicy:
    """Reinforcement, co-use and decay parameters (measured on musique_train200, docs/learning.md)."""

    delta: float = 0.5  # increment of each credited path edge when its node newly reaches `used`
    w_max: float = 1.5  # cap on an edge's effective weight (never lowers one already above)
    co_use_delta: float = 1.0  # Hebbian increment of the association between nodes used together
    co_use_rel: str = "co_used"  # relation name of co-use edges (created with base weight 0)
    co_use_max: int = 8  # at most this many used nodes of one trace are paired (bounds O(n^2))
    activation_boost: float = 0.5  # activation added to a newly used node (capped at 1)
    plastic_half_life_s: float = 30 * 86400.0
    activation_half_life_s: float = 7 * 86400.0
    # learning is query-conditioned: a used node is primed, and an edge credited to it carries its learned
    # part, by sim(query, a query it was used for) mapped from [priming_min_query_sim, 1] onto [0, 1]; below
    # it, nothing (issue 26: 0.7, measured in docs/learning.md — 0.5 let similar fixes with other origins
    # pull a past answer up on real histories; the QA transfer gain is the same from 0.3 to 0.7)
    priming_min_query_sim: float = 0.7
    # ... and only when this query repeats at least this share of the learning query's term weight (IDF of
    # its terms in the corpus, learning/assoc.py): a later question worded like an earlier one but naming
    # another identifier or path is not the same question.  0 = the vector alone.
    min_term_overlap: float = 0.25
    # the association is raised to this power (1 = linear in the clipped cosine): above 1 a near-repeat
    # (association near 1) keeps its lift while a merely similar question's shrinks.  Both since
    # 2026-12-02, chosen leave-one-history-out over the four dev histories (docs/learning.md, "Vector and
    # terms"): 0.25 and 3
    assoc_power: float = 3.0
    outcomes: OutcomePolicy = OutcomePolicy()

    def __post_init__(self):
        for name in ("delta", "w_max", "co_use_delta", "activation_boost", "min_term_overlap", "assoc_power"):
            _non_negative(name, getattr(self, name))
        if self.min_term_overlap > 1:
            raise InvalidArgument(f"min_term_overlap is a share of term weight (0..1), got {self.min_term_overlap!r}")

        if self.w_max > MAX_WEIGHT:  # effective weights stay in the documented edge-weight range
            raise InvalidArgument(f"w_max must be at most {MAX_WEIGHT:g}, got {self.w_max!r}")
        for name in ("plastic_half_life_s", "activation_half_life_s"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or isinstance(v, bool) or not v > 0:
                raise InvalidArgument(f"{name} must be a positive number of seconds (math.inf = no decay), got {v!r}")
        if not isinstance(self.co_use_max, int) or self.co_use_max < 0:
            raise InvalidArgument(f"co_use_max must be a non-negative integer, got {self.co_use_max!r}")
        if not isinstance(self.co_use_rel, str) or not self.co_use_rel:
            raise InvalidArgument("co_use_rel must be a non-empty relation name")
        if not isinstance(self.outcomes, OutcomePolicy):
            raise InvalidArgument(f"outcomes must be an OutcomePolicy, got {self.outcomes!r}")

    def replace(self, **changes) -> LearningPolicy:
        return dataclasses.replace(self, **changes)
