"""Lexical normalisation shared by indexing and querying (the form the store's full-text index holds).

It lives in ``store/`` because the store writes the index-side form inside its write transactions;
query-side callers (``retrieval/``) import it from here, so both sides use one definition.

SQLite's unicode61 tokenizer splits on spaces and punctuation, which leaves a
Japanese or Chinese sentence as one giant token.  We therefore rewrite runs of
CJK characters (Han, Hiragana, Katakana, Hangul) into space-separated unigrams
and bigrams before the text reaches FTS5, and do the same to the query: a
Japanese query then finds a Japanese document by overlapping bigrams.  Latin
text passes through untouched (FTS5's porter stemmer handles it).
"""

from __future__ import annotations

import re

__all__ = ["lexical_text", "query_terms", "fts_match_expression", "STOPWORDS", "CJK_CHARS"]

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\u1100-\u11ff\u3130-\u318f"
CJK_CHARS = _CJK  # the character class (regex ranges): index/language.py detects CJK text with it
_CJK_RUN = re.compile(f"[{_CJK}]+")
# a CJK run, or a run of other word characters: Japanese writes digits and Latin words against its kana
# and kanji with no space ("2020年のGDP"), so a plain ``\w+`` would swallow the whole question as one term
_WORD = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+", re.UNICODE)
_IS_CJK = re.compile(f"^[{_CJK}]+$")

STOPWORDS = frozenset(
    """
a an and are as at be been being but by can could did do does doing for from had has have having he her
here hers him his how i if in into is it its itself me more most my no nor not of off on once only or
other our ours out over own same she should so some such than that the their theirs them then there these
they this those through to too under until up very was we were what when where which while who whom why
will with would you your yours also just about after again against all am any because before below between
both down during each few further s t don now
""".split()
)


def _cjk_grams(run: str) -> list[str]:
    if len(run) == 1:
        return [run]
    return list(run) + [run[i : i + 2] for i in range(len(run) - 1)]


def lexical_text(text: str) -> str:
    """Index-side form of ``text``: CJK runs become unigrams + bigrams."""
    return _CJK_RUN.sub(lambda m: " " + " ".join(_cjk_grams(m.group())) + " ", text)


def query_terms(query: str, max_terms: int = 64) -> list[str]:
    """Distinct query terms for an OR query: lower-cased words minus stopwords, CJK bigrams.

    A lone CJK character is kept (it matches the unigram index); in longer runs
    only bigrams are used, since unigrams would match almost everything.
    """
    out: list[str] = []
    seen: set[str] = set()
    for tok in _WORD.findall(query):
        if _IS_CJK.match(tok):
            grams = [tok] if len(tok) == 1 else [tok[i : i + 2] for i in range(len(tok) - 1)]
        else:
            t = tok.lower()
            grams = [] if t in STOPWORDS else [t]
        for g in grams:
            if g not in seen:
                seen.add(g)
                out.append(g)
    return out[:max_terms]


def fts_match_expression(terms: list[str]) -> str:
    """FTS5 MATCH expression: each term quoted (so no user text is parsed as syntax), OR-ed."""
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in terms)
