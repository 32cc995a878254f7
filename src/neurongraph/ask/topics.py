"""The subject words a question asks about: "commits that mention BTF", "fixes for a memory leak", "how many typeshed
syncs"; and the Cypher condition that finds them in commit subjects, as ``git log --grep`` would on the subject.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

# "commits that mention BTF", "commits about the json output", "fixes of a memory leak", "fixes that came from
# the X reports": the words after the cue are a topic the commit's subject must name (the graph projects
# subjects; a topic no subject names is looked up in whole messages: ask/message_words.py)
_TOPIC_CUE = re.compile(
    r"\b(?:mention(?:s|ed|ing)?|about|regarding|concerning|related\s+to|fix(?:es|ed|ing)?|"
    r"(?:came|come|comes|coming|originat(?:e|es|ed|ing))\s+from)\s+(?:of\s+)?",
    re.I,
)


_TOPIC_WORD = re.compile(r"[A-Za-z0-9_][\w.+-]*")


_TOPIC_LEAD = {"a", "an", "the", "some", "any", "this", "that", "these", "those", "word", "words", "term", "string"}


_TOPIC_END = {
    "in", "since", "before", "after", "until", "till", "by", "during", "from", "between", "on", "under", "to",
    "for", "and", "or", "were", "was", "are", "is", "have", "has", "had", "did", "do", "does", "been", "be",
    "there", "last", "this", "that", "which", "who", "their", "its", "it", "them", "than", "with", "without",
    "made", "committed", "landed", "merged", "so", "far", "ever", "total", "overall", "all", "at",
}  # fmt: skip


_TOPIC_GENERIC = {
    "bug", "bugs", "issue", "issues", "problem", "problems", "thing", "things", "something", "stuff", "commit",
    "commits", "change", "changes", "patch", "patches", "fix", "fixes", "it", "them", "files", "file",
}  # fmt: skip


MAX_TOPIC_WORDS = 4


TOPIC_STOP = frozenset(_TOPIC_LEAD | _TOPIC_END | _TOPIC_GENERIC)  # words never read as a topic's own


_TOKEN = re.compile(r"\S+")


_COMMIT_NOUN = re.compile(r"\b(?:commits?|changes?|patch(?:es)?|prs?|pull requests?|fixes|reverts)\b", re.I)


def stem(word: str) -> str:
    """A plural's singular, so that the prefix match finds both ("crashes" → "crash", "leaks" → "leak")."""
    if len(word) > 4 and re.search(r"(?:sh|ch|x|ss)es$", word):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


_QUOTES = "`'\"()[]{}<>“”‘’"


@dataclass
class Topic:
    """Words a commit's subject must name, where the question says them, and whether a fix verb led them."""

    words: list[str]
    span: tuple[int, int]
    fixing: bool
    near: bool = False  # a compound noun ("typeshed syncs"): its two words stand together in the subject
    in_message: bool = False  # "commits that mention X": the whole message, as ``git log --grep`` reads it
    literal: bool = False  # "X in the subject": a substring of git's subject, as ``git log --grep`` reads it


# where in a commit's message the question says a word stands: "… in the subject (line)", "in their titles",
# "in the commit message"; a subject field keeps the topic in subjects, a message field reads whole messages
_IN_FIELD = re.compile(
    r"\s+in\s+(?:the\s+|their\s+|its\s+|a\s+|each\s+)?(?:commit\s+)?"
    r"(subject(?:\s+lines?)?|subjects|titles?|headlines?|summary|summaries|first\s+lines?|messages?|bod(?:y|ies)|"
    r"descriptions?)\b",
    re.I,
)
# "commits that have usdt in the subject", "with json in the title", "containing 'leak' in their message"
_HAS_IN_FIELD = re.compile(
    r"\b(?:have|has|having|with|contain(?:s|ing)?|carry(?:ing)?|include(?:s|ing)?)\s+"
    r"((?:[A-Za-z0-9_][\w.+-]*\s+){0,3}?[A-Za-z0-9_][\w.+-]*)(?=" + _IN_FIELD.pattern + ")",
    re.I,
)


def _message_field(field: str) -> bool:
    """Whether a field ``_IN_FIELD`` read is the whole message rather than the subject line."""
    return field.lower().startswith(("message", "bod", "description"))


def _field_topic(words: str) -> Topic | None:
    """ "commits that have usdt in the subject": the words before the field, in that field; None without a commit
    noun before them, or when a word is one a topic never holds ("have a Fixes tag in the message")."""
    for m in _HAS_IN_FIELD.finditer(words):
        if not _COMMIT_NOUN.search(words, 0, m.start()):
            continue
        found = [stem(w.lower()) for w in m.group(1).split()]
        if not found or any(w in TOPIC_STOP for w in found):
            continue
        field = _IN_FIELD.match(words, m.end(1))
        assert field is not None  # the lookahead matched it
        in_message = _message_field(field.group(1))
        return Topic(found, (m.start(1), field.end()), False, in_message=in_message, literal=True)
    return None


