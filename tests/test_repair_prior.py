"""The repair prior: a change that earlier repairs already named (fixes / follows_up / reverts) outranks an
otherwise equal one — counting only repairs made before the search's "now" (no look-ahead)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.retrieval.recency import RepairGaps

DAY = 86400.0


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "p.db", embedder="hashing")
    e.add_nodes(
        [
            ngr.Node("fragile", "commit", "route nexthop weights", "", {"time": 1000 * DAY}),
            ngr.Node("sturdy", "commit", "route nexthop weights", "", {"time": 1000 * DAY}),
            ngr.Node("fix1", "commit", "clamp overflow", "", {"time": 1200 * DAY}),
            ngr.Node("fix2", "commit", "handle zero", "", {"time": 1400 * DAY}),
        ]
    )
    e.add_edges([("fix1", "fixes", "fragile"), ("fix2", "fixes", "fragile")])
    yield e
    e.close()


def _scores(eng, **kw):
    res = eng.search("route nexthop weights", limit=4, record=False, result_types=("commit",), channel="none", **kw)
    return {h.id: h.scores for h in res.hits}, [h.id for h in res.hits]


def test_a_change_repaired_before_outranks_its_twin(eng):
    s, order = _scores(eng, as_of=1500 * DAY)
    assert order.index("fragile") < order.index("sturdy")
    assert s["fragile"]["repairs"] == 2 and s["sturdy"]["repairs"] == 0
    ratio = s["fragile"]["final"] / s["sturdy"]["final"]
    assert ratio == pytest.approx(1 + 0.3 * np.log1p(2))


def test_repairs_after_now_do_not_count(eng):
    s, _ = _scores(eng, as_of=1300 * DAY)  # fix2 is in the future
    assert s["fragile"]["repairs"] == 1
    s, _ = _scores(eng, as_of=1100 * DAY)  # both fixes are
    assert s["fragile"]["repairs"] == 0
    assert s["fragile"]["final"] == pytest.approx(s["sturdy"]["final"])


def test_off_means_a_tie(eng):
    s, _ = _scores(eng, as_of=1500 * DAY, repair_weight=0.0)
    assert "repairs" not in s["fragile"]
    assert s["fragile"]["final"] == pytest.approx(s["sturdy"]["final"])


def test_validation(eng):
    for bad in (dict(repair_weight=-0.1), dict(repair_weight=float("inf")), dict(repair_weight=True)):
        with pytest.raises(InvalidArgument):
            eng.search("x", **bad)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 30), st.integers(0, 10**9), st.integers(0, 10**9)), max_size=60),
    st.floats(-1e3, 1.1e9),
)
def test_counts_match_a_brute_force_count(edges, now):
    """repairs_before(nodes, now) == #{repair edges naming the node, made at or before now} (times in
    whole seconds, as every adapter writes them; "now" any number)."""
    dst = np.array([d for d, _, _ in edges], np.int64)
    later = np.array([max(a, b) for _, a, b in edges], np.float64)
    earlier = np.array([min(a, b) for _, a, b in edges], np.float64)
    gaps = RepairGaps.from_times(later, earlier, dst)
    nodes = np.arange(32)
    got = gaps.repairs_before(nodes, now)
    want = [sum(1 for d, t in zip(dst.tolist(), later.tolist()) if d == n and t <= now) for n in nodes]
    assert got.tolist() == want
