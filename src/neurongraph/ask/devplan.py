"""The plan of a developer question and its Cypher pieces: the path scope, the commit filter, the row shape.

Why a module of its own: every developer-question shape under ``shapes/`` (lists, counts, "who", a file's
lifecycle, rankings) builds its query from the same scoped ``MATCH`` and says its filters the same way, so
those pieces live here, below the planners that use them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .timephrase import TimeWindow
from .topics import GIT_SUBJECT, Topic, literal_condition, topic_condition

__all__ = [
    "Scope",
    "renamed_from",
    "DevPlan",
    "commit_match",
    "tag_filter",
    "time_bounds",
    "word_conditions",
    "no_merge_spans",
    "quoted_conditions",
    "C_RET",
    "by_time",
    "ROOT",
    "MAX_ITEMS",
    "NON_MERGE",
]


MAX_ITEMS = 500  # rows a list returns (the server caps a reply at 1000); the total is counted separately


NON_MERGE = "size(coalesce(c.parents, [])) < 2"  # what `git log --no-merges` keeps


@dataclass
class Scope:
    """A path scope the question names, as a condition on the file node a scoped commit touches."""

    kind: str  # "file" | "dir" | "set" (a glob's matching files) | "all" / "any" (several scopes: both / either)
    value: str | list[str] | list[Scope]  # file id, "file:<dir>/" prefix, the file ids a glob matches, or the scopes
    phrase: str
    # a file's earlier paths that no ``renamed_to`` edge joins to it (one commit removed the old path and added this
    # one: a move git's rename detection did not pair); a question about its beginning reads them too
    moved_from: tuple[str, ...] = ()

    def condition(self, f: str, key: str, params: dict) -> str:
        """The Cypher condition that file node ``f`` lies in this (single) scope, its values as ``$key``."""
        params[key] = self.value
        if self.kind == "file":
            return f"{f}.id = ${key}"
        if self.kind == "dir":  # "dir/" also names an entry "dir" (a submodule)
            params[key + "x"] = str(self.value).rstrip("/")
            return f"({f}.id STARTS WITH ${key} OR {f}.id = ${key}x)"
        return f"{f}.id IN ${key}"


RowStep = Callable[[Any, "DevPlan", list[dict]], list[dict]]


@dataclass
class DevPlan:
    """A developer question read as one Cypher query: its shape, what the rows hold, and the query with its params."""

    shape: str
    kind: str  # what the result holds: commits | files | prs | issues | tags | count | author | authors
    cypher: str
    params: dict
    explanation: str
    count_cypher: str | None = None
    fallback: tuple[str, str] | None = None  # (cypher, explanation) when the first query returns nothing
    extra: str | None = None  # commits that renamed a path of the scope away (their touches are on the new path)
    notes: list[str] = field(default_factory=list)
    filters: list[str] = field(default_factory=list)
    none_text: str | None = None  # the answer when no row matches (else "No commits: ... none in the store")
    # what the shape does to the rows after the query, in order: each ``step(engine, plan, rows) -> rows``
    # (the removal among a file's touches, the files there now, lines summed from the stored diffs, ...)
    steps: tuple[RowStep, ...] = ()
    read_all: bool = False  # every row is checked in Python: read them all, a page at a time
    about_file: bool = False  # about a file node ("which commit added F"): before the identifier questions
    noun: str = "authors"  # what an authors list holds ("people" for trailers)
    cites: list[str] = field(default_factory=list)  # ids a count answer cites (the one change it counts in)
    heads_with_explanation: bool = False  # an authors list is headed by the explanation, not "of the commits …"
    row_limit: int = MAX_ITEMS  # the query's LIMIT ("top 3 authors": 3); a list that reaches it is counted apart

    def to_dict(self) -> dict:
        return {"cypher": self.cypher, "params": self.params, "explanation": self.explanation}


PAGE = 1000  # rows per read of a plan whose rows are all checked (the graph server returns at most 1,000)


def all_rows(engine, p: DevPlan) -> list[dict]:
    """Every row of ``p.cypher`` (ordered, so pages do not overlap), read a page at a time."""
    rows: list[dict] = []
    while True:
        got = engine.cypher(f"{p.cypher} SKIP {len(rows)} LIMIT {PAGE}", p.params)["rows"]
        rows += got
        if len(got) < PAGE:
            return rows


def tag_filter(tw: TimeWindow, params: dict, alias: str = "c") -> list[str]:
    """The ``WHERE`` condition of the question's tag phrases (the commits they allow or exclude)."""
    if tw.commits is None:
        return []
    params["within"] = tw.commits
    params["within_not"] = tw.negated  # (a row step that checks a commit in Python reads the same range)
    return [f"{'NOT ' if tw.negated else ''}{alias}.id IN $within"]


