"""Bounded Hebbian reinforcement: pure arithmetic on effective weights.

An increase is ``min(w_max, w + delta)`` and never lowers ``w`` (an edge already
above the cap keeps its weight).  What is stored is the *plastic* part
``w_eff - base``, so decay can pull it back toward the base weight later.
"""

from __future__ import annotations

__all__ = ["bounded_increase", "diminishing"]


def bounded_increase(w: float, delta: float, w_max: float) -> float:
    """The reinforced effective weight: never lower than ``w``, never above ``max(w, w_max)``."""
    return max(w, min(w_max, w + delta))


def diminishing(delta: float, times_reinforced: int) -> float:
    """The n-th confirmation of an edge adds ``delta / (1 + n)`` (harmonic: bounded growth per step)."""
    return delta / (1 + max(int(times_reinforced), 0))
