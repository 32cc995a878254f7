"""What a question names: node ids, ``#123`` refs, commit shas, file paths, quoted titles, and titles or
entities found by the query linker (linked stores).  Each mention keeps its character position, which the
translator uses to tell subject from object."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import NeuronGraphError
from ..store.base import Store

__all__ = ["Mention", "find_mentions", "unknown_shas"]

_ID = re.compile(r"\b([a-z][a-z_]*:[^\s,;?!'\"()]+[^\s,;?!'\"().])", re.I)
_HASH = re.compile(r"(?<![\w/])#(\d{1,7})\b")
_SHA = re.compile(r"\b([0-9a-f]{7,40})\b")
_PATH = re.compile(
    r"(?<![\w:])((?:[\w.@~+-]+/)+[\w.@~+-]*\w|[\w-]+\.(?:py|pyi|c|h|md|rs|go|js|ts|toml|json|yaml|yml|txt|sh|cfg|ini))"
)
REF_TYPES = ("issue", "pr", "pull_request")


@dataclass
class Mention:
    """A node the question names, where it names it: ask turns these into query parameters."""

    node: str  # node id
    type: str
    phrase: str
    start: int  # position in the question
    end: int


class _Found:
    """Mentions found so far: no two overlap in the question, no node is mentioned twice."""

    def __init__(self) -> None:
        self.out: list[Mention] = []
        self.taken: list[tuple[int, int]] = []

    def add(self, node: str, ntype: str, m_start: int, m_end: int, phrase: str) -> None:
        if any(s < m_end and m_start < e for s, e in self.taken) or any(m.node == node for m in self.out):
            return
        self.taken.append((m_start, m_end))
        self.out.append(Mention(node, ntype, phrase, m_start, m_end))


def _ids(store: Store, question: str, found: _Found) -> None:
    """Node ids written out (``issue:12``, ``file:src/x.py``)."""
    for m in _ID.finditer(question):
        hit = store.node_types([m.group(1)])
        if hit:
            found.add(m.group(1), hit[m.group(1)], m.start(), m.end(), m.group(0))


def _refs(store: Store, question: str, found: _Found) -> None:
    """``#123``: an issue or a PR; when both exist the first declared type wins."""
    for m in _HASH.finditer(question):
        cands = [f"{t}:{m.group(1)}" for t in REF_TYPES]
        hit = store.node_types(cands)
        for c in cands:
            if c in hit:
                found.add(c, hit[c], m.start(), m.end(), m.group(0))
                break


def _shas(store: Store, question: str, found: _Found) -> None:
    """A commit sha prefix naming exactly one commit (a number only right after the word "commit")."""
    for m in _SHA.finditer(question):
        before = question[: m.start()].rstrip().lower()
        # a number is a sha only right after "commit", or when it is long (8+ digits: no PR or issue number)
        if m.group(1).isdigit() and not before.endswith("commit") and (len(m.group(1)) < 8 or before.endswith("#")):
            continue
        rows = store.ids_with_prefix(f"commit:{m.group(1)}", 2)
        if len(rows) == 1:
            found.add(rows[0][0], rows[0][1], m.start(), m.end(), m.group(0))


_HEXY = re.compile(r"(?<![\w./:#-])([0-9a-f]{7,40})(?![\w/-])")


def unknown_shas(store: Store, question: str, mentions: list[Mention]) -> list[str]:
    """Words written like a commit sha (7 to 40 hex digits, letters and digits both) that name no commit of the
    store: a kernel sha a mirror's ``Fixes:`` trailer cites, a typo.  Answering without them answers about
    something else ("396 commits with a Fixes: trailer" for "is 90d76d3ececc here?")."""
    named = [(m.start, m.end) for m in mentions]
    out = []
    for m in _HEXY.finditer(question):
        word = m.group(1)
        if word.isdigit() or word.isalpha() or any(a <= m.start() < b for a, b in named):
            continue
        if not store.ids_with_prefix(f"commit:{word}", 1):
            out.append(word)
    return out


