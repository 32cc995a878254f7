"""Derived retrieval sets for docs/multilingual.md, written in the QA-set layout (corpus.jsonl + queries.jsonl).

* ``reverse SRC OUT``: a translation-pair set turned around (tatoeba_ja_en -> tatoeba_en_ja: each question
  becomes a passage, each gold passage the question that must find it);
* ``merge SRC EXTRA OUT``: SRC's questions over SRC's corpus plus EXTRA's passages as distractors (ids
  prefixed ``x-``): a store that holds both languages.

    python benchmarks/multilingual_sets.py reverse ../shared/bench/multilingual/tatoeba_ja_en /tmp/tatoeba_en_ja
    python benchmarks/multilingual_sets.py merge ../shared/bench/multilingual/tatoeba_ja_en \\
        ../shared/bench/multilingual/jsquad_ja /tmp/tatoeba_plus_jsquad
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _read(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write(path: Path, rows: list[dict]) -> None:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")


def reverse(src: Path, out: Path) -> None:
    """Questions become the corpus and their (single) gold passages the questions."""
    text = {p["id"]: p.get("text", "") for p in _read(src / "corpus.jsonl")}
    queries = _read(src / "queries.jsonl")
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "corpus.jsonl", [{"id": i, "title": "", "text": q["question"]} for i, q in enumerate(queries)])
    _write(
        out / "queries.jsonl",
        [
            {"qid": f"rev-{i}", "question": text[q["gold_ids"][0]], "answers": [], "gold_ids": [i]}
            for i, q in enumerate(queries)
        ],
    )


def merge(src: Path, extra: Path, out: Path) -> None:
    """SRC's questions over SRC's corpus plus EXTRA's passages (ids ``x-<id>``)."""
    corpus = _read(src / "corpus.jsonl") + [{**p, "id": f"x-{p['id']}"} for p in _read(extra / "corpus.jsonl")]
    out.mkdir(parents=True, exist_ok=True)
    _write(out / "corpus.jsonl", corpus)
    _write(out / "queries.jsonl", _read(src / "queries.jsonl"))


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[0] == "reverse":
        reverse(Path(argv[1]), Path(argv[2]))
    elif len(argv) == 4 and argv[0] == "merge":
        merge(Path(argv[1]), Path(argv[2]), Path(argv[3]))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
