"""References that developers write by hand, read with a few general regular expressions.

One module for every adapter (git, GitHub, Markdown) and for the history benchmark,
so "what counts as a reference" is decided once.  Each finder returns the matched
text as evidence.  Nothing here resolves a reference: adapters do that against
what they know (commit shas, pull-request numbers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Ref",
    "issue_refs",
    "sha_refs",
    "fixes_trailers",
    "revert_refs",
    "reverted_prs",
    "cherry_picks",
    "trailers",
    "follow_up_refs",
    "closing_refs",
    "duplicate_refs",
    "squash_pr",
    "merge_pr",
    "strip_refs",
    "FOLLOW_UP_PHRASES",
]


@dataclass(frozen=True)
class Ref:
    """A reference found in text (``#N`` or a sha prefix) with the words that matched it."""

    kind: str  # "issue" (#N) or "sha"
    value: str  # the number as a string, or the (lower-case) sha prefix
    evidence: str  # the matched text
    subject: str | None = None  # a quoted subject next to the reference ("Fixes: <sha> ("subject")")


# #N, owner/repo#N, GH-N, and GitHub issue/pull URLs; not HTML entities (&#123;) nor URL anchors (page#12)
_ISSUE = re.compile(
    r"(?:(?<![\w&/#])(?:[\w.-]+/[\w.-]+)?#|\bGH-|github\.com/[\w.-]+/[\w.-]+/(?:issues|pull)/)(\d{1,7})\b",
    re.IGNORECASE,
)
# a commit id: 7-40 hex digits with at least one digit and one letter (plain numbers and words are not shas)
_SHA = re.compile(r"(?<![\w/.-])([0-9a-f]{7,40})(?![\w-])", re.IGNORECASE)
_FIXES = re.compile(
    r"^[ \t]*Fixes:[ \t]*(?:commit[ \t]+)?([0-9a-f]{7,40})\b[^\n(]*(?:\([ \t]*[\"“](.+?)[\"”][ \t]*\))?",
    re.IGNORECASE | re.MULTILINE,
)
_REVERT = re.compile(r"\bThis reverts commit ([0-9a-f]{7,40})\b", re.IGNORECASE)
# ``Revert "X"``, also as a GitHub squash or merge subject: ``Revert "X" (#N)``
_REVERT_SUBJECT = re.compile(r"^Revert [\"“](.+)[\"”](?:\s*\(#\d+\))?\s*$")
_TRAILER = re.compile(
    r"^[ \t]*(Reviewed|Acked|Tested|Reported|Suggested|Co-authored|Signed-off)-by:[ \t]*(.+?)[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
_CHERRY = re.compile(r"\(cherry[ -]picked from commit ([0-9a-f]{7,40})\)", re.IGNORECASE)
# GitHub's revert pull request body: ``Reverts owner/repo#N`` (or ``Reverts #N``): the PR it takes back
_REVERTS_PR = re.compile(r"^[ \t]*Reverts?:?[ \t]+((?:[\w.-]+/[\w.-]+)?#\d+)\b", re.IGNORECASE | re.MULTILINE)
_REVERT_COMMIT_SUBJECT = re.compile(r"^Revert(?:s|ed)?\s+commit\s+([0-9a-f]{7,40})\b", re.IGNORECASE)

# phrases that name the earlier change a commit repairs or continues; each must be followed (within a
# short clause) by a #N or a sha.  General English of change logs, not one project's wording.
FOLLOW_UP_PHRASES = (
    r"follow(?:ing|ed)?[- ]?ups?\s+(?:to|of|for|on|after)",
    r"regressions?\s+(?:from|in|introduced\s+(?:in|by)|caused\s+by)",
    r"introduced\s+(?:in|by)",
    r"broken?\s+(?:in|by)",
    r"caused\s+by",
    r"reverts?",
    r"regressed\s+(?:in|by)",
)
_FOLLOW = re.compile(r"\b(" + "|".join(FOLLOW_UP_PHRASES) + r")\b([^.\n;]{0,60})", re.IGNORECASE)
_CLOSING = re.compile(
    r"\b(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?)\b:?\s+((?:(?:[\w.-]+/[\w.-]+)?#\d+|GH-\d+|https?://github\.com/\S+/(?:issues|pull)/\d+)"
    r"(?:\s*(?:,|and|&)\s*(?:(?:[\w.-]+/[\w.-]+)?#\d+|GH-\d+))*)",
    re.IGNORECASE,
)
_DUPLICATE = re.compile(
    r"\bduplicate\s+of\s+((?:[\w.-]+/[\w.-]+)?#\d+|https?://github\.com/\S+/(?:issues|pull)/\d+)", re.IGNORECASE
)
_SQUASH = re.compile(r"\s*\(#(\d+)\)\s*$")
_MERGE = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_BORS = re.compile(r"^(?:Auto merge of|Merge) #(\d+)\b(?: - ([^,\s]+))?")


def _is_sha(s: str) -> bool:
    return any(c.isdigit() for c in s) and any(c.isalpha() for c in s)


def issue_refs(text: str, repo: str | None = None) -> list[Ref]:
    """Every ``#N`` / ``owner/repo#N`` / ``GH-N`` / GitHub issue or pull URL, in order.

    With ``repo`` (a repository name, optionally ``owner/name``), a reference qualified with
    another repository (``other/tool#12``, a URL into another repository) is left out: its
    number means something else."""
    out = []
    for m in _ISSUE.finditer(text):
        if repo is not None and not _same_repo(m.group(0), repo):
            continue
        out.append(Ref("issue", str(int(m.group(1))), m.group(0)))
    return out


_QUALIFIER = re.compile(r"([\w.-]+)/([\w.-]+)(?:#|/(?:issues|pull)/)")


def _same_repo(evidence: str, repo: str) -> bool:
    q = _QUALIFIER.search(evidence)
    if q is None:
        return True  # unqualified: this repository
    owner, name = q.group(1).lower(), q.group(2).lower()
    want = repo.lower().rstrip("/").removesuffix(".git")
    w_owner, _, w_name = want.rpartition("/")
    return name == w_name and (not w_owner or owner == w_owner)


def sha_refs(text: str) -> list[Ref]:
    """Every token that looks like a commit id (7–40 hex digits, letters and digits mixed)."""
    return [Ref("sha", m.group(1).lower(), m.group(0)) for m in _SHA.finditer(text) if _is_sha(m.group(1))]


def _refs_in(fragment: str, repo: str | None = None) -> list[Ref]:
    return issue_refs(fragment, repo) + sha_refs(fragment)


def fixes_trailers(text: str) -> list[Ref]:
    """Kernel-style ``Fixes: <sha> ("subject")`` trailers (the subject helps when the sha is wrong)."""
    return [Ref("sha", m.group(1).lower(), m.group(0).strip(), m.group(2)) for m in _FIXES.finditer(text)]


def revert_refs(subject: str, text: str) -> list[Ref]:
    """``This reverts commit <sha>.`` (git's own wording), with the quoted subject of ``Revert "..."``; without
    that line, a subject ``Revert commit <sha> …``, else ``Revert "<subject>"`` alone (a ``Ref`` with no value:
    the reverted commit is the one with that subject; ovs reverts patches by hand so, four times)."""
    quoted = _REVERT_SUBJECT.match(subject.strip())
    subj = quoted.group(1) if quoted else None
    refs = [Ref("sha", m.group(1).lower(), m.group(0), subj) for m in _REVERT.finditer(text)]
    if refs:
        return refs
    if (named := _REVERT_COMMIT_SUBJECT.match(subject.strip())) is not None:
        return [Ref("sha", named.group(1).lower(), named.group(0))]
    return [Ref("subject", "", subject.strip(), subj)] if subj else []


def cherry_picks(text: str) -> list[Ref]:
    """``(cherry picked from commit <sha>)``, the line ``git cherry-pick -x`` writes: the commit this one copies."""
    return [Ref("sha", m.group(1).lower(), m.group(0)) for m in _CHERRY.finditer(text)]


def trailers(text: str) -> dict[str, list[str]]:
    """The people a message's trailers name, by kind (``reviewed_by``, ``acked_by``, ``tested_by``,
    ``reported_by``, ``suggested_by``, ``co_authored_by``, ``signed_off_by``), names only (``<email>`` cut),
    in order, each once per kind."""
    out: dict[str, list[str]] = {}
    for m in _TRAILER.finditer(text):
        name = re.sub(r"\s*<[^>]*>?.*$", "", m.group(2)).strip().strip('"')
        if name and len(name) <= 200:
            key = m.group(1).lower().replace("-", "_") + "_by"
            if name not in out.setdefault(key, []):
                out[key].append(name)
    return out


def reverted_prs(text: str, repo: str | None = None) -> list[Ref]:
    """The pull requests a message says it reverts: GitHub's ``Reverts owner/repo#N`` line (a revert PR's
    body, kept in its squash or merge commit), ``Reverts #N``; another repository's number is left out."""
    out = []
    for m in _REVERTS_PR.finditer(text):
        for r in issue_refs(m.group(1), repo):
            out.append(Ref("issue", r.value, m.group(0).strip()))
    return out


def follow_up_refs(text: str, repo: str | None = None) -> list[Ref]:
    """``#N`` or shas right after a phrase that names an earlier change ("follow-up to #12",
    "regression from abc1234", "introduced in #40 and #41")."""
    out: list[Ref] = []
    for m in _FOLLOW.finditer(text):
        phrase = m.group(1)
        if phrase.lower().startswith("revert") and _REVERT.search(m.group(0)):
            continue  # git's own revert line is read by revert_refs
        for r in _refs_in(m.group(2), repo):
            out.append(Ref(r.kind, r.value, (phrase + m.group(2)).strip()))
    return out


def closing_refs(text: str, repo: str | None = None) -> list[Ref]:
    """GitHub closing keywords: ``Fixes #N``, ``Closes owner/repo#N``, ``Resolves #1, #2``."""
    out: list[Ref] = []
    for m in _CLOSING.finditer(text):
        for r in issue_refs(m.group(1), repo):
            out.append(Ref("issue", r.value, m.group(0).strip()))
    return out


def duplicate_refs(text: str) -> list[Ref]:
    """GitHub's ``Duplicate of #N``."""
    return [
        Ref("issue", issue_refs(m.group(1))[0].value, m.group(0))
        for m in _DUPLICATE.finditer(text)
        if issue_refs(m.group(1))
    ]


def squash_pr(subject: str) -> str | None:
    """The PR number of a GitHub squash-merge subject ``Title (#123)``."""
    m = _SQUASH.search(subject)
    return str(int(m.group(1))) if m else None


def merge_pr(subject: str) -> tuple[str, str | None] | None:
    """(PR number, branch) of ``Merge pull request #N from owner/branch`` or a bors ``Auto merge of #N``."""
    m = _MERGE.match(subject) or _BORS.match(subject)
    return (str(int(m.group(1))), m.group(2)) if m else None


_TRAILER_LINE = re.compile(r"^[ \t]*(?:Fixes|Reverts?|Refs?|See|Link|Closes):.*$", re.IGNORECASE | re.MULTILINE)
_QUOTED = re.compile(r"\(\s*[\"“][^\"”]*[\"”]\s*\)|[\"“][^\"”\n]{12,}[\"”]")


def strip_refs(text: str) -> str:
    """``text`` without explicit references (reference trailers, quoted subjects, ``#N``, shas),
    so a question built from it cannot name its own answer."""
    text = _TRAILER_LINE.sub(" ", text)
    text = _QUOTED.sub(" ", text)
    text = _ISSUE.sub(" ", text)
    text = _SHA.sub(lambda m: " " if _is_sha(m.group(1)) else m.group(0), text)
    text = re.sub(r"\(\s*\)", " ", text)
    return re.sub(r"[ \t]+", " ", text).strip()
