"""Would a history's own vocabulary bridge the words of a question to the words of its answer?  (Issue 43,
item 2: expand a question with the terms the repository uses for the same concept, learned from the history.)

Before any expansion enters the search, this measures what it would add.  For each realuse search question
(``../shared/bench/realuse/NAME.json``, written from git by people who had not read the code; the gold is
git's), each content word of the question gets its nearest words in the history, by one of three sources:

* ``title``: co-occurrence in subjects (commits, pull requests, issues), Jaccard of the rows that hold both;
* ``text``: the same over subject and the first 600 characters of the message;
* ``embedding``: the default embedder's nearest words of the history's vocabulary (cosine ≥ 0.6).

Words used by more than 5% of the rows (the history's own name, "fix", "add") are neither expanded nor added,
nor are words of one letter, numbers, or words sharing their first five letters with a question word (the
stemmer's business).  Reported per source: the words added per question, the share of added words found in the
gold's subject and message (``in gold``), the same share in the 50 other rows that hold most of the question's
words (``in rivals``: what the search must beat) and in a row at random (``background``), and the questions
where an added word is in the gold (``bridged``).  An expansion that finds the project's term for the question's
concept has ``in gold`` far above ``in rivals``; one that merely follows the question's words has them level.

    python benchmarks/vocabulary_probe.py .ngr/new/mypy-paths-only.db ../shared/bench/realuse/mypy-paths-only.json
"""

from __future__ import annotations

import argparse
import collections
import json
import re
import sqlite3
import sys

import numpy as np
import scipy.sparse as sp

from neurongraph.index.tokenize import query_terms

_TYPES = ("commit", "pull_request", "issue")
_WORD = re.compile(r"^[^\W\d_]{2,}$")


def _words(text: str) -> set[str]:
    return {w for w in query_terms(text or "", 512) if _WORD.match(w)}


def _same_stem(a: str, b: str) -> bool:
    return a[:5] == b[:5]


def _cooccurrence(docs: list[set[str]], cap: int) -> tuple[dict[str, int], list[str], sp.csr_matrix, np.ndarray]:
    vocab: dict[str, int] = {}
    idx, ptr = [], [0]
    for d in docs:
        idx += [vocab.setdefault(w, len(vocab)) for w in d]
        ptr.append(len(idx))
    x = sp.csr_matrix((np.ones(len(idx), np.float32), idx, ptr), shape=(len(docs), len(vocab)))
    df = np.asarray(x.sum(0)).ravel()
    x = x[:, df <= cap].tocsc()  # a generic word co-occurs with everything
    keep = np.flatnonzero(df <= cap)
    words = [w for w, _ in sorted(vocab.items(), key=lambda kv: kv[1])]
    kept = {words[i]: j for j, i in enumerate(keep)}
    return kept, [words[i] for i in keep], (x.T @ x).tocsr(), df[keep]


def _cooc_neighbours(model, word: str, m: int = 3) -> list[str]:
    kept, words, c, df = model
    i = kept.get(word)
    if i is None:
        return []
    row = c.getrow(i)
    js, n = row.indices, row.data
    ok = (js != i) & (n >= 2)
    js, n = js[ok], n[ok]
    jac = n / (df[i] + df[js] - n)
    order = np.argsort(-jac)
    return [words[js[k]] for k in order[: m * 3] if jac[k] >= 0.05][:m]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("db")
    ap.add_argument("questions")
    ap.add_argument("--no-embedding", action="store_true", help="skip the embedder's neighbours")
    a = ap.parse_args()
    con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
    rows = con.execute(
        f"SELECT id, title, substr(text, 1, 600) FROM nodes WHERE type IN ({','.join('?' * len(_TYPES))})", _TYPES
    ).fetchall()
    cap = max(20, int(0.05 * len(rows)))
    titles = [_words(t) for _, t, _ in rows]
    texts = [_words(f"{t} {x}") for _, t, x in rows]
    df = collections.Counter(w for d in texts for w in d)
    models = {"title": _cooccurrence(titles, cap), "text": _cooccurrence(texts, cap)}
    sources = ["title", "text"]
    emb = None
    if not a.no_embedding:
        from neurongraph.index.embedder import default_embedder

        vocab = [w for w, n in df.items() if 3 <= n <= cap]
        e = default_embedder()
        emb = (vocab, np.asarray(e.embed(vocab)), e)
        sources.append("embedding")
    by_id = {i: k for k, (i, _, _) in enumerate(rows)}
    questions = json.load(open(a.questions))["search"]
    stats = {s: collections.Counter() for s in sources}
    for q in questions:
        gold = set()
        for g in q["gold"]:
            if g in by_id:
                gold.add(by_id[g])
            else:  # a short commit id
                gold.update(k for i, k in by_id.items() if i.startswith(g))
        gold_words = set().union(*(texts[k] for k in gold)) if gold else set()
        asked = [w for w in _words(q["q"]) if df.get(w, 0) <= cap]
        overlap = np.array([len(d.intersection(asked)) for d in texts])
        overlap[list(gold)] = -1
        rivals = np.argsort(-overlap, kind="stable")[:50]  # the rows that match the question's words best
        for s in sources:
            added: set[str] = set()
            for w in asked:
                if s == "embedding":
                    vocab, mat, e = emb
                    sim = mat @ np.asarray(e.embed([w]))[0]
                    near = [vocab[j] for j in np.argsort(-sim)[:6] if sim[j] >= 0.6]
                else:
                    near = _cooc_neighbours(models[s], w)
                added.update(n for n in near if not any(_same_stem(n, x) for x in asked))
            st = stats[s]
            st["questions"] += 1
            st["added"] += len(added)
            st["in_gold"] += len(added & gold_words)
            st["background"] += sum(df.get(w, 0) for w in added) / len(rows)
            st["rivals"] += sum(len(added & texts[k]) for k in rivals) / len(rivals)
            st["bridged"] += bool(added & gold_words)
    print(f"{a.questions}: {len(questions)} questions, {len(rows)} rows")
    print("| source | added per question | in gold | in rivals | background | bridged |")
    print("|---|---|---|---|---|---|")
    for s in sources:
        st = stats[s]
        n = max(st["added"], 1)
        print(
            f"| {s} | {st['added'] / max(st['questions'], 1):.1f} | {st['in_gold'] / n:.3f} | "
            f"{st['rivals'] / n:.3f} | {st['background'] / n:.3f} | {st['bridged']}/{st['questions']} |"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
