"""A small hand-made Korean retrieval check (issue 29 names Korean; no Korean set is in ../shared).

Corpus: every paragraph (blank-line separated; a diff's leading ``+`` dropped) of the five seed files in
``../shared/seeds`` - Korean design notes and code comments, one Japanese note, and the code between them.
Questions: 25 written by hand for this check, each about one Korean paragraph and worded differently from
it where the paragraph allowed, once in Korean (``ko_seeds``) and once in English (``en_ko_seeds``: an
English question must find Korean text).  The gold paragraph is the one holding the question's anchor
string (checked to be exactly one).  It is tiny (25 questions, ~100 paragraphs): a check that Korean works,
not a benchmark to tune on.

A fourth directory (optional) gets ``ko_self``, a larger self-retrieval set built automatically from the same
paragraphs: each question is one sentence of a Korean paragraph (at least ``SELF_MIN_HANGUL`` Hangul
syllables; up to ``SELF_PER_PARAGRAPH`` per paragraph, picked with a fixed seed) and its gold is that
paragraph with its question sentences *removed*, so no question is a substring of its gold.  The questions
are the paragraphs' own words (BM25-friendly, as JSQuAD's are); a paragraph keeps its questions only while
at least ``SELF_MIN_REST`` word characters are left of it (a code paragraph whose Korean comment is asked
keeps its code: a Korean question must then find mostly-English text).

    python benchmarks/multilingual_korean.py ../shared/seeds /tmp/ko_seeds /tmp/en_ko_seeds [/tmp/ko_self]
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

# (Korean question, English question, anchor: a string only the gold paragraph holds)
QUESTIONS = [
    (
        "NeuroDB v0.1에서 그래프 채널이 순위에 기여하지 못한 원인은?",
        "Why did the graph channel of NeuroDB v0.1 not change the ranking?",
        "NeuroDB v0.1의 문제는",
    ),
    (
        "엣지를 완전히 잘라내지 않고 약하게 누르는 쪽을 택한 까닭",
        "Why are mismatching edges attenuated instead of pruned outright?",
        "하드 프루닝을 쓰지 않는 이유",
    ),
    (
        "경로 빔서치가 PropRAG 절제 실험에서 얼마나 기여했나",
        "How much did path beam search contribute in the PropRAG ablation?",
        "PropRAG의 절제 실험",
    ),
    (
        "같이 활성화된 노드끼리 연결을 세게 만드는 기능",
        "Which function strengthens the edges between nodes that fire together?",
        "함께 발화하는 뉴런",
    ),
    (
        "사용되지 않는 연결을 시간이 지나며 약화시키는 것",
        "What weakens unused connections over time?",
        "시간 감쇠",
    ),
    (
        "이웃 목록을 인접 리스트로 두는 이유",
        "Why does the graph keep its neighbours in adjacency lists?",
        "밀도가 낮아 인접 리스트",
    ),
    (
        "엣지 극성이 음수면 무슨 뜻인가",
        "What does a negative edge polarity mean?",
        "극성. +1 긍정",
    ),
    (
        "탐색 전략은 무엇을 결정하나",
        "What does a traversal strategy decide?",
        "Strategy는 탐색 중",
    ),
    (
        "엣지마다 가져오는 인접 문서 개수의 기본값",
        "Default number of adjacent documents fetched per edge",
        "각 엣지당 인접 문서 검색 수",
    ),
    (
        "Eager 방식의 장점과 단점",
        "Strengths and weaknesses of the Eager strategy",
        "구현 단순, 탐색 경로가 예측 가능",
    ),
    (
        "MMR에서 lambda를 0 가까이 두면 어떻게 되나",
        "In MMR, what does a lambda close to zero favour?",
        "0에 가까울수록 다양성 중시",
    ),
    (
        "MMR이 비싼 이유",
        "Why is MMR costly to compute?",
        "매 선택마다 모든 후보와",
    ),
    (
        "Scored 전략과 Eager의 차이",
        "How does the Scored strategy differ from Eager?",
        "Eager의 변형으로",
    ),
    (
        "세 전략을 항목별로 비교한 표",
        "A table comparing the three strategies item by item",
        "예측 가능성\t높음",
    ),
    (
        "max_depth는 얼마로 두는 것이 권장되나",
        "What max_depth is recommended, and why?",
        "일반적인 권장값",
    ),
    (
        "관계를 JSON 안에 넣어 두면 생기는 문제",
        "What goes wrong when relationships are stored inside JSON?",
        "이런 관계를 JSON 내부에",
    ),
    (
        "속성 그래프 모델의 장점",
        "Advantages of the property graph model",
        "관계가 1급 시민",
    ),
    (
        "하나의 범용 edges 테이블을 고른 이유",
        "Why was one generic edges table chosen?",
        "선택: 범용 edges 테이블",
    ),
    (
        "관계 종류마다 테이블을 따로 만드는 방식의 단점",
        "Drawback of a separate table for every relation type",
        "관계 타입마다 테이블 필요",
    ),
    (
        "엣지를 만드는 책임은 어느 구성 요소에 있나",
        "Which component is responsible for creating edges?",
        "Edge 생성은 Projector가",
    ),
    (
        "blocked_by 엣지가 있는 Task의 상태에 대한 불변식",
        "Invariant on the status of a task that has a blocked_by edge",
        "blocked_by edge가 있으면 Task는",
    ),
    (
        "질의를 그래프, 벡터, 하이브리드 중 어디로 보낼지 정하는 기준",
        "How does the router pick graph, vector or hybrid mode for a question?",
        "mode 선택:",
    ),
    (
        "검색 결과에 없는 사실을 지어내지 말라는 지시",
        "The instruction to answer only from the search results and cite slugs",
        "주어진 결과만으로 답하세요",
    ),
    (
        "Cypher 도구가 허용하는 쿼리의 종류",
        "What kind of Cypher queries does the run_cypher tool accept?",
        "읽기 전용 쿼리만 허용",
    ),
    (
        "effective blocker 뷰는 condition을 어떻게 펼치나",
        "How does the effective blockers view expand a condition?",
        "v_task_blockers_effective",
    ),
]


def paragraphs(seeds: Path) -> list[dict]:
    """The seed files' paragraphs as passages, without titles: the files are named by a hash
    (``000_ab8c56ae96166e1b``), whose Latin letters would count against a short Korean paragraph's script."""
    out = []
    for path in sorted(seeds.glob("*.txt")):
        text = re.sub(r"(?m)^\+", "", path.read_text(encoding="utf-8"))
        for para in re.split(r"\n\s*\n", text):
            if re.search(r"\w", para):
                out.append({"id": len(out), "title": "", "text": para.strip()})
    return out


