"""Counts and per-period tallies: commits, authors, merges, PRs, per year or month, the busiest periods."""

from __future__ import annotations

import re

from ..dev_rows import count_people
from ..devplan import (
    MAX_ITEMS,
    DevPlan,
    commit_match,
    renamed_away,
    time_bounds,
)
from ..words import ALSO_WHICH, BUSIEST, COMMITS, COUNT, LISTY, MERGES, PEOPLE, PER, PER_AUTHOR, PRS, WHO
from ..words import FILE_WORDS as FILES_WORD
from .file_lines import count_lines, file_length
from .file_rankings import ranking
from .file_sets import COUNT_FILES, added_or_removed, count_files, files_now, files_there
from .lists import plan_list
from .one_change import unread_change
from .shape import Shape
from .who import plan_who


def plan_missing_scope(question: str, notes: list[str]) -> DevPlan | None:
    """A scoped question whose path names nothing in the store matches nothing — not every commit, with a
    note saying the scope was dropped."""
    if not any(n.startswith("no file") for n in notes):
        return None
    if COUNT.search(question):
        return DevPlan("missing_scope", "count", "RETURN 0 AS count", {}, "the path names nothing in the store")
    if COMMITS.search(question) or WHO.search(question) or LISTY.search(question):
        return DevPlan("missing_scope", "commits", "UNWIND [] AS x RETURN x AS id", {}, "the path names nothing")
    return None


def _per_period(scope, tw, author, params: dict, unit: str, busiest: bool = False) -> DevPlan:
    """ "How many commits per year?": the scoped commits counted by the year (or month) of their time, in
    time order; ``busiest`` ("the most active months"): the periods with the most commits first."""
    match, said = commit_match(scope, tw, author, params)
    k = 7 if unit.startswith("month") else 4
    order = "commits DESC, period" if busiest else "period"
    cy = (
        f"{match} WITH DISTINCT c RETURN substring(toString(c.time), 0, {k}) AS period, count(c) AS commits "
        f"ORDER BY {order}"
    )
    noun = "month" if k == 7 else "year"
    expl = (f"the {noun}s with the most commits" if busiest else f"commits per {noun}") + " " + ", ".join(said)
    shape = ("busiest_" if busiest else "per_") + noun
    return DevPlan(shape, "periods", cy, params, expl.strip(), filters=said)


def _merge_commits(scope, tw, author, params: dict, count: bool, n: int | None) -> DevPlan:
    """ "How many merge commits are there?" / "list the merges": commits with two or more parents."""
    match, said = commit_match(scope, tw, author, params, where=["size(coalesce(c.parents, [])) >= 2"])
    said = ["(merge commits only)"] + said
    if count:
        cy = f"{match} RETURN count(DISTINCT c) AS count"
        expl = ", ".join(["merge commits"] + said[1:])
        return DevPlan("count_merges", "count", cy, params, expl, filters=said)
    return plan_list("latest_n" if n else "merges", match, params, said, "DESC", n)


def _count(scope, tw, author, params: dict, wants_prs: bool, people: bool = False, members: bool = False) -> DevPlan:
    """How many commits (or PRs, or files) the scope holds; renamed-away commits are added when run.
    ``members``: the question also asks which ("how many …, and which ones?"): the list, which says its length."""
    if wants_prs and scope is None:
        where = time_bounds(tw, params, "p") + ["p.type IN ['pull_request', 'pr']"]
        cy = "MATCH (p:Node) WHERE " + " AND ".join(where) + " RETURN count(p) AS count"
        return DevPlan("count_prs", "count", cy, params, "PRs " + tw.describe())
    match, said = commit_match(scope, tw, author, params)
    if people:  # "how many authors / people ..." counts people, not commits
        cy = f"{match} RETURN collect(DISTINCT c.author) AS authors"  # counted with the renamed-away commits'
        expl = "authors of " + ("the commits " + ", ".join(said) if said else "all commits")
        moved = renamed_away(scope, tw, author, params)
        return DevPlan("count_authors", "count", cy, params, expl, extra=moved, filters=said, steps=(count_people,))
    if members:
        return plan_list("commits", match, params, said, "DESC", None, extra=renamed_away(scope, tw, author, params))
    cy = f"{match} RETURN count(DISTINCT c) AS count"
    expl = "commits " + ", ".join(said) if said else "all commits"
    if scope is not None:  # git's own path-limited log simplifies side branches away; this count does not
        expl += " (every commit that changed it, as `git log --full-history` counts)"
    return DevPlan("count", "count", cy, params, expl, extra=renamed_away(scope, tw, author, params), filters=said)


