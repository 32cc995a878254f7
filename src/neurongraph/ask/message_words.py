"""A topic found in whole commit messages, as ``git log -i --grep`` finds it, when no subject names it.

Why: the graph holds subjects, and a topic often lives in the body only ("Reported-by: SVACE static
analyzer", "... so that it builds on Android").  A question's topic phrase also carries words that are
everywhere in this history ("making libbpf work or build on Android": *libbpf*, *work*, *build*); requiring
them all finds nothing, and requiring any finds everything.  The topic's words are those at most
:data:`GENERIC_SHARE` of the rows use, counted in the full-text index (the same tokens and stems as search): a
word written as a name comes first ("Android" over "making"), else the rarest, and each further word joins when
most of the rows found so far hold it too (the topic's own words co-occur; the asker's phrasing would drop
most of them: "the fixes that came from the SVACE reports" where the commits say "Found by the SVACE static
analyzer").
"""

from __future__ import annotations

import re
from collections.abc import Callable

import numpy as np

from ..index.tokenize import query_terms
from .topics import TOPIC_STOP

GENERIC_SHARE = 0.05  # a word in more than this share of the rows names the history, not a topic
MIN_GENERIC = 20  # ... but a small history's rare words stay words (5% of 200 rows would be 10)

# (terms, k) -> (row indices, scores): the store's or the engine's BM25 OR-search
LexicalSearch = Callable[[list[str], int], tuple[np.ndarray, np.ndarray]]


def named(word: str) -> bool:
    """A word written as a name inside a sentence ("Android", "SVACE", "TypeForm")."""
    return any(ch.isupper() for ch in word)


def rows_holding(search: LexicalSearch, n_rows: int, words: list[str]) -> tuple[np.ndarray, list[str]]:
    """(sorted row indices that hold the phrase's informative words, those words as written); no rows and no
    words when none is informative."""
    cap = max(MIN_GENERIC, int(n_rows * GENERIC_SHARE))
    found: list[tuple[bool, int, str, np.ndarray]] = []
    for word in words:
        terms = query_terms(word.lower())
        if len(terms) != 1:
            continue  # a word the index splits ("dataclass_transform": also "dataclass transform") is no one token
        nodes, _ = search(terms, cap + 1)
        if 0 < nodes.shape[0] <= cap:
            found.append((not named(word), nodes.shape[0], word, np.unique(nodes)))
    if not found:
        return np.zeros(0, np.int64), []
    found.sort(key=lambda f: f[:2])  # names first, then the rarest
    common, kept = found[0][3], [found[0][2]]
    for _, _, word, got in found[1:]:
        both = np.intersect1d(common, got, assume_unique=True)
        if 2 * both.shape[0] > common.shape[0]:
            common, kept = both, kept + [word]
    return common.astype(np.int64), kept


MAX_WORDS = 6  # words of one topic phrase read

_CLAUSE_END = re.compile(r"[?;!]|\.(?:\s|$)")
_WORD = re.compile(r"[A-Za-z][\w+-]*")


def phrase_words(text: str, start: int) -> list[str]:
    """The content words from ``start`` to the end of its clause ("making libbpf work or build on Android" →
    making, libbpf, work, build, android): the topic phrase's words, alternatives included."""
    end = _CLAUSE_END.search(text, start)
    words = _WORD.findall(text[start : end.start() if end else len(text)])
    return [w for w in dict.fromkeys(words) if w.lower() not in TOPIC_STOP and len(w) > 1][:MAX_WORDS]


def commits_mentioning(engine, words: list[str]) -> tuple[list[str], list[str]]:
    """(ids of the commits whose message holds the phrase's informative words, those words): the words and rows
    :func:`rows_holding` finds in the store's full-text index."""
    n_commits = engine.store.node_type_counts().get("commit", 0)
    rows, kept = rows_holding(engine.store.lexical_search, n_commits, words)
    if not rows.size:
        return [], kept
    heads = engine.store.node_heads(rows.tolist())
    return sorted(h[0] for h in heads.values() if h[1] == "commit"), kept