def time_bounds(tw: TimeWindow, params: dict, alias: str = "c") -> list[str]:
    """The ``WHERE`` conditions of the question's dates on ``alias.time`` (values as ``$since`` / ``$until``)."""
    out = []
    for k, op in (("since", ">="), ("until", "<")):
        if getattr(tw, k):
            params[k] = getattr(tw, k)
            out.append(f"{alias}.time {op} ${k}")
    return out


def commit_match(
    scope: Scope | None,
    tw: TimeWindow,
    author: str | None,
    params: dict,
    touching: bool = False,
    where: list[str] | None = None,
    follow_renames: bool = False,
) -> tuple[str, list[str]]:
    """``MATCH`` + ``WHERE`` for the scoped commits ``c`` and the filters it applied, in words.  With a single
    scope, or with ``touching``, the match also binds the file ``f`` each commit touches and the edge ``t``
    (its line counts), and leaves merges out.  ``where``: more conditions on ``c``, said by the caller.
    ``follow_renames`` (a file's beginning, as ``git log --follow``): the commits touching the file or a path
    it was renamed from (``p``, its ``renamed_to`` edges, up to :data:`RENAME_HOPS` back)."""
    where, said = list(where or []), []
    if scope is not None and scope.kind in ("all", "any"):
        parts = [p for p in scope.value if isinstance(p, Scope)]  # commits touching every one ("both") or any
        if scope.kind == "all":
            fs = ["f"] + [f"f{i}" for i in range(1, len(parts))]  # the first is `f`, as for a single scope
            m = "MATCH " + ", ".join(f"(c:commit)-[:touches]->({v}:file)" for v in fs)
            where.append(" AND ".join(p.condition(v, f"f{i}", params) for i, (v, p) in enumerate(zip(fs, parts))))
        else:
            m = "MATCH (c:commit)-[:touches]->(f:file)"
            where.append("(" + " OR ".join(p.condition("f", f"f{i}", params) for i, p in enumerate(parts)) + ")")
    elif scope is not None:
        cond = scope.condition("f", "f", params)
        if scope.kind == "file" and follow_renames:
            m = f"{renamed_from(scope, params)} MATCH (c:commit)-[t:touches]->(p)"
        elif scope.kind == "file":  # the file's id inline in the pattern
            m = "MATCH (c:commit)-[t:touches]->(f:file {id: $f})"
        else:
            m = "MATCH (c:commit)-[t:touches]->(f:file)"
            where.append(cond)
    if scope is not None:
        where.append(NON_MERGE)
        renamed = " or a path it was renamed from" if follow_renames and scope.kind == "file" else ""
        said.append(f"touching {scope.phrase}{renamed} (merge commits left out)")
    elif touching:
        m = "MATCH (c:commit)-[t:touches]->(f:file)"
        where.append(NON_MERGE)
        said.append("(merge commits left out)")
    else:
        m = "MATCH (c:commit)"
    where += time_bounds(tw, params)
    where += tag_filter(tw, params)
    if tw.active:
        said.append(tw.describe())
    for cond, words in tw.conditions:
        where.append(cond)
        said.append(words)
    if author:
        where.append("c.author = $author")
        params["author"] = author
        said.append(f"by {author}")
    return m + (" WHERE " + " AND ".join(where) if where else ""), said


C_RET = "c.id AS id, c.title AS title, c.type AS type, c.time AS time, c.author AS author"

RENAME_HOPS = 8  # renames followed back from a file to its first path


def renamed_from(scope: Scope, params: dict) -> str:
    """``MATCH`` of the paths ``p`` a file ``$f`` had (``git log --follow``): itself and the paths its ``renamed_to``
    edges come from, up to :data:`RENAME_HOPS` back, and so for the paths it was moved from without one."""
    if not scope.moved_from:
        return f"MATCH (p:file)-[:renamed_to*0..{RENAME_HOPS}]->(f:file {{id: $f}})"
    params["f_moved"] = [params["f"], *scope.moved_from]
    return f"MATCH (p:file)-[:renamed_to*0..{RENAME_HOPS}]->(f:file) WHERE f.id IN $f_moved"