# "how many files did the PEP 661 sentinels PR touch?", "… did the very first commit add?": one change, named by a
# description no shape resolves to a commit (a sha, #N or a quoted subject would be a mention, read before)
_ONE_CHANGE = re.compile(
    r"\bdid\s+(?P<what>(?:the|that|this|a)\s+[\w\s.-]{0,60}?\b(?:pr|pull\s+request|commit|change|patch|merge))\s+"
    r"(?:touch|add|chang|modif|remov|delet|creat|introduc)\w*",
    re.I,
)


# "how many issues were fixed in 2024?": the issues a commit's closing keyword names, not the period's commits
_ISSUES_FIXED = re.compile(r"\bhow\s+many\s+(?:\w+\s+)?(?:issues|tickets)\b[^?]*\b(?:fix\w*|clos\w*|resolv\w*)", re.I)


# "which issues did A fix in 2024?": the issues, not A's commits
_ISSUES_LISTED = re.compile(
    r"\b(?:which|what|list)\s+(?:\w+\s+)?(?:issues|tickets)\b[^?]*\b(?:fix\w*|clos\w*|resolv\w*)", re.I
)


def _issues_fixed(scope, tw, author, params: dict, listed: bool = False) -> DevPlan:
    """The issues (``issue:N`` nodes: an export's, or a placeholder the ingest made from "Fixes #N") that
    scoped commits fix, counted once each, or (``listed``) listed with the commits that fixed them."""
    match, said = commit_match(scope, tw, author, params)
    expl = "issues fixed (a closing keyword: Fixes #N) by the commits " + ", ".join(said) if said else "issues fixed"
    if listed:
        cy = (
            f"{match} MATCH (c)-[:fixes]->(i:issue) WITH i, min(c.time) AS time "
            f"RETURN i.id AS id, i.title AS title, i.type AS type, time ORDER BY time DESC, id LIMIT {MAX_ITEMS}"
        )
        total = f"{match} MATCH (c)-[:fixes]->(i:issue) RETURN count(DISTINCT i) AS count"
        return DevPlan("issues_fixed", "issues", cy, params, expl, count_cypher=total, filters=said)
    cy = f"{match} MATCH (c)-[:fixes]->(i:issue) RETURN count(DISTINCT i) AS count"
    return DevPlan("count_issues_fixed", "count", cy, params, expl, filters=said)


