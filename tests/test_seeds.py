"""Sparse seeds: at most ``seeds`` entry candidates, and only those within ``seed_ratio`` of the best (with
``lexical_seed`` off: the best lexical match that joins them is tests/test_lexical_seed.py's)."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument

NODES = [
    ngr.Node("a", "passage", "Saaremaa island", "Saaremaa island lies in the Baltic Sea off Estonia."),
    ngr.Node("b", "passage", "Baltic Sea", "The Baltic Sea borders Estonia and the Saint Petersburg region."),
    ngr.Node("c", "passage", "Estonia", "Estonia is a country on the Baltic Sea."),
    ngr.Node("d", "passage", "Ferns", "Watering schedule for the ferns in the office."),
]
Q = "Saaremaa island Baltic Sea Estonia"


@pytest.fixture
def eng(engine):
    engine.add_nodes(NODES)
    engine.add_edges([("a", "mentions", "b"), ("b", "mentions", "c")])
    return engine


def _entry(eng, **cfg):
    res = eng.search(Q, limit=10, record=False, channel="none", **cfg)
    return {h.id: h.scores["seed_score"] for h in res}


def test_ratio_zero_keeps_the_top_s(eng):
    res = eng.search(Q, seeds=3, seed_ratio=0.0, lexical_seed=False, record=False)
    entry = _entry(eng)
    assert res.seeds == sorted(entry, key=entry.get, reverse=True)[:3]


def test_ratio_one_keeps_only_the_best(eng):
    res = eng.search(Q, seeds=3, seed_ratio=1.0, lexical_seed=False, record=False)
    entry = _entry(eng)
    assert res.seeds == [max(entry, key=entry.get)]


@pytest.mark.parametrize("ratio", [0.3, 0.407, 0.6, 0.85, 0.95])
def test_seeds_are_the_top_candidates_within_the_ratio(eng, ratio):
    entry = _entry(eng)
    ranked = sorted(entry, key=entry.get, reverse=True)[:3]
    best = entry[ranked[0]]
    expected = [n for n in ranked if entry[n] >= ratio * best]
    res = eng.search(Q, seeds=3, seed_ratio=ratio, lexical_seed=False, record=False)
    assert res.seeds == expected
    assert 1 <= len(res.seeds) <= 3


def test_default_is_adaptive():
    cfg = ngr.SearchConfig()
    assert 0 < cfg.seed_ratio < 1 and cfg.seeds > 1


@pytest.mark.parametrize("bad", [-0.1, 1.5, "x", True])
def test_seed_ratio_is_validated(bad):
    with pytest.raises(InvalidArgument):
        ngr.SearchConfig(seed_ratio=bad)


def test_excluded_types_do_not_seed_but_still_bridge(engine):
    # an entity node whose name is the query is the best entry candidate, yet a bridge, not a source
    engine.add_nodes(
        [
            ngr.Node("entity:saaremaa", "entity", "Saaremaa", ""),
            ngr.Node("p1", "passage", "Oeselians", "The Oeselians inhabited Saaremaa, an island of Estonia."),
            ngr.Node("p2", "passage", "Kuressaare", "Kuressaare is the only town on the island."),
            ngr.Node("p3", "passage", "Ferns", "Watering schedule for the ferns in the office."),
        ]
    )
    engine.add_edges([("p1", "has_entity", "entity:saaremaa"), ("entity:saaremaa", "entity_in", "p2")])
    q = "Saaremaa"
    entry = {h.id: h.scores["entry"] for h in engine.search(q, channel="none", exclude_types=(), record=False)}
    assert max(entry, key=entry.get) == "entity:saaremaa"
    both = engine.search(q, seeds=3, seed_ratio=0.0, exclude_types=(), record=False)
    assert "entity:saaremaa" in both.seeds
    res = engine.search(q, seeds=3, seed_ratio=0.0, record=False)  # default: exclude_types=("entity",)
    assert "entity:saaremaa" not in res.seeds and res.seeds[0] == "p1"
    assert "entity:saaremaa" not in [h.id for h in res]
    p2 = next(h for h in res if h.id == "p2")  # reached from the passage seed through the entity
    assert p2.scores["graph"] > 0 and p2.paths[0]["nodes"] == ["p1", "entity:saaremaa", "p2"]