ROOT = "($one_root AND size(coalesce({c}.parents, [])) = 0)"  # ``$one_root``: set by ``dev_run`` when run


_ROOT_KEY = f"CASE WHEN {ROOT.format(c='c')} THEN 0 ELSE 1 END"


def by_time(order: str = "ASC", key: str = "c.time") -> str:
    """``ORDER BY`` keys for commits ``c`` by time, the root commit first (``ASC``) or last (``DESC``)
    whatever its date when the history has one root: it is older than everything (ovs's root import is
    dated a month after its first children).  With several roots (mypy: four histories merged) a root is
    older only than its own descendants, so time decides."""
    if order == "DESC":
        return f"{_ROOT_KEY} DESC, {key} DESC, c.id"
    return f"{_ROOT_KEY}, {key} ASC, c.id"


AUTHORED = "coalesce(c.author_time, c.time)"  # when the author wrote it: a person's own first / last commit


# "commits that fix bugs", "bug fixes": a subject word starting with fix or bug, or a `Fixes:` trailer the
# ingest resolved (its `fixes` edge): 167 of libbpf's 338 commits with such a trailer say neither word
_FIXING = re.compile(
    r"\b(fix(?:es|ed|ing)?\s+(?:\w+\s+){0,2}?(?:bugs?|issues?|problems?|crash\w*|leaks?)|bug ?fix\w*"
    r"|fix commits?)\b",
    re.I,
)


_MORE_FILES = re.compile(r"\b(more|over|fewer|less)\s+than\s+(\d{1,6})\s+files?\b", re.I)


FIX_CONDITION = (
    "(any(w IN split(toLower(c.title), ' ') WHERE w STARTS WITH 'fix' OR w STARTS WITH 'bug' "
    "OR w STARTS WITH '[fix' OR w STARTS WITH '(fix') OR (c)-[:fixes]->(:commit))"
)


FIX_SAID = "whose subject says fix or bug, or with a Fixes: trailer"


# "not counting merges", "non-merge commits", "ignore merge commits", "--no-merges": what `git log --no-merges` keeps
_NO_MERGES = re.compile(
    r"--no-merges\b|\bnon[- ]?merges?\b(?:\s+commits?)?"
    r"|\b(?:not\s+counting|not\s+including|excluding|exclude|without|ignor(?:e|ing)|except|minus|no|"
    r"skip(?:ping)?|leav(?:e|ing)\s+out|drop(?:ping)?)\s+(?:the\s+|any\s+|all\s+)?merges?(?:\s+commits?)?\b",
    re.I,
)


_QUOTED_PHRASE = re.compile(r"""(?<![\w])(['"“‘])([^'"“”‘’\n]{3,200})(['"”’])(?![\w])""")


def quoted_spans(question: str) -> list[tuple[int, int]]:
    """Where the question quotes a phrase (a subject it names): words there are the phrase's, not the question's
    ("'sync: latest libbpf changes' commits … who does most of them" asks for no latest commit)."""
    return [m.span() for m in _QUOTED_PHRASE.finditer(question)]


_IN_MESSAGE = re.compile(
    r"\s*(?:in|within)\s+(?:the\s+|their\s+|its\s+)?(?:commit\s+)?(?:messages?|msgs?|bod(?:y|ies)|logs?)\b", re.I
)


def quoted_conditions(
    question: str, taken: list[tuple[int, int]], tw: TimeWindow, params: dict, grep=None, in_subjects=None
) -> None:
    """A quoted phrase no name, path or date took ("how many 'sync: latest libbpf changes' commits") is what
    the commits' subjects must contain (case ignored), as ``git log --grep -F -i`` reads it; its span is
    taken.  Unread, it was dropped and every commit of the period counted: confidently wrong.  Followed by "in
    the message" (and given ``grep``: ``Store.message_grep``), the whole message must hold it; so must it when no
    subject holds it but some message does (``in_subjects(phrase)`` False: "was crashing with 'stack smashing
    detected'", an error a fix quotes in its body), where "no commits" would be the answer."""
    for m in _QUOTED_PHRASE.finditer(question):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        phrase = m.group(2).strip()
        k = sum(1 for key in params if key.startswith("quoted"))
        where = _IN_MESSAGE.match(question, m.end())
        if where and grep is not None:
            params[f"quoted{k}"] = grep([phrase])
            tw.conditions.append((f"c.id IN $quoted{k}", f"whose message contains '{phrase}', as git log -i --grep"))
            taken.append((m.start(), where.end()))
            continue
        if grep is not None and in_subjects is not None and not in_subjects(phrase) and (ids := grep([phrase])):
            params[f"quoted{k}"] = ids
            said = f"whose message contains '{phrase}' (no subject does), as git log -i --grep"
            tw.conditions.append((f"c.id IN $quoted{k}", said))
            taken.append(m.span())
            continue
        params[f"quoted{k}"] = phrase.lower()
        tw.conditions.append((f"toLower({GIT_SUBJECT}) CONTAINS $quoted{k}", f"whose subject contains '{phrase}'"))
        taken.append(m.span())


