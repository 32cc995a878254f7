"""The relation registry: which relations exist, between which node types, read which way.

Why a registry at all (seed 003): relations are first-class, so a typo'd or
reversed edge (``task -evidence_of-> note``) silently corrupts every path query.
The registry names, per relation, the allowed ``(src_type, dst_type)`` pairs, whether
it is directed or symmetric, an *inverse name* (``blocks`` reads ``blocked_by`` from
the other end) and a default weight.  It is defined in code (:class:`RelationSchema`)
or loaded from a small TOML/JSON document, and stored in the database (migration
``0003_schema``) so every process sharing the store enforces the same rules.

Relation ids are the store's ``relations.id``: the predicate type ids that graph
arrays carry, so a query can filter CSR edges by type without a lookup table.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import strict_json
from ..model import MAX_WEIGHT
from ..store.base import Store
from .errors import InvalidSchema
from .invariants import Invariant, parse_invariant

__all__ = ["RelationType", "RelationSchema", "BUILTIN_RELATIONS", "MODES", "save_schema", "read_schema"]

MODES = ("permissive", "strict")
ANY = "*"

_REL_KEYS = {"directed", "symmetric", "inverse", "default_weight", "allow", "description"}
_TOP_KEYS = {"mode", "entry_types", "relations", "invariants"}


@dataclass(frozen=True)
class RelationType:
    """One relation's definition: direction, inverse name, default weight and allowed endpoint types."""

    name: str
    directed: bool = True
    inverse: str | None = None
    default_weight: float = 1.0
    allow: tuple[tuple[str, str], ...] = ()  # (src_type, dst_type); '*' = any; empty = any combination
    description: str = ""

    def allows(self, src_type: str, dst_type: str) -> bool:
        if not self.allow:
            return True
        for s, d in self.allow:
            if s in (ANY, src_type) and d in (ANY, dst_type):
                return True
            if not self.directed and s in (ANY, dst_type) and d in (ANY, src_type):
                return True
        return False

    def allowed_text(self) -> str:
        if not self.allow:
            return "any combination"
        arrow = "->" if self.directed else "<->"
        return ", ".join(f"({s} {arrow} {d})" for s, d in self.allow)

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "directed": self.directed,
            "default_weight": self.default_weight,
            "allow": [list(p) for p in self.allow],
        }
        if self.inverse:
            d["inverse"] = self.inverse
        if self.description:
            d["description"] = self.description
        return d


# Relations the engine itself writes (schema API, learning loop): always registered, so strict mode
# never rejects them.  The validator also accepts them when a store's saved schema predates one of them.
BUILTIN_RELATIONS: dict[str, RelationType] = {
    "supersedes": RelationType(
        "supersedes", inverse="superseded_by", description="a newer revision of an entry -> the revision it replaces"
    ),
    "source_of": RelationType(
        "source_of", inverse="produced_by", description="an event (ingest run, session) -> what it produced"
    ),
    "co_used": RelationType(
        "co_used", description="learning loop: two sources used together in one trace (both directions)"
    ),
    "part_of": RelationType(
        "part_of",
        description="a part -> the whole it belongs to: a commit of a merged PR's branch -> the PR (git ingest), "
        "a comment -> its thread (GitHub), a section -> its page (Markdown)",
    ),
}


def _name(value: Any, what: str) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > 512:
        raise InvalidSchema(f"{what} must be a non-empty string (at most 512 characters), got {value!r}")
    return value


def _parse_relation(name: str, spec: Any) -> RelationType:
    where = f"relation {name!r}"
    if not isinstance(spec, dict):
        raise InvalidSchema(f"{where}: expected a table/object, got {type(spec).__name__}")
    extra = set(spec) - _REL_KEYS
    if extra:
        raise InvalidSchema(f"{where}: unknown field(s) {sorted(extra)}; allowed: {sorted(_REL_KEYS)}")
    directed = spec.get("directed", True)
    if "symmetric" in spec:
        if not isinstance(spec["symmetric"], bool) or ("directed" in spec and spec["directed"] == spec["symmetric"]):
            raise InvalidSchema(f"{where}: 'symmetric' must be a boolean that agrees with 'directed'")
        directed = not spec["symmetric"]
    if not isinstance(directed, bool):
        raise InvalidSchema(f"{where}: 'directed' must be true or false, got {directed!r}")
    inverse = spec.get("inverse")
    if inverse is not None:
        inverse = _name(inverse, f"{where}: inverse")
        if not directed:
            if inverse != name:
                raise InvalidSchema(
                    f"{where}: a symmetric relation is its own inverse; drop 'inverse' or set it to {name!r}"
                )
            inverse = None
        elif inverse == name:
            raise InvalidSchema(f"{where}: a directed relation cannot be its own inverse (declare it symmetric)")
    w = spec.get("default_weight", 1.0)
    if isinstance(w, bool) or not isinstance(w, (int, float)) or not (0 <= w <= MAX_WEIGHT):
        raise InvalidSchema(f"{where}: default_weight must be a finite number within 0..{MAX_WEIGHT:g}, got {w!r}")
    allow = spec.get("allow", [])
    if not isinstance(allow, list):
        raise InvalidSchema(f"{where}: 'allow' must be a list of [src_type, dst_type] pairs")
    pairs = []
    for p in allow:
        if not (isinstance(p, (list, tuple)) and len(p) == 2):
            raise InvalidSchema(f"{where}: each 'allow' item must be a [src_type, dst_type] pair, got {p!r}")
        pairs.append((_name(p[0], f"{where}: src_type"), _name(p[1], f"{where}: dst_type")))
    desc = spec.get("description", "")
    if not isinstance(desc, str):
        raise InvalidSchema(f"{where}: description must be a string")
    return RelationType(name, directed, inverse, float(w), tuple(dict.fromkeys(pairs)), desc)


