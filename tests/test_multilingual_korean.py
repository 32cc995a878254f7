"""benchmarks/multilingual_korean.py's ``ko_self`` set: sentence questions built from Korean paragraphs, each
gold being its paragraph with the question sentences removed (issue 29's larger Korean check)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "multilingual_korean.py"


def _module():
    spec = importlib.util.spec_from_file_location("multilingual_korean", SCRIPT)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


CORPUS = [
    {
        "id": 0,
        "title": "",
        "text": "그래프 채널은 희소한 seed에서 활성을 퍼뜨린다. 경로는 도달 수단으로만 쓰고 점수에는 넣지 않는다.\n"
        "엣지 가중치는 함께 발화한 노드 사이에서 강해진다.",
    },
    {
        "id": 1,
        "title": "",
        "text": "/* 시간 감쇠. 쓰이지 않는 연결은 시간이 지나며 조금씩 약해진다. */\n"
        "void decay(float rate, int32_t steps);",
    },
    {"id": 2, "title": "", "text": "짧은 문단."},  # no sentence of 10 syllables: asked nothing
    {"id": 3, "title": "", "text": "def spread(seeds, depth): return walk(seeds, depth)"},
]


def test_self_retrieval_questions_are_sentences_removed_from_their_gold():
    mod = _module()
    corpus, queries = mod.self_retrieval(CORPUS)
    assert [p["id"] for p in corpus] == [0, 1, 2, 3] and corpus[2:] == CORPUS[2:]
    assert queries and {q["gold_ids"][0] for q in queries} == {0, 1}
    text = {p["id"]: p["text"] for p in corpus}
    for q in queries:
        assert len(mod._HANGUL.findall(q["question"])) >= mod.SELF_MIN_HANGUL
        assert q["question"] in CORPUS[q["gold_ids"][0]]["text"]  # a sentence of the original paragraph
        assert all(q["question"] not in t for t in text.values())  # and in no passage of the set
    # the code paragraph keeps its code once its Korean comment is asked (a Korean question, English-looking gold)
    assert "void decay" in text[1] and "쓰이지 않는" not in text[1]
    assert mod.self_retrieval(CORPUS) == (corpus, queries)  # deterministic (fixed seed)
