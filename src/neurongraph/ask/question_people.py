"""The author a question names: a recorded name, in any case, or a first name where a person stands."""

from __future__ import annotations

import re


def _authors(engine) -> list[str]:
    """Every commit author, longest names first (cached on the projection until the store changes)."""

    def load() -> list[str]:
        names: list[str] = []
        while True:
            rows = engine.cypher(
                "MATCH (c:commit) WHERE c.author IS NOT NULL "
                "RETURN DISTINCT c.author AS a ORDER BY a SKIP $s LIMIT 900",
                {"s": len(names)},
            )["rows"]
            names += [r["a"] for r in rows if isinstance(r["a"], str)]
            if len(rows) < 900:
                break
        return sorted(names, key=len, reverse=True)

    return engine.cypher_projection().memo("authors", load)


def _author(
    engine, question: str, taken: list[tuple[int, int]], several: list[tuple[str, list[str]]]
) -> tuple[str, tuple[int, int]] | None:
    """The longest author name in the question: written as recorded first, then ignoring case."""
    names = [n for n in _authors(engine) if len(n) >= 3]
    bots = [(n[: -len("[bot]")], n) for n in names if n.endswith("[bot]") and len(n) > 8]  # "dependabot"
    lowered = [(n.lower(), n) for n in names] + [(k.lower(), n) for k, n in bots]
    for text, keyed in ((question, [*names, *bots]), (question.lower(), lowered)):
        hit = _find_name(text, keyed, taken)
        if hit:
            return hit
    return _first_name(question, names, taken, several)


# "when did guido last commit", "commits by yonghong", "jukka's first commit", "did Ian": a first name where a
# person stands (a short one only as a name is written, capitalised: "did you" is no name)
_NAME = r"[A-Za-z][\w-]{3,}|[A-Z][a-z]{1,2}"
_PERSON_SLOT = re.compile(rf"\b(did|does|has|had|by|from|of)\s+({_NAME})\b|\b({_NAME})'s\b")
_SUBJECT_SLOT = frozenset({"did", "does", "has", "had"})  # "did X make": X is someone who acts
# "the last time Guido committed", "Jukka wrote": a capitalised first name right before a verb of writing commits
_ACTING = re.compile(
    r"\b([A-Z][\w-]{2,})\s+(?:(?:last|first|ever|actually|really|also)\s+)?(?:committed|commits|wrote|authored|"
    r"pushed|landed|merged|contributed|touched|changed|modified|added|removed|fixed|made|sent)\b"
)


def _first_name(
    question: str, names: list[str], taken: list[tuple[int, int]], several: list[tuple[str, list[str]]]
) -> tuple[str, tuple[int, int]] | None:
    """One author by first name alone, where the question puts a person ("did guido", "by jukka"), when
    exactly one recorded name starts with it; a first name several people have ("did Kevin": Kevin Deldycke,
    Kevin Wurster, Kevin Yap) is added to ``several``, and common words are not read."""
    slots = [
        (m.group(2) or m.group(3), m.span(2) if m.group(2) else m.span(3), m.group(1))
        for m in _PERSON_SLOT.finditer(question)
    ]
    slots += [(m.group(1), m.span(1), None) for m in _ACTING.finditer(question)]
    for word, span, before in slots:
        if any(a < span[1] and span[0] < b for a, b in taken) or word.lower() in _NOT_NAMES:
            continue
        hits = [n for n in names if n.split()[0].lower() == word.lower() and " " in n]
        if len(hits) == 1:
            return hits[0], span
        if len(hits) > 1:
            several.append((word, hits))
        elif (before or "").lower() in _SUBJECT_SLOT and word[0].isupper():
            several.append((word, []))  # "how many commits did Zorro make?": a person no author is
    return None


_NOT_NAMES = frozenset("this that these those them they what which when where there here last first most".split())


def _find_name(text: str, names, taken: list[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """The first name (longest first) found in ``text`` as whole words, outside the spans already read
    (``str.find``, no regex: a store has thousands of author names)."""
    for item in names:
        key, name = item if isinstance(item, tuple) else (item, item)
        s = text.find(key)
        while s >= 0:
            e = s + len(key)
            if (s == 0 or not text[s - 1].isalnum()) and (e == len(text) or not text[e].isalnum()):
                if not any(a < e and s < b for a, b in taken):
                    return name, (s, e)
            s = text.find(key, s + 1)
    return None


def author_taken(engine, question: str, taken: list[tuple[int, int]], notes: list[str] | None = None) -> str | None:
    """The author the question names, its words then taken (no path or intent is read from them); a first
    name several authors share, or a capitalised name where someone acts ("did Zorro") that no author has, is
    said in ``notes`` ("not understood: 'Kevin' names 3 authors …")."""
    several: list[tuple[str, list[str]]] = []
    hit = _author(engine, question, taken, several)
    if hit is None:
        for word, hits in several[:1]:
            shown = ", ".join(hits[:5]) + (" …" if len(hits) > 5 else "")
            if notes is not None and hits:
                notes.append(f"not understood: '{word}' names {len(hits)} authors ({shown}): name one in full")
            elif notes is not None:
                notes.append(f"not understood: '{word}' names no author in the store")
        return None
    taken.append(hit[1])
    return hit[0]
