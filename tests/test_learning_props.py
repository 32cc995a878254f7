"""Property tests of the source-use ledger against a plain-Python oracle:
it never accepts an out-of-order event and never reinforces twice for one `used`."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.learning import STAGES
from test_learning import HISTORY, LINKS, open_engine

NODES = ["decision:12", "pr:40", "issue:77", "ghost:1"]
event = st.tuples(st.sampled_from(NODES), st.sampled_from(STAGES))
requests = st.lists(st.lists(event, min_size=1, max_size=5), min_size=1, max_size=8)


def oracle(stages: dict, hits: set, events: list) -> tuple[dict | None, str | None]:
    s = dict(stages)
    for node, name in events:
        if node not in hits:
            return None, "node_not_in_trace"
        new, old = STAGES.index(name), s.get(node, 0)
        if new == old:
            continue
        if new != old + 1:
            return None, "invalid_stage_transition"
        s[node] = new
    return s, None


def test_ledger_matches_the_oracle_and_reinforces_once_per_used():
    folder = Path(tempfile.mkdtemp())
    eng = open_engine(folder / "p.db")
    eng.add_nodes(HISTORY)
    eng.add_edges(LINKS)

    @settings(max_examples=80, deadline=None, suppress_health_check=list(HealthCheck))
    @given(requests)
    def check(reqs):
        res = eng.search("JWT sessions decision", limit=5)
        hits = {h.id for h in res}
        stages: dict = {}
        used_before = {n: s["used_count"] for n, s in eng.node_stats(NODES[:3]).items()}
        credited: dict[str, int] = {}
        for events in reqs:
            expect, code = oracle(stages, hits, events)
            try:
                rc = eng.record_source_use(res.trace_id, events)
            except ngr.NeuronGraphError as exc:
                assert code == exc.code, (events, stages)
                continue
            assert code is None, (events, stages, code)
            stages = expect
            for n in rc["newly_used"]:
                credited[n] = credited.get(n, 0) + 1
            assert {c["node_id"] for c in rc["edges_changed"] if c["kind"] == "path"} <= set(rc["newly_used"])
        assert eng.trace_stages(res.trace_id) == {h: STAGES[stages.get(h, 0)] for h in hits}
        assert all(v == 1 for v in credited.values())
        now = eng.node_stats(NODES[:3])
        for n in NODES[:3]:
            assert now[n]["used_count"] - used_before[n] == (1 if stages.get(n, 0) == 3 else 0)

    check()
    eng.close()


@settings(max_examples=200, deadline=None)
@given(
    value=st.floats(0.0, 5.0),
    at=st.one_of(st.just(float("nan")), st.floats(-1e3, 2e3)),
    now=st.floats(0.0, 1e3),
    half_life=st.floats(1.0, 1e4),
)
def test_property_decayed_is_the_half_life_rule_bit_for_bit(value, at, now, half_life):
    """``decayed`` (read on every search) is ``value × decay_factor(age)``, a never-set time (NaN) and a
    time after ``now`` (a clock set back) both reading as age 0."""
    from neurongraph.learning.decay import decay_factor, decayed

    age = 0.0 if at != at else now - at
    assert float(decayed(value, at, now, half_life)) == float(value * decay_factor(age, half_life))
