"""Ingest real project history: git repositories, GitHub exports (``gh`` JSON), Markdown folders.

Adapters read a source into an :class:`IngestBatch`; :func:`apply_batch` is the one
write path (diff against the store, embed what is new, retract stale derived edges,
prune, one transaction).  :func:`sync_source` ties the two together and remembers
per-source state (the last synced git tips) in the store, so re-running the same
command is an incremental sync.
"""

from __future__ import annotations

import json
import os
import time

from ..errors import InvalidArgument
from .batch import KINDS, IngestBatch, derived_edge
from .sync import SyncProgress, apply_batch

__all__ = ["IngestBatch", "derived_edge", "apply_batch", "sync_source", "read_source", "KINDS"]


def read_source(
    engine,
    kind: str,
    path: str | os.PathLike,
    *,
    refs: list[str] | None = None,
    name: str | None = None,
    full: bool = False,
    progress: SyncProgress | None = None,
    strict: bool = False,
    tags: bool | None = None,
) -> IngestBatch:
    """Read one source with its adapter; git reads only what is newer than the last sync (all of it
    with ``full``, or when another version of the reader made the last sync: unchanged commits are still
    not rewritten).  Git reads HEAD, ``refs`` (more branches) and every tag unless ``tags`` is False;
    either, when not given, is what the last sync of the source was given.  An item over a field limit is skipped
    and named in ``batch.skipped``; with ``strict`` it is an error and nothing is written."""
    if kind == "git":
        from .git import READER_VERSION, read_git, reader_key, refs_key, source_name, tips_key
        from .git_repo import GitRepo
        from .git_tags import tags_key

        repo = GitRepo(path)
        source = name or source_name(repo, engine.store, refs)
        upgraded = not full and engine.store.get_meta(reader_key(source)) != str(READER_VERSION)
        chosen = _json_meta(engine.store, refs_key(source), {})
        if refs is None and isinstance(chosen.get("refs"), list):  # the refs named at an earlier sync
            refs = [str(r) for r in chosen["refs"]]
        if tags is None:
            tags = bool(chosen.get("tags", True))
        synced = {} if full or upgraded else _json_meta(engine.store, tips_key(source), {})
        known = json.loads(engine.store.get_meta(tags_key(source)) or "[]")
        batch = read_git(repo, refs, source, synced, progress, strict=strict, known_tags=known, tags=tags)
        batch.stats["reader_version"] = READER_VERSION
        batch.stats["full_reread"] = bool(full or upgraded)
        return batch
    if kind == "github":
        from .github import read_github

        return read_github(path, name, strict=strict)
    if kind == "markdown":
        from .markdown import read_markdown

        return read_markdown(path, name, strict=strict)
    raise InvalidArgument(f"unknown source kind {kind!r}; expected one of {KINDS}")


def _json_meta(store, key: str, default: dict) -> dict:
    """A store meta value written as a JSON object; ``default`` when it is absent or not one."""
    raw = store.get_meta(key)
    try:
        val = json.loads(raw) if raw else default
    except ValueError:
        return default
    return val if isinstance(val, dict) else default


def sync_source(
    engine,
    kind: str,
    path: str | os.PathLike,
    *,
    refs: list[str] | None = None,
    name: str | None = None,
    prune: bool = False,
    full: bool = False,
    progress: SyncProgress | None = None,
    strict: bool = False,
    tags: bool | None = None,
) -> dict:
    """Read ``path`` with the ``kind`` adapter and apply it to ``engine`` (an incremental sync); ``strict``:
    one item over a limit fails the whole sync (default: it is skipped and named in the summary)."""
    t0 = time.perf_counter()
    batch = read_source(
        engine, kind, path, refs=refs, name=name, full=full, progress=progress, strict=strict, tags=tags
    )
    read_s = round(time.perf_counter() - t0, 3)
    out = apply_batch(engine, batch, prune=prune, progress=progress)
    out["read_seconds"] = read_s
    return out
