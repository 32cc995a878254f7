"""Declared invariants, checked at write time against the state *after* the write.

Why post-conditions: a write is one SQLite transaction, so the cheapest correct
check is to let the write happen, evaluate the invariants on the nodes it
touched, and raise if one fails — the transaction then rolls back and nothing is
visible.  Only the touched nodes are evaluated, through indexed lookups, so the
cost is proportional to the write, not to the graph.

Two declarative kinds cover the seed-003 rules (and their mirror images):

``edge_requires_state``
    Every ``rel`` edge requires its ``node`` end (``src`` or ``dst``; of ``node_type``
    if given) to have ``state[field]`` in ``in`` (or not in ``not_in``).
    *"a blocked_by edge from a task requires the task's status to be blocked"*.
``state_requires_edges``
    A node (of ``node_type``) whose ``state[field]`` is in ``in`` must have between
    ``min`` and ``max`` ``rel`` edges in ``direction`` (``out``/``in``).
    *"a done task has no blocked_by edge"* (``max = 0``).

A node's *state* is its entity state (``entity_state.state``) when it is an entity,
otherwise its ``metadata`` — so ad-hoc corpora that keep ``status`` in metadata are
judged the same way.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ..store.base import Store
from .errors import InvalidSchema

__all__ = ["Invariant", "parse_invariant", "Violation", "check_invariants"]

KINDS = ("edge_requires_state", "state_requires_edges")
_FIELD = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,127}$")
_KEYS = {
    "edge_requires_state": {"name", "kind", "rel", "node", "node_type", "field", "in", "not_in", "description"},
    "state_requires_edges": {
        "name",
        "kind",
        "node_type",
        "field",
        "in",
        "rel",
        "direction",
        "min",
        "max",
        "description",
    },
}


@dataclass(frozen=True)
class Invariant:
    """A rule the store's typed edges and node states must keep (an edge requires a node state, or a state requires
    edges)."""

    name: str
    kind: str
    rel: str
    field: str
    values: tuple  # 'in' values (or 'not_in' when negate)
    negate: bool = False  # edge_requires_state with not_in
    node: str = "src"  # edge_requires_state: which end of the edge must hold the state
    node_type: str | None = None
    direction: str = "out"  # state_requires_edges
    min: int = 0
    max: int | None = None
    description: str = ""

    def to_dict(self) -> dict:
        d: dict[str, Any] = {"name": self.name, "kind": self.kind, "rel": self.rel, "field": self.field}
        if self.node_type is not None:
            d["node_type"] = self.node_type
        if self.kind == "edge_requires_state":
            d["node"] = self.node
            d["not_in" if self.negate else "in"] = list(self.values)
        else:
            d.update({"in": list(self.values), "direction": self.direction, "min": self.min})
            if self.max is not None:
                d["max"] = self.max
        if self.description:
            d["description"] = self.description
        return d

    def rule_text(self) -> str:
        who = f"a {self.node_type}" if self.node_type else "a node"
        if self.kind == "edge_requires_state":
            op = "not in" if self.negate else "in"
            return f"the {self.node} of a {self.rel} edge ({who}) needs {self.field} {op} {list(self.values)}"
        bound = f"at least {self.min}" if self.max is None else ("no" if self.max == 0 else f"{self.min}..{self.max}")
        return f"{who} with {self.field} in {list(self.values)} has {bound} {self.direction}going {self.rel} edge(s)"


def parse_invariant(d: Any, position: int = 0) -> Invariant:
    """An invariant from its document form, checked field by field (``InvalidSchema`` naming the field)."""
    where, name, kind = _header(d, position)
    rel, field = d.get("rel"), d.get("field")
    if not isinstance(rel, str) or not rel.strip():
        raise InvalidSchema(f"{where}: needs 'rel' (a relation name)")
    if not isinstance(field, str) or not _FIELD.match(field):
        raise InvalidSchema(f"{where}: 'field' must be a state key such as 'status', got {field!r}")
    node_type = d.get("node_type")
    if node_type is not None and (not isinstance(node_type, str) or not node_type.strip()):
        raise InvalidSchema(f"{where}: 'node_type' must be a non-empty string")
    desc = d.get("description", "")
    if not isinstance(desc, str):
        raise InvalidSchema(f"{where}: description must be a string")
    if kind == "edge_requires_state":
        if ("in" in d) == ("not_in" in d):
            raise InvalidSchema(f"{where}: give exactly one of 'in' and 'not_in'")
        node = d.get("node", "src")
        if node not in ("src", "dst"):
            raise InvalidSchema(f"{where}: 'node' must be 'src' or 'dst', got {node!r}")
        negate = "not_in" in d
        vals = _values(d, "not_in" if negate else "in", where)
        return Invariant(name, kind, rel, field, vals, negate, node, node_type, description=desc)
    if "in" not in d:
        raise InvalidSchema(f"{where}: needs 'in' (the state values the rule applies to)")
    direction = d.get("direction", "out")
    if direction not in ("out", "in"):
        raise InvalidSchema(f"{where}: 'direction' must be 'out' or 'in', got {direction!r}")
    lo, hi = _bounds(d, where)
    return Invariant(
        name,
        kind,
        rel,
        field,
        _values(d, "in", where),
        node_type=node_type,
        direction=direction,
        min=lo,
        max=hi,
        description=desc,
    )


def _header(d: Any, position: int) -> tuple[str, str, str]:
    """``(where, name, kind)``: the invariant is a table with a name, a known kind and only its kind's fields."""
    where = f"invariant #{position + 1}"
    if not isinstance(d, dict):
        raise InvalidSchema(f"{where}: expected a table/object, got {type(d).__name__}")
    name = d.get("name")
    if not isinstance(name, str) or not name.strip():
        raise InvalidSchema(f"{where}: needs a non-empty 'name'")
    where = f"invariant {name!r}"
    kind = d.get("kind")
    if kind not in KINDS:
        raise InvalidSchema(f"{where}: kind must be one of {list(KINDS)}, got {kind!r}")
    extra = set(d) - _KEYS[kind]
    if extra:
        raise InvalidSchema(
            f"{where}: unknown field(s) {sorted(extra)} for kind {kind}; allowed: {sorted(_KEYS[kind])}"
        )
    return where, name, kind


