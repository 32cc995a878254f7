"""The recency prior: among otherwise equal nodes with event times, the more recent one (relative to
as_of, else the newest event in the store) ranks first; a timeless node gets the timed candidates' median
factor (neutral); stores without times are unaffected."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument

DAY = 86400.0


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "r.db", embedder="hashing")
    e.add_nodes(
        [
            ngr.Node("old", "commit", "vlan tunnel mapping", "", {"time": 1000 * DAY}),
            ngr.Node("new", "commit", "vlan tunnel mapping", "", {"time": 1900 * DAY}),
            ngr.Node("future", "commit", "vlan tunnel mapping", "", {"time": 3000 * DAY}),
            ngr.Node("page", "page", "vlan tunnel mapping", ""),
        ]
    )
    yield e
    e.close()


def test_newer_wins_a_tie_and_timeless_is_neutral(eng):
    res = eng.search("vlan tunnel mapping", as_of=2000 * DAY, limit=4)
    order = [h.id for h in res.hits]
    assert "future" not in order  # as_of hides it
    assert order.index("new") < order.index("old")
    s = {h.id: h.scores for h in res.hits}
    # no time: neutral, the median factor of the timed candidates (factor 1 lifted timeless nodes above all)
    assert s["page"]["recency"] == pytest.approx((s["new"]["recency"] + s["old"]["recency"]) / 2)
    # no repair edges in this store: the configured half-life shapes the prior
    # (defaults: weight 0.6, exponent 0.6 — the age part is (1-w) + w·S^g)
    assert s["new"]["recency"] == pytest.approx(0.4 + 0.6 * (0.5 ** (100 / 365)) ** 0.6)
    assert s["old"]["recency"] == pytest.approx(0.4 + 0.6 * (0.5 ** (1000 / 365)) ** 0.6)
    untempered = {
        h.id: h.scores
        for h in eng.search(
            "vlan tunnel mapping", as_of=2000 * DAY, limit=4, recency_weight=0.5, recency_exponent=1.0
        ).hits
    }
    assert untempered["new"]["recency"] == pytest.approx(0.5 + 0.5 * 0.5 ** (100 / 365))
    assert untempered["old"]["recency"] == pytest.approx(0.5 + 0.5 * 0.5 ** (1000 / 365))
    # without as_of, age counts back from the newest event in the store (not the wall clock)
    res = eng.search("vlan tunnel mapping", limit=4)
    assert {h.id: h.scores["recency"] for h in res.hits}["future"] == pytest.approx(1.0)


def test_off_means_unchanged(eng):
    a = eng.search("vlan tunnel mapping", limit=4, recency_weight=0.0, repair_weight=0.0, record=False)
    assert all("recency" not in h.scores for h in a.hits)
    assert len({round(h.scores["final"], 12) for h in a.hits if h.id != "page"}) == 1  # a true tie


def test_validation(eng):
    for bad in (
        dict(recency_weight=1.5),
        dict(recency_weight=-0.1),
        dict(recency_half_life_days=0),
        dict(recency_half_life_days=float("nan")),
        dict(recency_weight=True),
        dict(recency_exponent=0),
        dict(recency_exponent=-1.0),
        dict(recency_exponent=float("inf")),
    ):
        with pytest.raises(InvalidArgument):
            eng.search("x", **bad)


def test_the_prior_is_read_from_the_store_own_repairs(tmp_path):
    """With enough repair edges (fixes/follows_up/reverts) made before "now", the prior is the share of
    their gaps at least as long as a node's age; repairs after as_of are not looked at."""
    from neurongraph.retrieval.recency import MIN_OBSERVED

    with ngr.open(tmp_path / "g.db", embedder="hashing") as e:
        nodes, edges = [], []
        for k in range(MIN_OBSERVED):  # repairs 10 days after their origin, all before day 500
            nodes += [
                ngr.Node(f"o{k}", "commit", f"origin {k}", "", {"time": (100 + k) * DAY}),
                ngr.Node(f"f{k}", "commit", f"fix {k}", "", {"time": (110 + k) * DAY}),
            ]
            edges.append((f"f{k}", "fixes", f"o{k}"))
        nodes += [
            ngr.Node("late-o", "commit", "late origin", "", {"time": 600 * DAY}),
            ngr.Node("late-f", "commit", "late fix", "", {"time": 2600 * DAY}),
            ngr.Node("a", "commit", "vlan tunnel", "", {"time": 495 * DAY}),
            ngr.Node("b", "commit", "vlan tunnel", "", {"time": 480 * DAY}),
        ]
        e.add_nodes(nodes)
        e.add_edges(edges + [("late-f", "fixes", "late-o")])
        prior = e._recency_prior(e.config.replace(as_of=500 * DAY))
        assert prior.describe()["from"] == "observed repair gaps" and prior.describe()["n"] == MIN_OBSERVED
        assert prior.describe()["median_days"] == pytest.approx(10)
        res = {h.id: h.scores["recency"] for h in e.search("vlan tunnel", as_of=500 * DAY, limit=2)}
        assert res["a"] == pytest.approx(1.0) and res["b"] == pytest.approx(0.4)  # 5 d: all gaps longer; 20: none
        assert e._recency_prior(e.config.replace(as_of=3000 * DAY)).describe()["n"] == MIN_OBSERVED + 1
