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


def node_idx(c, node_id: str) -> int:
    r = c.execute("SELECT idx FROM nodes WHERE id = ?", (node_id,)).fetchone()
    if r is None:
        raise UnknownNode(f"no node with id {node_id!r}", node_id=node_id)
    return int(r[0])


def resolve(c, name: str) -> str:
    """The node id ``name`` refers to: an exact node id first, else an alias."""
    if not isinstance(name, str) or not name:
        raise InvalidArgument(f"a node id or alias must be a non-empty string, got {name!r}")
    if c.execute("SELECT 1 FROM nodes WHERE id = ?", (name,)).fetchone():
        return name
    r = c.execute(
        "SELECT n.id FROM aliases a JOIN nodes n ON n.idx = a.node_idx WHERE a.alias = ?", (normalise_alias(name),)
    ).fetchone()
    if r is None:
        raise UnknownNode(f"no node with id or alias {name!r}", node_id=name)
    return r[0]


def add_aliases(c, node_id: str, names: Iterable[str]) -> list[str]:
    """Register aliases of a node; an alias already naming another node is a conflict."""
    idx = node_idx(c, node_id)
    added = []
    for name in names:
        key = normalise_alias(name)
        r = c.execute(
            "SELECT a.node_idx, n.id FROM aliases a JOIN nodes n ON n.idx = a.node_idx WHERE a.alias = ?", (key,)
        ).fetchone()
        if r is not None and r[0] != idx:
            raise AliasConflict(f"alias {name!r} already names {r[1]!r}", alias=name, node_id=r[1])
        other = c.execute("SELECT id FROM nodes WHERE id = ? AND idx != ?", (name, idx)).fetchone()
        if other is not None:
            raise AliasConflict(f"alias {name!r} is the id of another node", alias=name, node_id=name)
        c.execute("INSERT OR IGNORE INTO aliases(alias, node_idx) VALUES (?, ?)", (key, idx))
        added.append(key)
    return added


def aliases_of(c, idx: int) -> list[str]:
    return [r[0] for r in c.execute("SELECT alias FROM aliases WHERE node_idx = ? ORDER BY alias", (idx,))]


def _check_state(state) -> dict:
    if state is None:  # unlike metadata, a state must be given explicitly
        raise InvalidArgument("entity state must be a JSON object, got NoneType")
    return check_json_object(state, "entity state")


def create_entity_state(c, node_id: str, state: dict) -> int:
    idx = node_idx(c, node_id)
    if c.execute("SELECT 1 FROM entity_state WHERE node_idx = ?", (idx,)).fetchone():
        raise EntityExists(f"{node_id!r} is already an entity; update it with update_entity()", node_id=node_id)
    c.execute(
        "INSERT INTO entity_state(node_idx, state, revision, updated_at) VALUES (?, ?, 1, ?)",
        (idx, json.dumps(_check_state(state), ensure_ascii=False), time.time()),
    )
    return idx


def get_entity(c, node_id: str) -> dict:
    r = c.execute(
        "SELECT n.idx, n.id, n.type, n.title, es.state, es.revision, es.updated_at FROM nodes n"
        " LEFT JOIN entity_state es ON es.node_idx = n.idx WHERE n.id = ?",
        (node_id,),
    ).fetchone()
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
        "aliases": aliases_of(c, r[0]),
    }


def update_entity_state(
    c, node_id: str, expected_revision: int, state: dict | None, patch: dict | None
) -> tuple[int, dict, int]:
    """Compare-and-set: replace (``state``) or merge (``patch``; a None value deletes a key).

    Returns ``(node idx, new state, new revision)``.  The UPDATE itself re-checks the
    revision, so two writers racing through different connections cannot both win.
    """
    if (state is None) == (patch is None):
        raise InvalidArgument("give exactly one of state= (replace) and patch= (merge)")
    if isinstance(expected_revision, bool) or not isinstance(expected_revision, int):
        raise InvalidArgument(f"expected_revision must be an integer, got {expected_revision!r}")
    cur = get_entity(c, node_id)
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
    idx = node_idx(c, node_id)
    done = c.execute(
        "UPDATE entity_state SET state = ?, revision = revision + 1, updated_at = ?"
        " WHERE node_idx = ? AND revision = ?",
        (json.dumps(new, ensure_ascii=False), time.time(), idx, expected_revision),
    ).rowcount
    if done != 1:  # unreachable inside one write transaction; kept as the guard the contract relies on
        raise StaleRevision(f"entity {node_id!r} changed concurrently", node_id=node_id)
    return idx, new, expected_revision + 1


def superseded_by(c, node_id: str) -> str | None:
    r = c.execute(
        "SELECT b.id FROM superseded s JOIN nodes n ON n.idx = s.node_idx JOIN nodes b ON b.idx = s.by_idx"
        " WHERE n.id = ?",
        (node_id,),
    ).fetchone()
    return None if r is None else r[0]


def revision_chain(c, node_id: str) -> list[str]:
    """Every revision of the entry ``node_id`` belongs to, oldest first (follows ``supersedes`` both ways)."""
    node_idx(c, node_id)
    older: list[str] = []
    cur, seen = node_id, {node_id}
    while len(seen) < MAX_CHAIN:  # walk back: cur -supersedes-> prev
        r = c.execute(
            "SELECT n.id FROM superseded s JOIN nodes n ON n.idx = s.node_idx JOIN nodes b ON b.idx = s.by_idx"
            " WHERE b.id = ? ORDER BY s.at LIMIT 1",
            (cur,),
        ).fetchone()
        if r is None or r[0] in seen:
            break
        older.append(r[0])
        seen.add(r[0])
        cur = r[0]
    newer: list[str] = []
    cur = node_id
    while len(seen) < MAX_CHAIN:
        nxt = superseded_by(c, cur)
        if nxt is None or nxt in seen:
            break
        newer.append(nxt)
        seen.add(nxt)
        cur = nxt
    return older[::-1] + [node_id] + newer


def check_revisable(c, node_id: str) -> None:
    node_idx(c, node_id)
    newer = superseded_by(c, node_id)
    if newer is not None:
        chain = revision_chain(c, node_id)
        raise SupersededEntry(
            f"entry {node_id!r} was superseded by {newer!r}; revise the latest revision {chain[-1]!r} instead",
            node_id=node_id,
            latest=chain[-1],
        )
