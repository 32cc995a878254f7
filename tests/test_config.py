"""SearchConfig and the channel objects: typed validation (InvalidArgument, never ValueError), the flat
option names of earlier versions, and the flat ``to_dict`` that traces and fingerprints keep."""

from __future__ import annotations

import math

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.channels import CHANNELS, Beam, Channel, NoGraph, Ppr, Spread
from neurongraph.config import MAXIMA, SearchConfig
from neurongraph.errors import InvalidArgument
from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.beam import beam_search
from neurongraph.graph.ppr import ppr
from neurongraph.graph.strategies import Eager, Mmr, Scored
from neurongraph.link import LinkerConfig

_G = GraphArrays.from_edges(2, [0], [1], [1.0])

# the flat to_dict of the default configuration as the flat SearchConfig (before channel objects) wrote it, with
# the spread's fan-out damping (added later) beside its other parameters
FLAT_DEFAULT_CHANNEL_KEYS = {
    "channel": "spread",
    "max_depth": 2,
    "direction": "both",
    "reverse_weight": 0.5,
    "depth_decay": 0.85,
    "min_act": 0.01,
    "fan_ref": 20.0,
    "fan_power": 0.5,
    "beam_width": 4,
    "beam_mode": "mean",
    "beam_min_sim": 0.0,
    "ppr_damping": 0.5,
    "strategy": None,
}


def test_every_builtin_channel_name_has_an_object():
    assert {Channel.named(k).kind for k in CHANNELS} == set(CHANNELS)
    assert Channel.named("none") == NoGraph() and Channel.named("beam") == Beam()
    assert Channel.named("eager") == Eager(select_k=None)  # by name: select as many as the search's limit
    with pytest.raises(InvalidArgument):
        Channel.named("teleport")


def test_default_config_holds_a_spread_object_and_reads_as_before():
    cfg = SearchConfig()
    assert cfg.channel == Spread() and cfg.uses_graph
    d = cfg.to_dict()
    assert {k: d[k] for k in FLAT_DEFAULT_CHANNEL_KEYS} == FLAT_DEFAULT_CHANNEL_KEYS
    keys = list(d)  # the flat field order of earlier versions (trace params read the same)
    assert keys[keys.index("query_links") : keys.index("metadata_edges") + 1] == [
        "query_links",
        "channel",
        "max_depth",
        "direction",
        "reverse_weight",
        "depth_decay",
        "min_act",
        "fan_ref",
        "fan_power",
        "query_types",
        "alpha",
        "beta",
        "beam_width",
        "beam_mode",
        "beam_min_sim",
        "ppr_damping",
        "strategy",
        "metadata_edges",
    ]


def test_flat_options_set_the_selected_channels_parameters():
    cfg = SearchConfig.from_options(channel="beam", beam_width=8, beam_mode="min", max_depth=3)
    assert cfg.channel == Beam(width=8, mode="min", max_depth=3)
    d = cfg.to_dict()
    assert (d["channel"], d["beam_width"], d["beam_mode"], d["max_depth"]) == ("beam", 8, "min", 3)
    assert SearchConfig.from_options(ppr_damping=0.3, channel="ppr").channel == Ppr(damping=0.3)
    assert SearchConfig.from_options(direction="out").channel == Spread(direction="out")
    # a kind name is accepted by the constructor too
    assert SearchConfig(channel="ppr").channel == Ppr()  # type: ignore[arg-type]


def test_switching_channel_by_name_carries_the_shared_flat_options():
    deep = SearchConfig.from_options(max_depth=4)
    assert deep.replace(channel="beam").channel == Beam(max_depth=4)  # as when max_depth was one flat field
    assert deep.replace(channel="ppr").channel == Ppr()
    assert deep.replace(channel="spread").channel == Spread(max_depth=4)


def test_a_flat_option_of_another_channel_is_validated_but_has_no_effect():
    cfg = SearchConfig.from_options(beam_width=8)  # channel stays spread
    assert cfg.channel == Spread()
    with pytest.raises(InvalidArgument):
        SearchConfig.from_options(beam_width=0)
    with pytest.raises(InvalidArgument):
        SearchConfig.from_options(ppr_damping=1.0)


