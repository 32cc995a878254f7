"""The in-memory BM25 index (index/bm25.py, issue 18): the same ranking as the store's FTS5 query.

Real SQLite files throughout: the reference is ``SQLiteStore.lexical_search`` (FTS5's bm25()) on the
same rows, and the index must return the same node indices in the same order with the same scores.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.index.bm25 import BM25Index, LexicalIndex
from neurongraph.model import Node
from neurongraph.snapshot import snapshot_path
from neurongraph.store.lexical import query_terms
from neurongraph.store.sqlite import SQLiteStore

# stemming variants, punctuation, diacritics, CJK, digits, a character Python calls a letter and
# SQLite's tokenizer a separator (New Tai Lue "ᦰ": "abᦰcd" is one query term, two tokens)
WORDS = [
    "run", "running", "runs", "Runner", "ran", "connect", "connected", "connection", "graph", "graphs",
    "café", "cafe", "naïve", "NAIVE", "Ünïcödé", "unicode", "foo-bar", "it's", "C++", "x86_64",
    "日本語", "東京", "東京都", "한국어", "カタカナ", "2024", "v1.2", "the", "of", "abᦰcd", "ᦰ",
]  # fmt: skip

SPLIT_TERM = "abᦰcd"


def _fts_and_memory(store: SQLiteStore, index: BM25Index, lex: LexicalIndex, query: str, k: int, budget):
    terms = query_terms(query)
    want = store.lexical_search(terms, k, budget)
    phrases = lex.phrases(terms)
    return terms, want, phrases, (index.search(phrases, k, budget) if phrases is not None else None)


def _assert_same(want, got):
    assert got[0].tolist() == want[0].tolist()
    np.testing.assert_allclose(got[1], want[1], rtol=0, atol=1e-9)


def _lexical(store: SQLiteStore, known=None) -> LexicalIndex:
    lex = LexicalIndex(store.lexical_tokens, store.lexical_postings, known or (lambda r: np.ones(r.shape[0], bool)))
    lex.BUILD_AFTER = 0
    return lex


docs_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=0, max_size=12), min_size=1, max_size=25)
queries_st = st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=5), min_size=1, max_size=6)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    docs=docs_st,
    queries=queries_st,
    k=st.integers(1, 30),
    budget=st.sampled_from([None, 0, 1, 3, 8, 40]),
    deletes=st.lists(st.integers(0, 24), max_size=6),
    rewrites=st.lists(st.tuples(st.integers(0, 24), st.lists(st.sampled_from(WORDS), max_size=8)), max_size=4),
)
def test_same_ranking_as_fts5(docs, queries, k, budget, deletes, rewrites):
    """Same ids, same order (ties too), same scores: built from the index, then kept incrementally
    through deletions and rewritten texts."""
    with tempfile.TemporaryDirectory() as d:
        store = SQLiteStore(Path(d) / "p.db")
        try:
            store.upsert_nodes([Node(f"n{i}", "doc", "", " ".join(ws)) for i, ws in enumerate(docs)])
            lex = _lexical(store)
            for phase in range(2):
                index = lex.current()
                assert index is not None
                for words in queries:
                    q = " ".join(words)
                    terms, want, phrases, got = _fts_and_memory(store, index, lex, q, k, budget)
                    if phrases is None:  # a phrase query (a term of 0 or 2+ tokens): the store answers
                        assert any(len(t) != 1 for t in store.lexical_tokens(terms))
                        assert lex.search(terms, k, budget) is None
                        continue
                    _assert_same(want, got)
                if phase == 0:  # change the corpus, then the same queries through the incremental path
                    ids = {f"n{i}" for i in deletes if i < len(docs)}
                    idx = store.lookup_idx(ids)
                    store.delete_nodes(ids)
                    lex.changed(np.array(list(idx.values()), np.int64))
                    fresh = [Node(f"n{i}", "doc", "", " ".join(ws)) for i, ws in rewrites]
                    if fresh:
                        store.upsert_nodes(fresh)
                        lex.changed(np.array(list(store.lookup_idx([n.id for n in fresh]).values()), np.int64))
        finally:
            store.close()


def test_budget_keeps_rarest_first_like_the_store(tmp_path):
    """Terms kept rarest first until the postings budget; the rarest always; equal counts in token order."""
    store = SQLiteStore(tmp_path / "b.db")
    docs = ["common"] * 20 + ["common middle"] * 6 + ["rare middle"] + ["other"] * 6 + ["tie1 tie2"] * 3
    store.upsert_nodes([Node(f"n{i}", "doc", "", t) for i, t in enumerate(docs)])
    lex = _lexical(store)
    index = lex.current()
    assert index is not None
    for q in ["common middle rare", "rare common", "tie2 tie1 other", "common", "common other middle"]:
        for budget in [None, 0, 1, 3, 6, 7, 9, 12, 27, 28, 1000]:
            _, want, phrases, got = _fts_and_memory(store, index, lex, q, 50, budget)
            _assert_same(want, got)
    store.close()


def test_phrase_terms_fall_back_to_the_store(tmp_path):
    store = SQLiteStore(tmp_path / "f.db")
    store.upsert_nodes([Node("a", "doc", "", "ab cd"), Node("b", "doc", "", "cd ab"), Node("c", "doc", "", "ab")])
    lex = _lexical(store)
    assert store.lexical_tokens([SPLIT_TERM]) == [["ab", "cd"]]
    assert lex.search(query_terms(f"{SPLIT_TERM} ab"), 10, None) is None
    assert lex.search(["ab"], 10, None) is not None
    store.close()


def _engine(path) -> ngr.Engine:
    return ngr.open(path, embedder="hashing")


def _check_engine(eng, queries, k=20, budget=10_000):
    """The engine's lexical stage (in memory once built) equals the store's FTS5 answer."""
    for q in queries:
        terms = query_terms(q)
        eng.refresh()
        _assert_same(eng.store.lexical_search(terms, k, budget), eng._known_lexical(terms, k, budget))


QUERIES = ["running graph", "café naive", "東京 日本語", "connection runs", "graph", "unicode connect 2024"]


def test_engine_incremental_add_update_delete(db_path):
    eng = _engine(db_path)
    eng.add_nodes([Node(f"n{i}", "doc", f"t{i}", " ".join(WORDS[i % 20 : i % 20 + 5])) for i in range(40)])
    eng.search("graph")  # the first search asks the store
    assert eng.lexical.index is None
    eng.search("graph")  # the second builds the index
    assert eng.lexical.index is not None and eng.lexical.index.n_rows == 40
    _check_engine(eng, QUERIES)
    eng.add_nodes([Node("new", "doc", "graph", "running running graph connection")])  # add
    eng.add_nodes([Node("n3", "doc", "t3", "東京 café")])  # update
    eng.delete_nodes(["n5", "n6"])  # delete
    _check_engine(eng, QUERIES)
    ix = eng.lexical.index
    assert ix is not None and ix.n_rows == 39
    hits = eng.search("running graph connection", record=False)
    assert hits.hits and hits.hits[0].id == "new"
    eng.close()


def test_another_handle_writes_between_searches(db_path):
    eng = _engine(db_path)
    eng.add_nodes([Node(f"n{i}", "doc", "", " ".join(WORDS[i % 25 : i % 25 + 4])) for i in range(30)])
    for _ in range(2):
        eng.search("graph", record=False)
    assert eng.lexical.index is not None
    other = _engine(db_path)  # another process's engine on the same file
    other.add_nodes([Node("x1", "doc", "", "graph graph connected"), Node("n2", "doc", "", "カタカナ")])
    other.delete_nodes(["n7"])
    other.close()
    _check_engine(eng, QUERIES + ["カタカナ", "connected graph"])
    # a write the engine has not refreshed yet: its rows are not returned (the engine's arrays lack them)
    w = SQLiteStore(db_path)
    w.upsert_nodes([Node("late", "doc", "", "zebra zebra")])
    w.close()
    nodes, _ = eng._known_lexical(["zebra"], 10, None)  # no refresh in between
    assert (nodes < eng.table.alive.shape[0]).all()
    eng.close()


def test_many_changes_rebuild_from_the_store_index(db_path):
    eng = _engine(db_path)
    eng.add_nodes([Node(f"n{i}", "doc", "", WORDS[i % 20]) for i in range(10)])
    eng.search("graph", record=False)
    eng.search("graph", record=False)
    eng.add_nodes([Node(f"m{i}", "doc", "", " ".join(WORDS[i % 20 : i % 20 + 3])) for i in range(1500)])
    _check_engine(eng, QUERIES)
    eng.close()


def test_snapshot_round_trip_and_corrupt_field(db_path):
    eng = _engine(db_path)
    eng.add_nodes([Node(f"n{i}", "doc", "", " ".join(WORDS[i % 25 : i % 25 + 6])) for i in range(60)])
    eng.search("graph", record=False)
    eng.search("graph", record=False)
    eng.snapshot_min_rows = 0
    eng.close()  # built since the open: the snapshot holds the BM25 arrays
    path = snapshot_path(str(db_path))
    assert path is not None and path.exists()
    with np.load(path) as z:
        assert {"bm25_rows", "bm25_ptr", "bm25_docs", "bm25_tf", "bm25_terms"} <= set(z.files)
        arrays = {f: z[f] for f in z.files}

    eng = _engine(db_path)
    assert eng.opened_from_snapshot and eng.lexical.restored and eng.lexical.index is not None
    _check_engine(eng, QUERIES)  # from the first search: no build
    eng.add_nodes([Node("late", "doc", "", "graph graph")])  # and it keeps following the change feed
    _check_engine(eng, QUERIES)
    eng.snapshot_min_rows = 10**9
    eng.close()

    # a damaged BM25 field (a posting of a row that is not indexed): the snapshot is refused, a replay
    arrays["bm25_docs"] = arrays["bm25_docs"].copy()
    arrays["bm25_docs"][0] = eng.table.alive.shape[0] + 5
    with open(path, "wb") as f:
        np.savez(f, **arrays)
    eng = _engine(db_path)
    assert not eng.opened_from_snapshot and eng.lexical.index is None
    eng.search("graph", record=False)
    eng.search("graph", record=False)
    _check_engine(eng, QUERIES)
    eng.snapshot_min_rows = 10**9
    eng.close()


@pytest.mark.parametrize(
    "field,value",
    [
        ("ptr", lambda a: a[::-1].copy()),
        ("tf", lambda a: np.zeros_like(a)),
        ("rows", lambda a: np.concatenate([a, a[:1]])),
        ("terms", lambda a: np.frombuffer(b"\xff\xfe", np.uint8)),
    ],
)
def test_check_arrays_refuses_damage(tmp_path, field, value):
    store = SQLiteStore(tmp_path / "c.db")
    store.upsert_nodes([Node(f"n{i}", "doc", "", " ".join(WORDS[i : i + 4])) for i in range(12)])
    lex = _lexical(store)
    index = lex.current()
    assert index is not None
    arrays = index.export()
    n = int(arrays["rows"].max()) + 1
    assert BM25Index.from_arrays(arrays, n) is not None
    arrays[field] = value(arrays[field])
    assert BM25Index.from_arrays(arrays, n) is None
    store.close()


def test_a_store_without_tokens_keeps_the_store_query():
    """A store whose lexical_postings / lexical_tokens say None (PostgreSQL): the engine asks the store."""
    lex = LexicalIndex(lambda texts: None, lambda rows: None, lambda r: np.ones(r.shape[0], bool))
    for _ in range(3):
        assert lex.search(["graph"], 10, None) is None
    assert not lex.supported and lex.index is None


def test_many_small_changes_merge_segments(tmp_path):
    """Rounds of small writes: segments are added, merged and compacted, and the ranking stays FTS5's."""
    rng = np.random.default_rng(7)
    store = SQLiteStore(tmp_path / "m.db")
    store.upsert_nodes([Node(f"n{i}", "doc", "", " ".join(rng.choice(WORDS[:20], 5))) for i in range(30)])
    lex = _lexical(store)
    assert lex.current() is not None
    for r in range(30):
        ids = [f"n{i}" for i in rng.choice(45, 3, replace=False)]
        if r % 3 == 2:
            touched = store.lookup_idx(ids)
            store.delete_nodes(ids)
        else:
            store.upsert_nodes([Node(i, "doc", "", " ".join(rng.choice(WORDS[:20], rng.integers(0, 6)))) for i in ids])
            touched = store.lookup_idx(ids)
        lex.changed(np.array(list(touched.values()), np.int64))
        index = lex.current()
        assert index is not None
        for q in ["run graph", "connected café", "日本語 graphs naive", "unicode"]:
            _, want, _, got = _fts_and_memory(store, index, lex, q, 10, 12 if r % 2 else None)
            _assert_same(want, got)
    assert lex.index is not None and len(lex.index._segs) <= 6
    store.close()


def test_the_query_tokenizer_table_is_emptied_whole(tmp_path):
    """``q_terms`` (the temp table that tokenizes query words and changed rows) is contentless and emptied by
    FTS5's 'delete-all': after re-tokenizing changed rows, a query word's lookup finds an empty index again
    (a DELETE left delete markers behind, and every later lookup read past them: ~10x slower) and the same
    tokens as before."""
    s = SQLiteStore(tmp_path / "t.db")
    try:
        s.upsert_nodes(
            [Node(f"n{i}", "note", f"running notes {i}", "naïve Ünïcödé x-ray " * (i % 3)) for i in range(40)]
        )
        before = s.lexical_tokens(["running", "naïve", "x-ray", "Ünïcödé"])
        s.lexical_postings(list(range(1, 41)))
        assert (
            s.lexical_tokens(["running", "naïve", "x-ray", "Ünïcödé"])
            == before
            == [["run"], ["naiv"], ["x", "rai"], ["unicod"]]
        )
        assert s.conn.execute("SELECT count(*) FROM temp.q_inst").fetchone()[0] == 0
        s._within_budget(["running", "notes"], 10)
        assert s.lexical_tokens(["notes"]) == [["note"]]
    finally:
        s.close()
