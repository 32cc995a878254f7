"""A learning query counts for a search by its vector AND its distinctive terms (issue 26, learning/assoc.py),
and the per-search gathers over near learning queries equal a brute-force reading of the same rows.

Real components: SQLite files, the hashing encoder, the engine's own BM25 index for the IDF weights."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.learning import LearningPolicy
from neurongraph.learning.assoc import QueryBank
from neurongraph.learning.contextual import EdgeContext, UseContext
from test_learning import POLICY, open_engine

WALK = ("selected", "validated", "used")
A = "rdma fix help information of resource command netlink_parse"
B = "rdma fix help information of resource command vxlan_encap"  # same words, another identifier


def unit(rows: int, dim: int = 8, seed: int = 0) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(rows, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def test_overlap_is_the_share_of_the_learning_querys_idf_weight_the_search_repeats():
    idf = {"fix": 0.1, "leak": 0.4, "vxlan": 5.0}
    bank = QueryBank.build(["fix leak vxlan"], unit(1), lambda ts: np.array([idf[t] for t in ts]))
    total = sum(idf.values())
    assert bank.overlap(np.array([0]), "fix leak in geneve")[0] == pytest.approx(0.5 / total)
    assert bank.overlap(np.array([0]), "vxlan") == pytest.approx(5.0 / total)
    assert bank.overlap(np.array([0]), "the of and") == pytest.approx(0.0)  # stopwords and unknown terms


def test_near_gates_the_vector_by_the_term_overlap():
    v = unit(2, seed=1)
    bank = QueryBank.build(["fix leak vxlan", "fix leak geneve"], np.stack([v[0], v[0]]), None)
    rows, a = bank.near(v[0], None, 0.7, 0.6)  # no query text: the vector alone
    assert rows.tolist() == [0, 1] and a.tolist() == [1.0, 1.0]
    rows, a = bank.near(v[0], "fix leak vxlan", 0.7, 0.6)  # geneve's query shares 2 of its 3 terms: 0.67
    assert rows.tolist() == [0, 1]
    rows, _ = bank.near(v[0], "fix leak vxlan", 0.7, 0.7)
    assert rows.tolist() == [0]
    rows, _ = bank.near(v[1], "fix leak vxlan", 0.7, 0.0)  # far in vector space: nothing, whatever the terms
    assert rows.size == 0 or bool(np.all(v[:1] @ v[1] > 0.7))


WORDS = ["fix", "leak", "vxlan", "geneve", "netlink", "parse", "route", "tc", "bpf", "xdp"]


@settings(max_examples=60, deadline=None)
@given(
    queries=st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=12),
    search=st.lists(st.sampled_from(WORDS + ["unknown"]), min_size=1, max_size=4),
    gate=st.sampled_from([0.1, 0.25, 0.5, 1.0]),
    seed=st.integers(0, 50),
)
def test_near_reads_only_the_search_terms_postings_and_equals_the_whole_bank_reading(queries, search, gate, seed):
    """The term-first path (postings of the search's terms, cosines of the gated rows only) keeps exactly
    the learning queries that the cosine of every row and the overlap of every row keep."""
    texts = list(dict.fromkeys(" ".join(q) for q in queries))
    vecs = unit(len(texts), seed=seed)
    idf = {w: 0.5 + i for i, w in enumerate(WORDS)}
    bank = QueryBank.build(texts, vecs, lambda ts: np.array([idf.get(t, 1.0) for t in ts]))
    qvec = vecs[seed % len(texts)] * 0.8 + unit(1, seed=seed + 1)[0] * 0.2
    qvec = qvec / np.linalg.norm(qvec)
    text = " ".join(search)
    rows, a = bank.near(qvec, text, 0.3, gate, 3.0)
    every = np.arange(len(texts))
    cos = vecs @ qvec.astype(np.float32)
    share = bank.overlap(every, text)
    surely, maybe = every[(cos > 0.3) & (share >= gate + 1e-9)], every[(cos > 0.3) & (share >= gate - 1e-9)]
    assert set(surely.tolist()) <= set(rows.tolist()) <= set(maybe.tolist())  # (sums in another order)
    assert rows.tolist() == sorted(rows.tolist())
    assert np.allclose(a, np.minimum((cos[rows] - 0.3) / 0.7, 1.0) ** 3)


def test_the_policy_refuses_an_overlap_outside_0_to_1():
    with pytest.raises(InvalidArgument):
        LearningPolicy(min_term_overlap=1.5)
    with pytest.raises(InvalidArgument):
        LearningPolicy(min_term_overlap=-0.1)


def _engine(db_path, gate: float):
    eng = open_engine(db_path, POLICY.replace(priming_min_query_sim=0.3, min_term_overlap=gate))
    eng.add_nodes(
        [
            ngr.Node("commit:a", "commit", "rdma: add resource command", "netlink_parse of rdma resource help text"),
            ngr.Node("commit:b", "commit", "vxlan: encap path", "vxlan_encap rdma resource command"),
            ngr.Node("note:x", "note", "netlink notes", "netlink parse"),
        ]
    )
    eng.add_edges([ngr.Edge("note:x", "mentions", "commit:a", weight=0.5)])
    return eng


@pytest.mark.parametrize("gate", [0.0, 0.9])
def test_a_search_worded_like_a_learning_query_but_naming_another_identifier_is_not_primed(db_path, gate):
    eng = _engine(db_path, gate)
    qa, qb = eng.embed_query(A), eng.embed_query(B)
    assert float(qa @ qb) > 0.3  # the two questions are near by vector (the hashing encoder)
    for _ in range(2):  # the second search builds the BM25 index the IDF weights come from
        res = eng.search(A, limit=5)
    assert "commit:a" in [h.id for h in res.hits]
    eng.record_source_use(res.trace_id, [("commit:a", s) for s in WALK])
    idx = eng.store.lookup_idx(["commit:a"])["commit:a"]
    same, other = eng.node_priming(qa, A), eng.node_priming(qb, B)
    assert same[idx] > 0.5  # the question it was used for
    if gate == 0.0:
        assert other[idx] > 0  # the vector alone: primed for the look-alike question
    else:
        # B repeats every term of A but netlink and parse, A's rarest (IDF from the store's BM25 index)
        assert other[idx] == 0.0
    assert eng.node_priming(qb)[idx] == other[idx] or gate > 0  # no query text: the vector alone
    eng.close()


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 9), st.integers(0, 4)), min_size=1, max_size=30),
    st.lists(st.floats(0.0, 1.0), min_size=5, max_size=5),
)
def test_priming_and_the_overlay_equal_a_brute_force_reading(uses, assoc):
    """UseContext.priming and EdgeContext.overlay gather only near learning queries' rows; the result is
    max over a node's (a step's) near queries, exactly as a loop over every row would say."""
    queries = [f"q{i}" for i in range(5)]
    row = {q: i for i, q in enumerate(queries)}
    act_idx = np.arange(10)
    act = np.linspace(0.1, 1.0, 10)
    ctx = UseContext.build([(n, queries[q]) for n, q in uses], act_idx, act, np.full(10, 100.0), row)
    a = np.asarray(assoc)
    near = (np.flatnonzero(a > 0), a[a > 0])
    got = ctx.priming(near, 100.0, 1e9, 12)
    want = np.zeros(12)
    for n, q in uses:
        want[n] = max(want[n], a[q] * act[n])
    assert np.allclose(got, want)
    rows = [(100 + n, "path", n, n, queries[q]) for n, q in uses]
    plastic = {100 + n: (0.5, 100.0) for n, _ in uses}
    ov = EdgeContext.build(rows, plastic, row).overlay(near, 100.0, 1e9)
    best: dict[int, float] = {}
    for n, q in uses:
        if a[q] > 0:
            best[n] = max(best.get(n, 0.0), 0.5 * a[q])
    if ov is None:
        assert not any(v > 0 for v in best.values())
    else:
        from neurongraph.graph.learned import step_keys

        assert dict(zip(ov.key.tolist(), ov.extra.tolist())) == pytest.approx(
            {int(step_keys(np.array([100 + n]), np.array([n]))[0]): v for n, v in best.items() if v > 0}
        )


def test_lexical_idf_reads_the_engines_bm25_index(db_path):
    from neurongraph.learning.assoc import lexical_idf

    eng = _engine(db_path, 0.0)
    idf = lexical_idf(lambda: eng.lexical)
    assert idf(["rdma", "netlink"]) is None  # no index built yet (and reading it builds none)
    assert eng.lexical.index is None
    for _ in range(2):
        eng.search("rdma resource", limit=3)
    got = idf(["rdma", "vxlan", "zzzunknown"])
    assert got is not None
    rdma, vxlan, absent = got.tolist()
    assert absent > vxlan > rdma > 0  # in no node > in one > in two
    eng.close()


def test_one_search_builds_no_bm25_index_and_a_uniform_bank_is_rebuilt_once_there_is_one(db_path):
    eng = _engine(db_path, 0.3)
    res = eng.search(A, limit=5)  # the first search of a process: the store answers the lexical stage
    eng.record_source_use(res.trace_id, [(res.hits[0].id, s) for s in WALK])
    eng.node_priming(eng.embed_query(A), A)
    assert eng.lexical.index is None  # learning read no index into being
    assert eng.learning._edge_context.bank.weighted is False
    eng.search(B, limit=5)  # the second search builds it (the engine's own rule)
    assert eng.lexical.index is not None
    eng.node_priming(eng.embed_query(A), A)
    assert eng.learning._edge_context.bank.weighted is True
    eng.close()


def test_assoc_power_sharpens_a_partial_association_and_keeps_a_repeat_whole():
    v = unit(3, seed=2)
    q = v[0] * 0.9 + v[1] * 0.1
    q = q / np.linalg.norm(q)
    bank = QueryBank.build(["fix leak vxlan", "fix leak geneve"], np.stack([q, v[0]]), None)
    rows1, a1 = bank.near(q, None, 0.7, 0.0)
    rows3, a3 = bank.near(q, None, 0.7, 0.0, power=3.0)
    assert rows1.tolist() == rows3.tolist() == [0, 1]
    assert a1[0] == pytest.approx(1.0) and a3[0] == pytest.approx(1.0)  # the very question: whole
    assert 0 < a1[1] < 1 and a3[1] == pytest.approx(a1[1] ** 3)  # a similar one: smaller
    with pytest.raises(InvalidArgument):
        LearningPolicy(assoc_power=-1.0)