def plan_counted(
    words: str, scope, tw, author, params: dict, count: bool, wants_prs: bool, n: int | None
) -> DevPlan | None:
    """A count ("how many commits / authors / files ..."), or a ranking of files or directories ("which
    files change most often?", "the most recently changed file")."""
    if count and scope is None and author is None and (one := _ONE_CHANGE.search(words)) is not None:
        return unread_change(one.group("what"))  # "how many files did the sentinels PR touch?": which PR?
    if count and COUNT_FILES.search(words) and not PEOPLE.search(words):
        if (checked := added_or_removed(words, scope, tw, author, params)) is not None:
            return checked  # "how many files were added in 2023?": those created, not those touched
        if files_there(words, scope) and not tw.active and author is None:  # "files in dcb/ now"
            return files_now(scope, params, count=True)
        return count_files(scope, tw, author, params)
    if count and (length := file_length(words, scope, tw, author, params)) is not None:
        return length  # "how many lines does F have?": its length, not the lines its commits changed
    if count and (lines := count_lines(words, scope, tw, author, params)) is not None:
        return lines
    if scope is None and MERGES.search(words) and (count or LISTY.search(words) or n):
        return _merge_commits(scope, tw, author, params, count and not ALSO_WHICH.search(words), n)
    if (busy := BUSIEST.search(words)) is not None:  # "the most active months", "the busiest year"
        return _per_period(scope, tw, author, params, (busy.group(1) or busy.group(2)).lower(), busiest=True)
    if PER_AUTHOR.search(words):  # "how many commits per author?": the authors with their commit counts
        return plan_who(scope, tw, author, params, False, False)
    if (count or LISTY.search(words)) and (per := PER.search(words)):
        return _per_period(scope, tw, author, params, (per.group(1) or per.group(2)).lower())
    if count and _ISSUES_FIXED.search(words):
        return _issues_fixed(scope, tw, author, params)
    if not count and _ISSUES_LISTED.search(words):
        return _issues_fixed(scope, tw, author, params, listed=True)
    if count:
        people = bool(PEOPLE.search(words)) and author is None  # "how many commits did A author": A's commits
        return _count(scope, tw, author, params, wants_prs, people, members=bool(ALSO_WHICH.search(words)))
    ranked = ranking(words, scope, tw, author, params, n)
    if ranked is None and FILES_WORD.search(words) and files_there(words, scope) and not tw.active and not author:
        return files_now(scope, params, count=False)  # "files currently in dcb/?": what git ls-tree lists
    return ranked


_LARGEST_COMMIT = re.compile(r"\b(?:biggest|largest)\s+(?:single\s+)?(?:commit|change|patch)\b", re.I)

# "how many X" / "number of X": the three words after it name what is counted
_COUNTED_THING = re.compile(r"\b(?:how\s+many|number\s+of)\s+((?:[\w'.-]+\s+){0,2}[\w'.-]+)", re.I)
_TIMES = re.compile(r"\btimes\b", re.I)  # "how many times was F changed": its commits
_FRAME_WORDS = frozenset("are is was were be been do does did has have had there the a an of in on to by".split())


# what git records people doing: writing, changing and landing commits.  A people count read through another
# verb ("how many people attended / starred / use …") counts something else than the authors
_PEOPLE_THEN = re.compile(PEOPLE.pattern + r"((?:\s+[\w'-]+){1,4})", re.I)
_AUXILIARY = frozenset("have has had did do does ever actually really all ve also still get got gets been".split())
_AUTHORING = re.compile(
    r"^(?:contribut|work|commit|author|wr[io]t|touch|chang|edit|modif|hack|patch|submitt?|sign|merg|land|push|add|"
    r"fix|creat|remov|delet|renam|refactor|updat|maintain|develop|cod|help|ma[dk]e|sen[dt]|appear|show|"
    r"correct|clean|improv|introduc|drop|bump|revert|rework|rewr|implement|resolv|address|tweak|adjust|convert|"
    r"replac|port|mov|document|mention|nam|appl|includ|go|went|enter)",
    re.I,
)
_OTHER_ACTS = frozenset(
    "use uses attend attends star stars follow follows watch watches like likes vote votes review reviews report "
    "reports join joins sponsor sponsors visit visits download downloads install installs comment comments approve "
    "approves fund funds subscribe subscribes fork forks".split()
)


def _other_act(after: str, readings: list[tuple[str, str]]) -> str | None:
    """The verb right after a counted noun when it is not one git records ("attended", "starred", "were
    running"), else None (no verb there, a verb of writing or landing commits, or a word a reading took)."""
    read = set(re.findall(r"\w+", " ".join(phrase for phrase, _ in readings).lower()))
    words = [w for w in re.findall(r"[\w'-]+", after.lower()) if w not in _FRAME_WORDS and w not in _AUXILIARY]
    verb = words[0] if words else ""
    acts = verb in _OTHER_ACTS or len(verb) > 4 and verb.endswith(("ed", "ing"))
    return verb if acts and verb not in read and not _AUTHORING.match(verb) else None


