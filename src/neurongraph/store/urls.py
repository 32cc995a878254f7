"""Store addresses: which paths are PostgreSQL URLs, and a URL as it may be shown (no password).

A module of its own so that the PostgreSQL store and the package that opens it both read it without
importing each other."""

from __future__ import annotations

from typing import TypeGuard
from urllib.parse import urlsplit, urlunsplit

__all__ = ["is_postgres_url", "redacted_url"]


def is_postgres_url(path: object) -> TypeGuard[str]:
    """True for ``postgresql://...`` / ``postgres://...``: a server store, not a file (the one test every
    interface uses)."""
    return isinstance(path, str) and path.startswith(("postgresql://", "postgres://"))


def redacted_url(url: str) -> str:
    """The URL without its password (what a PostgreSQL store's ``path`` and ``stats`` show, and ``ngr migrate``
    reports)."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    if parts.port:
        host += f":{parts.port}"
    user = parts.username or ""
    return urlunsplit((parts.scheme, f"{user}@{host}", parts.path, parts.query, parts.fragment))
