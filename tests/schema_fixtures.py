"""Shared fixtures of the schema tests: a seed-003 schema and an engine (its Schema service)."""

from __future__ import annotations

SEED003_TOML = """
mode = "strict"
entry_types = ["note"]

[relations.blocked_by]
inverse = "blocks"
allow = [["task", "task"], ["task", "condition"]]

[relations.resolves_to]
inverse = "resolved_from"
allow = [["condition", "task"], ["condition", "condition"]]

[relations.evidence_of]
inverse = "has_evidence"
default_weight = 0.8
allow = [["note", "*"]]

[relations.related_to]
symmetric = true
allow = [["task", "condition"]]

[[invariants]]
name = "blocked_by_requires_blocked"
kind = "edge_requires_state"
rel = "blocked_by"
node = "src"
node_type = "task"
field = "status"
in = ["blocked"]

[[invariants]]
name = "done_has_no_blockers"
kind = "state_requires_edges"
node_type = "task"
field = "status"
in = ["done"]
rel = "blocked_by"
max = 0
"""


def make_engine(path):
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import make_embedder
    from neurongraph.store.sqlite import SQLiteStore

    return Engine(SQLiteStore(path), make_embedder("hashing"))  # its Schema service attaches the validator
