"""The best lexical match seeds beside the sparse entry seeds (``lexical_seed``), so the graph, which scores
seeds and their neighbours, cannot bury the one text that holds the question's own words."""

from __future__ import annotations

import pytest

import neurongraph as ngr

NODES = [
    ngr.Node("a", "passage", "Saaremaa island", "Saaremaa island lies in the Baltic Sea off Estonia."),
    ngr.Node("b", "passage", "Baltic Sea", "The Baltic Sea borders Estonia and the Saint Petersburg region."),
    ngr.Node("c", "passage", "Estonia", "Estonia is a country on the Baltic Sea."),
    ngr.Node("d", "passage", "Ferns", "Watering schedule for the ferns in the office."),
    ngr.Node("e", "passage", "Kuressaare", "Kuressaare castle: Saaremaa Saaremaa Saaremaa island island."),
]
Q = "Saaremaa island Baltic Sea Estonia"


@pytest.fixture
def eng(engine):
    engine.add_nodes(NODES)
    engine.add_edges([("a", "mentions", "b"), ("b", "mentions", "c"), ("e", "mentions", "d")])
    return engine


def _scores(eng, part):
    res = eng.search(Q, limit=10, record=False, channel="none")
    return {h.id: h.scores[part] for h in res}


@pytest.mark.parametrize("seeds,ratio", [(1, 1.0), (2, 0.85), (3, 0.0), (4, 0.5)])
def test_the_lexical_best_joins_the_entry_seeds(eng, seeds, ratio):
    lexical = _scores(eng, "lexical")
    lex_best = max(lexical, key=lexical.get)
    plain = eng.search(Q, seeds=seeds, seed_ratio=ratio, lexical_seed=False, record=False).seeds
    got = eng.search(Q, seeds=seeds, seed_ratio=ratio, record=False).seeds
    assert got == (plain if lex_best in plain else [*plain, lex_best])


def test_the_lexical_best_gets_a_seeds_graph_score(eng):
    """``e`` holds the question's words most often but reads unlike it (a low dense score): the fused entry
    seeds ``a`` alone; as a seed too, ``e`` gets its entry activation as its graph score."""
    entry = _scores(eng, "seed_score")
    on = {h.id: h for h in eng.search(Q, seeds=1, seed_ratio=1.0, record=False, limit=10)}
    off = {h.id: h for h in eng.search(Q, seeds=1, seed_ratio=1.0, lexical_seed=False, record=False, limit=10)}
    assert on["e"].scores["graph"] >= entry["e"] / max(entry.values()) - 1e-9
    assert on["e"].scores["graph"] > off["e"].scores["graph"] if "e" in off else True
    assert on["e"].scores["final"] > (off["e"].scores["final"] if "e" in off else 0.0)


def test_off_when_asked_and_on_by_default():
    assert ngr.SearchConfig().lexical_seed is True
    assert ngr.SearchConfig().replace(lexical_seed=False).to_dict()["lexical_seed"] is False
