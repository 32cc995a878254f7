"""Which texts are CJK (Japanese, Chinese, Korean): the switch between the English and the multilingual model.

The English model (all-MiniLM-L6-v2) reads Japanese badly (27% of its Japanese tokens are ``[UNK]``) and
Korean worse (split into single letters), so a text written mostly in CJK script is embedded by the
multilingual model alone (:mod:`.multilingual`).  "Mostly" is measured on letters, not bytes: a Japanese
design note that names a few English identifiers is still Japanese, an English commit message that quotes
one Japanese word is still English.  One CJK character carries about as much as a short English word, so
CJK characters count ``CJK_CHAR_WEIGHT`` letters each.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from ..store.lexical import CJK_CHARS

__all__ = ["cjk_share", "is_cjk", "cjk_mask", "has_cjk", "CJK_SHARE_MIN", "CJK_CHAR_WEIGHT", "WIDEN_MIN_CHARS"]

CJK_CHAR_WEIGHT = 3.0  # a kanji/kana/hangul character ~ one short English word (~3 letters of weight)
CJK_SHARE_MIN = 0.5  # a text is CJK when its weighted CJK letters are at least half of its letters
WIDEN_MIN_CHARS = 12  # CJK characters a text needs to count as CJK writing for has_cjk (a short sentence)

_CJK = re.compile(f"[{CJK_CHARS}]")
_LETTER = re.compile(rf"[^\W\d_{CJK_CHARS}]")


def cjk_share(text: str) -> float:
    """Weighted share of CJK characters among the letters of ``text`` (0 for a text without letters)."""
    n_cjk = len(_CJK.findall(text))
    if n_cjk == 0:
        return 0.0
    cjk = CJK_CHAR_WEIGHT * n_cjk
    return cjk / (cjk + len(_LETTER.findall(text)))


def is_cjk(text: str) -> bool:
    """True when ``text`` is written mostly in CJK script (then the multilingual model embeds it alone)."""
    return _CJK.search(text) is not None and cjk_share(text) >= CJK_SHARE_MIN


def cjk_mask(texts: Sequence[str]) -> np.ndarray:
    """:func:`is_cjk` of each text, as a bool array."""
    return np.fromiter((is_cjk(t) for t in texts), bool, len(texts))


def has_cjk(texts: Sequence[str], min_chars: int = WIDEN_MIN_CHARS) -> bool:
    """Whether any of ``texts`` is a CJK text with at least ``min_chars`` CJK characters (one regex search
    per text for an English batch).  The floor keeps a name from counting as CJK writing: an English history
    whose authors include 谭九鼎 holds no Japanese or Chinese text to search."""
    return any(
        _CJK.search(t) is not None and len(_CJK.findall(t)) >= min_chars and cjk_share(t) >= CJK_SHARE_MIN
        for t in texts
    )
