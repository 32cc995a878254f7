"""CJK lexical forms compared on one retrieval set: BM25 R@1 / R@5 of each (index form, query form) pair.

A numpy BM25 with FTS5's formula (k1 1.2, b 0.75, the same idf) over each passage's title + text, so a
tokenizer can be tried without building a store.  ``store`` is the store's own form (CJK runs as unigrams +
bigrams, the question as bigrams; ``store.lexical``); the others are candidates for it:

* ``uni+bi`` - the same index, the search's query terms (``index.tokenize``: the question's bigrams plus
  its single kanji/hangul characters);
* ``bigrams`` - bigrams of the raw text on both sides (the issue's 40-line BM25);
* ``sudachi``, ``sudachi+bi``, ``mecab``, ``mecab+bi``, ``kiwi``, ``kiwi+bi`` - a morphological analyser's
  surface forms (SudachiPy + sudachidict-core mode C; fugashi + unidic-lite; kiwipiepy), alone or added
  to the store's form on both sides.  Each is used only when its package imports.

    python benchmarks/multilingual_lexical.py --dataset ../shared/bench/multilingual/jsquad_ja [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections.abc import Callable

import numpy as np
from scipy import sparse

from neurongraph.bench.retrieval import load_dataset
from neurongraph.index.tokenize import query_terms as search_terms
from neurongraph.store.lexical import lexical_text, query_terms

_TOKEN = re.compile(r"\w+", re.UNICODE)
_PUNCT = re.compile(r"^\W+$", re.UNICODE)

Tok = Callable[[str], list[str]]


def _store_doc(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(lexical_text(text))]


def _store_query(text: str) -> list[str]:
    return query_terms(text, max_terms=10_000)


def _uni_bi_query(text: str) -> list[str]:
    """The search's own query terms (``index.tokenize``): the store's plus the question's kanji/hangul."""
    return search_terms(text, max_terms=10_000)


def _raw_bigrams(text: str) -> list[str]:
    t = re.sub(r"\s+", "", text.lower())
    return [t[i : i + 2] for i in range(len(t) - 1)]


def _analyser(name: str) -> Tok | None:
    """Surface forms of a morphological analyser, or None when its package is missing."""
    try:
        if name == "sudachi":
            from sudachipy import Dictionary, SplitMode

            sudachi = Dictionary(dict="core")
            tok = sudachi.tokenizer() if hasattr(sudachi, "tokenizer") else sudachi.create()
            return lambda s: [m.surface().lower() for m in tok.tokenize(s, SplitMode.C)]
        if name == "mecab":
            import fugashi

            tagger = fugashi.Tagger()
            return lambda s: [w.surface.lower() for w in tagger(s)]
        if name == "kiwi":
            from kiwipiepy import Kiwi

            kiwi = Kiwi()
            return lambda s: [t.form.lower() for t in kiwi.tokenize(s)]
    except Exception:  # noqa: BLE001 - an analyser that cannot load is reported as missing
        return None
    return None


def _words(tok: Tok) -> Tok:
    return lambda s: [w for w in tok(s) if w.strip() and not _PUNCT.match(w)]


def _plus(a: Tok, b: Tok) -> Tok:
    return lambda s: a(s) + b(s)


def bm25_rank(docs: list[list[str]], queries: list[list[str]], k: int = 10) -> np.ndarray:
    """Top-``k`` document rows per query by FTS5's bm25 (queries count each distinct term once)."""
    vocab: dict[str, int] = {}
    rows, cols = [], []
    for i, d in enumerate(docs):
        for t in d:
            rows.append(i)
            cols.append(vocab.setdefault(t, len(vocab)))
    tf = sparse.csr_matrix((np.ones(len(rows)), (rows, cols)), shape=(len(docs), len(vocab)))
    tf.sum_duplicates()
    n = len(docs)
    dl = np.asarray([len(d) for d in docs], np.float64)
    df = np.diff(tf.tocsc().indptr)
    idf = np.log((n - df + 0.5) / (df + 0.5))
    idf[idf <= 0] = 1e-6
    k1, b = 1.2, 0.75
    norm = k1 * (1 - b + b * dl / dl.mean())
    tf = tf.tocoo()
    w = tf.data * (k1 + 1) / (tf.data + norm[tf.row]) * idf[tf.col]
    weights = sparse.csc_matrix((w, (tf.row, tf.col)), shape=(n, len(vocab)))
    q_rows, q_cols = [], []
    for qi, q in enumerate(queries):
        for t in dict.fromkeys(q):
            if t in vocab:
                q_rows.append(qi)
                q_cols.append(vocab[t])
    qm = sparse.csr_matrix((np.ones(len(q_rows)), (q_rows, q_cols)), shape=(len(queries), len(vocab)))
    scores = (qm @ weights.T).toarray()
    return np.argsort(-scores, axis=1, kind="stable")[:, :k]


def measure(ds, forms: dict[str, tuple[Tok, Tok]]) -> dict:
    texts = [f"{p.get('title', '')} {p.get('text', '')}" for p in ds.passages]
    pos = {str(p["id"]): i for i, p in enumerate(ds.passages)}
    gold = [[pos[str(g)] for g in q["gold_ids"]] for q in ds.queries]
    out = {}
    for name, (doc_tok, q_tok) in forms.items():
        t = time.perf_counter()
        docs = [doc_tok(x) for x in texts]
        t_docs = time.perf_counter() - t
        top = bm25_rank(docs, [q_tok(q["question"]) for q in ds.queries])
        r1 = np.mean([len(set(g) & set(top[i, :1])) / len(g) for i, g in enumerate(gold)])
        r5 = np.mean([len(set(g) & set(top[i, :5])) / len(g) for i, g in enumerate(gold)])
        out[name] = {"recall@1": float(r1), "recall@5": float(r5), "index_passages_per_s": len(texts) / t_docs}
    return out


def forms() -> dict[str, tuple[Tok, Tok]]:
    out: dict[str, tuple[Tok, Tok]] = {
        "store": (_store_doc, _store_query),
        "uni+bi": (_store_doc, _uni_bi_query),
        "bigrams": (_raw_bigrams, _raw_bigrams),
    }
    for name in ("sudachi", "mecab", "kiwi"):
        tok = _analyser(name)
        if tok is not None:
            words = _words(tok)
            out[name] = (words, words)
            out[f"{name}+bi"] = (_plus(_store_doc, words), _plus(_store_query, words))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--form", action="append", default=[], help="only these forms (default: every one)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    ds = load_dataset(a.dataset)
    every = forms()
    chosen = {k: v for k, v in every.items() if not a.form or k in a.form}
    res = {"dataset": ds.name, "n_queries": len(ds.queries), "forms": measure(ds, chosen)}
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print(f"{res['dataset']} ({res['n_queries']} questions)")
        for name, m in res["forms"].items():
            print(
                f"  {name:12s} R@1 {m['recall@1']:.3f}  R@5 {m['recall@5']:.3f}  "
                f"index {m['index_passages_per_s']:.0f} passages/s"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
