"""The engine's one Cypher projection: started on first use, kept in step at close, closed with the engine.

Why its own object: the engine composes it (``Engine.cypher_graph``) instead of carrying the projection's
lifecycle — which kind (a private FalkorDB child or a shared server by URL, graphdb/shared.py), when to
push the change feed to a shared server, and that no child outlives the engine.  The projection modules
load on first use only: ~0.1 s of imports a search never needs (cold CLI start).
"""

from __future__ import annotations

import warnings
from typing import TYPE_CHECKING, Any

from ..store.base import Store
from .remote import GraphTarget

if TYPE_CHECKING:  # (within graphdb: no cycle; the modules themselves load on first use)
    from .projection import CypherProjection

__all__ = ["CypherHandle"]


class CypherHandle:
    """The projection of ``store`` (``target``: a shared server; None: the private child)."""

    def __init__(self, store: Store, target: GraphTarget | None):
        self.store = store
        self.target = target
        self.started: CypherProjection | None = None  # the projection, once started
        self.seq_open: int | None = None  # the store's sequence when the engine opened (set by it)

    def projection(self) -> CypherProjection:
        """The projection, started on first use."""
        proj = self.started
        if proj is None:
            from .projection import CypherProjection

            if self.target is not None:
                from .shared import SharedProjection

                proj = self.started = SharedProjection(self.store, self.target)
            else:
                proj = self.started = CypherProjection(self.store)
        return proj

    def query(self, query: str, params: dict | None = None, timeout_ms: int | None = None) -> dict:
        """One read-only query over the projection: ``{"columns", "rows", "truncated"}``."""
        return self.projection().query(query, params, timeout_ms)

    def schema(self) -> Any:
        """Labels, relation types and property names of the store (graphdb/schema.py)."""
        from .schema import build_schema

        return build_schema(self.store)

    def push(self) -> None:
        """A writer keeps a shared graph server in step: the store moved since open, so apply the change
        feed there now (readers need no writer credential then).  A failure only warns: the next engine
        with a writer credential catches up."""
        if self.target is None or self.seq_open is None:
            return
        try:
            if self.store.current_seq() != self.seq_open:
                self.projection().sync()
        except Exception as exc:
            warnings.warn(f"could not update the shared graph server: {exc}", RuntimeWarning, stacklevel=3)

    def close(self) -> None:
        """Stop the projection (the FalkorDB child never outlives the engine)."""
        proj, self.started = self.started, None
        if proj is not None:
            proj.close()
