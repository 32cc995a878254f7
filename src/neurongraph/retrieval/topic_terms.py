"""The informative words of a phrase in this history, and the rows that hold them (a grep by the full-text index).

Why: a question's words mix the topic ("ParamSpec", "SVACE", "Android") with words that are everywhere in a
history ("mypy", "libbpf", "work", "support").  Requiring them all finds nothing; requiring any finds
everything.  The topic's words are those at most :data:`GENERIC_SHARE` of the rows use, counted in the
full-text index (the same tokens and stems as search): a word written as a name comes first ("Android" over
"making"), else the rarest, and each further word joins when most of the rows found so far hold it too (the
topic's own words co-occur; the asker's phrasing would drop most of them: "the fixes that came from the SVACE
reports" where the commits say "Found by the SVACE static analyzer").  Used by ask's topic lists
(ask/message_words.py) and search's "when did X start" (retrieval/origin.py).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..index.tokenize import query_terms

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
