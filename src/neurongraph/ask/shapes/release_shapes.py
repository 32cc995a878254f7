"""Which release first held a change: "which release first ships X?", "in which version was F dropped?",
"first release that had X?".

Why a shape of its own: a release question names the change by a commit id, by a file that was added or
removed, or by the words of its subject; all three come down to "the oldest tag whose history holds that
commit" (``git tag --contains``, by the tag's creation time), read on the tag graph (``tags.py``).  The
change is found the way git would be asked: the commit named, the commit git says added or removed the file,
or the commits whose subject holds every word of the topic (``git log --grep``), and the earliest release
that holds any of them wins.  A named commit that no release holds, but whose ``cherry-pick -x`` copy one
does (a backport), is answered with the copy's release, and says so.  Without a commit, a file or a topic
that finds a commit, no tag is guessed.
"""

from __future__ import annotations

import re

from ..devplan import C_RET, DevPlan, Scope
from ..names import Mention
from ..tags import tag_graph
from ..topics import stem, topic_condition
from .file_removal import file_status  # the status the reader records per listed file
from .shape import Shape

__all__ = ["plan_release", "RELEASE_Q"]

RELEASE_Q = re.compile(
    r"\b(?:which|what|first|earliest)\b[^?]*\b(?:releases?|tags?|versions?)\b"
    r"|\b(?:releases?|tags?|versions?)\b[^?]*\b(?:contain\w*|includ\w*|ship\w*|land\w*|ha[sd]|have)\b",
    re.I,
)
# the clause that names the change: "ships X", "had X", "first contained X", "X was added / dropped"
_ADDS = (
    r"ship(?:s|ped)?|contain(?:s|ed)?|includ(?:es|ed)|ha[sd]|have|introduc(?:es|ed)|add(?:s|ed)|support(?:s|ed)?|"
    r"brought|got|gained"
)
_DROPS = r"drop(?:s|ped)?|remov(?:es|ed)|delet(?:es|ed)|lost|gone"
_CLAUSE = re.compile(rf"\b(?:(?P<add>{_ADDS})|(?P<drop>{_DROPS}))\b(?P<rest>[^?]*)", re.I)
_DROPPED = re.compile(rf"\b(?:{_DROPS})\b", re.I)
_ADDED = re.compile(rf"\b(?:{_ADDS}|creat(?:es|ed))\b", re.I)
_WORD = re.compile(r"[\w.=()\-]+")
# words of a release clause that are not the change's own ("the first release that had support for X")
_FILLER = frozenset(
    "a an the that this it its in to of for with and or first earliest release releases version versions tag "
    "tags support feature features option options ability option get got be been was were is are did does do "
    "which what when where ever any some new built built-in builtin".split()
)
_RANKING = re.compile(r"\b(?:most|how\s+many|number\s+of|count)\b", re.I)  # "which version had the most …"
MAX_CANDIDATES = 200  # commits a topic may find before the earliest release among them is read


def plan_release(engine, question: str, commit: Mention | None, scope: Scope | None, params: dict) -> DevPlan | None:
    """The first release holding the change the question names; None when it is not a release question
    or names no change this shape can find (the caller then tries the others)."""
    if not RELEASE_Q.search(question) or _RANKING.search(question):
        return None
    graph = tag_graph(engine)
    if commit is not None:
        if graph is not None and not graph.containing(commit.node):
            picked = _cherry_picks(engine, commit.node)  # in no release itself: a backport of it may be
            if picked and any(graph.containing(p) for p in picked):
                what = f"a cherry-pick of {commit.node} ({', '.join(picked)}; {commit.node} itself is in no release)"
                return _first_tag(graph, question, picked, what, params)
        return _first_tag(graph, question, [commit.node], commit.node, params)
    if scope is not None and scope.kind == "file":
        dropped = bool(_DROPPED.search(question))
        if not dropped and not _ADDED.search(question):
            return None
        found = _file_change(engine, str(scope.value), dropped)
        what = f"the commit that {'removed' if dropped else 'added'} {scope.phrase}"
        return _first_tag(graph, question, found[:1], what, params)
    words = _topic(question)
    # every word in one subject; else the identifiers alone ("case_sensitive" where the words around it are
    # the asker's, not the subject's): an identifier is the project's own name for the change
    for topic in (words, [w for w in words if re.search(r"\w[_.]\w", w)]):
        if not topic:
            continue
        cond, said = topic_condition(topic, params)
        rows = engine.cypher(
            f"MATCH (c:commit) WHERE {cond} RETURN c.id AS id ORDER BY c.time LIMIT {MAX_CANDIDATES}", params
        )["rows"]
        if rows:
            return _first_tag(graph, question, [r["id"] for r in rows], f"a commit {said}", params)
    return None


