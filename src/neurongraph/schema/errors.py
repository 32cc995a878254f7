"""Typed errors of the relation schema, entities and revisions (stable ``code`` strings).

All derive from :class:`neurongraph.errors.SchemaError`, so a caller can catch the
family at once, and each carries a stable ``code`` the CLI and MCP server print.
"""

from __future__ import annotations

from ..errors import SchemaError

__all__ = [
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


class InvalidSchema(SchemaError):
    """The schema document itself is malformed (bad field, unknown kind, name clash)."""

    code = "invalid_schema"


class SchemaViolation(SchemaError):
    """An edge's (src_type, rel, dst_type) is not allowed by the registry."""

    code = "schema_violation"


class InvariantViolation(SchemaError):
    """A write would break a declared invariant; nothing was written."""

    code = "invariant_violation"


class StaleRevision(SchemaError):
    """An entity update named a revision that is no longer current (optimistic concurrency)."""

    code = "stale_revision"


class AliasConflict(SchemaError):
    """A relation alias is already taken by another relation."""

    code = "alias_conflict"


class ImmutableEntry(SchemaError):
    """Entries are immutable: edit one with ``revise_entry`` (a new revision that supersedes it)."""

    code = "immutable_entry"


class SupersededEntry(SchemaError):
    """Revising an old revision would fork the history; revise the latest one."""

    code = "superseded_entry"


class NotAnEntity(SchemaError):
    """An entity operation named a node that is not an entity."""

    code = "not_an_entity"


class EntityExists(SchemaError):
    """An entity with that id already exists."""

    code = "entity_exists"
