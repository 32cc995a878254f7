"""Search pipeline end to end on a real SQLite file: scores, paths, traces, incremental indexes."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument, UnknownTrace
from neurongraph.index.embedder import HashingEmbedder


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting calls: shows which searches embed."""

    def __init__(self):
        super().__init__(128)
        self.calls = 0
        self.texts = 0

    def embed(self, texts, show_progress=False):
        self.calls += 1
        self.texts += len(texts)
        return super().embed(texts)


HISTORY = [
    ngr.Node(
        "decision:12",
        "decision",
        "Use JWT for sessions",
        "We decided to replace cookie sessions with signed JWT tokens.",
    ),
    ngr.Node(
        "pr:40",
        "pull_request",
        "Implement token middleware",
        "Adds middleware that validates bearer headers on every request.",
    ),
    ngr.Node(
        "issue:77", "issue", "Clock skew breaks validation", "Expired checks fail when server clocks drift; add leeway."
    ),
    ngr.Node("wiki:deploy", "wiki", "Deploy guide", "How to roll out a release to the cluster with helm."),
]
LINKS = [("decision:12", "implemented_by", "pr:40"), ("pr:40", "corrected_by", "issue:77")]


@pytest.fixture
def history(engine):
    engine.add_nodes(HISTORY)
    engine.add_edges(LINKS)
    return engine


def test_hit_carries_all_scores_ranks_and_path(history):
    res = history.search("JWT sessions decision", limit=5)
    ids = [h.id for h in res]
    assert ids[0] == "decision:12"
    assert set(res.hits[0].scores) == {"lexical", "dense", "entry", "seed_score", "graph", "priming", "final"}
    assert set(res.hits[0].ranks) == {"lexical", "dense", "entry", "graph", "final"}
    # the causal chain: decision -> PR -> correction arrives through the graph
    fix = next(h for h in res if h.id == "issue:77")
    assert fix.paths[0]["nodes"] == ["decision:12", "pr:40", "issue:77"]
    assert [e["rel"] for e in fix.paths[0]["edges"]] == ["implemented_by", "corrected_by"]
    assert fix.scores["graph"] > 0 and "path: decision:12" in fix.explain()


def test_graph_channel_lifts_linked_source(history):
    with_graph = [h.id for h in history.search("JWT sessions decision", limit=4)]
    without = [h.id for h in history.search("JWT sessions decision", limit=4, channel="none")]
    assert with_graph.index("pr:40") < (without.index("pr:40") if "pr:40" in without else 99)


def test_trace_is_persisted_and_rereadable(history, db_path):
    res = history.search("token middleware", limit=3)
    history.close()
    eng = ngr.open(db_path, embedder="hashing")
    t = eng.get_trace(res.trace_id)
    assert t["query"] == "token middleware" and t["params"]["limit"] == 3
    assert [h["id"] for h in t["hits"]] == [h.id for h in res.hits]
    assert t["hits"][0]["scores"]["final"] == pytest.approx(res.hits[0].scores["final"])
    assert len(t["fingerprint"]) == 16
    assert eng.explain(res.trace_id, res.hits[0].id)["rank"] == 1
    with pytest.raises(UnknownTrace):
        eng.get_trace("tr_nope")
    eng.close()


def test_search_never_changes_weights(history):
    before = history.store.conn.execute("SELECT eid, weight, plastic FROM edges ORDER BY eid").fetchall()
    for q in ["JWT", "clock skew", "deploy"] * 5:
        history.search(q)
    after = history.store.conn.execute("SELECT eid, weight, plastic FROM edges ORDER BY eid").fetchall()
    assert before == after


def test_incremental_add_after_search_is_found(history):
    history.search("anything at all")
    history.add_nodes([ngr.Node("commit:ab12", "commit", "Bump helm chart", "helm chart version 2.3 for the cluster")])
    assert history.search("helm chart version").hits[0].id == "commit:ab12"
    history.add_edges([("wiki:deploy", "mentions", "commit:ab12")])
    hit = next(h for h in history.search("roll out release guide", limit=10) if h.id == "commit:ab12")
    assert hit.paths and hit.paths[0]["nodes"][0] == "wiki:deploy"


def test_updates_and_deletes_reach_the_indexes(history):
    history.add_nodes([ngr.Node("wiki:deploy", "wiki", "Deploy guide", "Rolling restarts with kubectl")])
    assert history.search("kubectl rolling").hits[0].id == "wiki:deploy"
    history.delete_nodes(["pr:40"])
    res = history.search("token middleware bearer", limit=10)
    assert "pr:40" not in [h.id for h in res]
    assert history.graph.n_edges == 0


def test_second_engine_process_sees_writes(history, db_path):
    other = ngr.open(db_path, embedder="hashing")
    history.add_nodes([ngr.Node("note:1", "note", "Quokka facts", "quokkas live on Rottnest island")])
    assert other.search("quokka island").hits[0].id == "note:1"
    other.close()