def _topic(question: str) -> list[str]:
    """The change's own words after the release clause's verb, stemmed; identifiers kept whole."""
    m = _CLAUSE.search(question)
    if m is None:
        return []
    out = []
    for tok in _WORD.findall(m.group("rest")):
        for part in re.split(r"[()=]+", tok):
            low = part.strip(".-").lower()
            if low and low not in _FILLER and not low.isdigit():
                out.append(stem(low) if re.fullmatch(r"[a-z]+", low) else low)
    return list(dict.fromkeys(out))[:6]


def _cherry_picks(engine, commit_id: str) -> list[str]:
    """The commits that say they copy ``commit_id`` (``cherry-pick -x``'s line, the reader's ``cherry_pick_of``)."""
    rows = engine.cypher(
        "MATCH (p:commit)-[:cherry_pick_of]->(c:Node {id: $a}) RETURN p.id AS id ORDER BY p.time", {"a": commit_id}
    )["rows"]
    return [r["id"] for r in rows]


def _file_change(engine, file_id: str, dropped: bool) -> list[str]:
    """The commits git says removed (``dropped``) or added the file, oldest first."""
    rows = engine.cypher(
        "MATCH (c:commit)-[:touches]->(f:file {id: $f}) RETURN c.id AS id ORDER BY c.time", {"f": file_id}
    )["rows"]
    want = "D" if dropped else "A"
    path = file_id.removeprefix("file:")
    out = []
    for r in rows:
        node = engine.store.get_node(r["id"])
        if node is not None and file_status(node, path) == want:
            out.append(r["id"])
    return out


def _first_tag(graph, question: str, commits: list[str], what: str, params: dict) -> DevPlan:
    """The oldest tag (by creation time) holding any of ``commits`` (every such tag when the question asks
    for releases in the plural); no tag when none does or the history has none."""
    found: list[tuple[int, str]] = []
    if graph is not None:
        for c in commits:
            found.extend(graph.containing(c))
    found = sorted(set(found))
    every = bool(re.search(r"\b(?:releases|tags|versions)\b", question, re.I)) and not re.search(
        r"\b(?:first|earliest|oldest)\b", question, re.I
    )
    picked = [name for _, name in (found if every else found[:1])]
    params["held"] = commits[:MAX_CANDIDATES]
    if graph is not None and graph.titled:  # no tags: the releases are the commits titled by their version
        params["tags"] = [str(graph.ids[graph.tags[name][0]]) for name in picked]
        cy = f"MATCH (c:commit) WHERE c.id IN $tags RETURN {C_RET} ORDER BY time, id"
        kind = "commits"
        which = (
            "release commits (titled by their version; the history has no tags) whose history holds"
            if every
            else "the first release commit (titled by its version; the history has no tags) whose history holds"
        )
    else:
        params["tags"] = ["tag:" + name for name in picked]
        cy = (
            "MATCH (t:tag) WHERE t.id IN $tags RETURN t.id AS id, t.title AS title, t.type AS type, t.time AS time "
            "ORDER BY time, id"
        )
        which = "tags whose history holds" if every else "the first tag (by creation time) whose history holds"
        kind = "tags"
    none = f"No release holds {what}" + ("" if commits else " (no such commit in the store)") + "."
    return DevPlan("tags_containing" if every else "first_tag", kind, cy, params, f"{which} {what}", none_text=none)


RELEASE = Shape(
    "release",
    lambda engine, q: plan_release(engine, q.text, q.commit, q.scope, q.params),
    doc="which release first contained a commit, shipped a change, dropped a file",
)
