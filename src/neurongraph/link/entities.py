"""Named-entity-like phrase candidates, found with regular expressions and a token scan (no model).

Extraction is deliberately generous; precision comes later from corpus statistics (a phrase must be
shared by >= 2 passages and stay under a document-frequency cap, see ``linker.py``) and from one cheap
signal computed here: how often a word appears lower-case versus capitalised mid-sentence. That is what
tells "May" the month/name from "may" the verb, or "Houston" at a sentence start from "However".
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from .normalize import STOPWORDS, normalize, strip_leading_stopwords

__all__ = ["RawCandidate", "CaseStats", "extract_raw", "resolve", "KINDS"]

KINDS = ("name", "year", "quantity", "quoted", "ref", "code")

_TOKEN = re.compile(r"\w(?:[\w'\u2019&.-]*\w)?|[^\w\s]")
_SENT_END = frozenset(".!?\n")
# Lower-case words allowed *inside* a capitalised span ("University of Houston", "Return of the Jedi").
_CONNECT = frozenset("of the de du des la le les von van der den del da di dos das y & for upon al el bin ibn".split())
# Capitalised everywhere but not entities: they would only create calendar hubs.
_NOT_NAMES = frozenset(
    """january february march april may june july august september october november december
    monday tuesday wednesday thursday friday saturday sunday mr mrs ms dr st""".split()
)
_YEAR = re.compile(r"^(1[5-9]\d\d|20\d\d)$")
_NUMBER = re.compile(r"^\d[\d,.]*$")
_UNITS = frozenset(
    """km kilometres kilometers kilometre kilometer mi miles mile m metres meters metre meter cm mm ft feet
    foot inches kg kilograms kilogram g grams lb lbs pounds tons tonnes mph kph kmh percent % mw gw kw kwh
    gb mb tb kb ms sec seconds minutes hours hz khz mhz ghz v volts acres hectares ha rpm px""".split()
)
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201c\u201d\n]{2,80})[\"\u201d]")
_REF = re.compile(r"(?<![\w/])#\d+\b")
_CODE = re.compile(
    r"\b[A-Za-z]\w*[a-z][A-Z]\w*\b"            # camelCase / CamelCase
    r"|\b[A-Za-z][A-Za-z0-9]*_\w+\b"          # snake_case, CONST_NAME
    r"|\b\w+(?:\.\w+)*\(\)"                    # call()  module.func()
    r"|\b[\w-]+(?:/[\w.-]+)*\.(?:py|js|ts|tsx|go|rs|java|c|h|cpp|hpp|md|json|ya?ml|toml|sql|sh|rb|kt)\b"
)
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


def _is_cap(tok: str) -> bool:
    return tok[0].isupper()


def extract_raw(text: str, stats: CaseStats, kinds: frozenset[str]) -> list[RawCandidate]:
    """Candidate phrases of one text; also feeds ``stats`` with the text's word-case counts."""
    out: list[RawCandidate] = []
    toks = _TOKEN.findall(text)
    n = len(toks)
    want_names, want_years, want_qty = "name" in kinds, "year" in kinds, "quantity" in kinds
    lower, cap_mid = stats.lower, stats.cap_mid
    i = 0
    prev = "."
    while i < n:
        tok = toks[i]
        c0 = tok[0]
        if c0.isupper():
            initial = prev in _SENT_END
            last_cap = i
            k = i + 1
            if not initial:
                cap_mid[tok.casefold()] += 1
            while k < n:
                t = toks[k]
                if t[0].isupper():
                    cap_mid[t.casefold()] += 1
                    last_cap = k
                    if t.endswith(_POSS):  # "Martin's A Song of Ice" is two names, not one
                        break
                elif t.casefold() not in _CONNECT:
                    break
                k += 1
            if want_names and last_cap - i < _MAX_SPAN_CAPS * 2:
                out.append(RawCandidate(" ".join(toks[i : last_cap + 1]), "name", initial))
            prev = toks[last_cap]
            i = last_cap + 1
            continue
        if c0.islower():
            lower[tok.casefold()] += 1
        elif c0.isdigit():
            if want_years and _YEAR.match(tok):
                out.append(RawCandidate(tok, "year"))
            elif want_qty and _NUMBER.match(tok) and i + 1 < n and toks[i + 1].casefold() in _UNITS:
                unit = toks[i + 1]
                out.append(RawCandidate(tok + " " + ("percent" if unit == "%" else unit), "quantity"))
        prev = tok
        i += 1
    if "quoted" in kinds:
        for m in _QUOTED.finditer(text):
            q = m.group(1).strip()
            if 1 <= len(q.split()) <= 8:
                out.append(RawCandidate(q, "quoted"))
    if "ref" in kinds:
        out.extend(RawCandidate(m.group(0), "ref") for m in _REF.finditer(text))
    if "code" in kinds:
        out.extend(RawCandidate(m.group(0), "code") for m in _CODE.finditer(text))
    return out


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
