"""The store meta keys a git sync writes and reads, and the synced ``HEAD``s they hold.

Why a module of its own: an engine reads the synced ``HEAD`` on every open (the code history's mainline), and
importing the git reader for that (its log parser, commit reader and repository wrapper) cost every command
~30 ms.
"""

from __future__ import annotations

import json

__all__ = ["state_key", "tips_key", "refs_key", "synced_heads", "path_key", "reader_key", "root_key"]


def state_key(source: str, ref: str) -> str:
    """Store meta key of an earlier reader: the last synced tip of ``ref`` for ``source`` (read once, when a
    store synced before :func:`tips_key` existed is synced again)."""
    return f"ingest.git.{source}.{ref}"


def tips_key(source: str) -> str:
    """Store meta key holding the JSON ``{ref: sha}`` of every tip the last sync of ``source`` read (its
    branches and, with tags, ``refs/tags/NAME``): the next sync reads only what they do not reach."""
    return f"ingest.git-tips.{source}"


def refs_key(source: str) -> str:
    """Store meta key holding the JSON ``{"refs": [...], "tags": bool}`` the last sync of ``source`` was given:
    a later sync without ``--ref`` reads the same refs (release branches named once stay read)."""
    return f"ingest.git-refs.{source}"


def synced_heads(store, sources: list[str]) -> list[str]:
    """The ``HEAD`` each of ``sources`` was last synced at (store meta :func:`tips_key`), for those that have
    one: the tip of the history a user means by "now" when tags and release branches add other tips."""
    out = []
    for source in sources:
        try:
            tips = json.loads(store.get_meta(tips_key(source)) or "{}")
        except ValueError:
            continue
        if isinstance(tips, dict) and isinstance(tips.get("HEAD"), str):
            out.append(tips["HEAD"])
    return out


def path_key(source: str) -> str:
    """Store meta key holding the repository path ``source`` was last synced from."""
    return f"ingest.git-path.{source}"


def reader_key(source: str) -> str:
    """Store meta key holding the :data:`READER_VERSION` that last synced ``source``."""
    return f"ingest.git-reader.{source}"


def root_key(root: str) -> str:
    """Store meta key naming the source first ingested from the repository whose root commit is ``root``."""
    return f"ingest.git-root.{root}"
