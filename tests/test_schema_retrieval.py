"""Superseded entry revisions stay for history but leave normal retrieval; a loaded schema binds plain writes."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.errors import SchemaError


def test_superseded_revision_is_excluded_unless_asked(engine):
    engine.add_nodes(
        [ngr.Node("decision:7", "decision", "Cache prices in Redis", "Prices are cached for ten minutes.")]
    )
    engine.revise_entry(
        "decision:7", new_id="decision:7@2", text="Prices are cached for one minute after the incident."
    )
    ids = [h.id for h in engine.search("cache prices minutes")]
    assert "decision:7@2" in ids and "decision:7" not in ids
    ids = [h.id for h in engine.search("cache prices minutes", include_superseded=True)]
    assert "decision:7" in ids and "decision:7@2" in ids


def test_loaded_schema_is_enforced_on_plain_add_edges(db_path):
    eng = ngr.open(db_path, embedder="hashing")
    eng.load_schema({"mode": "strict", "relations": {"fixes": {"allow": [["pull_request", "issue"]]}}})
    eng.add_nodes([ngr.Node("pr:1", "pull_request"), ngr.Node("issue:2", "issue")])
    eng.close()
    other = ngr.open(db_path, embedder="hashing")  # a fresh engine, no schema call made
    with pytest.raises(SchemaError):
        other.add_edges([("issue:2", "fixes", "pr:1")])  # wrong direction for `fixes`
    other.add_edges([("pr:1", "fixes", "issue:2")])
    assert other.store.stats()["edges"] == 1
    other.close()
