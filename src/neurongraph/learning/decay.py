"""Half-life decay of retrieval-side state: node activation and the plastic part of edge weights.

Knowledge (confidence, factuality, base weight) is never an input or output here.  The same formula
serves the lazy read and the explicit :meth:`~.api.Learning.decay`, so running decay explicitly never
changes what a reader would have seen at that moment.  The store's change feed weighs learned edges with
:func:`effective_weight` too: the store keeps the columns, this module decides what they weigh, and it
registers the formula with the store on import (store/base.py ``set_edge_weigher``; the store, a lower
layer, never imports learning).
"""

from __future__ import annotations

import numpy as np

from ..store.base import set_edge_weigher

__all__ = ["decay_factor", "decayed", "effective_weight"]


def decay_factor(age, half_life: float) -> np.ndarray:
    """0.5^(age / half_life); ages below 0 (a clock set back) count as 0."""
    age = np.maximum(np.asarray(age, np.float64), 0.0)
    return np.exp2(-age / half_life)


def decayed(value, at, now: float, half_life: float) -> np.ndarray:
    """``value`` set at time ``at`` (NaN = never) as seen at ``now``.  (``fmin`` takes ``now`` for NaN and for
    a time after ``now``: age 0 in both cases, in one array pass; every search reads a few such values.)"""
    return np.asarray(value, np.float64) * decay_factor(now - np.fmin(np.asarray(at, np.float64), now), half_life)


def effective_weight(base, plastic, plastic_at, dormant, half_life: float, now: float) -> np.ndarray:
    """base + plastic · 0.5^(age / half_life), or 0 for a dormant edge; exactly ``base`` where plastic is 0."""
    age = np.maximum(now - np.where(np.isnan(plastic_at), now, plastic_at), 0.0)
    factor = np.exp2(-age / half_life) if half_life > 0 else np.ones_like(age)
    return np.where(dormant != 0, 0.0, base + plastic * factor)


set_edge_weigher(effective_weight)
