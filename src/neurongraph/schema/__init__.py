"""Relation schema, entities and entries, and relation queries (DESIGN §2.1, seed 003).

* :mod:`.registry` — relation types, allowed (src_type, rel, dst_type), inverse names, modes
* :mod:`.invariants` — declarative invariants checked at write time
* :mod:`.validator` — the store hook that enforces both inside write transactions
* :mod:`.entities` — entity state + revisions, aliases, entry revision chains
* :mod:`.queries` — neighbours, effective blockers, k-hop paths, evidence chains
* :mod:`.api` — :class:`Schema`, the service (``eng.schema``) for all of the above
"""

from .api import Schema, StoreGraph
from .errors import (
    AliasConflict,
    EntityExists,
    ImmutableEntry,
    InvalidSchema,
    InvariantViolation,
    NotAnEntity,
    SchemaError,
    SchemaViolation,
    StaleRevision,
    SupersededEntry,
)
from .invariants import Invariant
from .queries import Hop
from .registry import RelationSchema, RelationType

__all__ = [
    "Schema",
    "StoreGraph",
    "RelationSchema",
    "RelationType",
    "Invariant",
    "Hop",
    "SchemaError",
    "InvalidSchema",
    "SchemaViolation",
    "InvariantViolation",
    "StaleRevision",
    "AliasConflict",
    "ImmutableEntry",
    "SupersededEntry",
    "NotAnEntity",
    "EntityExists",
]
