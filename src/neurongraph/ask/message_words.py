"""A topic found in whole commit messages, as ``git log -i --grep`` finds it, when no subject names it.

Why: the graph holds subjects, and a topic often lives in the body only ("Reported-by: SVACE static
analyzer", "... so that it builds on Android").  A question's topic phrase also carries words that are
everywhere in this history ("making libbpf work or build on Android": *libbpf*, *work*, *build*); requiring
them all finds nothing, and requiring any of them finds everything.  So the words a commit must hold are the
phrase's *informative* ones: those at most :data:`GENERIC_SHARE` of the history's commits use (counted in the
store's full-text index, the same tokens and stems as search): the rarest, and the others its commits share.
"""

from __future__ import annotations

import re

from ..index.tokenize import query_terms
from .topics import TOPIC_STOP

GENERIC_SHARE = 0.05  # a word in more than this share of the commits names the history, not a topic
MIN_GENERIC = 20  # ... but a small history's rare words stay words (5% of 200 commits would be 10)
MAX_WORDS = 6  # words of one topic phrase read

_CLAUSE_END = re.compile(r"[?;!]|\.(?:\s|$)")
_WORD = re.compile(r"[A-Za-z][\w+-]*")


def phrase_words(text: str, start: int) -> list[str]:
    """The content words from ``start`` to the end of its clause ("making libbpf work or build on Android" →
    making, libbpf, work, build, android): the topic phrase's words, alternatives included."""
    end = _CLAUSE_END.search(text, start)
    words = _WORD.findall(text[start : end.start() if end else len(text)])
    return [w for w in dict.fromkeys(words) if w.lower() not in TOPIC_STOP and len(w) > 1][:MAX_WORDS]


def _named(word: str) -> bool:
    """A word written as a name inside a sentence ("Android", "SVACE", "TypeForm"): the topic, before the
    asker's own verbs and nouns however rare those are in this history."""
    return any(ch.isupper() for ch in word)


def commits_mentioning(engine, words: list[str]) -> tuple[list[str], list[str]]:
    """(ids of the commits whose message holds the phrase's first informative word — a name as written,
    else the rarest — and every other one that
    keeps more than half of them, those words); ``([], [])`` when no word is informative.  Why not all of
    them: a question's own wording ("the fixes that came from the SVACE reports") adds words the commits need
    not say ("Found by the SVACE static analyzer"); a word that the topic's commits mostly share is the
    topic's, one that would drop most of them is the asker's."""
    n_commits = engine.store.node_type_counts().get("commit", 0)
    cap = max(MIN_GENERIC, int(n_commits * GENERIC_SHARE))
    found: list[tuple[bool, int, str, set[int]]] = []
    for word in words:
        terms = query_terms(word.lower())
        if len(terms) != 1:
            continue  # a word the index splits (or drops) is not one token to look up
        nodes, _ = engine.store.lexical_search(terms, cap + 1)
        if 0 < nodes.shape[0] <= cap:
            found.append((not _named(word), nodes.shape[0], word.lower(), set(nodes.tolist())))
    if not found:
        return [], []
    found.sort(key=lambda f: f[:2])  # names first, then the rarest
    common, kept = found[0][3], [found[0][2]]
    for _, _, word, got in found[1:]:
        if 2 * len(common & got) > len(common):
            common, kept = common & got, kept + [word]
    heads = engine.store.node_heads(sorted(common))
    return sorted(h[0] for h in heads.values() if h[1] == "commit"), kept
