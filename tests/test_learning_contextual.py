"""Contextual plasticity (issue 26): a learned edge weight belongs to the questions it was learned for,
and a used report credits the source, never the hub its path crossed.

Real components throughout: SQLite files, the hashing encoder, a git repository built in the test."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.bench.history import Pair
from neurongraph.bench.history_learning import shared_origin_questions
from neurongraph.graph.arrays import GraphArrays
from neurongraph.graph.learned import EdgeOverlay, LearnedView
from neurongraph.ingest import sync_source
from neurongraph.learning import LearningPolicy
from test_learning import HISTORY, LINKS, POLICY, open_engine
from test_store_contract import STORES

WALK = ("selected", "validated", "used")


def use(eng, trace_id, node):
    return eng.record_source_use(trace_id, [(node, s) for s in WALK])


def ranks(res) -> dict[str, int]:
    return {h.id: k for k, h in enumerate(res.hits)}


def scores(res) -> dict[str, float]:
    return {h.id: h.score for h in res.hits}


@pytest.fixture
def eng(db_path):
    e = open_engine(db_path, POLICY)
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    yield e
    e.close()


# ---------------------------------------------------------------- nothing learned, unrelated questions
def test_before_any_feedback_a_search_walks_the_graph_itself(eng):
    q = eng.embed_query("JWT sessions decision")
    assert eng.learned_graph(q) is eng.graph
    first = eng.search("JWT sessions decision", limit=5)
    again = eng.search("JWT sessions decision", limit=5)
    assert [(h.id, h.scores) for h in again] == [(h.id, h.scores) for h in first]
    assert eng.learned_graph(q) is eng.graph


def test_learned_weight_reaches_near_questions_only_and_only_towards_the_used_source(eng):
    res = eng.search("JWT sessions decision", limit=5)
    rc = use(eng, res.trace_id, "issue:77")
    (change,) = rc["edges_changed"]
    assert (change["src"], change["dst"]) == ("pr:40", "issue:77")
    eid = change["eid"]
    related = eng.learned_graph(eng.embed_query("JWT sessions decision"))
    unrelated = eng.learned_graph(eng.embed_query("helm chart values for the cluster"))
    assert unrelated is eng.graph and isinstance(related, LearnedView)
    pr, issue = (eng.store.lookup_idx([n])[n] for n in ("pr:40", "issue:77"))
    fwd = related.expand([pr])  # pr:40 -> issue:77 reaches the used source: base + learned part
    w = dict(zip(fwd.eid.tolist(), fwd.weight.tolist()))
    assert w[eid] == pytest.approx(change["new_weight"])
    back = related.expand([issue], reverse=True)  # leaving the used source over the same edge: base weight
    assert dict(zip(back.eid.tolist(), back.weight.tolist()))[eid] == 0.5
    base = eng.graph.expand([pr])
    assert dict(zip(base.eid.tolist(), base.weight.tolist()))[eid] == 0.5  # the shared graph keeps the base


def test_one_read_per_search_gives_the_graph_and_the_priming_the_two_reads_give(eng):
    """``Learning.for_search`` (what a search calls) equals ``learned_graph`` + ``node_priming``: the same
    view weights and the same priming, None where nothing used is near (ranked the same as zeros)."""
    res = eng.search("JWT sessions decision", limit=5)
    use(eng, res.trace_id, "issue:77")
    pr = eng.store.lookup_idx(["pr:40"])["pr:40"]
    for text in ("JWT sessions decision", "helm chart values for the cluster"):
        q = eng.embed_query(text)
        graph, priming = eng.learning.for_search(q, text, eng.table.n)
        apart = eng.node_priming(q, text)
        assert type(graph) is type(eng.learned_graph(q, text))
        assert graph.expand([pr]).weight.tolist() == eng.learned_graph(q, text).expand([pr]).weight.tolist()
        if priming is None:
            assert apart is None or not apart.any()
        else:
            assert priming.tolist() == apart.tolist() and priming.any()
    assert eng.learning.for_search(None, None, eng.table.n)[1].tolist() == eng.node_priming(None).tolist()


def test_the_view_matches_the_graph_step_for_step_and_is_read_only():
    g = GraphArrays.from_edges(4, [0, 0, 1, 2], [1, 2, 3, 3], [0.5, 0.25, 1.0, 0.75], eid=[10, 11, 12, 13])
    v = LearnedView(g, EdgeOverlay.of([12], [3], [0.4]))
    for kw in ({}, {"reverse": True}, {"direction": "both", "reverse_weight": 0.5}):
        a, b = g.expand([0, 1, 3], **kw), v.expand([0, 1, 3], **kw)
        assert a.eid.tolist() == b.eid.tolist() and a.dst.tolist() == b.dst.tolist()
        gained = {(e, d): wb - wa for e, d, wa, wb in zip(b.eid.tolist(), b.dst.tolist(), a.weight, b.weight)}
        scale = kw.get("reverse_weight", 1.0)
        assert all(x == 0 for k, x in gained.items() if k != (12, 3))
        assert gained.get((12, 3), 0.4) == pytest.approx(0.4)  # only 1 -> 3, forwards
        assert gained.get((12, 1), 0.0) == 0.0 and scale  # backwards over it (3 -> 1): no gain
    assert v.n_edges == g.n_edges and v.edge_attrs([12])[0].tolist() == [1.0]
    with pytest.raises(TypeError):
        v.set_weights([12], [2.0])


def test_association_follows_query_similarity_and_decays(db_path):
    e = open_engine(db_path, POLICY.replace(priming_min_query_sim=0.5))
    e.add_nodes(HISTORY)
    e.add_edges(LINKS)
    res = e.search("JWT sessions decision", limit=5)
    use(e, res.trace_id, "issue:77")
    eid = e.store.get_edge("pr:40", "corrected_by", "issue:77")["eid"]
    pr = e.store.lookup_idx(["pr:40"])["pr:40"]

    def gain(q):
        x = e.learned_graph(e.embed_query(q)).expand([pr])
        return dict(zip(x.eid.tolist(), x.weight.tolist()))[eid] - 0.5

    full = gain("JWT sessions decision")
    assert full == pytest.approx(0.25)
    assert gain("helm chart values for the cluster") == 0.0
    e.store.clock.t += 30 * 86400  # one plastic half-life
    assert gain("JWT sessions decision") == pytest.approx(full / 2)
    e.close()


# ---------------------------------------------------------------- the store ledger behind it
@pytest.fixture(params=STORES)
def store(request, tmp_path):
    s = request.param(tmp_path)()
    yield s
    s.close()


def test_learned_edge_queries_name_the_question_each_learned_edge_answered(store):
    from neurongraph.learning import Learning
    from neurongraph.model import Edge, Node

    store.upsert_nodes([Node(i, "note", f"title {i}", f"text {i}") for i in ("a", "b", "c")])
    store.upsert_edges([Edge("a", "mentions", "b", weight=0.5), Edge("b", "mentions", "c", weight=0.5)])
    assert store.ledgers.learned_edge_queries() == []
    ab = {"src": "a", "rel": "mentions", "dst": "b", "weight": 0.5}
    bc = {"src": "b", "rel": "mentions", "dst": "c", "weight": 0.5}
    hits = [
        {"rank": 1, "id": "b", "paths": []},  # a seed: primed, no edge
        {"rank": 2, "id": "c", "paths": [{"nodes": ["a", "b", "c"], "edges": [ab, bc]}]},
    ]
    tid = "tr_ctx"
    store.save_trace({"id": tid, "created_at": 1.0, "query": "why c?", "params": {}, "fingerprint": "f", "hits": hits})
    Learning(store).record_source_use(tid, [("c", s) for s in WALK] + [("b", s) for s in WALK])
    eid_bc = store.ledgers.edge_id("b", "mentions", "c")
    ci, ai = (store.lookup_idx([n])[n] for n in ("c", "a"))
    rows = store.ledgers.learned_edge_queries()
    assert (eid_bc, "path", ci, ci, "why c?") in rows  # only the hop into the used source
    assert not any(r[0] == store.ledgers.edge_id("a", "mentions", "b") for r in rows)
    co = {(r[2], r[3]) for r in rows if r[1] == "co_use"}
    assert co and all(r[4] == "why c?" for r in rows) and ai not in {x for p in co for x in p}
    assert Learning(store).record_outcome(tid, ["c"], "corrected", "wrong", policy=_reverse())["edges_changed"]
    assert store.ledgers.learned_edge_queries() == []  # reversed changes teach nothing any more


def _reverse():
    from neurongraph.learning import OutcomePolicy

    return OutcomePolicy(corrected="reverse")


# ---------------------------------------------------------------- credit to the source, not the hub
SETUP_SUBJECTS = [
    "Bump version to 0.2",
    "Add classifiers for Python 3.12",
    "Declare the requests dependency",
    "Pin numpy below 2",
    "Add console script entry point",
    "Move long description to README",
    "Drop Python 3.7 support",
    "Add optional extras for docs",
    "Include package data files",
    "Bump version to 0.3",
]


@pytest.fixture
def packaging(tmp_path):
    """A repository where one file (setup.py) is touched by most commits: the hub of issue 26."""
    r = Repo(tmp_path / "pkg")
    r.commit("Initial packaging", {"setup.py": "setup()\n", "pkg/core.py": "x = 1\n"})
    for k, s in enumerate(SETUP_SUBJECTS):
        r.commit(s, {"setup.py": f"setup(v={k})\n"})
    for k in range(6):
        r.commit(f"core: refactor helper {k}", {"pkg/core.py": f"x = {k}\n"})
    eng = ngr.open(tmp_path / "pkg.db", embedder="hashing")
    sync_source(eng, "git", r.path)
    yield eng
    eng.close()


def test_a_used_commit_reached_through_a_hub_file_stays_ahead_of_the_file(packaging):
    eng, hub = packaging, "file:setup.py"
    BOTH = ("commit", "file")  # the file is a result here, as the issue found it
    q, related = "console script entry point for setup", "entry point console script in setup.py packaging"
    res = eng.search(q, limit=60, result_types=BOTH)
    rel0 = eng.search(related, limit=60, record=False, result_types=BOTH)
    before = ranks(res)
    used = next(h for h in res.hits if h.type == "commit" and any(hub in p["nodes"] for p in h.paths))
    assert before[hub] < before[used.id]  # the file is ahead before any feedback
    rc = use(eng, res.trace_id, used.id)
    assert {c["dst"] for c in rc["edges_changed"] if c["kind"] == "path"} <= {hub, used.id}
    hub_idx, used_idx = (eng.store.lookup_idx([n])[n] for n in (hub, used.id))
    view, base = eng.learned_graph(eng.embed_query(q)).all_edges(), eng.graph.all_edges()
    into_hub = base.dst == hub_idx  # every stored edge into the file: walked towards it, nothing learned
    assert into_hub.sum() >= 10 and np.array_equal(view.weight[into_hub], base.weight[into_hub])
    back = eng.learned_graph(eng.embed_query(q)).expand([hub_idx], reverse=True)  # from the file to the commits
    gained = back.weight - eng.graph.expand([hub_idx], reverse=True).weight
    assert set(back.dst[gained > 0].tolist()) == {used_idx}  # only the step into the used commit
    after = eng.search(q, limit=60, record=False, result_types=BOTH)
    a = ranks(after)
    assert a[used.id] < a[hub] and a[used.id] <= before[used.id]  # the used commit is now ahead of the file
    gain = {n: scores(after).get(n, 0.0) - scores(res).get(n, 0.0) for n in set(a) | set(before)}
    assert all(g <= gain[used.id] + 1e-12 for n, g in gain.items() if n != used.id)
    rel1 = eng.search(
        related, limit=60, record=False, result_types=BOTH
    )  # a related question: the file gains no more than the commit
    s0, s1 = scores(rel0), scores(rel1)
    assert ranks(rel1)[used.id] <= ranks(rel0)[used.id]
    assert s1.get(hub, 0.0) - s0.get(hub, 0.0) <= s1[used.id] - s0[used.id] + 1e-12


# property: for any used report, the used source's rank for its own query never falls, and no node that was
# not used gains more than the used source did
WORDS = "route link vlan bridge tunnel stats weight nexthop table policy neigh address".split()
graphs = st.fixed_dictionaries(
    {
        "texts": st.lists(st.lists(st.sampled_from(WORDS), min_size=2, max_size=4), min_size=4, max_size=9),
        "hubs": st.integers(1, 2),
        "links": st.lists(st.tuples(st.integers(0, 8), st.integers(0, 1), st.floats(0.2, 1.0)), max_size=14),
        "query": st.lists(st.sampled_from(WORDS), min_size=1, max_size=3),
        "pick": st.integers(0, 50),
    }
)


def test_property_credit_goes_to_the_used_source_never_past_it():
    folder = Path(tempfile.mkdtemp())
    count = iter(range(10**6))

    @settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
    @given(graphs)
    def check(g):
        e = open_engine(folder / f"p{next(count)}.db", LearningPolicy())
        try:
            n = len(g["texts"])
            nodes = [ngr.Node(f"src:{i}", "commit", " ".join(t), " ".join(t)) for i, t in enumerate(g["texts"])]
            nodes += [ngr.Node(f"hub:{h}", "file", f"hub {h}", "shared file") for h in range(g["hubs"])]
            e.add_nodes(nodes)
            e.add_edges(
                [ngr.Edge(f"src:{s % n}", "touches", f"hub:{h % g['hubs']}", weight=w) for s, h, w in g["links"]]
            )
            q = " ".join(g["query"])
            res = e.search(q, limit=50)
            if not res.hits:
                return
            used = res.hits[g["pick"] % len(res.hits)].id
            if not used.startswith("src:"):
                return
            use(e, res.trace_id, used)
            after = e.search(q, limit=50, record=False)
            b, a = ranks(res), ranks(after)
            assert a[used] <= b[used]
            s0, s1 = scores(res), scores(after)
            gain_used = s1[used] - s0[used]
            for node in set(s0) | set(s1):
                if node != used:
                    assert s1.get(node, 0.0) - s0.get(node, 0.0) <= gain_used + 1e-9, (node, used)
        finally:
            e.close()

    check()


# ---------------------------------------------------------------- the shared-origin split
def _pair(fix, origins, t):
    return Pair(fix=fix, origins=origins, kind="fixes", time=t, as_of=t - 1, subject=fix, files=[])


def test_shared_origin_questions_are_the_later_fixes_of_an_origin_in_time_order():
    pairs = [
        _pair("f3", ["o1"], 30.0),
        _pair("f1", ["o1"], 10.0),
        _pair("f2", ["o2"], 20.0),
        _pair("f4", ["o2", "o3"], 40.0),
    ]
    pairs.append(_pair("f5", ["o9"], 50.0))  # an origin with one fix: not part of the split
    replay, later, shared = shared_origin_questions(pairs)
    assert [p.fix for p in replay] == ["f1", "f2", "f3", "f4"]
    assert {p.fix for p in replay if id(p) in later} == {"f3", "f4"} and shared == {"o1", "o2"}


def test_history_bench_reports_the_shared_origin_split(tmp_path):
    from neurongraph.bench.history import run_history_bench

    r = Repo(tmp_path / "netkit")
    o1 = r.commit("route: add multipath nexthop weights", {"ip/route.c": "int weight;\n", "README": "x\n"})
    for k in range(3):
        r.commit(f"docs: typo fix {k}", {"README": f"netkit {k}\n"})
    r.commit(f"route: weights overflow with many hops\n\nFixes: {o1[:12]}", {"ip/route.c": "long weight;\n"})
    r.commit(f"route: clamp weights at 255\n\nFixes: {o1[:12]}", {"ip/route.c": "int w;\n"})
    r.commit(f"route: weights lost on flush\n\nFixes: {o1[:12]}", {"ip/route.c": "int w2;\n"})
    with ngr.open(tmp_path / "b.db", embedder="hashing") as eng:
        res = run_history_bench(r.path, eng, systems={"ngr": {}}, learning=True)
    so = res["learning"]["shared_origin"]
    assert so["origins"] == 1 and so["questions"] == 3 and so["later"] == 2
    assert so["drift_changed_rankings"] == 0 and so["after"]["recall@10"] >= so["before"]["recall@10"]


# ---------------------------------------------------------------- fast paths equal the plain readings
@settings(max_examples=80, deadline=None)
@given(
    n_learned=st.integers(1, 60),  # below and above the view's dict size
    seed=st.integers(0, 10_000),
    reverse_weight=st.sampled_from([1.0, 0.5]),
)
def test_property_the_view_adds_exactly_the_learned_steps_at_any_overlay_size(n_learned, seed, reverse_weight):
    """Both ways the view reads its overlay (a dict for a few learned steps, sorted keys for many) add
    ``extra`` to exactly the steps whose (edge, reached node) is learned, a backward one scaled in a "both"
    walk, and nothing else."""
    rng = np.random.default_rng(seed)
    n, m = 30, 120
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    g = GraphArrays.from_edges(n, src, dst, rng.random(m), eid=np.arange(m) + 100)
    pick = rng.choice(m, min(n_learned, m), replace=False)
    fwd = rng.random(pick.shape[0]) < 0.5
    toward = np.where(fwd, dst[pick], src[pick])
    extra = rng.random(pick.shape[0]) + 0.01
    ov = EdgeOverlay.of(pick + 100, toward, extra, back=~fwd)
    want = {(int(e), int(t)): (float(x), bool(b)) for e, t, x, b in zip(pick + 100, toward, extra, ~fwd)}
    v = LearnedView(g, ov)
    frontier = rng.choice(n, 8, replace=False)
    for kw in ({}, {"reverse": True}, {"direction": "both", "reverse_weight": reverse_weight}):
        a, b = g.expand(frontier, **kw), v.expand(frontier, **kw)
        scale = kw.get("reverse_weight", 1.0)
        for e, d, wa, wb in zip(a.eid.tolist(), a.dst.tolist(), a.weight.tolist(), b.weight.tolist()):
            x, back = want.get((e, d), (0.0, False))
            assert wb == wa + (x * scale if back else x)


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9), st.integers(0, 4)), min_size=1, max_size=30),
    near=st.lists(st.tuples(st.integers(0, 3), st.floats(0.05, 1.0)), min_size=1, max_size=4, unique_by=lambda x: x[0]),
    age=st.floats(0.0, 3.0),
)
def test_property_overlay_and_priming_are_the_max_over_near_queries(rows, near, age):
    """One near learning query (the fast path) or several: a learned step gains max over its near learning
    queries of decayed plastic × association, a used node is primed max over them of association ×
    decayed activation."""
    from neurongraph.learning.contextual import EdgeContext, UseContext

    queries = {f"q{i}": i for i in range(4)}
    plastic = {eid: (0.1 * (1 + eid), 100.0 - 10 * eid) for eid in range(5)}  # (plastic, set at)
    now, hl = 100.0 + age * 7, 10.0
    edge_rows = [(eid, "path", node, node if eid % 2 else (node + 1) % 10, f"q{q}") for q, node, eid in rows]
    ctx = EdgeContext.build(edge_rows, plastic, queries)
    near = sorted(near)
    assoc = (np.array([q for q, _ in near], np.int64), np.array([a for _, a in near]))
    want: dict[int, float] = {}
    for eid, _, node, _, q in edge_rows:
        for nq, a in near:
            if q == f"q{nq}":
                p, at = plastic[eid]
                x = p * 2.0 ** (-(now - at) / hl) * a
                key = (eid << 31) | node
                want[key] = max(want.get(key, 0.0), x)
    ov = ctx.overlay(assoc, now, hl)
    got = {} if ov is None else dict(zip(ov.key.tolist(), ov.extra.tolist()))
    assert got.keys() == want.keys() and all(got[k] == pytest.approx(want[k]) for k in want)

    uses = [(node, f"q{q}") for q, node, _ in rows]
    idx = np.arange(10)
    act, act_at = np.linspace(0.2, 1.0, 10), np.linspace(90.0, 99.0, 10)
    pr = UseContext.build(uses, idx, act, act_at, queries).priming(assoc, now, hl, 10)
    expect = np.zeros(10)
    for node, q in uses:
        for nq, a in near:
            if q == f"q{nq}":
                expect[node] = max(expect[node], a * act[node] * 2.0 ** (-(now - act_at[node]) / hl))
    assert np.allclose(pr[:10], expect)
