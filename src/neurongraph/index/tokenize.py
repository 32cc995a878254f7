"""Lexical normalisation shared by indexing and querying: the index form is defined in
:mod:`neurongraph.store.lexical` (the FTS index form belongs to the store, which must not import from
``index/``); the query side adds one thing to it here.

A CJK question's terms are its bigrams (the store's ``query_terms``) plus each kanji/hanzi and hangul
syllable of its CJK runs on its own: the index already holds every CJK character as a unigram, and a
single kanji or hangul syllable carries meaning a bigram misses when the question words a compound
differently (党名 against 政党, 약화시키는 against 약해진다).  Kana alone are grammar (の, は, ます) and are left
out.  Only a question written mostly in CJK script (``language.is_cjk``) gets them: an English
question that quotes a name (積丹尼) keeps exactly the store's terms.  Measured with
``benchmarks/multilingual_lexical.py`` (docs/multilingual.md): jsquad_ja BM25 R@1/R@5 0.910/0.960 ->
0.922/0.966; the Korean seed check R@5 0.680 -> 0.760.
"""

from __future__ import annotations

import re

from ..store.lexical import CJK_CHARS, STOPWORDS, fts_match_expression, lexical_text
from ..store.lexical import query_terms as _bigram_terms
from .language import is_cjk

__all__ = ["lexical_text", "query_terms", "fts_match_expression", "STOPWORDS"]

_CJK_RUN = re.compile(f"[{CJK_CHARS}]{{2,}}")  # a lone character is a term already
_KANA = "\u3040-\u30ff"
_CONTENT_CHAR = re.compile(f"[^{_KANA}]")  # of a CJK run: a kanji/hanzi or a hangul syllable/letter


def query_terms(query: str, max_terms: int = 64) -> list[str]:
    """The store's query terms (words, CJK bigrams), then the question's non-kana CJK characters."""
    terms = _bigram_terms(query, max_terms)
    runs = _CJK_RUN.findall(query)
    if not runs or len(terms) >= max_terms or not is_cjk(query):
        return terms
    seen = set(terms)
    for run in runs:
        for ch in _CONTENT_CHAR.findall(run):
            if ch not in seen:
                seen.add(ch)
                terms.append(ch)
    return terms[:max_terms]
