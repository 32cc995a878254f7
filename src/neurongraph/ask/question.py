"""A developer question, read once: what it names (paths, an author, a commit, a PR, times, a topic) and asks.

Why one object: every shape reads the same facts — the same "who", the same path scope, the same time window —
and the words a fact took (its span) are no longer read as anything else ("g.denis" is an author, not a file;
"last" in "last month" is time, not "the latest").  What could not be read is kept in ``notes``, which every
answer says.  ``readings`` is the list ``ngr ask --explain`` shows: each phrase and what it was read as.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ..errors import NeuronGraphError
from .commit_ranges import read_commit_range
from .described import Described, Resolved, read_described, resolve
from .devplan import Scope, no_merge_spans, quoted_conditions, quoted_spans, root_spans, word_conditions
from .message_words import in_messages, trailer_spans
from .names import Mention, unknown_shas
from .question_paths import names_project, scope_of
from .question_people import author_taken
from .tags import LazyTags, off_head
from .timephrase import TimeWindow, parse_time
from .topics import GIT_SUBJECT, Topic, topic_words
from .words import (
    COUNT,
    FATE,
    FIRST,
    HASHNUM,
    HOW_OLD,
    LAST,
    NEGATION,
    NTH,
    ONE,
    PR_NUM,
    PRS,
    REVIEW,
    WHEN,
    WHO,
)

__all__ = ["Question", "read_question", "blank", "negated", "NO_REVIEWERS"]


@dataclass
class Question:
    """What a developer question names and asks; built by :func:`read_question`, read by every shape."""

    text: str
    tw: TimeWindow  # dates, tag ranges and word conditions ("that fix bugs", "without merges")
    mentions: list[Mention]
    taken: list[tuple[int, int]]  # spans read as something (a time, a name, a path): not read again
    commit: Mention | None  # the commit it names (a sha)
    quoted_or_named: list[Mention]  # other named nodes (a quoted title, an issue)
    pr: str | None  # ``pr:N`` it names
    author: str | None
    topic: Topic | None  # subject words ("commits that mention typeshed")
    scope: Scope | None  # the path scope
    params: dict  # the Cypher parameters the reading gave; shapes add their own
    notes: list[str]  # what was not understood or not found: said in every answer
    schema: Any = None
    who: bool = False
    count: bool = False
    wants_prs: bool = False
    words: str = ""  # the question without the spans read as names, paths and times
    rest: str = ""  # the question without its time phrases ("last" in "last month" is time)
    first: bool = False  # "first / oldest / earliest", or "how old"
    n: int | None = None  # how many commits are asked for ("the last 5"; "the latest change": 1)
    readings: list[tuple[str, str]] = field(default_factory=list)  # (phrase, what it was read as)
    described: Described | None = None  # one change named by what it did ("the PEP 661 sentinels PR")
    _resolved: dict = field(default_factory=dict, repr=False)

    @property
    def has_filter(self) -> bool:
        """A path, a period, an author or a condition of the question's own (reading HEAD's history is none)."""
        own = any("$off_head" not in cond for cond, _ in self.tw.conditions)
        return self.scope is not None or self.tw.active or self.author is not None or own

    def change(self, engine, reverts: bool | None = None) -> Resolved | None:
        """The change the description names (:func:`.described.resolve`, once per question), or None;
        ``reverts`` (by default: whether the description calls it a revert) resolves it among the reverts."""
        if self.described is None:
            return None
        if reverts is None:
            reverts = self.described.noun.startswith("revert")
        if reverts not in self._resolved:
            self._resolved[reverts] = resolve(engine, self.described, reverts)
        return self._resolved[reverts]

    def negated(self) -> bool:
        """Whether it negates (said in the notes: no shape reads a negation)."""
        return negated(self.words, self.notes)


def read_question(engine, text: str, schema, mentions: list[Mention]) -> Question:
    """Read ``text`` once: times, names, paths, conditions; each later reading skips the spans taken before."""
    notes: list[str] = []
    tw = _window(engine, text, notes)
    ranged = read_commit_range(engine, text, mentions, tw)  # "between 4a2c90a and bcec20c": git log A..B
    mentions = [m for m in mentions if m not in ranged]
    for sha in unknown_shas(engine.store, text, mentions):  # answered without it, the answer is about other commits
        tw.not_understood.append(f"'{sha}' (no commit {sha} in this store)")
    notes += [f"not understood: {p}" for p in tw.not_understood]
    taken = list(tw.spans) + [(m.start, m.end) for m in mentions] + no_merge_spans(text, tw) + root_spans(text, tw)
    params: dict = {}
    taken += trailer_spans(engine, text, tw, params)  # "commits with a Fixes: tag": the trailer, not the word
    pr = pr_anchor(engine, text, mentions, notes)
    as_named = tw.active or tw.commits is not None or bool(FATE.search(text))  # the file as it was then
    author, topic, scope = read_names(engine, text, taken, mentions, notes, as_named)
    word_conditions(blank(text, taken), tw, params, topic)  # "that fix bugs", "more than 10 files"
    if topic is not None and topic.in_message:
        in_messages(engine, topic, tw, params)  # "commits that mention vxlan": git log --grep's whole message
    # "how many 'sync: latest changes' commits": the subject ("… 'typo' in the message": the whole message)
    quoted_conditions(text, taken, tw, params, engine.store.message_grep, lambda phrase: _in_subjects(engine, phrase))
    head_only(engine, tw, params)  # what `git log` reads: HEAD's history, unless a tag phrase names other commits
    words = blank(text, taken)  # without its paths, times and names ("AUTHORS" is a file)
    rest = blank(text, list(tw.spans) + quoted_spans(text))  # the question's own words
    first = bool(FIRST.search(rest) or HOW_OLD.search(rest)) and not LAST.search(rest)
    q = Question(
        text=text,
        tw=tw,
        mentions=mentions,
        taken=taken,
        commit=next((m for m in mentions if m.type == "commit"), None),
        quoted_or_named=[m for m in mentions if m.type != "commit"],
        pr=pr,
        author=author,
        topic=topic,
        scope=scope,
        params=params,
        notes=notes,
        schema=schema,
        who=bool(WHO.search(text)),
        count=bool(COUNT.search(text)),
        wants_prs=bool(PRS.search(words)),  # "…-pr.patch" is a path, not a PR
        words=words,
        rest=rest,
        first=first,
        n=how_many(rest, author is not None or scope is not None, first),
    )
    if q.commit is None and q.pr is None:
        q.described = read_described(words)
    q.readings = _readings(q)
    return q


def _window(engine, text: str, notes: list[str]) -> TimeWindow:
    """The question's time window; relative phrases ("last week", "this month") count back from the history's
    newest commit when that is older than today (a copy, a mirror, an archive: "last week" of what it holds),
    and the answer says so."""
    today = dt.datetime.now(dt.UTC)
    newest = _newest_commit(engine)
    tw = parse_time(text, tags=LazyTags(engine))
    if newest is None or newest.date() >= today.date():
        return tw
    anchored = parse_time(text, now=newest, tags=LazyTags(engine))
    if (anchored.since, anchored.until) != (tw.since, tw.until):
        notes.append(f"relative dates counted back from the newest commit ({newest.date()}), not from today")
        return anchored
    return tw


def _newest_commit(engine) -> dt.datetime | None:
    """The newest commit time of the store (once per store state)."""

    def load():
        rows = engine.cypher("MATCH (c:commit) RETURN max(c.time) AS t")["rows"]
        t = rows[0]["t"] if rows else None
        try:
            return dt.datetime.fromisoformat(str(t).replace("Z", "+00:00")) if t else None
        except ValueError:
            return None

    got = engine.cypher_projection().memo("newest_commit", load)
    return got if got is None or got.tzinfo else got.replace(tzinfo=dt.UTC)


def _readings(q: Question) -> list[tuple[str, str]]:
    """Each phrase the reading took, and what it became (for ``--explain``)."""
    out: list[tuple[str, str]] = [(q.text[a:b], "time") for a, b in q.tw.spans]
    out += [(m.phrase, f"{m.type} {m.node}") for m in q.mentions]
    if q.author:
        out.append((q.author, "author"))
    if q.topic is not None:
        out.append((q.text[q.topic.span[0] : q.topic.span[1]].strip(), "subject words"))
    if q.scope is not None:
        out.append((q.scope.phrase, f"path scope ({q.scope.kind})"))
    if q.described is not None:
        out.append((q.described.phrase, "one change, by " + (q.described.position or "its description")))
    out += [(said, "condition") for _, said in q.tw.conditions]
    intent = [w for w, on in (("who", q.who), ("how many", q.count), ("PRs", q.wants_prs), ("first", q.first)) if on]
    if LAST.search(q.rest) and not q.first:
        intent.append("latest")
    if q.n is not None:
        intent.append(f"{q.n} item(s)")
    if intent:
        out.append((", ".join(intent), "intent"))
    return out


def _in_subjects(engine, phrase: str) -> bool:
    """Whether some commit's subject holds ``phrase`` (case ignored), as the quoted condition reads it; True when
    the graph cannot say (the subject reading is kept)."""
    try:
        rows = engine.cypher(
            f"MATCH (c:commit) WHERE toLower({GIT_SUBJECT}) CONTAINS $p RETURN c.id AS id LIMIT 1",
            {"p": phrase.lower()},
        )["rows"]
    except NeuronGraphError:
        return True
    return bool(rows)


def negated(words: str, notes: list[str]) -> bool:
    """Whether the question negates ("never touched", "did not change"): no shape reads a negation, so it is
    said as not understood rather than answered without it (the commits *by* A for "files A never touched")."""
    neg = NEGATION.search(words)
    if neg:
        notes.append(f"not understood: '{neg.group(0)}' (a negation; no graph shape reads one)")
    return neg is not None


def head_only(engine, tw: TimeWindow, params: dict) -> None:
    """Leave out the commits only a tag or another branch reaches (a backport, a release past ``HEAD``), as
    ``git log`` does, when no tag phrase chose the commits; said in the answer when there are any."""
    if tw.commits is not None:
        return
    off = off_head(engine)
    if off:
        params["off_head"] = off
        said = f"in HEAD's history ({len(off)} commits only tags or other branches reach left out)"
        tw.conditions.append(("NOT c.id IN $off_head", said))


def read_names(engine, question: str, taken: list, mentions: list[Mention], notes: list[str], dated: bool = False):
    """The author, the subject topic and the path scope the question names, read in that order, each
    taking its words: "g.denis" is an author, not a file; "commits that mention typeshed" a word, not a path."""
    author = author_taken(engine, question, taken, notes)
    topic = topic_words(blank(question, taken))
    if topic is not None and len(topic.words) == 1 and names_project(engine, topic.words[0]):  # "click commits": all
        notes.append(f"'{question[topic.span[0] : topic.span[1]].strip()}' read as the project")
        taken.append(topic.span)
        topic = None
    if topic is not None:
        taken.append(topic.span)
    return author, topic, scope_of(engine, question, taken, mentions, notes, dated)


def how_many(rest: str, named: bool, first: bool) -> int | None:
    """The number of commits asked for: "the last 5", "the latest change" (1), "when did A last commit" and
    "when was F last changed" (1: ``named``, an author or a path), "how old is the repository" (its first
    commit)."""
    nm = NTH.search(rest)
    if nm:
        return int(nm.group(1) or nm.group(2))
    if ONE.search(rest) or named and WHEN.search(rest) and (first or LAST.search(rest)) or HOW_OLD.search(rest):
        return 1
    return None


def blank(question: str, spans: list[tuple[int, int]]) -> str:
    out = list(question)
    for a, b in spans:
        out[a:b] = " " * (b - a)
    return "".join(out)


NO_REVIEWERS = "not recorded: a PR's reviews (git keeps only the Reviewed-by / Acked-by trailers of its commits)"


def pr_anchor(engine, question: str, mentions: list[Mention], notes: list[str]) -> str | None:
    """``pr:N`` the question names ("PR #12", "pull request 12", "#12" when no issue 12 exists).  "Who reviewed
    PR #N" is said to be unrecorded here (no PR shape reads reviewers either)."""
    if WHO.search(question) and REVIEW.search(question) and PRS.search(question):
        notes.append(NO_REVIEWERS)  # a commit's reviewers are its trailers (trailer shapes); a PR's are not in git
    for m in mentions:
        if m.type in ("pull_request", "pr"):
            return m.node
    num = PR_NUM.search(question)
    if num:
        node = f"pr:{int(num.group(1))}"
        if engine.store.node_types([node]):
            return node
        notes.append(f"no PR #{num.group(1)} in the store")
        return None
    for h in HASHNUM.finditer(question):
        n = h.group(1)
        if not engine.store.node_types([f"issue:{n}", f"pr:{n}", f"pull_request:{n}"]):
            notes.append(f"no issue or PR #{n} in the store (no issue export ingested?)")
    return None
