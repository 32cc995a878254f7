"""A topic found in whole commit messages, as ``git log -i --grep`` finds it, when no subject names it.

Why: the graph holds subjects, and a topic often lives in the body only ("Reported-by: SVACE static
analyzer", "... so that it builds on Android"); and a question's topic phrase also carries words that are
everywhere in this history ("making libbpf work or build on Android"), so the words a commit must hold are the
phrase's informative ones (retrieval/topic_terms.py: "Android").
"""

from __future__ import annotations

import re

from ..retrieval.topic_terms import rows_holding
from .timephrase import TimeWindow
from .topics import TOPIC_STOP, Topic

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


def in_messages(engine, topic: Topic, tw: TimeWindow, params: dict) -> None:
    """A topic the question says commits *mention*: its subject condition (``tw.conditions``) becomes the commits
    whose whole message holds every topic word, as ``git log -i --all-match --grep`` reads them (substrings, any
    case: ``Store.message_grep``); kept as it is when no message holds them all."""
    ids = engine.store.message_grep(topic.words)
    if not ids:
        return
    said = " and ".join(f"'{w}'" for w in topic.words)
    subject = [c for c in tw.conditions if c[1].startswith("whose subject mentions")]
    params["mention_ids"] = ids
    tw.conditions[:] = [c for c in tw.conditions if c not in subject]
    tw.conditions.append(("c.id IN $mention_ids", f"whose message mentions {said}, as git log -i --grep finds them"))