def _values(d: dict, key: str, where: str) -> tuple:
    v = d[key]
    if not isinstance(v, list) or not v or not all(isinstance(x, (str, int, float, bool)) or x is None for x in v):
        raise InvalidSchema(f"{where}: '{key}' must be a non-empty list of scalar values")
    return tuple(v)


def _bounds(d: dict, where: str) -> tuple[int, int | None]:
    lo, hi = d.get("min", 0), d.get("max")
    if isinstance(lo, bool) or not isinstance(lo, int) or lo < 0:
        raise InvalidSchema(f"{where}: 'min' must be an integer >= 0")
    if hi is not None and (isinstance(hi, bool) or not isinstance(hi, int) or hi < lo):
        raise InvalidSchema(f"{where}: 'max' must be an integer >= min")
    if lo == 0 and hi is None:
        raise InvalidSchema(f"{where}: give 'min' > 0 or 'max' (otherwise it checks nothing)")
    return lo, hi


@dataclass(frozen=True)
class Violation:
    """A node that breaks an invariant, with the message a user can act on."""

    invariant: str
    node_id: str
    message: str


def _state_of(raw: str, field: str) -> Any:
    """``state[field]``; a dotted field walks nested objects; missing = None."""
    try:
        cur: Any = json.loads(raw)
    except (TypeError, ValueError):
        return None
    for part in field.split("."):
        if not isinstance(cur, dict):
            return None
        cur = cur.get(part)
    return cur


def check_invariants(
    store: Store, invariants: Iterable[Invariant], rel_ids: dict[str, int], touched: Iterable[int], limit: int = 20
) -> list[Violation]:
    """Evaluate every invariant on the ``touched`` node indices, in the current transaction."""
    invariants = list(invariants)
    idxs = sorted(set(int(i) for i in touched))
    if not invariants or not idxs:
        return []
    tables = store.schema_tables
    rows = tables.node_states(idxs)
    out: list[Violation] = []
    for inv in invariants:
        rel_id = rel_ids.get(inv.rel)
        cand = [r for r in rows if inv.node_type is None or r[2] == inv.node_type]
        if not cand:
            continue
        if inv.kind == "edge_requires_state":
            if rel_id is None:
                continue  # no such edge exists anywhere yet
            counts = tables.edge_counts([r[0] for r in cand], rel_id, inv.node)
            for idx, nid, _, raw in cand:
                if not counts.get(idx):
                    continue
                v = _state_of(raw, inv.field)
                if (v in inv.values) == inv.negate:
                    out.append(
                        Violation(
                            inv.name,
                            nid,
                            f"invariant {inv.name!r} violated: {nid} has {counts[idx]} "
                            f"{inv.rel} edge(s) as {inv.node} but its {inv.field} is {v!r} "
                            f"({inv.rule_text()})",
                        )
                    )
        else:
            hit = [r for r in cand if _state_of(r[3], inv.field) in inv.values]
            if not hit:
                continue
            counts = (
                tables.edge_counts([r[0] for r in hit], rel_id, "src" if inv.direction == "out" else "dst")
                if rel_id is not None
                else {}
            )
            for idx, nid, _, raw in hit:
                n = counts.get(idx, 0)
                if n < inv.min or (inv.max is not None and n > inv.max):
                    out.append(
                        Violation(
                            inv.name,
                            nid,
                            f"invariant {inv.name!r} violated: {nid} has "
                            f"{inv.field} {_state_of(raw, inv.field)!r} and {n} {inv.direction}going "
                            f"{inv.rel} edge(s) ({inv.rule_text()})",
                        )
                    )
        if len(out) >= limit:
            break
    return out[:limit]