def test_cjk_query_finds_cjk_document(engine):
    engine.add_nodes(
        [
            ngr.Node("ja:1", "wiki", "東京タワー", "東京タワーは東京都港区にある電波塔です。高さは333メートル。"),
            ngr.Node("ja:2", "wiki", "大阪城", "大阪城は大阪市中央区にある城です。"),
            ngr.Node("en:1", "wiki", "Tokyo", "Tokyo is the capital of Japan."),
        ]
    )
    res = engine.search("電波塔の高さ", limit=3)
    assert res.hits[0].id == "ja:1" and res.hits[0].scores["lexical"] == 1.0


def test_vectors_cached_by_content_hash(db_path):
    emb = CountingEmbedder()
    eng = ngr.Engine(ngr.engine.SQLiteStore(db_path), emb)
    eng.add_nodes(HISTORY)
    assert emb.texts == len(HISTORY)
    eng.add_nodes(HISTORY)  # re-ingest unchanged text
    assert emb.texts == len(HISTORY)
    eng.close()
    emb2 = CountingEmbedder()
    eng = ngr.Engine(ngr.engine.SQLiteStore(db_path), emb2)  # re-open
    assert emb2.texts == 0 and int(eng.vectors.present.sum()) == len(HISTORY)
    eng.add_nodes([ngr.Node("wiki:deploy", "wiki", "Deploy guide", "changed text")])
    assert emb2.texts == 1
    eng.close()


def test_result_types_filter_and_overrides_do_not_mutate_default(history):
    res = history.search("JWT middleware clock", result_types=("issue",))
    assert {h.type for h in res} == {"issue"}
    assert history.config.result_types == ()


@pytest.mark.parametrize(
    "bad",
    [
        dict(query=""),
        dict(query="x" * 5000),
        dict(query="ok", nonsense=1),
        dict(query="ok", fusion="magic"),
        dict(query="ok", limit=0),
    ],
)
def test_bad_input_is_a_typed_error(history, bad):
    with pytest.raises(InvalidArgument):
        history.search(**bad)


def test_rrf_fusion_available(history):
    res = history.search("JWT sessions", fusion="rrf", channel="none")
    assert res.hits[0].id == "decision:12"


@pytest.mark.model
def test_real_model_paraphrase_without_shared_words(tmp_path, real_embedder):
    eng = ngr.Engine(ngr.engine.SQLiteStore(tmp_path / "m.db"), real_embedder)
    eng.add_nodes(
        [
            ngr.Node("a", "note", "", "The feline rested on the rug."),
            ngr.Node("b", "note", "", "Quarterly revenue grew by eight percent."),
            ngr.Node("c", "note", "", "Heavy rain flooded the subway stations."),
        ]
    )
    res = eng.search("a cat sleeping on a carpet", limit=3)
    assert res.hits[0].id == "a"
    assert res.hits[0].scores["lexical"] == 0.0 and res.hits[0].scores["dense"] > 0
    assert eng.embedder.model_id.startswith("st:all-MiniLM-L6-v2")
    eng.close()


def test_delete_and_readd_same_ids_in_one_process_and_another(history, db_path):
    other = ngr.open(db_path, embedder="hashing")
    history.delete_nodes(["issue:77", "pr:40"])
    history.add_nodes([HISTORY[1], HISTORY[2]])
    history.add_edges([("decision:12", "implemented_by", "pr:40"), ("issue:77", "corrected_by", "pr:40")])
    for eng in (history, other):  # `other` sees delete + re-add in one catch-up batch
        hit = next(h for h in eng.search("JWT sessions decision", limit=5) if h.id == "pr:40")
        assert hit.paths and hit.paths[0]["nodes"] == ["decision:12", "pr:40"]
        assert eng.search("clock skew validation").hits[0].id == "issue:77"
        assert eng.graph.n_edges == 2
    other.close()


@pytest.mark.parametrize("ann_min_nodes", [0, 1])  # exact scan, and the IVF path (similarity looked up per node)
def test_graph_reached_node_outside_the_candidate_lists_keeps_its_query_match(history, ann_min_nodes):
    # one lexical and one dense candidate: issue:77 can only arrive through the graph
    cfg = dict(lexical_k=1, dense_k=1, limit=5, record=False, ann_min_nodes=ann_min_nodes)
    res = history.search("JWT sessions decision and clock skew validation", **cfg)
    fix = next(h for h in res if h.id == "issue:77")
    assert not fix.ranks["lexical"] and not fix.ranks["dense"] and fix.paths
    # its dense match is measured on the corpus-anchored scale, not zeroed for missing the lists
    assert fix.scores["dense"] > 0
    cfg_ = history.config
    share = cfg_.dense_weight / (cfg_.lexical_weight + cfg_.dense_weight)
    assert fix.scores["entry"] == pytest.approx(share * fix.scores["dense"])
    g = cfg_.graph_weight
    for h in res:  # the explanation adds up: final = (1-g)·entry + g·graph
        assert h.scores["final"] == pytest.approx((1 - g) * h.scores["entry"] + g * h.scores["graph"])
    assert (history.vectors.ivf is not None) == bool(ann_min_nodes)
