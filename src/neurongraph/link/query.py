"""Query-side linking: which titles, aliases, refs and entity names a question mentions.

The rule lives here once and runs over a few lookup tables.  Two holders of those tables use it:
the ingest-time :class:`~neurongraph.link.linker.Linker` (tables built while fitting the corpus) and
:class:`QueryTables` (the same tables, exported to plain arrays and reloaded from an engine snapshot),
so a large linked store answers its first query without refitting the whole corpus.
"""

from __future__ import annotations

import re

import numpy as np

from .normalize import drop_nested, find_keys, normalize, pad

__all__ = ["QuerySide", "QueryTables", "capitalised_mid", "automaton"]

_WORD_TOK = re.compile(r"[^\W\d_][\w'\u2019-]*")


def capitalised_mid(text: str) -> set[str]:
    """Normalised words the text writes with a capital where a sentence does not start.

    A question that writes "the Cotula" names something, even if the corpus mostly uses the word
    lower-case: the query's own casing is evidence the corpus statistics cannot overrule."""
    out: set[str] = set()
    for sentence in re.split(r"[.!?:;\n]+", text):
        for w in _WORD_TOK.findall(sentence)[1:]:
            if w[0].isupper():
                out.add(normalize(w))
    return out


def automaton(keys):
    import ahocorasick

    a = ahocorasick.Automaton()
    for k in keys:
        a.add_word(pad(k), (len(k), k))
    if len(a):
        a.make_automaton()
    return a


def scan(auto, text: str, longest: bool) -> list[tuple[int, int, str]]:
    if not len(auto):
        return []
    return [(s, e, v[1]) for s, e, v in find_keys(auto, text, longest)]


class QuerySide:
    """``link_query`` over ``_title_auto`` / ``_entity_auto`` and three lookups a holder provides."""

    _title_auto: object
    _entity_auto: object

    def _title_targets_for(self, key: str, named: set[str]) -> list[str]:
        """Nodes a title key names in a query (empty when the key is too common to mean them)."""
        raise NotImplementedError

    def _entity_target(self, key: str) -> str:
        raise NotImplementedError

    def link_query(self, text: str) -> list[tuple[str, str]]:
        """``(node_id, matched_phrase)`` for titles, aliases, refs and entities mentioned in ``text``.

        Same normalisation, automata and df caps as ingest; ambiguous titles return every target.
        Cost is one automaton pass over the query, independent of corpus size.
        """
        q = normalize(text)
        out: list[tuple[str, str]] = []
        seen: set[str] = set()
        named = capitalised_mid(text)  # the query's own capitals outvote corpus case statistics
        spans = [(s, e, k, "t") for s, e, k in scan(self._title_auto, q, longest=False)]
        spans += [(s, e, k, "e") for s, e, k in scan(self._entity_auto, q, longest=False)]
        spans.sort(key=lambda t: (t[0], -t[1]))
        for _, _, key, src in drop_nested(spans):
            targets = self._title_targets_for(key, named) if src == "t" else [self._entity_target(key)]
            for t in targets:
                if t not in seen:
                    seen.add(t)
                    out.append((t, key))
        return out


def _pack(strings: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """Strings as one UTF-8 byte array plus offsets (no pickle, no fixed-width padding)."""
    enc = [s.encode("utf-8") for s in strings]
    offsets = np.zeros(len(enc) + 1, np.int64)
    np.cumsum([len(b) for b in enc], out=offsets[1:])
    return np.frombuffer(b"".join(enc), np.uint8).copy(), offsets


def _unpack(blob: np.ndarray, offsets: np.ndarray) -> list[str]:
    raw = blob.tobytes()
    return [raw[a:b].decode("utf-8") for a, b in zip(offsets[:-1].tolist(), offsets[1:].tolist())]


class QueryTables(QuerySide):
    """The query side of a fitted linker as plain tables: what ``link_query`` needs and nothing else.

    Per title key: kind ("mention" | "ref"), target node ids, and whether it is *blocked* as a mention
    in general (found in more passages than the df cap) or *common* (a one-word title the corpus writes
    lower-case; a query may still name it with a capital).  Per entity key: its entity node id."""

    def __init__(self, title_keys, kinds, targets, blocked, common, entity_keys, entity_ids):
        self._title = {k: (kd, tg, bl, cm) for k, kd, tg, bl, cm in zip(title_keys, kinds, targets, blocked, common)}
        self._entity = dict(zip(entity_keys, entity_ids))
        self._title_auto = automaton(self._title)
        self._entity_auto = automaton(self._entity)

    def _title_targets_for(self, key: str, named: set[str]) -> list[str]:
        kind, targets, blocked, common = self._title[key]
        if kind == "mention" and (blocked or (common and key not in named)):
            return []
        return targets

    def _entity_target(self, key: str) -> str:
        return self._entity[key]

    def to_arrays(self) -> dict[str, np.ndarray]:
        keys = list(self._title)
        rows = [self._title[k] for k in keys]
        flat = [t for _, tg, _, _ in rows for t in tg]
        out = {}
        out["title_keys"], out["title_keys_off"] = _pack(keys)
        out["kinds"], out["kinds_off"] = _pack([r[0] for r in rows])
        out["targets"], out["targets_off"] = _pack(flat)
        out["n_targets"] = np.array([len(r[1]) for r in rows], np.int64)
        out["blocked"] = np.array([r[2] for r in rows], bool)
        out["common"] = np.array([r[3] for r in rows], bool)
        out["entity_keys"], out["entity_keys_off"] = _pack(list(self._entity))
        out["entity_ids"], out["entity_ids_off"] = _pack(list(self._entity.values()))
        return out

    @classmethod
    def from_arrays(cls, a: dict[str, np.ndarray]) -> QueryTables:
        flat = _unpack(a["targets"], a["targets_off"])
        ends = np.cumsum(a["n_targets"]).tolist()
        starts = [0] + ends[:-1]
        return cls(
            _unpack(a["title_keys"], a["title_keys_off"]),
            _unpack(a["kinds"], a["kinds_off"]),
            [flat[s:e] for s, e in zip(starts, ends)],
            a["blocked"].tolist(),
            a["common"].tolist(),
            _unpack(a["entity_keys"], a["entity_keys_off"]),
            _unpack(a["entity_ids"], a["entity_ids_off"]),
        )
