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


# a trailer a commit carries: "have a Fixes: tag", "carry a Fixes line", "with a Closes: trailer", "Fixes:";
# the people trailers ("Reviewed-by") only where commits are asked for, not who (trailer_shapes.py ranks those)
_KEY = r"(fixes|closes|resolves|link|bug|cc|[a-z]+(?:-[a-z]+)*-by)"
_TRAILER = re.compile(rf"\b{_KEY}(?::\s*|\s+)(?:tags?|trailers?|lines?)\b|\b{_KEY}:(?=\s|$|[?,.!])", re.I)
_COMMITS_ASKED = re.compile(r"\b(?:commits?|patch(?:es)?|changes?)\b", re.I)
_WHO = re.compile(r"\bwho(?:se|m)?\b", re.I)


def trailer_spans(engine, text: str, tw: TimeWindow, params: dict) -> list[tuple[int, int]]:
    """The spans of the trailers the question says commits carry; each becomes the condition that the message
    holds that trailer's key ("fixes:", as ``git log -i --grep='Fixes:'`` finds it: ``Store.message_grep``)."""
    spans = []
    for m in _TRAILER.finditer(text):
        key = (m.group(1) or m.group(2)).lower()
        if key.endswith("-by") and (_WHO.search(text) or not _COMMITS_ASKED.search(text)):
            continue
        k = sum(1 for p in params if p.startswith("trailer_ids"))
        params[f"trailer_ids{k}"] = engine.store.message_grep([key + ":"])
        name = (m.group(1) or m.group(2)).capitalize() if not key.endswith("-by") else m.group(1) or m.group(2)
        tw.conditions.append((f"c.id IN $trailer_ids{k}", f"whose message carries a {name}: trailer"))
        spans.append(m.span())
    return spans
