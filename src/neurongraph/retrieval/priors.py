"""Priors: factors on a candidate's final score from what is known about the node, not about the query.

Why objects: each prior (recency and repairs, authorship of the working files, aggregates) reads its
inputs, gives its factor, names the score columns a hit shows for it and explains its part of a hit's
formula; the pipeline applies ``PRIORS`` in order (``final × factor``) and ``Hit.formula`` reads them
back in the same order, so a new prior is a class here, an entry in ``PRIORS`` and its option group in
``config.py``, plus its test.  The sources below keep a prior's inputs cached over the
node table and the store (``RecencySource``, ``EdgeLines``); the engine builds them once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar, Protocol

import numpy as np

from ..config import SearchConfig
from ..graph.arrays import GraphArrays
from ..store.base import Store
from .recency import MIN_OBSERVED, RecencyPrior, RepairGaps
from .scope import NodeTable

__all__ = [
    "PRIORS",
    "Aggregate",
    "Authorship",
    "EdgeLines",
    "Prior",
    "PriorInputs",
    "Recency",
    "RecencySource",
    "values_at",
]


class PriorInputs(Protocol):
    """What the priors read of a ranking's inputs: ``pipeline.RankInputs`` (a protocol, not the class: the
    pipeline applies these priors, so importing it here would be an import cycle)."""

    @property
    def event_time(self) -> np.ndarray | None: ...

    @property
    def recency(self) -> RecencyPrior | None: ...

    @property
    def aggregate(self) -> Callable[[np.ndarray], np.ndarray] | None: ...  # (node indices) -> bool mask


Written = tuple[np.ndarray, np.ndarray] | None  # (nodes, lines each added to the working files), sorted nodes


def values_at(keys: np.ndarray, values: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``values`` of sorted ``keys`` looked up at ``nodes`` (0 where a node is not a key)."""
    out = np.zeros(nodes.shape[0])
    if keys.size:
        pos = np.minimum(np.searchsorted(keys, nodes), keys.shape[0] - 1)
        hit = keys[pos] == nodes
        out[hit] = values[pos[hit]]
    return out


class Prior:
    """One factor of the final score.  ``weigh`` gives (factor, value) per candidate, or None when the
    prior does not apply to this search; ``columns`` the hit score columns from the kept values; ``term``
    the factor and its part of ``Hit.formula`` read back from a hit's scores (None: it did not apply)."""

    name: ClassVar[str] = ""

    def weigh(
        self, cfg: SearchConfig, x: PriorInputs, nodes: np.ndarray, written: Written
    ) -> tuple[np.ndarray, np.ndarray] | None:
        raise NotImplementedError

    def columns(self, cfg: SearchConfig, x: PriorInputs, value: np.ndarray, nodes: np.ndarray) -> dict[str, np.ndarray]:
        raise NotImplementedError

    def term(self, cfg: SearchConfig, scores: dict[str, float]) -> tuple[float, str] | None:
        raise NotImplementedError