def _with_field(topic: Topic, words: str) -> Topic:
    """The topic with the field said right after it ("mention stubtest in the subject"): read there, and its
    words taken with it ("line" of "subject line" is no line count)."""
    field = _IN_FIELD.match(words, topic.span[1])
    if field is None:
        return topic
    topic.in_message = _message_field(field.group(1))
    topic.literal = True
    topic.span = (topic.span[0], field.end())
    return topic


# "the most recent version bump commit", "the first typeshed sync change": a kind of commit named by its end
_NTH_KIND = re.compile(
    r"\b(?:latest|most\s+recent|newest|last|first|earliest|oldest)\s+"
    r"((?:[A-Za-z][\w.+-]*\s+){0,2}[A-Za-z][\w.+-]*)\s+(?:commit|change|patch)\b",
    re.I,
)
_NOT_A_KIND = frozenset(
    "merge merges non-merge single big bigger biggest large larger largest small new real actual initial root "
    "whole entire full complete own other few couple".split()
)


def _nth_kind(words: str) -> Topic | None:
    """The kind of commit in "the most recent version bump commit" (["version", "bump"], side by side), when
    no word of it is one a topic never holds ("the last merge commit", "the first real commit")."""
    m = _NTH_KIND.search(words)
    if m is None:
        return None
    found = [stem(w.lower()) for w in m.group(1).split()]
    if any(w in TOPIC_STOP or w in _NOT_A_KIND or w.isdigit() for w in found):
        return None
    return Topic(found, m.span(1), False, near=len(found) == 2)


def topic_words(words: str) -> Topic | None:
    """The topic a question's cue word introduces ("mention BTF" → ["btf"], "fix a memory leak" →
    ["memory", "leak"], lowercased and singular), or that it says a field holds ("have usdt in the subject");
    None when the cue is followed by generic words only ("fix bugs"), by a path (a path is a scope, not a
    topic), or follows no commit noun."""
    field = _field_topic(words)
    if field is not None:
        return field
    for cue in _TOPIC_CUE.finditer(words):
        if not _COMMIT_NOUN.search(words, 0, cue.start()):
            continue  # "what do you know about X", "what fixed X": a search, not a filter on listed commits
        found: list[str] = []
        start = end = -1
        for m in _TOKEN.finditer(words, cue.end()):
            tok = m.group(0)
            if found and tok.startswith("("):
                break  # "TypeForm (PEP 747)": an aside that says the same thing, not more words to require
            core = tok.strip(_QUOTES).rstrip(".,;:!?").strip(_QUOTES)
            low = core.lower()
            if not found and low in _TOPIC_LEAD:
                continue
            if not _TOPIC_WORD.fullmatch(core) or low in _TOPIC_END:
                break
            found.append(stem(low))
            start = m.start() if start < 0 else start
            end = m.end()
            if len(found) >= MAX_TOPIC_WORDS or tok.rstrip(_QUOTES)[-1:] in ".,;:!?":
                break  # punctuation ends the phrase ("leak?", "BTF,")
        topic = [w for w in found if w not in _TOPIC_GENERIC]
        if topic:
            cued = cue.group(0).lower()
            return _with_field(
                Topic(topic, (start, end), cued.startswith("fix"), in_message=cued.startswith("mention")), words
            )
    return _counted_kind(words) or _nth_kind(words)


# "how many typeshed syncs were there?": commits counted by what they do, a kind of change no shape counts as
# such (commits, files, authors, merges, tags … are counted as themselves)
_HOW_MANY_KIND = re.compile(
    r"\bhow\s+many\s+((?:[A-Za-z][\w.+-]*\s+){0,3}[A-Za-z][\w.+-]*s)"
    r"(?:\s+(?=(?:were|are|was|have|has|had|did|do|landed|happened|got|there|in|since|during|last|this|so)\b)"
    r"|\s*[?.!]?\s*$)",
    re.I,
)


_COUNTED_AS_SUCH = frozenset(
    "commit change patch file line author people person contributor committer developer merge pr request tag "
    "release version directory dir folder revert name time year month day week bug issue problem thing review "
    "comment download report ticket job run build test star fork branch rename".split()
)