def _unrecorded_topic(text: str, topic, readings: list[tuple[str, str]]) -> DevPlan | None:
    """Said, not answered: a count whose counted noun only became a subject word ("how many OpenStack
    deployments were running 2.17": commits whose subject says openstack) and whose verb is no act on commits."""
    m = _COUNTED_THING.search(text)
    if m is None or COMMITS.search(m.group(1)) or PRS.search(m.group(1)):
        return None
    noun = []
    for w in re.findall(r"[\w'.-]+", m.group(1)):
        if w.lower() in _FRAME_WORDS or w.lower() in _AUXILIARY:
            break
        noun.append(w.lower())
    if not noun or not all(any(n.startswith(t[:5]) for n in noun) for t in topic.words):
        return None
    verb = _other_act(text[m.start(1) + len(" ".join(noun)) :], readings)
    if verb is None:
        return None
    return _not_read(
        f"Not understood: what '{m.group(0)}' counts — git records commits, not how many {' '.join(noun)}."
    )


def _unrecorded_people(text: str, readings: list[tuple[str, str]]) -> DevPlan | None:
    """Said, not answered: a people count whose verb is not one git records of them ("how many people attended
    the summit", "… starred the repo"): the number of authors would be another question's answer."""
    m = _PEOPLE_THEN.search(text)
    if m is None:
        return None
    verb = _other_act(m.group(2), readings)
    if verb is None:
        return None
    return _not_read(
        f"Not understood: what '{m.group(1)} {verb}' counts — git records who wrote, changed and landed commits "
        "(their authors), not who did anything else."
    )


def _counted(engine, q) -> DevPlan | None:
    """The count shape's plan; a count of commits only when the question counts commits (or people, PRs)."""
    count = q.count and not _LARGEST_COMMIT.search(q.words)  # "largest commit by number of files": a ranking
    made = plan_counted(q.words, q.scope, q.tw, q.author, q.params, count, q.wants_prs, q.n)
    if made is not None and made.shape == "count_authors":
        return _unrecorded_people(q.text, [(p, w) for p, w in q.readings if w != "condition"]) or made
    if made is not None and made.shape == "count" and q.topic is not None and not q.topic.in_message:
        taken = _unrecorded_topic(q.text, q.topic, [(p, w) for p, w in q.readings if w != "condition"])
        if taken is not None:
            return taken
    own = [c for c in q.tw.conditions if "$off_head" not in c[0]]  # "how many bug fixes": fix commits counted
    if made is None or made.shape != "count" or own or q.topic is not None:
        return made
    readings = [(phrase, what) for phrase, what in q.readings if what != "condition"]
    return _unread_count(q.text, readings) or made  # "how many docker pulls …?": not a number of commits


def _unread_count(text: str, readings: list[tuple[str, str]]) -> DevPlan | None:
    """Said, not answered: a count of something that is not commits, people or pull requests ("how many docker
    pulls", "how many release tags") and that no reading took (a topic: "how many bug fixes"); the number of
    the commits would be another question's answer."""
    m = _COUNTED_THING.search(text)
    if m is None:
        return None
    thing = m.group(1)
    read = set(re.findall(r"\w+", " ".join(phrase for phrase, _ in readings).lower()))
    named = [w for w in re.findall(r"\w+", thing.lower()) if w not in _FRAME_WORDS]
    if any(rx.search(thing) for rx in (COMMITS, PEOPLE, PRS, _TIMES)) or any(w in read for w in named):
        return None
    return _not_read(
        f"Not understood: what '{m.group(0)}' counts — this history can count commits, authors, files, lines, "
        "merges, pull requests, tags and releases (the number of all commits would not be its answer)."
    )


def _not_read(text: str) -> DevPlan:
    """A count said, not answered: no rows, ``text`` as the answer."""
    return DevPlan("count_not_read", "count", "UNWIND [] AS x RETURN x AS count", {}, "what is counted", none_text=text)


MISSING_SCOPE = Shape(
    "missing_scope",
    lambda engine, q: plan_missing_scope(q.text, q.notes) if q.scope is None else None,
    doc="a scoped question whose path names nothing in the store: nothing matches (not every commit)",
)
COUNTED = Shape(
    "counted",
    _counted,
    doc="how many commits / authors / files / lines / merges; per year or month; rankings of files",
)