class Recency(Prior):
    """Older nodes with an event time weigh less, repaired ones more (retrieval/recency.py)."""

    name = "recency"

    def weigh(
        self, cfg: SearchConfig, x: PriorInputs, nodes: np.ndarray, written: Written
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if x.recency is None or x.event_time is None or not nodes.size:
            return None
        t = np.full(nodes.shape[0], np.nan)
        inside = nodes < x.event_time.shape[0]
        t[inside] = x.event_time[nodes[inside]]
        if np.isnan(t).all():
            return None
        rec = x.recency.factor(t, nodes)
        return rec, rec

    def columns(self, cfg: SearchConfig, x: PriorInputs, value: np.ndarray, nodes: np.ndarray) -> dict[str, np.ndarray]:
        out = {"recency": value}  # the factor: age, and earlier repairs below
        prior = x.recency
        if prior is not None and prior.repair_weight and prior.repairs is not None:
            out["repairs"] = prior.repairs.repairs_before(nodes, prior.ref).astype(np.float64)
        return out

    def term(self, cfg: SearchConfig, scores: dict[str, float]) -> tuple[float, str] | None:
        if "recency" not in scores:
            return None
        why = f"; {int(scores['repairs'])} earlier repair(s)" if scores.get("repairs") else ""
        return scores["recency"], f" × recency {scores['recency']:.3f}{why}"


class Authorship(Prior):
    """A change that wrote more of the working files' lines is the likelier subject: ``1 + a·ln(1 + lines)``."""

    name = "authorship"

    def weigh(
        self, cfg: SearchConfig, x: PriorInputs, nodes: np.ndarray, written: Written
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if written is None or not written[0].size:
            return None
        lines = values_at(written[0], written[1], nodes)
        return 1.0 + cfg.authorship.weight * np.log1p(lines), lines

    def columns(self, cfg: SearchConfig, x: PriorInputs, value: np.ndarray, nodes: np.ndarray) -> dict[str, np.ndarray]:
        return {"lines_written": value}  # the input: lines added to the working files

    def term(self, cfg: SearchConfig, scores: dict[str, float]) -> tuple[float, str] | None:
        if "lines_written" not in scores:
            return None
        factor = 1.0 + cfg.authorship.weight * float(np.log1p(scores["lines_written"]))
        return factor, f" × authorship {factor:.3f} ({scores['lines_written']:.0f} lines of the working files)"


class Aggregate(Prior):
    """A node that only repeats others (a merge of already-ingested commits) weighs ``aggregate_weight``."""

    name = "aggregate"

    def weigh(
        self, cfg: SearchConfig, x: PriorInputs, nodes: np.ndarray, written: Written
    ) -> tuple[np.ndarray, np.ndarray] | None:
        if x.aggregate is None or cfg.aggregate.weight >= 1.0 or not nodes.size:
            return None
        agg = x.aggregate(nodes)
        if not agg.any():
            return None
        return np.where(agg, cfg.aggregate.weight, 1.0), agg

    def columns(self, cfg: SearchConfig, x: PriorInputs, value: np.ndarray, nodes: np.ndarray) -> dict[str, np.ndarray]:
        return {"aggregate": np.where(value, cfg.aggregate.weight, 1.0)}  # 1 for a node that is not one

    def term(self, cfg: SearchConfig, scores: dict[str, float]) -> tuple[float, str] | None:
        return None if "aggregate" not in scores else (scores["aggregate"], f" × aggregate {scores['aggregate']:.2f}")


PRIORS: tuple[Prior, ...] = (Recency(), Authorship(), Aggregate())


class RecencySource:
    """The recency prior of a search, from the table's event times and the graph's repair edges, rebuilt
    once per store change, not per search."""

    def __init__(self) -> None:
        # ((store seq, graph version, repair relations), newest event time, observed repair gaps)
        self._cache: tuple[tuple[int, int, tuple[str, ...]], float | None, RepairGaps] | None = None

    def prior(
        self, cfg: SearchConfig, table: NodeTable, graph: GraphArrays, rel_ids: dict[str, int], seq: int
    ) -> RecencyPrior | None:
        """None when the prior is off or the store has no event times.  "Now" is the search's
        horizon (as_of), else the newest event in the store, so an imported old history is not "old"; the
        prior's shape comes from the store's own repair edges made before "now" when there are enough."""
        if not (cfg.recency.weight or cfg.recency.repair_weight) or table.event_time.size == 0:
            return None
        key = (seq, graph.version, cfg.recency.relations)
        cache = self._cache
        if cache is None or cache[0] != key:
            t = table.event_time
            live = t[table.alive[: t.shape[0]]]
            newest = float(np.nanmax(live)) if live.size and not np.isnan(live).all() else None
            gaps = RepairGaps(np.zeros(0), np.zeros(0))
            ids = [rel_ids[r] for r in cfg.recency.relations if r in rel_ids]
            if newest is not None and ids:  # a store without times never reads its edges here
                e = graph.all_edges()
                m = np.isin(e.rtype, ids) & (e.src < t.shape[0]) & (e.dst < t.shape[0])
                gaps = RepairGaps.from_times(t[e.src[m]], t[e.dst[m]], e.dst[m])
            cache = self._cache = (key, newest, gaps)
        _, newest, gaps = cache
        now = cfg.horizon if cfg.horizon is not None else newest
        if now is None:
            return None
        seen = gaps.before(now)
        return RecencyPrior(
            now,
            cfg.recency.weight,
            cfg.recency.half_life_days,
            seen if seen.shape[0] >= MIN_OBSERVED else None,
            cfg.recency.repair_weight,
            gaps,
            cfg.recency.exponent,
        )


class EdgeLines:
    """Lines each edge's change added (numeric edge meta ``added``; 0 without), the authorship prior's
    input: read from the store only for edges of the working files, cached while the store is unchanged."""

    def __init__(self, store: Store):
        self.store = store
        self._cache: tuple[int, dict[int, float]] = (-1, {})  # (store seq, eid -> lines added)

    def read(self, eids: np.ndarray, seq: int) -> np.ndarray:
        at, cache = self._cache
        if at != seq:
            cache = {}
            self._cache = (seq, cache)
        ids = eids.tolist()
        missing = [e for e in ids if e not in cache]
        if missing:
            got = self.store.edge_numbers(missing, "added")
            for e in missing:
                v = got.get(e, 0.0)
                cache[e] = v if 0.0 < v < float("inf") else 0.0
        return np.fromiter((cache[e] for e in ids), np.float64, len(ids))