# commits without a parent: "how many root commits", "commits with no parent" (a history that merged another
# project's history has several: mypy 4)
_ROOTS = re.compile(
    r"\b(?:root|parentless|orphan(?:ed)?)\s+commits?\b|\bcommits?\s+(?:with|having|that\s+have)\s+no\s+parents?\b",
    re.I,
)
ROOT_CONDITION = "size(coalesce(c.parents, [])) = 0"


def root_spans(question: str, tw: TimeWindow) -> list[tuple[int, int]]:
    """Where the question asks for root commits: the condition goes to ``tw.conditions`` and the spans are taken
    (no topic reads "root"; "how many root commits" had counted every commit)."""
    spans = [m.span() for m in _ROOTS.finditer(question)]
    if spans:
        tw.conditions.append((ROOT_CONDITION, "without a parent (root commits)"))
    return spans


def no_merge_spans(question: str, tw: TimeWindow) -> list[tuple[int, int]]:
    """Where the question leaves merge commits out; the condition goes to ``tw.conditions`` and the spans
    are taken, so neither the merge shapes nor the negation check read "merges" there."""
    spans = [m.span() for m in _NO_MERGES.finditer(question)]
    if spans:
        tw.conditions.append((NON_MERGE, "merge commits left out"))
    return spans


def word_conditions(words: str, tw: TimeWindow, params: dict, topic: Topic | None = None) -> None:
    """Commit conditions the question's words give, added to ``tw.conditions`` (values as ``$params``);
    ``topic``: what :func:`topic_words` found (read before the paths, whose span it takes)."""
    if _FIXING.search(words) or topic is not None and topic.fixing:
        tw.conditions.append((FIX_CONDITION, FIX_SAID))
    if topic is not None:
        literal = topic.literal and not topic.in_message
        cond = literal_condition(topic.words, params) if literal else topic_condition(topic.words, params, topic.near)
        tw.conditions.append(cond)
    if m := _MORE_FILES.search(words):
        params["n_files"] = int(m.group(2))
        more = m.group(1).lower() in ("more", "over")
        tw.conditions.append(
            (f"coalesce(c.files_total, 0) {'>' if more else '<'} $n_files", f"changing {m.group(0).lower()}")
        )


def renamed_away(
    scope: Scope | None, tw: TimeWindow, author: str | None, params: dict, ret: str | None = None
) -> str | None:
    """Commits that renamed a path of the scope to a path outside it (the ingest's rename metadata);
    ``ret``: what to return of each such commit ``c`` instead of the commit row."""
    if scope is None or scope.kind in ("all", "any"):
        return None
    if scope.kind == "file":
        params["p"] = str(scope.value)[5:]
        cond, fcond = "o = $p", "f.id = $f"
    elif scope.kind == "dir":
        params["fx"] = str(scope.value).rstrip("/")
        cond, fcond = "(('file:' + o) STARTS WITH $f OR ('file:' + o) = $fx)", "(f.id STARTS WITH $f OR f.id = $fx)"
    else:
        cond, fcond = "('file:' + o) IN $f", "f.id IN $f"
    where = [f"any(o IN coalesce(c.renamed_from, []) WHERE {cond})", "size(coalesce(c.parents, [])) < 2"]
    where += time_bounds(tw, params)
    where += tag_filter(tw, params)
    if author:
        where.append("c.author = $author")
    return (
        f"MATCH (c:commit) WHERE {' AND '.join(where)} OPTIONAL MATCH (c)-[:touches]->(f:file) WHERE {fcond} "
        f"WITH c, count(f) AS k WHERE k = 0 {ret or 'RETURN ' + C_RET}"
    )
