"""Text normalisation shared by every linker.

One function decides what "the same phrase" means, so a title, an alias, a passage and a query
are all compared in the same space: accents stripped, case folded, punctuation turned into single
spaces. ``#`` and ``+`` survive because they carry meaning in references (``#12``) and names (``C++``).
Word boundaries then reduce to "a space or the end of the string" (see :func:`find_keys`).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

__all__ = ["normalize", "strip_leading_stopwords", "find_keys", "pad", "drop_nested", "STOPWORDS", "REF_RE"]

_NON_WORD = re.compile(r"[^\w#+]+")
_POSSESSIVE = re.compile(r"['\u2019]s\b")
REF_RE = re.compile(r"^#\d+$")
"""A normalised key that is a ``#123``-style reference."""

# Small closed-class list: function words, pronouns and frequent sentence openers. A title or entity
# that is only these words carries no identity of its own.
STOPWORDS = frozenset(
    """
    a about above after again against all also am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further had has
    have having he her here hers herself him himself his how however i if in into is it its itself just
    me more most my myself no nor not now of off on once only or other our ours ourselves out over own
    same she should so some such than that the their theirs them themselves then there these they this
    those through to too under until up very was we were what when where which while who whom why will
    with would you your yours yourself yourselves one two three first second since though
    although despite later many much several another among within without upon via per according
    today yesterday tomorrow yes s t d ll m re ve
    """.split()
)


def _strip_accents(s: str) -> str:
    # NFKD splits "é" into "e" + combining accent; dropping the combining marks folds "Pokémon" to "Pokemon".
    decomposed = unicodedata.normalize("NFKD", s)
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def normalize(s: str) -> str:
    """Fold ``s`` to the comparison space: no accents, casefolded, punctuation -> single spaces."""
    if not s.isascii():
        s = _strip_accents(s)
    s = s.casefold()
    # Drop the possessive so "Houston's" matches "Houston" (after the apostrophe becomes a space it
    # would otherwise leave a stray "s" token, which is harmless but noisy in entity keys).
    s = _POSSESSIVE.sub("", s)
    return " ".join(_NON_WORD.sub(" ", s).split())


def strip_leading_stopwords(key: str) -> str:
    """Remove leading function words ("the beatles" -> "beatles") so entity keys do not split on them."""
    toks = key.split(" ")
    i = 0
    while i < len(toks) - 1 and toks[i] in STOPWORDS:
        i += 1
    return " ".join(toks[i:])


def find_keys(automaton, text: str, longest: bool = True) -> list[tuple[int, int, Any]]:
    """Automaton keys found in normalised ``text`` on word boundaries.

    The automaton must hold keys padded as ``" key "`` with values ``(len(key), key, ...)`` (see
    :func:`pad`); scanning ``" " + text + " "`` then enforces word boundaries inside the C matcher
    instead of a Python check per hit. Returns ``(start, end_exclusive, value)`` in ``text``
    coordinates, sorted by start. With ``longest`` a match nested inside a longer one ("york" inside
    "new york") is dropped: the longer phrase is the more specific reading.
    """
    spans = [(end - v[0] - 1, end - 1, v) for end, v in automaton.iter(" " + text + " ")]
    spans.sort(key=lambda t: (t[0], -t[1]))
    return drop_nested(spans) if longest else spans


def pad(key: str) -> str:
    """The automaton form of a normalised key (see :func:`find_keys`)."""
    return " " + key + " "


def drop_nested(spans: list) -> list:
    """Keep spans not contained in an earlier, longer one; ``spans`` sorted by (start, -end)."""
    if len(spans) < 2:
        return spans
    kept = []
    max_end = -1
    for sp in spans:
        if sp[1] <= max_end:
            continue
        kept.append(sp)
        max_end = sp[1]
    return kept
