"""Named-entity-like phrase candidates, found with regular expressions and a token scan (no model).

Extraction is deliberately generous; precision comes later from corpus statistics (a phrase must be
shared by >= 2 passages and stay under a document-frequency cap, see ``linker.py``) and from one cheap
signal computed here: how often a word appears lower-case versus capitalised mid-sentence. That is what
tells "May" the month/name from "may" the verb, or "Houston" at a sentence start from "However".
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from dataclasses import dataclass, field

from .normalize import STOPWORDS, normalize, strip_leading_stopwords

__all__ = ["RawCandidate", "CaseStats", "extract_raw", "resolve", "KINDS"]

KINDS = ("name", "year", "quantity", "quoted", "ref", "code")

_SENT_END = frozenset(".!?\n")
# Lower-case words allowed *inside* a capitalised span ("University of Houston", "Return of the Jedi").
_CONNECT = frozenset("of the de du des la le les von van der den del da di dos das y & for upon al el bin ibn".split())
# Capitalised everywhere but not entities: they would only create calendar hubs.
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr st""".split()
)
_UNITS = frozenset(
    """km kilometres kilometers kilometre kilometer mi miles mile m metres meters metre meter cm mm ft feet
    foot inches kg kilograms kilogram g grams lb lbs pounds tons tonnes mph kph kmh percent % mw gw kw kwh
    gb mb tb kb ms sec seconds minutes hours hz khz mhz ghz v volts acres hectares ha rpm px""".split()
)
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,80})[\"\u201d]")
_REF = re.compile(r"(?<![\w/])#\d+\b")
# Code identifiers, one pattern each with a cheap substring guard: a single alternation re-tried at
# every word start was the slowest line of extraction.
_CODE = (
    (None, re.compile(r"\b[A-Za-z][a-z0-9]*[a-z][A-Z]\w*")),  # camelCase / CamelCase
    ("_", re.compile(r"\b[A-Za-z][A-Za-z0-9]*_\w+")),  # snake_case, CONST_NAME
    ("()", re.compile(r"\b\w+(?:\.\w+)*\(\)")),  # call()  module.func()
    (
        ".",
        re.compile(r"\b[\w-]+(?:/[\w.-]+)*\.(?:py|js|ts|tsx|go|rs|java|c|h|cpp|hpp|md|json|ya?ml|toml|sql|sh|rb|kt)\b"),
    ),
)
_FILE_EXT = re.compile(r"\.(?:py|js|ts|tsx|go|rs|java|c|h|cpp|hpp|md|json|ya?ml|toml|sql|sh|rb|kt)\b")
_MAX_SPAN_CAPS = 6
_POSS = ("'s", "\u2019s")


@dataclass(frozen=True, slots=True)
class RawCandidate:
    """A phrase as found in one passage, before corpus statistics decide whether it is an entity."""

    surface: str
    kind: str
    initial: bool = False  # a capitalised span that starts a sentence (its first word may be ordinary)


@dataclass
class CaseStats:
    """Per-word counts of lower-case vs. mid-sentence capitalised uses, accumulated over the corpus."""

    lower: Counter = field(default_factory=Counter)
    cap_mid: Counter = field(default_factory=Counter)

    def looks_common(self, word: str) -> bool:
        """True when ``word`` is used lower-case more often than capitalised mid-sentence."""
        return self.lower[word] > self.cap_mid[word]

    def looks_name(self, word: str) -> bool:
        """True when there is evidence (a mid-sentence capital) and no contrary majority."""
        c = self.cap_mid[word]
        return c > 0 and c >= self.lower[word]


def _char_class(pred) -> str:
    """A regex character class of every BMP character satisfying ``pred`` (``re`` lacks ``\\p{Lu}``)."""
    ranges, run = [], None
    for c in range(0x10000):
        if pred(chr(c)):
            run = [c, c] if run is None else [run[0], c]
        elif run is not None:
            ranges.append(run)
            run = None
    if run is not None:
        ranges.append(run)
    return "".join(re.escape(chr(a)) if a == b else f"{re.escape(chr(a))}-{re.escape(chr(b))}" for a, b in ranges)


@functools.cache
def _span() -> re.Pattern:
    """A capitalised span: capitalised words, optionally joined by connector words ("Bank of England").  Built on
    first use: the upper-case class walks the BMP (~10 ms), which a command that extracts no names never pays."""
    cap_word = rf"[{_char_class(str.isupper)}](?:[\w'\u2019&.-]*\w)?"
    connect = "|".join(map(re.escape, sorted(_CONNECT)))
    return re.compile(rf"(?<![\w'\u2019&.-]){cap_word}(?:\s+(?:(?:{connect})\s+)*{cap_word})*")


_WORD = re.compile(r"\w(?:[\w'\u2019&.-]*\w)?")
_QTY = re.compile(rf"(?<![\w.,])(\d[\d,.]*)\s?(%|(?:{'|'.join(sorted(_UNITS - {'%'}))})\b)", re.IGNORECASE)
_YEARS = re.compile(r"(?<![\w.,])(1[5-9]\d\d|20\d\d)(?![\w.,]\d)")


def _is_initial(text: str, start: int) -> bool:
    """Does position ``start`` open a sentence (text start, or after . ! ? or a line break)?"""
    j = start - 1
    while j >= 0 and text[j] in " \t\"'\u201c\u2018([":
        j -= 1
    return j < 0 or text[j] in _SENT_END


