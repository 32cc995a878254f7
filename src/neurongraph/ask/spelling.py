"""The odd typo in a question's domain words ("relases", "commmits", "autors"), read as the word meant.

Why: every shape keys on a few domain words (release, commit, author, merge, revert, branch, version …), and
one dropped or doubled letter sent a question to the wrong shape or to a search.  Only lower-case words of
six letters or more that are one edit (a letter dropped, added, changed, or two swapped) from one of those
words are read so; capitalised words (names), words with digits, ``_``, ``.``, ``/`` or ``-`` (paths,
identifiers) and words that are words of their own are left alone.  What was read differently is said in
the answer's notes.
"""

from __future__ import annotations

import re

__all__ = ["normalise", "DOMAIN_WORDS"]

DOMAIN_WORDS = frozenset(
    "release releases released version versions commit commits committed committer committers author authors "
    "authored merge merges merged revert reverts reverted branch branches changed changes contributor "
    "contributors tagged deleted removed renamed created touched removes deletes renames creates touches "
    "reverting merging committing releasing tagging branching changing recently".split()
)
# English words one edit from a domain word that must stay themselves
_WORDS_OF_THEIR_OWN = frozenset(
    "merger mergers change hanged ranged version's commits' emerged remove decently".split()
)
_WORD = re.compile(r"(?<![\w./-])[a-z]{6,}(?![\w./-])")


def _one_edit(a: str, b: str) -> bool:
    """Whether ``a`` and ``b`` differ by one letter dropped, added or changed, or two neighbours swapped."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) == len(b):
        diff = [i for i in range(len(a)) if a[i] != b[i]]
        return len(diff) == 1 or (
            len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
        )
    short, long_ = (a, b) if len(a) < len(b) else (b, a)
    i = 0
    while i < len(short) and short[i] == long_[i]:
        i += 1
    return short[i:] == long_[i + 1 :]


def _meant(word: str) -> str | None:
    if word in DOMAIN_WORDS or word in _WORDS_OF_THEIR_OWN:
        return None
    close = [w for w in DOMAIN_WORDS if _one_edit(word, w)]
    return close[0] if len(close) == 1 else None  # two candidates: not guessed between


# "issue 6898", "PR 123", "pull request no. 42": the number of an issue or PR written without its "#" (one: "issues
# 2023" is a year)
_BARE_REF = re.compile(
    r"\b(issue|bug|ticket|pr|pull\s+request|merge\s+request)\s+(?:(?:no\.?|number)\s*)?(\d{1,7})\b"
    r"(?![.,]\d|\s*(?:%|files?|lines?|commits?|times|days|weeks|months|years))",
    re.I,
)


def normalise(question: str) -> tuple[str, list[str]]:
    """The question with its misspelt domain words read as meant, and an issue or PR number written without
    its "#" read as ``#N``; a note for each one read so."""
    notes: list[str] = []

    def fix(m: re.Match) -> str:
        meant = _meant(m.group(0))
        if meant is None:
            return m.group(0)
        notes.append(f"'{m.group(0)}' read as '{meant}'")
        return meant

    def ref(m: re.Match) -> str:
        meant = f"{m.group(1)} #{m.group(2)}"
        notes.append(f"'{m.group(0)}' read as '{meant}'")
        return meant

    return _BARE_REF.sub(ref, _WORD.sub(fix, question)), notes
