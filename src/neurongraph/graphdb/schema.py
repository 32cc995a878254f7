"""The schema a query is generated against, built from the store (not from the projection).

Node labels with counts, relation types with their allowed ``(src_type, dst_type)`` (declared in the
relation registry, else observed) and counts, inverse names, and property names: compact enough for a
prompt (:meth:`GraphSchema.prompt`) and shown by ``ngr schema show``.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field

from ..schema.registry import read_schema
from ..store.base import Store
from .projection import TIME_KEYS, TOKEN_META, default_cache_dir

__all__ = ["GraphSchema", "build_schema"]

NODE_PROPS = ["id", "idx", "type", "title", "time"]
EDGE_PROPS = ["weight", "polarity", "factuality"]
MAX_META_KEYS = 40


@dataclass
class GraphSchema:
    """What the projected graph holds (labels, relations, properties): what generated queries are written against."""

    labels: dict[str, int]  # node type -> count
    relations: dict[str, dict] = field(default_factory=dict)  # name -> {pairs, count, inverse, directed, declared}
    props: list[str] | None = None
    edge_properties: list[str] = field(default_factory=lambda: list(EDGE_PROPS))
    store: Store | None = field(default=None, repr=False, compare=False)

    @property
    def node_properties(self) -> list[str]:
        """Read on first use: the metadata keys cost a pass over every node's metadata (~0.5 s on 25k
        nodes), which the rule translator never needs, only a prompt or ``ngr schema show``."""
        if self.props is None:
            self.props = _node_properties(self.store) if self.store is not None else list(NODE_PROPS)
        return self.props

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


def build_schema(store: Store, lazy: bool = False) -> GraphSchema:
    """The schema at the store's current state; a store file keeps it in its projection cache folder
    (``schema.json``, by store token and sequence number): the type pairs are a pass over every edge
    (~0.25 s on 71k edges), paid once per store change instead of once per ``ngr ask`` process.
    ``lazy``: property names only on first use (a pass over every node's metadata, ~0.5 s on 25k nodes)."""
    cache = _cache_file(store)
    key = None
    if cache is not None:
        key = {"token": store.get_meta(TOKEN_META), "seq": store.current_seq()}
        try:
            with open(cache) as fh:
                got = json.load(fh)
            if got.get("key") == key:
                return _props(GraphSchema(got["labels"], got["relations"], store=store), lazy)
        except (OSError, ValueError, KeyError, TypeError):
            pass
    schema = _build(store)
    if cache is not None and key is not None and key["token"]:
        try:
            os.makedirs(os.path.dirname(cache), mode=0o700, exist_ok=True)
            tmp = f"{cache}.{os.getpid()}.tmp"
            with open(tmp, "w") as fh:
                json.dump({"key": key, "labels": schema.labels, "relations": schema.relations}, fh)
            os.replace(tmp, cache)
        except OSError:
            pass  # a cache it cannot write costs the pass next time, nothing else
    return _props(schema, lazy)


def _props(schema: GraphSchema, lazy: bool) -> GraphSchema:
    """``lazy``: the property names are read on first use (the rule translator never needs them)."""
    if not lazy:
        schema.node_properties  # noqa: B018 -- read now, while the caller's store is open
    return schema


def _cache_file(store: Store) -> str | None:
    d = default_cache_dir(store)
    return os.path.join(d, "schema.json") if d else None


def _build(store: Store) -> GraphSchema:
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
    return GraphSchema(labels, rels, store=store)


def _node_properties(store: Store) -> list[str]:
    meta_keys = store.metadata_keys(MAX_META_KEYS * 2)
    ident = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
    props = (
        list(NODE_PROPS) + [k for k in meta_keys if ident.match(k) and k not in NODE_PROPS + ["text"]][:MAX_META_KEYS]
    )
    if not any(k in meta_keys for k in TIME_KEYS):
        props.remove("time")
    return props