def extract_raw(text: str, stats: CaseStats, kinds: frozenset[str]) -> list[RawCandidate]:
    """Candidate phrases of one text; also feeds ``stats`` with the text's word-case counts.

    Regex-driven (the scanning happens in C): a per-token Python loop was most of the link time.
    """
    out: list[RawCandidate] = []
    _count_case(text, stats)
    _names(text, stats, "name" in kinds, out)
    _patterned(text, kinds, out)
    return out


def _count_case(text: str, stats: CaseStats) -> None:
    """Lower-case and capitalised uses of every word of ``text`` (sentence starts are taken back by
    :func:`_names`)."""
    lower, cap_mid = stats.lower, stats.cap_mid
    for w, c in Counter(_WORD.findall(text)).items():
        if w[0].islower():
            lower[w.casefold()] += c
        elif w[0].isupper():
            cap_mid[w.casefold()] += c


def _names(text: str, stats: CaseStats, want_names: bool, out: list[RawCandidate]) -> None:
    """Capitalised spans (names) into ``out`` when ``want_names``; a span opening a sentence is no
    evidence of a capitalised word, so its first word's count is taken back either way."""
    for m in _span().finditer(text):
        span = m.group(0)
        initial = _is_initial(text, m.start())
        words = span.split()
        if initial:
            stats.cap_mid[words[0].casefold()] -= 1  # counted above, but a sentence start is no evidence
        if not want_names:
            continue
        # a possessive ends a name: "Martin's A Song of Ice" is two names, not one
        piece: list[str] = []
        for w in words:
            piece.append(w)
            if w.endswith(_POSS):
                piece[-1] = w[:-2]
                _emit_span(out, piece, initial)
                initial, piece = False, []
        _emit_span(out, piece, initial)


def _patterned(text: str, kinds: frozenset[str], out: list[RawCandidate]) -> None:
    """Years, quantities, quoted phrases, #refs and code identifiers (each when its kind is wanted)."""
    if "year" in kinds:
        out.extend(RawCandidate(m.group(1), "year") for m in _YEARS.finditer(text))
    if "quantity" in kinds:
        for m in _QTY.finditer(text):
            unit = m.group(2)
            out.append(RawCandidate(m.group(1) + " " + ("percent" if unit == "%" else unit), "quantity"))
    if "quoted" in kinds:
        for m in _QUOTED.finditer(text):
            q = m.group(1).strip()
            if 1 <= len(q.split()) <= 8:
                out.append(RawCandidate(q, "quoted"))
    if "ref" in kinds:
        out.extend(RawCandidate(m.group(0), "ref") for m in _REF.finditer(text))
    if "code" in kinds:
        for guard, pat in _CODE:
            if guard is None or (guard in text and (guard != "." or _FILE_EXT.search(text))):
                out.extend(RawCandidate(m.group(0), "code") for m in pat.finditer(text))


def _emit_span(out: list[RawCandidate], words: list[str], initial: bool) -> None:
    while words and words[-1].casefold() in _CONNECT:  # "... Bank of" -> "... Bank"
        words = words[:-1]
    if words and len(words) <= _MAX_SPAN_CAPS * 2:
        out.append(RawCandidate(" ".join(words), "name", initial))


def _name_readings(c: RawCandidate, stats: CaseStats) -> list[str]:
    """The span itself, plus - at a sentence start - the span without its leading ordinary words.

    "However Houston" should yield "Houston", but "New York City" must stay whole although "new" is
    mostly lower-case; both readings are proposed and corpus df plus longest-match pick the survivor.
    """
    if not c.initial:
        return [c.surface]
    words = c.surface.split(" ")
    i = 0
    while i < len(words) and (stats.looks_common(words[i].casefold()) or words[i].casefold() in _CONNECT):
        i += 1
    if i == 0:
        return [c.surface]
    rest = " ".join(words[i:])
    if len(words) == 1:
        return []
    return [c.surface, rest] if rest else [c.surface]


def resolve(raw: list[RawCandidate], stats: CaseStats, min_chars: int) -> dict[str, tuple[str, str]]:
    """Turn one passage's raw candidates into ``{key: (surface, kind)}`` using corpus case statistics.

    A sentence-initial span also proposes itself without leading ordinary words ("However Houston" ->
    "Houston"); a one-word name survives only with evidence that the corpus capitalises it mid-sentence.
    """
    found: dict[str, tuple[str, str]] = {}
    for c in raw:
        if c.kind == "name":
            for surface in _name_readings(c, stats):
                key = strip_leading_stopwords(normalize(surface))
                if " " not in key:
                    if key in STOPWORDS or key in _NOT_NAMES or not stats.looks_name(key):
                        continue
                    if len(key) < 3 and not surface.isupper():
                        continue
                if len(key) >= min_chars and key not in STOPWORDS and key not in found:
                    found[key] = (surface, c.kind)
            continue
        key = normalize(c.surface)
        if c.kind == "quoted" and " " not in key and stats.looks_common(key):
            continue  # a quoted ordinary word ("luck") is emphasis, not a name
        if len(key) >= min_chars and key not in STOPWORDS and key not in found:
            found[key] = (c.surface, c.kind)
    return found
