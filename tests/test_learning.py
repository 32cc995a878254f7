"""Learning loop (issue 5): stage ledger, idempotency, atomicity, credited-path reinforcement,
co-use, counts, outcomes, failures, decay, and that feedback and decay really reach ranking."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.engine import Engine
from neurongraph.errors import InvalidArgument, UnknownTrace
from neurongraph.index.embedder import make_embedder
from neurongraph.learning import (
    IdempotencyConflict,
    InvalidStageTransition,
    Learning,
    LearningPolicy,
    NodeNotInTrace,
    OutcomePolicy,
    SourceNotUsed,
)
from neurongraph.store.sql_ledgers import SQLLedgers
from neurongraph.store.sqlite import SQLiteStore

WALK = ("selected", "validated", "used")
HISTORY = [
    ngr.Node(
        "decision:12",
        "decision",
        "Use JWT for sessions",
        "We decided to replace cookie sessions with signed JWT tokens.",
    ),
    ngr.Node("pr:40", "pull_request", "Implement token middleware", "Adds middleware that validates bearer headers."),
    ngr.Node("issue:77", "issue", "Clock skew breaks validation", "Expired checks fail when server clocks drift."),
    ngr.Node("wiki:deploy", "wiki", "Deploy guide", "How to roll out a release to the cluster with helm."),
    ngr.Node("note:helm", "note", "Helm chart values", "Chart values for the cluster release."),
]
LINKS = [
    ngr.Edge("decision:12", "implemented_by", "pr:40", weight=0.5),
    ngr.Edge("pr:40", "corrected_by", "issue:77", weight=0.5, factuality=0.9),
    ngr.Edge("wiki:deploy", "mentions", "note:helm", weight=0.5),
]


ENGINE = Engine


class Clock:
    """A settable clock, so decay can be tested without waiting."""

    def __init__(self, t=1_000_000.0):
        self.t = t

    def __call__(self):
        return self.t


def open_engine(path, policy=None):
    eng = ENGINE(SQLiteStore(path), make_embedder("hashing"), ngr.SearchConfig(seeds=1))
    eng.store.clock = Clock() if not isinstance(getattr(eng.store, "clock", None), Clock) else eng.store.clock
    if policy is not None:
        eng.set_learning_policy(policy)
    return eng


# pinned here so the tests do not follow tuning of the defaults
POLICY = LearningPolicy(delta=0.25, w_max=1.0, co_use_delta=0.5, activation_boost=1.0)


@pytest.fixture
def eng(db_path):
    e = open_engine(db_path, POLICY)
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    yield e
    e.close()


def walk(*nodes, upto=WALK):
    return [(n, s) for n in nodes for s in upto]


def edge_rows(e) -> dict:
    return {
        r[0]: r[1:]
        for r in e.store.conn.execute(
            "SELECT eid, weight, plastic, plastic_at, dormant, factuality, reinforce_count FROM edges"
        )
    }


def mem_weights(e) -> dict:
    a = e.graph.all_edges()
    return dict(zip(a.eid.tolist(), a.weight.tolist()))


def learned_weights(e, query: str) -> dict:
    """Edge weights a search for ``query`` walks (base + the learned part of edges learned for near questions)."""
    a = e.learned_graph(e.embed_query(query)).all_edges()
    return dict(zip(a.eid.tolist(), a.weight.tolist()))


def rank_of(res, node):
    ids = [h.id for h in res]
    return ids.index(node) if node in ids else len(ids) + 99


# ---------------------------------------------------------------- stage ledger
def test_walk_to_used_reinforces_the_credited_path_and_lists_every_change(eng):
    res = eng.search("JWT sessions decision", limit=5)
    rc = eng.record_source_use(res.trace_id, walk("issue:77"))
    assert rc["transitions"] == [{"node_id": "issue:77", "from": "retrieved", "to": "used"}]
    assert rc["newly_used"] == ["issue:77"]
    changed = {(c["src"], c["rel"], c["dst"]): c for c in rc["edges_changed"]}
    assert set(changed) == {("pr:40", "corrected_by", "issue:77")}  # the hop into the used source, not the path
    for c in changed.values():
        assert c["old_weight"] == 0.5 and c["new_weight"] == 0.75 and c["kind"] == "path"
    assert eng.trace_stages(res.trace_id)["issue:77"] == "used"
    assert eng.trace_stages(res.trace_id)["pr:40"] == "retrieved"
    assert eng.store.get_edge("pr:40", "corrected_by", "issue:77")["factuality"] == 0.9


@pytest.mark.parametrize(
    "events,code",
    [
        ([("pr:40", "validated")], "invalid_stage_transition"),  # skips selected
        ([("pr:40", "used")], "invalid_stage_transition"),  # used requires validated
        ([("pr:40", "selected"), ("pr:40", "used")], "invalid_stage_transition"),
        ([("nope:1", "selected")], "node_not_in_trace"),
        ([("pr:40", "read")], "invalid_argument"),
        ([], "invalid_argument"),
    ],
)
def test_illegal_requests_have_typed_codes(eng, events, code):
    res = eng.search("JWT sessions decision", limit=5)
    with pytest.raises(ngr.NeuronGraphError) as exc:
        eng.record_source_use(res.trace_id, events)
    assert exc.value.code == code


def test_going_back_is_rejected_and_repeating_is_a_no_op(eng):
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("pr:40"))
    again = eng.record_source_use(res.trace_id, [("pr:40", "used")])
    assert again["transitions"] == [] and again["edges_changed"] == [] and again["newly_used"] == []
    with pytest.raises(InvalidStageTransition):
        eng.record_source_use(res.trace_id, [("pr:40", "validated")])


def test_unknown_trace(eng):
    with pytest.raises(UnknownTrace) as exc:
        eng.record_source_use("tr_missing", [("pr:40", "selected")])
    assert exc.value.code == "unknown_trace"
    for call in (
        lambda: eng.record_retrieval_failure("tr_missing", "x"),
        lambda: eng.record_outcome("tr_missing", ["pr:40"], "confirmed", "ok"),
    ):
        with pytest.raises(UnknownTrace):
            call()


def test_one_bad_event_rejects_the_whole_request(eng):
    res = eng.search("JWT sessions decision", limit=5)
    rows, mem = edge_rows(eng), mem_weights(eng)
    with pytest.raises(NodeNotInTrace):
        eng.record_source_use(res.trace_id, walk("issue:77") + [("ghost", "selected")], idempotency_key="k")
    assert set(eng.trace_stages(res.trace_id).values()) == {"retrieved"}
    assert edge_rows(eng) == rows and mem_weights(eng) == mem
    assert eng.node_stats(["issue:77"])["issue:77"]["used_count"] == 0
    # the key was not consumed by the rejected request
    assert eng.record_source_use(res.trace_id, [("issue:77", "selected")], idempotency_key="k")["transitions"]


def test_idempotent_replay_returns_the_original_receipt_and_conflicts_on_other_payload(eng):
    res = eng.search("JWT sessions decision", limit=5)
    first = eng.record_source_use(res.trace_id, walk("issue:77"), idempotency_key="req-1")
    rows = edge_rows(eng)
    assert eng.record_source_use(res.trace_id, walk("issue:77"), idempotency_key="req-1") == first
    assert edge_rows(eng) == rows  # a replay changes nothing
    with pytest.raises(IdempotencyConflict) as exc:
        eng.record_source_use(res.trace_id, walk("pr:40"), idempotency_key="req-1")
    assert exc.value.code == "idempotency_conflict"


def test_a_crash_mid_reinforcement_leaves_nothing_half_applied(eng, monkeypatch):
    res = eng.search("JWT sessions decision", limit=5)
    rows = edge_rows(eng)

    def boom(self, rows_):
        raise RuntimeError("power cut")

    monkeypatch.setattr(SQLLedgers, "log_weight_changes", boom)  # after the edge writes, before the receipt
    with pytest.raises(RuntimeError):
        eng.record_source_use(res.trace_id, walk("issue:77"), idempotency_key="k")
    monkeypatch.undo()
    assert edge_rows(eng) == rows
    assert set(eng.trace_stages(res.trace_id).values()) == {"retrieved"}
    assert eng.store.conn.execute("SELECT count(*) FROM source_use_receipts").fetchone()[0] == 0
    assert eng.node_stats(["issue:77"])["issue:77"]["used_count"] == 0


# ---------------------------------------------------------------- what reinforcement touches
def test_only_credited_path_edges_change_everything_else_bit_identical(db_path):
    e = open_engine(db_path, LearningPolicy(co_use_delta=0.0))
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    res = e.search("JWT sessions decision", limit=5)
    path = [(x["src"], x["rel"], x["dst"]) for x in res.hits[[h.id for h in res].index("issue:77")].paths[0]["edges"]]
    assert len(path) == 2
    credited = {e.store.get_edge(*path[-1])["eid"]}
    rows, mem = edge_rows(e), mem_weights(e)
    e.record_source_use(res.trace_id, walk("issue:77"))
    e.search("JWT sessions decision", limit=5)
    after_rows, after_mem = edge_rows(e), learned_weights(e, "JWT sessions decision")
    for eid in rows:
        if eid in credited:
            assert after_rows[eid][1] > 0 and after_mem[eid] > mem[eid]  # plastic part grew; this question sees it
            assert after_rows[eid][0] == rows[eid][0] and after_rows[eid][4] == rows[eid][4]  # base, factuality kept
        else:
            assert after_rows[eid] == rows[eid] and after_mem[eid] == mem[eid]
    assert mem_weights(e) == mem  # the shared graph keeps the base weights
    assert learned_weights(e, "helm chart values for the cluster") == mem  # an unrelated question walks them
    e.close()


def test_zero_hop_seed_reinforces_nothing_but_is_primed(eng):
    res = eng.search("JWT sessions decision", limit=5)
    seed = res.hits[0]
    assert seed.paths == []
    rows = edge_rows(eng)
    rc = eng.record_source_use(res.trace_id, walk(seed.id))
    assert rc["edges_changed"] == [] and rc["newly_used"] == [seed.id]
    assert edge_rows(eng) == rows
    assert eng.node_stats([seed.id])[seed.id]["activation"] == 1.0


def test_selected_and_validated_change_no_weight(eng):
    res = eng.search("JWT sessions decision", limit=5)
    rows = edge_rows(eng)
    rc = eng.record_source_use(res.trace_id, walk("issue:77", "pr:40", upto=("selected", "validated")))
    assert rc["edges_changed"] == [] and edge_rows(eng) == rows


def test_bounded_and_never_lowering(db_path):
    e = open_engine(db_path, LearningPolicy(delta=0.4, w_max=1.0, co_use_delta=0.0))
    e.add_nodes(HISTORY)
    e.add_edges(
        [
            ngr.Edge("decision:12", "implemented_by", "pr:40", weight=1.5),  # already above the cap
            ngr.Edge("pr:40", "corrected_by", "issue:77", weight=0.5),
        ]
    )
    for _ in range(3):
        res = e.search("JWT sessions decision", limit=5)
        e.record_source_use(res.trace_id, walk("issue:77"))
    assert e.store.get_edge("decision:12", "implemented_by", "pr:40")["plastic"] == 0.0
    g = e.store.get_edge("pr:40", "corrected_by", "issue:77")
    assert g["weight"] + g["plastic"] == pytest.approx(1.0) and g["reinforce_count"] == 2  # 0.5 → 0.9 → 1.0 → (capped)
    e.close()


def test_co_use_edges_are_created_once_per_pair_with_base_weight_zero(eng):
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("decision:12"))
    rc = eng.record_source_use(res.trace_id, walk("issue:77"))
    co = [c for c in rc["edges_changed"] if c["kind"] == "co_use"]
    assert {(c["src"], c["dst"]) for c in co} == {("decision:12", "issue:77"), ("issue:77", "decision:12")}
    edge = eng.store.get_edge("decision:12", "co_used", "issue:77")
    assert edge["weight"] == 0.0 and edge["plastic"] == pytest.approx(0.5)
    assert eng.record_source_use(res.trace_id, [("issue:77", "used")])["edges_changed"] == []


# ---------------------------------------------------------------- counts, failures, outcomes
def test_searching_counts_retrievals_and_never_changes_a_weight_or_ranking(eng):
    rows, mem = edge_rows(eng), mem_weights(eng)
    first = eng.search("cluster release helm", limit=5)
    for _ in range(5):
        again = eng.search("cluster release helm", limit=5)
        assert [(h.id, h.scores) for h in again] == [(h.id, h.scores) for h in first]
    assert edge_rows(eng) == rows and mem_weights(eng) == mem
    st = eng.node_stats([h.id for h in first])
    assert all(s["retrieved_count"] == 6 and s["used_count"] == 0 for s in st.values())
    assert eng.node_priming() is None


def test_retrieval_failure_has_its_own_ledger_and_punishes_nothing(eng):
    res = eng.search("JWT sessions decision", limit=5)
    rows = edge_rows(eng)
    f = eng.record_retrieval_failure(res.trace_id, "needed the exact ADR page; fell back to git log")
    assert f["trace_id"] == res.trace_id and edge_rows(eng) == rows
    assert eng.learning_report(res.trace_id)["failures"][0]["reason"].startswith("needed")
    with pytest.raises(InvalidArgument):
        eng.record_retrieval_failure(res.trace_id, "  ")


def test_outcomes_default_to_record_only_and_require_used_sources(eng):
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("issue:77"))
    with pytest.raises(SourceNotUsed) as exc:
        eng.record_outcome(res.trace_id, ["pr:40"], "confirmed", "merged")
    assert exc.value.code == "source_not_used"
    with pytest.raises(InvalidArgument):
        eng.record_outcome(res.trace_id, ["issue:77"], "great", "x")
    rows = edge_rows(eng)
    for o in ("confirmed", "corrected", "rolled_back", "superseded"):
        r = eng.record_outcome(res.trace_id, ["issue:77"], o, "ci", external_ref="pr#9")
        assert r["effect"] == "record" and r["edges_changed"] == []
    assert edge_rows(eng) == rows
    assert [o["outcome"] for o in eng.learning_report(res.trace_id)["outcomes"]] == [
        "confirmed",
        "corrected",
        "rolled_back",
        "superseded",
    ]


def test_opt_in_reversal_takes_back_exactly_this_traces_contribution(eng):
    before = {k: v[:2] for k, v in edge_rows(eng).items()}
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("decision:12", "issue:77"))
    r = eng.record_outcome(
        res.trace_id, ["issue:77"], "corrected", "wrong source", policy=OutcomePolicy(corrected="reverse")
    )
    assert r["effect"] == "reverse" and r["edges_changed"]
    after = edge_rows(eng)
    for eid, (w, p) in before.items():
        assert after[eid][0] == w and after[eid][1] == pytest.approx(p, abs=1e-12)
    co = eng.store.get_edge("decision:12", "co_used", "issue:77")
    assert co["plastic"] == pytest.approx(0.0, abs=1e-12)
    again = eng.record_outcome(
        res.trace_id, ["issue:77"], "corrected", "again", policy=OutcomePolicy(corrected="reverse")
    )
    assert again["edges_changed"] == []  # reversed once only


def test_opt_in_confirmation_diminishes_and_superseded_goes_dormant(db_path):
    e = open_engine(db_path, LearningPolicy(co_use_delta=0.0, delta=0.1, w_max=5.0, outcomes=OutcomePolicy.strict()))
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    res = e.search("JWT sessions decision", limit=5)
    e.record_source_use(res.trace_id, walk("issue:77"))
    gains = []
    for _ in range(3):
        r = e.record_outcome(res.trace_id, ["issue:77"], "confirmed", "merged")
        c = [x for x in r["edges_changed"] if x["dst"] == "issue:77"][0]
        gains.append(c["new_weight"] - c["old_weight"])
    assert gains[0] > gains[1] > gains[2] > 0
    e.record_outcome(res.trace_id, ["issue:77"], "superseded", "replaced by issue:99")
    assert e.store.get_edge("pr:40", "corrected_by", "issue:77")["weight"] == 0.5  # base kept...
    later = e.search("JWT sessions decision", limit=5)
    assert all(
        h.paths == [] or h.paths[0]["edges"][-1]["dst"] != "issue:77" or h.scores["graph"] == 0 for h in later
    )  # ...but it carries nothing
    e.close()


# ---------------------------------------------------------------- ranking effects, priming, decay
def test_feedback_and_decay_each_change_a_later_ranking(eng):
    q = "cluster release"
    base = eng.search(q, limit=5)
    target = base.hits[-1].id
    eng.record_source_use(base.trace_id, walk(target))
    primed = eng.search(q, limit=5)
    assert rank_of(primed, target) < rank_of(base, target)  # feedback reached ranking
    assert primed.hits[rank_of(primed, target)].scores["priming"] > 0
    eng.store.clock.t += 365 * 86400  # long gap, no explicit decay()
    faded = eng.search(q, limit=5)
    assert [h.id for h in faded] == [h.id for h in base]  # decay reached ranking
    assert eng.node_priming() is None or eng.node_priming().max() < 1e-9


def test_path_reinforcement_alone_changes_ranking(db_path):
    e = open_engine(db_path, LearningPolicy(activation_boost=0.0, co_use_delta=0.0, delta=0.5))
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    base = e.search("JWT sessions decision", limit=5)
    e.record_source_use(base.trace_id, walk("issue:77"))
    after = e.search("JWT sessions decision", limit=5)
    s0 = next(h for h in base if h.id == "issue:77").scores["graph"]
    s1 = next(h for h in after if h.id == "issue:77").scores["graph"]
    assert s1 > s0 and e.node_priming() is None
    e.close()


def test_decay_is_monotone_toward_base_and_never_touches_confidence_or_factuality(eng):
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("decision:12", "issue:77"))
    conf = dict(eng.store.conn.execute("SELECT id, confidence FROM nodes"))
    fact = {k: v[4] for k, v in edge_rows(eng).items()}
    base = {k: v[0] for k, v in edge_rows(eng).items()}
    q = "JWT sessions decision"
    prev_w, prev_a = learned_weights(eng, q), eng.node_stats()
    assert any(prev_w[k] > base[k] for k in prev_w)
    for _ in range(6):
        eng.store.clock.t += 10 * 86400
        eng.search(q, limit=5)  # lazy application on read
        w, a = learned_weights(eng, q), eng.node_stats()
        assert all(base[k] <= w[k] <= prev_w[k] for k in w)
        assert all(a[n]["activation"] <= prev_a[n]["activation"] for n in a)
        prev_w, prev_a = w, a
    lazy = learned_weights(eng, q)
    eng.decay()  # explicit decay = what readers already saw
    assert learned_weights(eng, q) == pytest.approx(lazy, rel=1e-12)
    assert dict(eng.store.conn.execute("SELECT id, confidence FROM nodes")) == conf
    assert {k: v[4] for k, v in edge_rows(eng).items()} == fact
    assert {k: v[0] for k, v in edge_rows(eng).items()} == base


def test_other_process_sees_reinforcement_through_the_change_feed(eng, db_path):
    other = open_engine(db_path)
    other.store.clock = eng.store.clock
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("issue:77"))
    other.refresh()
    assert mem_weights(other) == pytest.approx(mem_weights(eng), rel=1e-12)
    assert other.node_priming() is not None
    other.close()


def test_policies_validate():
    with pytest.raises(InvalidArgument):
        LearningPolicy(delta=-1)
    with pytest.raises(InvalidArgument):
        LearningPolicy(plastic_half_life_s=0)
    with pytest.raises(InvalidArgument):
        OutcomePolicy(confirmed="double")
    with pytest.raises(AttributeError):
        LearningPolicy().delta = 1  # frozen


def test_learning_report_shows_stages_and_changes(eng):
    res = eng.search("JWT sessions decision", limit=5)
    eng.record_source_use(res.trace_id, walk("issue:77"))
    rep = eng.learning_report(res.trace_id)
    assert rep["stages"]["issue:77"] == "used" and len(rep["receipts"]) == 1
    assert {c["kind"] for c in rep["weight_changes"]} == {"path"}


def test_priming_is_query_conditioned(eng):
    """A source used for one question is primed for that question (and close paraphrases), not for others."""
    res = eng.search("clock skew breaks token validation")
    eng.record_source_use(res.trace_id, walk("issue:77"))
    same = eng.node_priming(eng.embed_query("clock skew breaks token validation"))
    other = eng.node_priming(eng.embed_query("helm deploy guide for the cluster"))
    idx = eng.store.lookup_idx(["issue:77"])["issue:77"]
    assert same[idx] > 0.5
    assert other[idx] == 0.0
    hit = next(h for h in eng.search("clock skew breaks token validation") if h.id == "issue:77")
    assert hit.scores["priming"] > 0
    assert all(h.scores["priming"] == 0 for h in eng.search("helm deploy guide for the cluster"))


def test_learning_service_works_over_a_bare_store_and_is_the_engines(db_path):
    """The learning loop is a service with declared dependencies: the engine owns one, and the ledgers
    work over a bare store (no embedder, no index), which is what `ngr feedback` uses."""
    e = open_engine(db_path, POLICY)
    try:
        e.add_nodes(HISTORY)
        tid = e.search("JWT sessions").trace_id
        assert isinstance(e.learning, Learning) and e.learning.store is e.store
    finally:
        e.close()
    store = SQLiteStore(db_path)
    try:
        bare = Learning(store)
        f = bare.record_retrieval_failure(tid, "nothing about clock skew")
        rep = bare.learning_report(tid)
        assert rep["failures"] == [
            {"id": f["failure_id"], "reason": "nothing about clock skew", "created_at": f["created_at"]}
        ]
        assert set(rep["stages"].values()) == {"retrieved"}
    finally:
        store.close()