@dataclass(frozen=True)
class RelationSchema:
    """A complete schema: mode, relation types, invariants, immutable entry types."""

    relations: dict[str, RelationType] = field(default_factory=dict)
    invariants: tuple[Invariant, ...] = ()
    mode: str = "permissive"
    entry_types: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise InvalidSchema(f"mode must be one of {list(MODES)}, got {self.mode!r}")
        rels = {**BUILTIN_RELATIONS, **self.relations}
        object.__setattr__(self, "relations", rels)
        inverses: dict[str, str] = {}
        for r in rels.values():
            if r.inverse:
                if r.inverse in rels:
                    raise InvalidSchema(
                        f"relation {r.name!r}: its inverse name {r.inverse!r} is itself a relation; "
                        "declare one of them only"
                    )
                if r.inverse in inverses:
                    raise InvalidSchema(
                        f"inverse name {r.inverse!r} is used by both {inverses[r.inverse]!r} and {r.name!r}"
                    )
                inverses[r.inverse] = r.name
        names = [i.name for i in self.invariants]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise InvalidSchema(f"invariant name(s) declared twice: {dup}")

    # --------------------------------------------------------------- reading
    def resolve(self, name: str) -> tuple[str, bool]:
        """``(stored relation name, flipped)``: an inverse name reads its relation from the dst side."""
        if name in self.relations:
            return name, False
        for r in self.relations.values():
            if r.inverse == name:
                return r.name, True
        return name, False

    def get(self, name: str) -> RelationType | None:
        return self.relations.get(name)

    # --------------------------------------------------------------- documents
    @classmethod
    def from_dict(cls, doc: Any) -> RelationSchema:
        if not isinstance(doc, dict):
            raise InvalidSchema(f"a schema must be a table/object, got {type(doc).__name__}")
        extra = set(doc) - _TOP_KEYS
        if extra:
            raise InvalidSchema(f"unknown top-level field(s) {sorted(extra)}; allowed: {sorted(_TOP_KEYS)}")
        rels = doc.get("relations", {})
        if not isinstance(rels, dict):
            raise InvalidSchema("'relations' must map relation names to their definitions")
        invs = doc.get("invariants", [])
        if not isinstance(invs, list):
            raise InvalidSchema("'invariants' must be a list")
        entry_types = doc.get("entry_types", [])
        if not isinstance(entry_types, list):
            raise InvalidSchema("'entry_types' must be a list of node types")
        return cls(
            relations={_name(n, "relation name"): _parse_relation(n, spec) for n, spec in rels.items()},
            invariants=tuple(parse_invariant(i, k) for k, i in enumerate(invs)),
            mode=doc.get("mode", "permissive"),
            entry_types=tuple(_name(t, "entry type") for t in entry_types),
        )

    @classmethod
    def from_file(cls, path: str | Path) -> RelationSchema:
        """Parse a ``.toml`` or ``.json`` schema document (chosen by suffix; JSON otherwise)."""
        p = Path(path)
        raw = p.read_bytes()
        try:
            if p.suffix.lower() == ".toml":
                import tomllib

                doc = tomllib.loads(raw.decode("utf-8"))
            else:
                doc = strict_json.loads(raw.decode("utf-8"))  # a repeated key is an error, not "last wins"
        except (ValueError, UnicodeDecodeError, strict_json.StrictJSONError) as exc:  # TOML/JSON errors: ValueErrors
            raise InvalidSchema(
                f"{p}: not a valid {'TOML' if p.suffix.lower() == '.toml' else 'JSON'} document: {exc}"
            ) from None
        return cls.from_dict(doc)

    def to_dict(self) -> dict:
        return {
            "mode": self.mode,
            "entry_types": list(self.entry_types),
            "relations": {n: r.to_dict() for n, r in sorted(self.relations.items())},
            "invariants": [i.to_dict() for i in self.invariants],
        }


# ------------------------------------------------------------------ persistence
def save_schema(store: Store, schema: RelationSchema) -> int:
    """Replace the stored schema with ``schema`` in one transaction; returns the new generation.

    The generation (meta ``schema.generation``) tells every process holding a
    compiled copy to re-read it.
    """
    rels = list(schema.relations.values())
    return store.schema_tables.save_relation_schema(
        [(r.name, r.directed, r.inverse, r.default_weight, r.description) for r in rels],
        [(r.name, s, d) for r in rels for s, d in r.allow],
        [(i.name, json.dumps(i.to_dict())) for i in schema.invariants],
        schema.mode,
        list(schema.entry_types),
    )


def read_schema(store: Store) -> tuple[int, RelationSchema]:
    """``(generation, schema)`` as stored; generation 0 = none loaded (built-in relations only)."""
    gen = int(store.get_meta("schema.generation") or 0)
    types, rules, specs = store.schema_tables.relation_schema_rows()
    rels: dict[str, RelationType] = {
        name: RelationType(name, directed, inverse, w, tuple(rules.get(name, ())), desc)
        for name, directed, inverse, w, desc in types
    }
    invs = tuple(parse_invariant(json.loads(spec), k) for k, spec in enumerate(specs))
    entry_types = tuple(json.loads(store.get_meta("schema.entry_types") or "[]"))
    return gen, RelationSchema(rels, invs, store.get_meta("schema.mode") or "permissive", entry_types)
