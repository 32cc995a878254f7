"""The graph never buries an exact match (issue 43): when lexical and dense both rank one node first, what the
final fusion adds afterwards (the graph, priming, the priors) may lift others beside it but not push it out of
the top 3 (fusion.py ``keep_agreed``); the hit says so (``scores.agreed_floor``, a ``max(…)`` in its formula),
nobody else moves, and without such agreement nothing is raised.  A real SQLite store each."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.retrieval.fusion import AGREED_TOP, keep_agreed

DAY = 86400.0
NOW = 1_800_000_000.0
QUESTION = "why did the project move the build from autotools to meson"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """An old commit whose subject says exactly what the question asks, and newer follow-ups that share most of
    its words: the recency prior weighs the old one down to ~0.4 of its score."""
    path = tmp_path_factory.mktemp("exact") / "g.db"
    with ngr.open(path, embedder="hashing") as eng:
        nodes = [
            ngr.Node("c:exact", "commit", "move the build from autotools to meson", "", {"time": NOW - 3650 * DAY})
        ]
        nodes += [
            ngr.Node(f"c:m{k}", "commit", f"move the build to meson: {w} checks", "from autotools", {"time": NOW - k})
            for k, w in enumerate(["compiler", "header", "library", "python", "docs", "test"])
        ]
        nodes += [ngr.Node(f"c:o{k}", "commit", f"netlink change {k}", "socket", {"time": NOW - k}) for k in range(20)]
        eng.add_nodes(nodes)
        eng.add_edges([(f"c:m{a}", "follows_up", f"c:m{(a + 1) % 6}") for a in range(6)])
    return path


def _search(path, query=QUESTION, **kw):
    with ngr.open(path, embedder="hashing") as eng:
        return eng.search(query, limit=30, record=False, **kw)


def test_the_entry_channels_first_node_stays_in_the_top_3(store):
    res = _search(store)
    ids = [h.id for h in res.hits]
    h = res.hits[ids.index("c:exact")]
    assert h.ranks["lexical"] == 1 and h.ranks["dense"] == 1
    assert ids.index("c:exact") < AGREED_TOP
    # raised: the repair prior lifts the follow-ups above 1 and the recency prior weighs the old commit down
    # to ~0.4, so without the floor it would rank below all six follow-ups
    assert h.scores["agreed_floor"] > 0 and h.scores["recency"] < 0.5
    assert h.scores["agreed_floor"] == pytest.approx(res.hits[AGREED_TOP].score)  # the 3rd best of the others
    text, value = h.formula()
    assert "max(" in text and "kept in the top 3" in text
    assert value == pytest.approx(h.score)
    others = [x for x in res.hits if x.id != "c:exact"]
    assert all(x.scores.get("agreed_floor", 0.0) == 0.0 for x in others)
    assert [x.score for x in others] == sorted((x.score for x in others), reverse=True)  # the rest keep their order


def test_without_agreement_nothing_is_raised(store):
    res = _search(store, "autotools socket change")
    first = {c: next(h.id for h in res.hits if h.ranks[c] == 1) for c in ("lexical", "dense")}
    assert first["lexical"] != first["dense"]  # the channels disagree: no exact match to hold
    assert all(not h.scores.get("agreed_floor") for h in res.hits)


def test_keep_agreed_raises_only_what_is_below_the_top():
    final = np.array([0.9, 0.8, 0.7, 0.3, 0.6])
    eligible = np.ones(5, bool)
    assert keep_agreed(final, 3, eligible) == pytest.approx(0.7)  # the 3rd best of the others
    assert np.argsort(-final, kind="stable").tolist().index(3) == 2 and final[3] > 0.7
    again = final.copy()
    assert keep_agreed(again, 3, eligible) == 0.0 and (again == final).all()  # already there: unchanged
    hidden = np.array([0.9, 0.8, 0.7, 0.3])
    assert keep_agreed(hidden, 3, np.array([True, True, True, False])) == 0.0  # not a possible hit itself
    few = np.array([0.9, 0.8, 0.3])
    assert keep_agreed(few, 2, np.ones(3, bool)) == 0.0  # fewer than 3 others: within the top 3 anyway
