"""Entities (mutable state + revision counter), aliases, and entry revision chains.

Why two kinds of node (seed 003): an *entry* records what was said or decided and
never changes — an edit is a new node linked ``new -supersedes-> old``, so history
and the evidence that cited the old text survive.  An *entity* is the thing the
entries are about (a task, a service) whose state moves on; its ``revision``
counter gives optimistic concurrency: an update names the revision it read, and
a stale one is rejected instead of silently overwriting someone else's change.

These functions run inside the caller's store transaction and never refresh the
engine; :mod:`.api` wraps them into atomic engine methods.
"""

from __future__ import annotations

import json
import time
import unicodedata
from collections.abc import Iterable

from ..errors import InvalidArgument, UnknownNode
from ..model import check_json_object
from ..store.base import Store
from .errors import AliasConflict, EntityExists, NotAnEntity, StaleRevision, SupersededEntry

__all__ = [
    "normalise_alias",
    "node_idx",
    "resolve",
    "add_aliases",
    "aliases_of",
    "create_entity_state",
    "get_entity",
    "update_entity_state",
    "revision_chain",
    "superseded_by",
    "MAX_CHAIN",
]

MAX_CHAIN = 10_000  # a revision chain longer than this is treated as a cycle


def normalise_alias(name: str) -> str:
    """Aliases match regardless of case and Unicode form (full-width Ｔａｓｋ = task)."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument(f"an alias must be a non-empty string, got {name!r}")
    return unicodedata.normalize("NFKC", name).casefold().strip()


def node_idx(store: Store, node_id: str) -> int:
    idx = store.lookup_idx([node_id]).get(node_id)
    if idx is None:
        raise UnknownNode(f"no node with id {node_id!r}", node_id=node_id)
    return int(idx)


def resolve(store: Store, name: str) -> str:
    """The node id ``name`` refers to: an exact node id first, else an alias, else a short sha."""
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"a node id or alias must be a non-empty string, got {name!r}")
    if store.lookup_idx([name]):
        return name
    r = store.schema_tables.alias_target(normalise_alias(name))
    if r is None:
        try:  # a short commit sha (abc1234, commit:abc1234): the one node whose id starts with it
            return store.resolve_node_id(name)
        except UnknownNode:
            raise UnknownNode(f"no node with id or alias {name!r}", node_id=name) from None
    return r[1]


def add_aliases(store: Store, node_id: str, names: Iterable[str]) -> list[str]:
    """Register aliases of a node; an alias already naming another node is a conflict."""
    idx = node_idx(store, node_id)
    t = store.schema_tables
    added = []
    for name in names:
        key = normalise_alias(name)
        r = t.alias_target(key)
        if r is not None and r[0] != idx:
            raise AliasConflict(f"alias {name!r} already names {r[1]!r}", alias=name, node_id=r[1])
        other = store.lookup_idx([name]).get(name)
        if other is not None and other != idx:
            raise AliasConflict(f"alias {name!r} is the id of another node", alias=name, node_id=name)
        t.add_alias(key, idx)
        added.append(key)
    return added


def aliases_of(store: Store, idx: int) -> list[str]:
    return store.schema_tables.aliases_of(idx)


def _check_state(state) -> dict:
    if state is None:  # unlike metadata, a state must be given explicitly
        raise InvalidArgument("entity state must be a JSON object, got NoneType")
    return check_json_object(state, "entity state")


def create_entity_state(store: Store, node_id: str, state: dict) -> int:
    idx = node_idx(store, node_id)
    row = store.schema_tables.entity_row(node_id)
    exists = row is not None and row[4] is not None
    if exists or not store.schema_tables.insert_entity_state(
        idx, json.dumps(_check_state(state), ensure_ascii=False), time.time()
    ):
        raise EntityExists(f"{node_id!r} is already an entity; update it with update_entity()", node_id=node_id)
    return idx


def get_entity(store: Store, node_id: str) -> dict:
    r = store.schema_tables.entity_row(node_id)
    if r is None:
        raise UnknownNode(f"no node with id {node_id!r}", node_id=node_id)
    if r[4] is None:
        raise NotAnEntity(f"{node_id!r} is a node but not an entity (create it with create_entity())", node_id=node_id)
    return {
        "id": r[1],
        "type": r[2],
        "title": r[3],
        "state": json.loads(r[4]),
        "revision": r[5],
        "updated_at": r[6],
        "aliases": aliases_of(store, r[0]),
    }


def update_entity_state(
    store: Store, node_id: str, expected_revision: int, state: dict | None, patch: dict | None
) -> tuple[int, dict, int]:
    """Compare-and-set: replace (``state``) or merge (``patch``; a None value deletes a key).

    Returns ``(node idx, new state, new revision)``.  The compare-and-set itself re-checks the
    revision, so two writers racing through different connections cannot both win.
    """
    if (state is None) == (patch is None):
        raise InvalidArgument("give exactly one of state= (replace) and patch= (merge)")
    if isinstance(expected_revision, bool) or not isinstance(expected_revision, int):
        raise InvalidArgument(f"expected_revision must be an integer, got {expected_revision!r}")
    cur = get_entity(store, node_id)
    if cur["revision"] != expected_revision:
        raise StaleRevision(
            f"entity {node_id!r} is at revision {cur['revision']}, not {expected_revision}; "
            "re-read it and apply the change again",
            node_id=node_id,
            current_revision=cur["revision"],
            expected_revision=expected_revision,
        )
    if patch is not None:
        new = dict(cur["state"])
        for k, v in _check_state(patch).items():
            if v is None:
                new.pop(k, None)
            else:
                new[k] = v
    else:
        new = _check_state(state)
    idx = node_idx(store, node_id)
    done = store.schema_tables.update_entity_state(
        idx, json.dumps(new, ensure_ascii=False), time.time(), expected_revision
    )
    if not done:  # unreachable inside one write transaction; kept as the guard the contract relies on
        raise StaleRevision(f"entity {node_id!r} changed concurrently", node_id=node_id)
    return idx, new, expected_revision + 1


def superseded_by(store: Store, node_id: str) -> str | None:
    return store.schema_tables.superseded_by(node_id)


def revision_chain(store: Store, node_id: str) -> list[str]:
    """Every revision of the entry ``node_id`` belongs to, oldest first (follows ``supersedes`` both ways)."""
    node_idx(store, node_id)
    older: list[str] = []
    cur, seen = node_id, {node_id}
    while len(seen) < MAX_CHAIN:  # walk back: cur -supersedes-> prev
        prev = store.schema_tables.supersedes(cur)
        if prev is None or prev in seen:
            break
        older.append(prev)
        seen.add(prev)
        cur = prev
    newer: list[str] = []
    cur = node_id
    while len(seen) < MAX_CHAIN:
        nxt = superseded_by(store, cur)
        if nxt is None or nxt in seen:
            break
        newer.append(nxt)
        seen.add(nxt)
        cur = nxt
    return older[::-1] + [node_id] + newer


def check_revisable(store: Store, node_id: str) -> None:
    node_idx(store, node_id)
    newer = superseded_by(store, node_id)
    if newer is not None:
        chain = revision_chain(store, node_id)
        raise SupersededEntry(
            f"entry {node_id!r} was superseded by {newer!r}; revise the latest revision {chain[-1]!r} instead",
            node_id=node_id,
            latest=chain[-1],
        )
