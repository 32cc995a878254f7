"""The words a developer question is read by: who, how many, first/last, files, PRs, time, negation.

One vocabulary for the question reader and every shape, so that "who" or "how many" means one thing.
"""

from __future__ import annotations

import re

SHOW = 10  # items written out in the answer text


PR_NUM = re.compile(r"\b(?:PR|pull request|pull|merge request)\s*#?\s*(\d{1,7})\b", re.I)


HASHNUM = re.compile(r"(?<![\w/])#(\d{1,7})\b")


# "who", and the ways to ask for a person without it: "the most recent author of F", "top committer in D/",
# "the last person to modify F"
WHO = re.compile(
    r"\b(who|whom|whose|which (?:person|people|author|authors|developer|developers))\b"
    r"|\b(?:the\s+)?(?:most\s+recent|latest|last|first|main|top|busiest|biggest|most\s+active|original)\s+"
    r"(?:\d{1,3}\s+)?(?:author|committer|contributor|developer|person|maintainer)s?\b"
    r"|\b(?:authors|committers|contributors)\s+(?:of|to|for)\b",
    re.I,
)


COUNT = re.compile(r"\b(how many|number of|count)\b|\bwc\s+-l\b", re.I)  # `wc -l F`: a shell user's count


LAST = re.compile(r"\b(last|latest|most recent(?:ly)?|newest)\b", re.I)


FIRST = re.compile(r"\b(first|oldest|earliest|originally|initially)\b", re.I)


NTH = re.compile(
    r"\b(?:last|latest|newest|first|oldest|earliest|top|recent)\s+(\d{1,3})\b"
    r"|\b(\d{1,3})\s+(?:most recent(?:ly)?|latest|newest|last|oldest|first|largest|biggest)\b",
    re.I,
)


# "the most recent change to F", "the first commit": one commit, not the whole list
ONE = re.compile(
    r"(?:\bthe|'s)\s+(?:very\s+)?(?:most recent|latest|last|newest|first|oldest|earliest)\s+(?:ever\s+)?"
    r"(?:merge\s+|(?![0-9])[a-z][\w.+-]*\s+(?:[a-z][\w.+-]*\s+)?)?(?:change|commit|patch)\b(?!e?s)",
    re.I,
)


CREATED = re.compile(
    r"\b(created|added|introduc\w*|first (?:added|committed)|appear\w*|creat\w*|born)\b"
    # "who split the checks out into F", "extracted X into F": F began with that commit
    r"|\b(?:split|extract\w*|factor\w*\s+out|broke\s+out|pull\w*\s+out)\b[^?]*?\binto\b",
    re.I,
)


RENAMED = re.compile(r"\b(renam\w*|moved?)\b", re.I)


# a question about what became of a file names the file as it was ("what was F renamed to", "is F still there")
FATE = re.compile(r"\b(?:renam\w*|mov(?:e|ed)|remov\w*|delet\w*|dropped|gone|still|anymore|happen\w*|missing)\b", re.I)


TWICE = re.compile(r"\b(?:created|added)\s+twice\b|\bre-?(?:added|created)\b|\bcame\s+back\b", re.I)


# "what happened to F?", "I can't find F anymore", "where did F go": its rename or its removal
GONE = re.compile(
    r"\bwhat\s+happ\w*\s+(?:to|with)\b|\bcan'?n?o?t\s+find\b|\bwhere\s+(?:did|has|is)\b[^?]*\b(?:go|gone)\b"
    r"|\bmissing\b|\bdisappear\w*",
    re.I,
)


FILE_WORDS = re.compile(r"\bfiles?\b|\bpaths?\b", re.I)  # "which files", "paths"


COMMITS = re.compile(r"\b(commits?|changes?|changed|committed|patch(?:es)?|made|touch\w*|modif\w*)\b", re.I)


PRS = re.compile(r"\b(prs?|pull requests?|merge requests?)\b", re.I)


LISTY = re.compile(r"\b(which|what|list|show|give|find|all)\b", re.I)


NEGATION = re.compile(
    r"\b(?:never|without|except|excluding|other than)\b|\b\w+n't\b(?!\s+(?:find|see|locate)\b)|"
    r"\b(?:did|does|do|has|have|had|was|were|is|are|has been|have been)\s+not\b",
    re.I,
)


RELATION = re.compile(r"\b(fix\w*|revert\w*|follow\w*|supersed\w*|refer\w*|mention\w*)\b", re.I)


# "who" over the whole history: a ranking ("who wrote the most commits", "top contributors") or the first/latest commit
PEOPLE = re.compile(r"\b(authors?|people|persons?|contributors?|committers?|developers?)\b", re.I)


WHEN = re.compile(r"\bwhen\b", re.I)


PER = re.compile(r"\b(?:per|each|every|by|a)\s+(year|month)s?\b|\b(year|month)ly\b", re.I)


PER_AUTHOR = re.compile(r"\b(?:per|each|every)\s+(?:author|person|contributor|developer|committer)s?\b", re.I)


BUSIEST = re.compile(
    r"\b(?:most active|busiest|most productive)\s+(year|month)s?\b"
    r"|\b(year|month)s?\b[^?]*\b(?:busiest|most active|most productive|most commits)\b",
    re.I,
)


HOW_OLD = re.compile(r"\bhow old\b|\bwhen did (?:the )?(?:project|repo\w*|history|development) (?:start|begin)", re.I)


# "how many …, and which ones?", "…, and when was the last one?": the list, which says its length
ALSO_WHICH = re.compile(
    r"\b(?:and|also)\s+(?:which|what|list|show)\b|\bwhich\s+ones\b|\blist\s+them\b"
    r"|\band\s+when\s+(?:was|were|did)\s+the\s+(?:last|latest|first|most\s+recent|newest|oldest)\b",
    re.I,
)


MERGES = re.compile(r"\bmerges\b|\bmerge commits?\b|\bmerged commits\b", re.I)


REVIEW = re.compile(r"\b(review\w*|ack(?:ed|s)?|approv\w*|sign(?:ed)?[- ]off\w*|tested)\b", re.I)


RANKING = re.compile(r"\b(most(?!\s+recent)|top|main|biggest|leading|contributors?|committers?|authors)\b", re.I)
