"""Every graph channel is selectable per search call, explained, and stored in the trace."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.channels import Spread
from neurongraph.errors import InvalidArgument
from neurongraph.graph.strategies import Eager, Mmr

NODES = [
    ngr.Node(
        "decision:1", "decision", "Adopt PostgreSQL", "We adopt PostgreSQL for the billing ledger.", {"team": "billing"}
    ),
    ngr.Node(
        "pr:2",
        "pull_request",
        "Migrate ledger tables",
        "Schema migration scripts and rollout plan.",
        {"team": "billing"},
    ),
    ngr.Node(
        "issue:3",
        "issue",
        "Rollback after lock timeouts",
        "Lock timeouts during migration forced a rollback.",
        {"team": "ops"},
    ),
    ngr.Node("wiki:4", "wiki", "Office plants", "Watering schedule for the ferns.", {"team": "facilities"}),
    ngr.Node(
        "note:5", "note", "Billing team offsite", "Agenda for the offsite.", {"team": "billing", "cites": "decision:1"}
    ),
]
EDGES = [("decision:1", "implemented_by", "pr:2"), ("pr:2", "corrected_by", "issue:3")]


@pytest.fixture
def eng(engine):
    engine.add_nodes(NODES)
    engine.add_edges(EDGES)
    return engine


@pytest.mark.parametrize("channel", ["spread", "beam", "ppr", "eager", "mmr", "scored"])
def test_each_channel_reaches_the_chain_and_explains_it(eng, channel):
    # the hashing test embedder gives unrelated texts negative cosines: let beam paths pass them
    res = eng.search("adopt PostgreSQL decision", channel=channel, seeds=1, limit=5, beam_min_sim=-1.0)
    ids = [h.id for h in res]
    assert ids[0] == "decision:1"
    assert "pr:2" in ids
    hit = next(h for h in res if h.id == "pr:2")
    assert hit.scores["graph"] > 0
    assert hit.paths and hit.paths[0]["nodes"][0] == "decision:1" and hit.paths[0]["nodes"][-1] == "pr:2"
    trace = eng.get_trace(res.trace_id)
    assert trace["params"]["channel"] == channel
    assert any(h["paths"] for h in trace["hits"])


def test_none_channel_is_entry_only(eng):
    res = eng.search("adopt PostgreSQL decision", channel="none")
    assert all(h.scores["graph"] == 0 and not h.paths for h in res)


def test_per_call_strategy_override_leaves_default(eng):
    before = eng.config
    res = eng.search("adopt PostgreSQL decision", strategy=Mmr(select_k=3, start_k=1, lambda_mult=0.7))
    assert eng.config is before and eng.config.channel == Spread()
    assert eng.get_trace(res.trace_id)["params"]["strategy"]["kind"] == "Mmr"
    assert eng.get_trace(res.trace_id)["params"]["channel"] == "mmr"


def test_metadata_edges_link_shared_values(eng):
    res = eng.search(
        "adopt PostgreSQL decision",
        strategy=Eager(select_k=5, start_k=1, max_depth=1),
        metadata_edges=[("team", "team")],
        limit=5,
    )
    hit = next(h for h in res if h.id == "note:5")  # no graph edge: reached through team=billing
    assert hit.paths[0]["edges"][0]["rel"].endswith("=billing")


def test_strategy_caps_are_enforced_through_search(eng):
    res = eng.search("adopt PostgreSQL decision", strategy=Eager(select_k=5, start_k=1, max_depth=1), limit=5)
    deep = [h for h in res if h.paths and len(h.paths[0]["edges"]) > 1]
    assert not deep


@pytest.mark.parametrize(
    "bad",
    [
        dict(channel="teleport"),
        dict(beam_mode="max"),
        dict(ppr_damping=1.0),
        dict(strategy="mmr"),
        dict(metadata_edges=[("team",)]),
    ],
)
def test_bad_channel_options_are_typed_errors(eng, bad):
    with pytest.raises(InvalidArgument):
        eng.search("x", **bad)