def gold_of(corpus: list[dict], anchor: str) -> int:
    hits = [p["id"] for p in corpus if anchor in p["text"]]
    if len(hits) != 1:
        raise SystemExit(f"anchor {anchor!r} is in {len(hits)} paragraphs, not one")
    return hits[0]


SELF_MIN_HANGUL = 10  # Hangul syllables a sentence needs to be a question (a short Korean sentence)
SELF_PER_PARAGRAPH = 3
SELF_MIN_REST = 30  # word characters the gold must keep once its question sentences are removed
SELF_SEED = 29

_HANGUL = re.compile("[\uac00-\ud7a3]")
_SENTENCE_END = re.compile(r"(?<=[.?!。])\s+|\n+")
_MARKER = re.compile(r"^[\s*#/>+\-|]+")  # comment / list / quote markers before a sentence


def self_retrieval(corpus: list[dict], seed: int = SELF_SEED) -> tuple[list[dict], list[dict]]:
    """``ko_self``: (corpus with each asked paragraph's question sentences removed, questions)."""
    rng = random.Random(seed)
    out, queries = [], []
    for p in corpus:
        sents = [_MARKER.sub("", s).strip() for s in _SENTENCE_END.split(p["text"])]
        good = sorted({s for s in sents if len(_HANGUL.findall(s)) >= SELF_MIN_HANGUL})
        rng.shuffle(good)
        pick = good[:SELF_PER_PARAGRAPH]
        while pick and len(re.findall(r"\w", _without(p["text"], pick))) < SELF_MIN_REST:
            pick.pop()
        text = _without(p["text"], pick) if pick else p["text"]
        out.append({**p, "text": text})
        for s in pick:
            queries.append({"qid": f"self-{len(queries)}", "question": s, "answers": [], "gold_ids": [p["id"]]})
    return out, queries


def _without(text: str, sentences: list[str]) -> str:
    for s in sentences:
        text = text.replace(s, "")
    return re.sub(r"[ \t]+\n", "\n", text).strip()


def _write(out: Path, corpus: list[dict], queries: list[dict]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, rows in (("corpus.jsonl", corpus), ("queries.jsonl", queries)):
        (out / name).write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def main(argv: list[str]) -> int:
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    corpus = paragraphs(Path(argv[0]))
    gold = [gold_of(corpus, anchor) for _, _, anchor in QUESTIONS]
    for lang, out in ((0, Path(argv[1])), (1, Path(argv[2]))):
        queries = [
            {"qid": f"{('ko', 'en')[lang]}-{i}", "question": q[lang], "answers": [], "gold_ids": [g]}
            for i, (q, g) in enumerate(zip(QUESTIONS, gold))
        ]
        _write(out, corpus, queries)
    print(f"{len(corpus)} paragraphs, {len(QUESTIONS)} questions")
    if len(argv) == 4:
        self_corpus, self_queries = self_retrieval(corpus)
        _write(Path(argv[3]), self_corpus, self_queries)
        print(f"ko_self: {len(self_queries)} sentence questions over {len(self_corpus)} paragraphs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