def test_strategy_is_the_channel_and_never_silently_rewrites_it():
    m = Mmr(select_k=3, lambda_mult=0.7)
    cfg = SearchConfig.from_options(strategy=m)
    assert cfg.channel is m
    d = cfg.to_dict()
    assert d["channel"] == "mmr" and d["strategy"]["kind"] == "Mmr" and d["strategy"]["lambda_mult"] == 0.7
    assert SearchConfig.from_options(channel="mmr", strategy=m).channel is m  # agreeing: fine
    with pytest.raises(InvalidArgument, match="disagree"):
        SearchConfig.from_options(channel="beam", strategy=m)
    for bad in ("mmr", Beam(), 3):
        with pytest.raises(InvalidArgument):
            SearchConfig.from_options(strategy=bad)
    # by name, a strategy's select_k follows the limit and the flat form says strategy None (as before)
    by_name = SearchConfig.from_options(channel="scored")
    assert by_name.channel == Scored(select_k=None) and by_name.to_dict()["strategy"] is None


def test_fingerprint_depends_on_channel_parameters():
    a, b = SearchConfig(), SearchConfig(channel=Spread(depth_decay=0.5))
    assert a.fingerprint("m") != b.fingerprint("m")
    assert a.fingerprint("m") == SearchConfig.from_options(channel="spread").fingerprint("m")


@pytest.mark.parametrize(
    "make",
    [
        lambda: Spread(direction="sideways"),  # type: ignore[arg-type]
        lambda: Spread(max_depth=MAXIMA["max_depth"] + 1),
        lambda: Spread(depth_decay=math.nan),
        lambda: Spread(min_act=-0.1),
        lambda: Beam(width=0),
        lambda: Beam(width=MAXIMA["beam_width"] + 1),
        lambda: Beam(mode="max"),  # type: ignore[arg-type]
        lambda: Beam(min_sim=math.inf),
        lambda: Ppr(damping=1.0),
        lambda: Ppr(damping=-0.1),
        lambda: Eager(select_k=-1),
        lambda: Mmr(adjacent_k=2.5),  # type: ignore[arg-type]
        lambda: Scored(score_fn=3),  # type: ignore[arg-type]
        lambda: SearchConfig(channel="teleport"),  # type: ignore[arg-type]
        lambda: SearchConfig(channel=3),  # type: ignore[arg-type]
        lambda: SearchConfig(fusion="max"),  # type: ignore[arg-type]
        lambda: SearchConfig(limit=0),
        lambda: SearchConfig(seed_ratio=1.5),
        lambda: SearchConfig(graph_weight=math.nan),
        lambda: SearchConfig(result_types=("passage", "")),
        lambda: SearchConfig.from_options(bogus=1),
        lambda: LinkerConfig(entity_kinds=("bogus",)),
        lambda: LinkerConfig(min_title_chars=-1),
        lambda: LinkerConfig(similarity_threshold=math.nan),
        # the graph algorithms called directly check their options the same way
        lambda: beam_search(_G, [0], np.zeros(2), score_mode="max"),
        lambda: beam_search(_G, [0], np.zeros(2), beam_width=0),
        lambda: ppr(_G, [0], damping=1.5),
        lambda: _G.expand(np.array([0]), direction="sideways"),
    ],
)
def test_every_config_error_is_invalid_argument(make):
    with pytest.raises(InvalidArgument) as exc:
        make()
    assert exc.value.code == "invalid_argument"


def test_channel_objects_run_through_a_search(tmp_path):
    with ngr.open(tmp_path / "c.db", embedder="hashing") as eng:
        eng.add_nodes([ngr.Node("a", "page", "alpha beta"), ngr.Node("b", "page", "beta gamma")])
        eng.add_edges([("a", "links", "b")])
        for ch in (Spread(max_depth=1), Beam(width=2, min_sim=-1.0), Ppr(damping=0.4), Eager(select_k=2), NoGraph()):
            res = eng.search("alpha", config=eng.config.replace(channel=ch), record=True)
            assert res.hits and res.hits[0].id == "a"
            assert eng.get_trace(res.trace_id)["params"]["channel"] == ch.kind
        assert eng.search("alpha", channel=NoGraph()).hits[0].scores["graph"] == 0