def _paths(store: Store, question: str, found: _Found) -> None:
    """File paths with a ``file:<path>`` node."""
    for m in _PATH.finditer(question):
        hit = store.node_types([f"file:{m.group(1)}"])
        if hit:
            found.add(f"file:{m.group(1)}", hit[f"file:{m.group(1)}"], m.start(), m.end(), m.group(0))


_OPEN_CLOSE = {'"': '"”', "“": '"”', "'": "'’", "‘": "'’"}


def _quoted(store: Store, question: str, found: _Found, by_suffix=None) -> None:
    """A quoted phrase that is exactly one node's title (ASCII case ignored), widest quotes first, so a title
    that itself holds quotes (``"Keep the "raw" flag (#2222)"``) is read whole, before ``#2222``; else, with
    ``by_suffix``, the one commit whose subject is the phrase after a ``subsystem:`` prefix ("Embed and verify
    the metadata hash" for ``libbpf: Embed and verify the metadata hash``)."""
    marks = [(i, ch) for i, ch in enumerate(question) if ch in "\"“”'‘’"]
    pairs = [
        (i, j)
        for a, (i, ch) in enumerate(marks)
        if ch in _OPEN_CLOSE
        for j, ch2 in marks[a + 1 :]
        if ch2 in _OPEN_CLOSE[ch] and 3 <= j - i - 1 <= 300
    ]
    for i, j in sorted(pairs, key=lambda p: p[0] - p[1])[:40]:
        if any(s < j + 1 and i < e for s, e in found.taken):
            continue
        phrase = question[i + 1 : j].strip()
        rows = store.nodes_titled(phrase, 2)
        if not rows and by_suffix is not None and len(phrase) >= 12:
            rows = by_suffix(phrase)
        if len(rows) == 1:
            found.add(rows[0][0], rows[0][1], i, j + 1, question[i : j + 1])


def _linked(store: Store, linker, question: str, found: _Found) -> None:
    """Titles, aliases and entity names the query linker finds (linked stores only)."""
    low = question.lower()
    pairs = linker.link_query(question)
    types = store.node_types([n for n, _ in pairs])
    for node, key in pairs:
        if node not in types:
            continue
        pos = low.find(key.lower())
        start = pos if pos >= 0 else len(question)
        found.add(node, types[node], start, start + len(key) if pos >= 0 else start, key)


def _subject_suffix(engine, phrase: str) -> list[tuple[str, str]]:
    """(id, type) of up to two commits whose subject ends with ``: phrase`` (a subsystem prefix dropped)."""
    query = "MATCH (n:commit) WHERE n.title ENDS WITH $s RETURN n.id AS id LIMIT 2"
    # else the one subject that holds the phrase, code quotes aside ('default=True as a sentinel' for "Use
    # `default=True` as a sentinel …"), not counting the reverts that repeat it
    within = (
        "MATCH (n:commit) WHERE NOT n.title STARTS WITH 'Revert' AND replace(toLower(n.title), '`', '') CONTAINS $s "
        "RETURN n.id AS id LIMIT 2"
    )
    try:
        rows = engine.cypher(query, {"s": ": " + phrase})["rows"]
        if not rows and len(phrase.split()) >= 4:
            rows = engine.cypher(within, {"s": phrase.replace("`", "").lower()})["rows"]
    except NeuronGraphError:  # the graph is down: the phrase names nothing here, and the search still answers
        return []
    return [(r["id"], "commit") for r in rows]


def find_mentions(engine, question: str) -> list[Mention]:
    """Every mention in the question, in order of position; earlier kinds win an overlap."""
    store: Store = engine.store
    found = _Found()
    _quoted(store, question, found, lambda phrase: _subject_suffix(engine, phrase))
    for step in (_ids, _refs, _shas, _paths):
        step(store, question, found)
    linker = engine.query_linker.get()
    if linker is not None:
        _linked(store, linker, question, found)
    found.out.sort(key=lambda m: m.start)
    return found.out
