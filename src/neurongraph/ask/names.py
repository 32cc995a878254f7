"""What a question names: node ids, ``#123`` refs, commit shas, file paths, quoted titles, and titles or
entities found by the query linker (linked stores).  Each mention keeps its character position, which the
translator uses to tell subject from object."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Mention", "find_mentions"]

_ID = re.compile(r"\b([a-z][a-z_]*:[^\s,;?!'\"()]+[^\s,;?!'\"().])", re.I)
_HASH = re.compile(r"(?<![\w/])#(\d{1,7})\b")
_SHA = re.compile(r"\b([0-9a-f]{7,40})\b")
_PATH = re.compile(
    r"(?<![\w:])((?:[\w.@~+-]+/)+[\w.@~+-]*\w|[\w-]+\.(?:py|pyi|c|h|md|rs|go|js|ts|toml|json|yaml|yml|txt|sh|cfg|ini))"
)
_QUOTED = re.compile(r"[\"“'‘]([^\"”'’]{3,200})[\"”'’]")
REF_TYPES = ("issue", "pr", "pull_request")


@dataclass
class Mention:
    node: str  # node id
    type: str
    phrase: str
    start: int  # position in the question
    end: int


def _lookup(store, ids: list[str]) -> dict[str, str]:
    if not ids:
        return {}
    rows = store.conn.execute(f"SELECT id, type FROM nodes WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()
    return dict(rows)


def find_mentions(engine, question: str) -> list[Mention]:
    store = engine.store
    out: list[Mention] = []
    taken: list[tuple[int, int]] = []

    def add(node: str, ntype: str, m_start: int, m_end: int, phrase: str) -> None:
        if any(s < m_end and m_start < e for s, e in taken) or any(m.node == node for m in out):
            return
        taken.append((m_start, m_end))
        out.append(Mention(node, ntype, phrase, m_start, m_end))

    for m in _ID.finditer(question):
        hit = _lookup(store, [m.group(1)])
        if hit:
            add(m.group(1), hit[m.group(1)], m.start(), m.end(), m.group(0))
    for m in _HASH.finditer(question):
        cands = [f"{t}:{m.group(1)}" for t in REF_TYPES]
        hit = _lookup(store, cands)
        for c in cands:  # an issue and a PR may share a number: the first declared type wins
            if c in hit:
                add(c, hit[c], m.start(), m.end(), m.group(0))
                break
    for m in _SHA.finditer(question):
        if m.group(1).isdigit() and not question[: m.start()].rstrip().lower().endswith("commit"):
            continue  # a number is a sha only right after the word "commit"
        rows = store.conn.execute(
            "SELECT id, type FROM nodes WHERE id >= ? AND id < ? LIMIT 2",
            (f"commit:{m.group(1)}", f"commit:{m.group(1)}\uffff"),
        ).fetchall()
        if len(rows) == 1:
            add(rows[0][0], rows[0][1], m.start(), m.end(), m.group(0))
    for m in _PATH.finditer(question):
        hit = _lookup(store, [f"file:{m.group(1)}"])
        if hit:
            add(f"file:{m.group(1)}", hit[f"file:{m.group(1)}"], m.start(), m.end(), m.group(0))
    for m in _QUOTED.finditer(question):
        phrase = m.group(1).strip()
        rows = store.conn.execute(
            "SELECT id, type FROM nodes WHERE title = ? COLLATE NOCASE LIMIT 2", (phrase,)
        ).fetchall()
        if len(rows) == 1:
            add(rows[0][0], rows[0][1], m.start(), m.end(), m.group(0))
    linker = engine._query_linker() if hasattr(engine, "_query_linker") else None
    if linker is not None:
        low = question.lower()
        pairs = linker.link_query(question)
        types = _lookup(store, [n for n, _ in pairs])
        for node, key in pairs:
            if node not in types:
                continue
            pos = low.find(key.lower())
            start = pos if pos >= 0 else len(question)
            add(node, types[node], start, start + len(key) if pos >= 0 else start, key)
    out.sort(key=lambda m: m.start)
    return out
