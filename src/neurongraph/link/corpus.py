"""One linker run over the stored corpus: fit, write the entities and edges, retract the links it no longer finds.

Why here, not in the engine: what a run writes (entity nodes, ``linker``-marked edges, the configuration it ran
with) and what it retracts is the linker's business; the engine only hands it the store, the embedding cache
and how to add nodes (so entity vectors and the in-memory indexes follow), then refreshes.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..model import Edge, Node
from ..store.base import Store
from .linker import Linker, LinkerConfig, LinkInput

__all__ = ["link_corpus"]

BATCH = 50_000  # edges per upsert


def link_corpus(
    store: Store,
    config: LinkerConfig,
    items: list[LinkInput],
    embed: Callable[[Sequence[str]], np.ndarray],
    add_nodes: Callable[[list[Node]], Any],
) -> tuple[Linker, dict]:
    """The fitted linker and the run's counts.  Re-running rebuilds the links from scratch and upserts them
    (idempotent; learned weights on existing edges are kept by the upsert); a link an earlier run made that this
    fit no longer finds (its node's text changed or was deleted) is retracted."""
    linker = Linker(config, embed=embed)  # entity vectors go through the vector cache
    res = linker.fit(items)
    if res.entities:  # an entity's body is its name: the vector the similarity linker already cached
        add_nodes([Node(e.id, e.type, e.title, "", e.metadata) for e in res.entities])
    edges = [Edge(e.src, e.rel, e.dst, weight=float(e.weight), meta=e.meta) for e in res.edges]
    fresh = {(e.src, e.rel, e.dst) for e in edges}
    stale = [t for t in store.edges_marked("linker") if t not in fresh]
    retracted = store.delete_edges(stale) if stale else 0
    for i in range(0, len(edges), BATCH):
        store.upsert_edges(edges[i : i + BATCH])
    store.set_meta("linker_config", json.dumps(dataclasses.asdict(config)))
    stats = {"items": len(items), "entities": len(res.entities), "edges": len(edges), "edges_retracted": retracted}
    return linker, {**stats, **res.stats}