def _counted_kind(words: str) -> Topic | None:
    """The words of "how many <kind of change>s" (or "<kind of change>s in 2025 - how many?") as a topic, when
    no word of it is a thing counted as such."""
    m = _HOW_MANY_KIND.search(words) or _KIND_THEN_HOW_MANY.search(words)
    if m is None:
        return None
    if _AUX & {w.lower() for w in m.group(1).split()}:
        return None  # "how many lines does F have": a verb, not a kind of change
    found = [stem(w.lower()) for w in m.group(1).split()]
    head, modifiers = found[-1], found[:-1]
    if any(w in _TOPIC_END or w in _COMMIT_KINDS for w in modifiers):
        return None  # "how many commits landed in ovs": a verb and a place after what is counted, no kind of change
    if head in _COMMIT_KINDS:  # "how many sync commits": the commits of that kind
        found = [w for w in modifiers if w not in _PLAIN_MODIFIERS and "merge" not in w]
        if not found or any(w in _COUNTED_AS_SUCH for w in found):
            return None
    elif head in _COUNTED_AS_SUCH or head.rstrip("s") in _COUNTED_AS_SUCH or _PEOPLE_WORDS & set(modifiers):
        return None  # "how many new files", "how many open bug reports", "how many author names"
    found = [w for w in found if w not in _TOPIC_GENERIC]  # "bug fixes": the fixes (word_conditions' reading)
    return Topic(found, m.span(1), False, near=len(found) == 2) if found else None


_AUX = frozenset("does do did is are was were has have had will would can could should".split())
_KIND_THEN_HOW_MANY = re.compile(r"^\W*((?:[A-Za-z][\w.+-]*\s+){0,3}[A-Za-z][\w.+-]*s)\b(?=[^?]*\bhow\s+many\b)", re.I)
_COMMIT_KINDS = frozenset({"commit", "change", "patch"})
_PLAIN_MODIFIERS = frozenset("distinct different unique total new recent separate individual such all".split())
_PEOPLE_WORDS = frozenset("author committer contributor developer people person".split())


# a commit's subject as git writes it: a merge the ingest titled by its PR keeps git's own ("Merge pull request #517
# from someone/typo-fixes") as ``subject``; every other commit's title is its subject
GIT_SUBJECT = "coalesce(c.subject, c.title)"


LEAD_PUNCTUATION = ["(", "[", "{", "<", '"', "'", "`"]  # a subject word may open with one ("(btf)", "[fix]")


PART_SEPARATORS = ["_", "-", "/", "."]  # a part of an identifier or path is a word too ("bpf_ringbuf_discard()")


def literal_condition(topic: list[str], params: dict) -> tuple[str, str]:
    """The commit condition of words said to stand in the subject ("usdt in the subject"): each a substring of
    git's own subject, any case, as ``git log -i --grep`` reads the first line."""
    conds = []
    for k, w in enumerate(topic):
        params[f"topic{k}"] = w
        conds.append(f"toLower({GIT_SUBJECT}) CONTAINS $topic{k}")
    return " AND ".join(conds), "whose subject contains " + " and ".join(f"'{w}'" for w in topic)


def topic_condition(topic: list[str], params: dict, near: bool = False) -> tuple[str, str]:
    """The commit condition of a topic: every topic word starts a word of the subject, after one opening
    bracket or quote, or starts a part of one after ``_``, ``-``, ``/`` or ``.`` ("ringbuf" finds
    "bpf_ringbuf_discard()", "leak" finds "leaks"; "space" does not find "namespace"), as ``$topic0``, ..."""
    conds = []
    params["topic_lead"] = LEAD_PUNCTUATION
    params["topic_sep"] = PART_SEPARATORS
    words = "split(toLower(c.title), ' ')"  # what a commit is about: a PR merge's title is its PR's, not git's
    for k, w in enumerate(topic):
        params[f"topic{k}"] = w
        conds.append(
            f"any(w IN {words} WHERE w STARTS WITH $topic{k} "
            f"OR (left(w, 1) IN $topic_lead AND substring(w, 1) STARTS WITH $topic{k}) "
            f"OR any(s IN $topic_sep WHERE w CONTAINS (s + $topic{k})))"
        )
    said = " and ".join(f"'{w}'" for w in topic)
    if near and len(topic) == 2:  # "Sync typeshed", "typeshed: sync", "Bump the version": at most a word between
        conds.append(
            f"any(i IN range(0, size({words}) - 2) WHERE any(j IN [i + 1, i + 2] WHERE j < size({words}) AND ("
            f"({words}[i] STARTS WITH $topic0 AND {words}[j] STARTS WITH $topic1) OR "
            f"({words}[i] STARTS WITH $topic1 AND {words}[j] STARTS WITH $topic0))))"
        )
        said += " side by side"
    return " AND ".join(conds), f"whose subject mentions {said}"
