"""Half-life decay of retrieval-side state: node activation and the plastic part of edge weights.

Knowledge (confidence, factuality, base weight) is never an input or output
here.  The same formula serves the lazy read (store.changes_since, node_priming)
and the explicit :meth:`decay`, so running decay explicitly never changes what a
reader would have seen at that moment.
"""

from __future__ import annotations

import numpy as np

from ..store.sql_shared import effective_weight

__all__ = ["decay_factor", "decayed", "effective_weight"]


def decay_factor(age, half_life: float) -> np.ndarray:
    """0.5^(age / half_life); ages below 0 (a clock set back) count as 0."""
    age = np.maximum(np.asarray(age, np.float64), 0.0)
    return np.exp2(-age / half_life)


def decayed(value, at, now: float, half_life: float) -> np.ndarray:
    """``value`` set at time ``at`` (NaN = never) as seen at ``now``.  (``fmin`` takes ``now`` for NaN and for
    a time after ``now``: age 0 in both cases, in one array pass; every search reads a few such values.)"""
    return np.asarray(value, np.float64) * decay_factor(now - np.fmin(np.asarray(at, np.float64), now), half_life)
