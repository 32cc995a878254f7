"""The schema a query is generated against, built from the store (not from the projection).

Node labels with counts, relation types with their allowed ``(src_type, dst_type)`` (declared in the
relation registry, else observed) and counts, inverse names, and property names: compact enough for a
prompt (:meth:`GraphSchema.prompt`) and shown by ``ngr schema show``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..schema.registry import read_schema
from ..store.base import Store
from .projection import TIME_KEYS

__all__ = ["GraphSchema", "build_schema"]

NODE_PROPS = ["id", "idx", "type", "title", "time"]
EDGE_PROPS = ["weight", "polarity", "factuality"]
MAX_META_KEYS = 40


@dataclass
class GraphSchema:
    """What the projected graph holds (labels, relations, properties): what generated queries are written against."""

    labels: dict[str, int]  # node type -> count
    relations: dict[str, dict] = field(default_factory=dict)  # name -> {pairs, count, inverse, directed, declared}
    node_properties: list[str] = field(default_factory=list)
    edge_properties: list[str] = field(default_factory=lambda: list(EDGE_PROPS))

    def to_dict(self) -> dict:
        return {
            "labels": self.labels,
            "relations": self.relations,
            "node_properties": self.node_properties,
            "edge_properties": self.edge_properties,
        }

    def prompt(self) -> str:
        lines = ["Node labels (every node also has the label Node; `id` is unique, e.g. 'commit:3f2a…'):"]
        lines += [f"- {t} ({n})" for t, n in sorted(self.labels.items(), key=lambda kv: -kv[1])]
        lines.append("Node properties: " + ", ".join(self.node_properties))
        lines.append("Relationships (stored direction):")
        for name, r in sorted(self.relations.items(), key=lambda kv: -kv[1]["count"]):
            pairs = (
                ", ".join(
                    f"(:{s})-[:{name}]->(:{d})" if r["directed"] else f"(:{s})-[:{name}]-(:{d})"
                    for s, d in r["pairs"][:6]
                )
                or f"()-[:{name}]->()"
            )
            extra = f"  read backwards as '{r['inverse']}'" if r.get("inverse") else ""
            lines.append(f"- {pairs}  {r['count']} edges{extra}")
        lines.append("Relationship properties: " + ", ".join(self.edge_properties))
        return "\n".join(lines)


def build_schema(store: Store) -> GraphSchema:
    labels = store.node_type_counts()
    observed: dict[str, dict] = {}
    for name, s, d, n in store.relation_type_pairs():
        o = observed.setdefault(name, {"pairs": [], "count": 0})
        o["pairs"].append((s, d))
        o["count"] += n
    _, reg = read_schema(store)
    rels: dict[str, dict] = {}
    for name, o in observed.items():
        rt = reg.get(name)
        allow = rt.allow if rt is not None else ()
        rels[name] = {
            "pairs": [list(p) for p in (allow if allow else o["pairs"])],
            "count": o["count"],
            "inverse": rt.inverse if rt else None,
            "directed": rt.directed if rt else True,
            "declared": bool(allow),
        }
    meta_keys = store.metadata_keys(MAX_META_KEYS * 2)
    ident = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    props = (
        list(NODE_PROPS) + [k for k in meta_keys if ident.match(k) and k not in NODE_PROPS + ["text"]][:MAX_META_KEYS]
    )
    if not any(k in meta_keys for k in TIME_KEYS):
        props.remove("time")
    return GraphSchema(labels, rels, props)
