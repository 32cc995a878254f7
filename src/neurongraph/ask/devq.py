"""Developer questions over a git history: scoped lists, counts, "who", PR → commits → files, file history.

Why a planner of its own next to :mod:`.nl2cypher`: those questions combine *filters* (a path scope — file,
directory, prefix or glob —, a time window or tag range, an author, a PR) with an *intent* (list, count, who, who last,
created, renamed, files of, PR of), and the answer must hold for the whole scoped set: a count counts it,
a list says "showing N of M".  The one-hop translator answers relation questions ("which commit fixes X")
and stays in charge of them.

What git would count is what is counted: with a path scope, merge commits are left out (their first-parent
diff repeats their branch's commits, and ``git log -- PATH`` shows the branch commits); without one,
merges count.  Commits of a PR are the commits ``part_of`` it (its merged branch, from the ingest) and the
commit ``merged_in`` it (the merge or the squash); its files are those the merging commit touches (a merge's
first-parent diff: ``git diff M^1 M``).  Every value the user typed goes in as a ``$param``.
"""

from __future__ import annotations

import fnmatch
import heapq
import re
import weakref

from . import file_shapes, release_shapes, tag_shapes
from .branch_tags import plan_branch_tags
from .devplan import (
    C_RET,
    MAX_ITEMS,
    NON_MERGE,
    DevPlan,
    Scope,
    by_time,
    commit_match,
    no_merge_spans,
    quoted_conditions,
    tag_filter,
    time_bounds,
    topic_words,
    word_conditions,
)
from .names import Mention
from .nl2cypher import type_words
from .tags import LazyTags, off_head
from .timephrase import TimeWindow, parse_time
from .trailer_shapes import plan_trailers

__all__ = ["DevPlan", "plan", "run_plan"]

FILE_SHAPES = ("file_created", "file_renamed", "file_deleted", "who_deleted")  # about a file node (before identifiers)
SHOW = 10  # items written out in the answer text
_PR_NUM = re.compile(r"\b(?:PR|pull request|pull|merge request)\s*#?\s*(\d{1,7})\b", re.I)
_HASHNUM = re.compile(r"(?<![\w/])#(\d{1,7})\b")
_WHO = re.compile(r"\b(who|whom|whose|which (?:person|people|author|authors|developer|developers))\b", re.I)
_COUNT = re.compile(r"\b(how many|number of|count)\b|\bwc\s+-l\b", re.I)  # `wc -l F`: a shell user's count
_LAST = re.compile(r"\b(last|latest|most recent(?:ly)?|newest)\b", re.I)
_FIRST = re.compile(r"\b(first|oldest|earliest)\b", re.I)
_N = re.compile(
    r"\b(?:last|latest|newest|first|oldest|earliest|top|recent)\s+(\d{1,3})\b"
    r"|\b(\d{1,3})\s+(?:most recent(?:ly)?|latest|newest|last|oldest|first|largest|biggest)\b",
    re.I,
)
# "the most recent change to F", "the first commit": one commit, not the whole list
_ONE = re.compile(
    r"\bthe\s+(?:very\s+)?(?:most recent|latest|last|newest|first|oldest|earliest)\s+"
    r"(?:merge\s+)?(?:change|commit|patch)\b(?!e?s)",
    re.I,
)
_CREATED = re.compile(r"\b(created|added|introduc\w*|first (?:added|committed)|appear\w*|creat\w*|born)\b", re.I)
_RENAMED = re.compile(r"\b(renam\w*|moved?)\b", re.I)
# a question about what became of a file names the file as it was ("what was F renamed to", "is F still there")
_FATE = re.compile(r"\b(?:renam\w*|mov(?:e|ed)|remov\w*|delet\w*|dropped|gone|still|anymore|happen\w*|missing)\b", re.I)
_TWICE = re.compile(r"\b(?:created|added)\s+twice\b|\bre-?(?:added|created)\b|\bcame\s+back\b", re.I)
# "what happened to F?", "I can't find F anymore", "where did F go": its rename or its removal
_GONE = re.compile(
    r"\bwhat\s+happ\w*\s+(?:to|with)\b|\bcan'?n?o?t\s+find\b|\bwhere\s+(?:did|has|is)\b[^?]*\b(?:go|gone)\b"
    r"|\bmissing\b|\bdisappear\w*",
    re.I,
)
_FILES = file_shapes.FILES
_COMMITS = re.compile(r"\b(commits?|changes?|changed|committed|patch(?:es)?|made|touch\w*|modif\w*)\b", re.I)
_PRS = re.compile(r"\b(prs?|pull requests?|merge requests?)\b", re.I)
_AUTHORED = re.compile(r"\b(author\w*|wrote|written|made|committed|who)\b", re.I)
_LISTY = re.compile(r"\b(which|what|list|show|give|find|all)\b", re.I)
_NEGATION = re.compile(
    r"\b(?:never|without|except|excluding|other than)\b|\b\w+n't\b(?!\s+(?:find|see|locate)\b)|"
    r"\b(?:did|does|do|has|have|had|was|were|is|are|has been|have been)\s+not\b",
    re.I,
)


def _negated(words: str, notes: list[str]) -> bool:
    """Whether the question negates ("never touched", "did not change"): no shape reads a negation, so it is
    said as not understood rather than answered without it (the commits *by* A for "files A never touched")."""
    neg = _NEGATION.search(words)
    if neg:
        notes.append(f"not understood: '{neg.group(0)}' (a negation; no graph shape reads one)")
    return neg is not None


_RELATION = re.compile(r"\b(fix\w*|revert\w*|follow\w*|supersed\w*|refer\w*|mention\w*)\b", re.I)
# "who" over the whole history: a ranking ("who wrote the most commits", "top contributors") or the first/latest commit
_PEOPLE = re.compile(r"\b(authors?|people|persons?|contributors?|committers?|developers?)\b", re.I)
_WHEN = re.compile(r"\bwhen\b", re.I)
_PER = re.compile(r"\b(?:per|each|every|by|a)\s+(year|month)s?\b|\b(year|month)ly\b", re.I)
_PER_AUTHOR = re.compile(r"\b(?:per|each|every)\s+(?:author|person|contributor|developer|committer)s?\b", re.I)
_BUSIEST = re.compile(
    r"\b(?:most active|busiest|most productive)\s+(year|month)s?\b"
    r"|\b(year|month)s?\b[^?]*\b(?:busiest|most active|most productive|most commits)\b",
    re.I,
)
_HOW_OLD = re.compile(r"\bhow old\b|\bwhen did (?:the )?(?:project|repo\w*|history|development) (?:start|begin)", re.I)
# "how many …, and which ones?", "…, and when was the last one?": the list, which says its length
_ALSO_WHICH = re.compile(
    r"\b(?:and|also)\s+(?:which|what|list|show)\b|\bwhich\s+ones\b|\blist\s+them\b"
    r"|\band\s+when\s+(?:was|were|did)\s+the\s+(?:last|latest|first|most\s+recent|newest|oldest)\b",
    re.I,
)
_MERGES = re.compile(r"\bmerges\b|\bmerge commits?\b|\bmerged commits\b", re.I)
_REVIEW = re.compile(r"\b(review\w*|ack(?:ed|s)?|approv\w*|sign(?:ed)?[- ]off\w*|tested)\b", re.I)
_RANKING = re.compile(r"\b(most|top|main|biggest|leading|contributors?|committers?|authors)\b", re.I)


# ---------------------------------------------------------------------- what the question names
def _scopes(engine, question: str, taken: list[tuple[int, int]], notes: list[str], now=None) -> list[Scope]:
    """Paths the question names: a file node, a directory (some file below it), a glob; else a note."""
    cands = []
    for m in re.finditer(r"\S+", question):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        p = m.group(0).strip("`'\"()[]{}<>“”‘’").rstrip(".,;:!?")
        if p and not p.startswith(("#", "http")) and ":" not in p:
            cands.append(p)
    bare = _bare_dirs(question, taken)
    if not cands and not bare:
        return []
    found = engine.store.node_types([f"file:{p}" for p in cands])
    out: list[Scope] = []
    for p in cands:
        if f"file:{p}" in found:
            out.append(Scope("file", now(p) if now is not None else f"file:{p}", p))
        elif "*" in p or ("[" in p and "]" in p):
            prefix = re.split(r"[*?\[]", p, maxsplit=1)[0]
            files = [
                i for i, _ in engine.store.ids_with_prefix(f"file:{prefix}", 200_000) if fnmatch.fnmatchcase(i[5:], p)
            ]
            if files:
                out.append(Scope("set", files, p))
            else:
                notes.append(f"no file matches '{p}' in the store")
        elif "/" in p and re.fullmatch(r"[\w.@~+/-]+", p):
            d = p.strip("/")
            if d and engine.store.ids_with_prefix(f"file:{d}/", 1):
                out.append(Scope("dir", f"file:{d}/", p))
            elif not p.endswith("/") and engine.store.ids_with_prefix(f"file:{p}", 1):
                out.append(Scope("dir", f"file:{p}", p))  # a path prefix ("mypy/sem": semanal.py, semanal_*.py)
            else:
                notes.append(f"no file or directory '{p}' in the store")
        elif re.fullmatch(r"[\w.-]+\.[A-Za-z]\w{0,7}", p) and not re.fullmatch(r"v?\d+(\.\d+)+\w*", p):
            out.extend(_basename(engine, p, notes))
    for d, phrase in bare:  # "under docs", "the bridge directory": only when the store has files below it
        if not any(sc.phrase == d for sc in out) and engine.store.ids_with_prefix(f"file:{d}/", 1):
            out.append(Scope("dir", f"file:{d}/", phrase))
    return out


def _renamed_now(engine, path: str, notes: list[str]) -> str:
    """A bare file name ("checkexpr.py") that was renamed away (to ``mypy/checkexpr.py``) is read as the path
    it has now, the end of its renames (its history still reaches back through them); one that was removed,
    as the one file of that name that exists now (a move git saw as a delete and an add); a path written with
    a directory is taken as written ("back when it was click/core.py")."""
    node = f"file:{path}"
    if "/" in path:
        return node
    seen = {node}
    while True:
        nxt = sorted(d for s, rel, d in engine.store.edges_from([node]) if rel == "renamed_to" and d not in seen)
        if len(nxt) != 1:
            break
        node = nxt[0]
        seen.add(node)
    if node != f"file:{path}":
        notes.append(f"'{path}' read as {node[5:]} (renamed since)")
        return node
    if engine.code_history.line_count(path) == 0:  # removed: moved, if the removing commit added its namesake
        now = [
            f
            for f, _ in engine.store.ids_with_prefix("file:", 1_000_000)
            if f.endswith("/" + path) and engine.code_history.line_count(f[5:])
        ]
        if len(now) == 1 and _moved_together(engine, node, now[0]):
            notes.append(f"'{path}' read as {now[0][5:]} (moved there; {path} itself was removed)")
            return now[0]
    return node


def _moved_together(engine, old: str, new: str) -> bool:
    """Whether one commit removed ``old`` and added ``new`` (a move git's rename detection did not pair)."""
    rows = engine.cypher(
        "MATCH (c:commit)-[:touches]->(:file {id: $old}), (c)-[:touches]->(:file {id: $new}) RETURN c.id AS id",
        {"old": old, "new": new},
    )["rows"]
    for r in rows:
        node = engine.store.get_node(r["id"])
        if node is not None and file_shapes.file_status(node, old[5:]) == "D":
            return file_shapes.file_status(node, new[5:]) in ("A", None)
    return False


def _basename(engine, name: str, notes: list[str]) -> list[Scope]:
    """The one file a bare file name stands for ("usdt.c" for ``src/usdt.c``): the file of that name, or
    the last of a chain of renames among several (``click/x.py`` renamed to ``src/click/x.py``: one file's
    history); several unrelated files of that name are said, not guessed between."""
    files = [i for i, _ in engine.store.ids_with_prefix("file:", 1_000_000) if i.endswith("/" + name)]
    if len(files) > 1:
        renamed = {s for s, rel, d in engine.store.edges_from(files) if rel == "renamed_to" and d in files}
        files = [f for f in files if f not in renamed]
    if len(files) == 1:
        notes.append(f"'{name}' read as {files[0][5:]}")
        return [Scope("file", files[0], name)]
    if files:
        shown = ", ".join(f[5:] for f in files[:5]) + (" …" if len(files) > 5 else "")
        notes.append(f"'{name}' names {len(files)} files ({shown}): name one by its path")
    else:
        notes.append(f"no file '{name}' in the store")
    return []


_BARE_DIR = re.compile(
    r"\b(?:under|inside|within|below|beneath|in)\s+(?:the\s+)?([\w.@~+-]+)(?:\s+(?:directory|folder|dir|tree))?\b"
    r"|\b(?:the\s+)?([\w.@~+-]+)\s+(?:directory|folder|dir)\b",
    re.I,
)


def _bare_dirs(question: str, taken: list[tuple[int, int]]) -> list[tuple[str, str]]:
    """Directory names written without a slash: after "under/inside/in (the)", or before "directory"."""
    out = []
    for m in _BARE_DIR.finditer(question):
        name = m.group(1) or m.group(2)
        if name and not name.isdigit() and not any(s < m.end() and m.start() < e for s, e in taken):
            out.append((name, m.group(0)))
    return out


def _authors(engine) -> list[str]:
    """Every commit author, longest names first (cached on the projection until the store changes)."""

    def load() -> list[str]:
        names: list[str] = []
        while True:
            rows = engine.cypher(
                "MATCH (c:commit) WHERE c.author IS NOT NULL "
                "RETURN DISTINCT c.author AS a ORDER BY a SKIP $s LIMIT 900",
                {"s": len(names)},
            )["rows"]
            names += [r["a"] for r in rows if isinstance(r["a"], str)]
            if len(rows) < 900:
                break
        return sorted(names, key=len, reverse=True)

    return engine._cypher_projection().memo("authors", load)


def _author(engine, question: str, taken: list[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """The longest author name in the question: written as recorded first, then ignoring case."""
    names = [n for n in _authors(engine) if len(n) >= 3]
    for text, keyed in ((question, names), (question.lower(), [(n.lower(), n) for n in names])):
        hit = _find_name(text, keyed, taken)
        if hit:
            return hit
    return _first_name(question, names, taken)


# "when did guido last commit", "commits by yonghong", "jukka's first commit": a first name where a person stands
_PERSON_SLOT = re.compile(r"\b(?:did|does|has|had|by|from|of)\s+([A-Za-z][\w-]{3,})\b|\b([A-Za-z][\w-]{3,})'s\b")


def _first_name(question: str, names: list[str], taken: list[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """One author by first name alone, where the question puts a person ("did guido", "by jukka"), when
    exactly one recorded name starts with it (the others that do are the same person only if their
    first two words agree); ambiguous or common words are not read."""
    for m in _PERSON_SLOT.finditer(question):
        word = m.group(1) or m.group(2)
        span = m.span(1) if m.group(1) else m.span(2)
        if any(a < span[1] and span[0] < b for a, b in taken) or word.lower() in _NOT_NAMES:
            continue
        hits = [n for n in names if n.split()[0].lower() == word.lower() and " " in n]
        if len(hits) == 1:
            return hits[0], span
    return None


_NOT_NAMES = frozenset("this that these those them they what which when where there here last first most".split())


def _find_name(text: str, names, taken: list[tuple[int, int]]) -> tuple[str, tuple[int, int]] | None:
    """The first name (longest first) found in ``text`` as whole words, outside the spans already read
    (``str.find``, no regex: a store has thousands of author names)."""
    for item in names:
        key, name = item if isinstance(item, tuple) else (item, item)
        s = text.find(key)
        while s >= 0:
            e = s + len(key)
            if (s == 0 or not text[s - 1].isalnum()) and (e == len(text) or not text[e].isalnum()):
                if not any(a < e and s < b for a, b in taken):
                    return name, (s, e)
            s = text.find(key, s + 1)
    return None


def _renamed_away(
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


def _list(shape: str, match: str, params: dict, said: list[str], order: str, n: int | None) -> DevPlan:
    lim = n if n else MAX_ITEMS
    cy = f"{match} WITH DISTINCT c ORDER BY {by_time(order)} LIMIT {lim} RETURN {C_RET}, c.parents AS parents"
    cnt = f"{match} RETURN count(DISTINCT c) AS count" if not n else None
    which = "latest" if order == "DESC" else "first"
    what = (f"the {which} commit" if n == 1 else f"the {which} {n} commits" if n else "commits") + (
        " " + ", ".join(said) if said else ""
    )
    return DevPlan(shape, "commits", cy, params, what, cnt, filters=said)


# ---------------------------------------------------------------------- planning
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


_FROM_TO = re.compile(r"\bfrom\s+(\S+)\s+(?:to|into)\s+(\S+)", re.I)


def _dir_move(question: str, scope, params: dict) -> DevPlan | None:
    """ "When did the package move from click/ to src/click/?": the commits with a rename from a path under the
    first directory to one under the second (their first 100 renames each, as the projection keeps them)."""
    if scope is None or scope.kind not in ("any", "all") or not _RENAMED.search(question):
        return None
    dirs = [p for p in scope.value if getattr(p, "kind", "") == "dir"]
    m = _FROM_TO.search(question)
    if len(dirs) != 2 or m is None:
        return None
    first, second = sorted(dirs, key=lambda d: question.find(d.phrase))
    params["moved_from"], params["moved_to"] = str(first.value)[5:], str(second.value)[5:]
    cy = (
        "MATCH (c:commit) WHERE size(coalesce(c.parents, [])) < 2 AND any(i IN range(0, size(coalesce("
        "c.renamed_from, [])) - 1) WHERE c.renamed_from[i] STARTS WITH $moved_from AND c.renamed_into[i] "
        f"STARTS WITH $moved_to) RETURN {C_RET} ORDER BY time"
    )
    expl = f"the commits that moved files from {first.phrase} to {second.phrase}"
    return DevPlan(
        "dir_moved",
        "commits",
        cy,
        params,
        expl,
        none_text=f"No commit moved files from {first.phrase} to {second.phrase}.",
    )


def _releases_or_trailers(engine, question, taken, commit, scope, tw, author, params, who: bool) -> DevPlan | None:
    """The shapes read before the others: "which release first contained X / shipped Y / dropped F", "which
    tags are on the stable branch only?", "when did the package move from A/ to B/?", and "who reviews the
    most (Reviewed-by)?" / "who acked X?" (the people a commit's trailers name)."""
    if (release := release_shapes.plan_release(engine, question, commit, scope, params)) is not None:
        return release
    if commit is None and (on_branch := plan_branch_tags(engine, question, params)) is not None:
        return on_branch
    if (moved := _dir_move(question, scope, params)) is not None:
        return moved
    named = commit.node if commit is not None else None
    return plan_trailers(_blank(question, taken), named, scope, tw, author, params) if who else None


def plan(engine, question: str, schema, mentions: list[Mention]) -> tuple[DevPlan | None, list[str]]:
    """A plan when the question is a developer question this module answers; always the notes (phrases
    not understood, names not found), which the caller must say in its answer."""
    notes: list[str] = []
    tw = parse_time(question, tags=LazyTags(engine))
    notes += [f"not understood: {p}" for p in tw.not_understood]
    taken = list(tw.spans) + [(m.start, m.end) for m in mentions] + no_merge_spans(question, tw)
    commit = next((m for m in mentions if m.type == "commit"), None)
    quoted_or_named = [m for m in mentions if m.type != "commit"]
    pr = _pr_anchor(engine, question, mentions, notes)
    as_named = tw.active or tw.commits is not None or bool(_FATE.search(question))  # the file as it was then
    author, topic, scope = _named(engine, question, taken, mentions, notes, as_named)
    params: dict = {}
    word_conditions(_blank(question, taken), tw, params, topic)  # "that fix bugs", "more than 10 files"
    quoted_conditions(question, taken, tw, params)  # "how many 'sync: latest changes' commits": the subject
    head_only(engine, tw, params)  # what `git log` reads: HEAD's history, unless a tag phrase names other commits
    if scope is None and (gone := _missing_scope(question, notes)) is not None:
        return gone, notes
    who, count = bool(_WHO.search(question)), bool(_COUNT.search(question))
    wants_prs = bool(_PRS.search(_blank(question, taken)))  # "…-pr.patch" is a path, not a PR

    if (early := _releases_or_trailers(engine, question, taken, commit, scope, tw, author, params, who)) is not None:
        return early, notes
    if commit is not None:
        return _plan_commit(question, commit, params, who, wants_prs), notes
    if pr is not None:
        return _plan_pr(question, pr, params, who, count), notes
    if quoted_or_named and not scope or _negated(_blank(question, taken), notes):
        return None, notes  # a named node (title, issue): the translator's shapes; a negation: said, not read
    if wants_prs and (prs := _prs_of(author, scope, who, tw, params, count)) is not None:
        return prs, notes
    if scope is not None and scope.kind == "file" and not who and not count:
        fp = _plan_file(engine, _blank(question, taken), scope, tw, params)  # a path's own words ("Move") are no intent
        if fp is not None:
            return fp, notes
    # the reverts as such ("which commits were reverted?"); other relations without a filter: the translator's
    reverts = _reverts(_blank(question, taken), scope, tw, author, params, count)
    if reverts is not None or _RELATION.search(question) and not (scope or tw.active or author or tw.conditions):
        return reverts, notes
    has_filter = scope is not None or tw.active or author is not None or bool(tw.conditions)
    rest = _blank(question, tw.spans)  # "last" in "last month" is time, not "the latest"
    first = bool(_FIRST.search(rest) or _HOW_OLD.search(rest)) and not _LAST.search(rest)
    n = _how_many(rest, author is not None or scope is not None, first)
    order = "ASC" if first else "DESC"
    words = _blank(question, taken)  # the question without its paths, times and names ("AUTHORS" is a file)
    if who:
        return _who_question(words, rest, scope, tw, author, params, first, has_filter, notes), notes
    # "how many releases are there?", "the latest tag": the tags themselves, not the commits (before the counts)
    tags = (
        None
        if scope or author or wants_prs
        else tag_shapes.plan_tags(words, tw, params) or file_shapes.renamed_files(words, tw, author, params, count)
    )
    if (counted := tags or _counted(words, scope, tw, author, params, count, wants_prs, n)) is not None:
        return counted, notes
    others = [t for t, _ in type_words(question, schema.labels) if t not in ("commit", "file")]
    if others and not has_filter or wants_prs:
        return None, notes  # "latest 2 pull requests", "issues after 2023": the translator's list shape
    if n is not None or has_filter and (_LISTY.search(question) or _COMMITS.search(question)):
        if _FILES.search(question) and not _COMMITS.search(question.replace("changed", "")) and scope is None:
            match, said = commit_match(None, tw, author, params)
            cy = (
                f"{match} MATCH (c)-[:touches]->(f:file) RETURN DISTINCT f.id AS id, f.title AS title, "
                f"f.type AS type ORDER BY id LIMIT {MAX_ITEMS}"
            )
            expl = "files touched by commits " + ", ".join(said)
            return DevPlan("files_changed", "files", cy, params, expl, filters=said), notes
        match, said = commit_match(scope, tw, author, params)
        listed = _list("latest_n" if n else "commits", match, params, said, order, n)
        listed.extra = None if n else _renamed_away(scope, tw, author, params)
        return listed, notes
    return None, notes


_REVERTED = re.compile(r"\b(?:commits?|changes?|patch(?:es)?)\b[^?]*\b(?:got|been|were|was|are|is)\s+reverted\b", re.I)
_REVERT_COMMITS = re.compile(r"\breverts\b|\brevert(?:ing)?\s+commits\b", re.I)
REVERT_TITLE = "c.title STARTS WITH 'Revert'"  # what `git revert` writes ('Revert "<subject>"'), GitHub's too


def _reverts(words: str, scope, tw, author, params: dict, count: bool) -> DevPlan | None:
    """The reverts as such (no commit named): "which commits were reverted?" (the commits a revert names:
    its ``reverts`` edge, or the fixes / follow-up edge of a commit titled "Revert …") and "how many reverts
    are there?" (the commits whose subject starts with "Revert"); the question's filters apply to the revert."""
    if _REVERTED.search(words):
        match, said = commit_match(scope, tw, author, params)
        pairs = (  # a revert that also says "Fixes: Y" names Y too: its reverts edges speak for it when it has one
            f"{match} MATCH (c)-[e]->(x:commit) WHERE type(e) = 'reverts' OR "
            f"(type(e) IN ['fixes', 'follows_up'] AND {REVERT_TITLE} AND NOT (c)-[:reverts]->(:commit)) "
            "WITH DISTINCT x AS c "
        )
        expl = " ".join(["commits a revert names (its reverts edge, or a fix edge of a commit titled Revert)", *said])
        if count:
            return DevPlan("count_reverted", "count", pairs + "RETURN count(c) AS count", params, expl, filters=said)
        cy = pairs + f"RETURN {C_RET} ORDER BY time DESC, id LIMIT {MAX_ITEMS}"
        return DevPlan("reverted", "commits", cy, params, expl, filters=said)
    if _REVERT_COMMITS.search(words) and (count or _LISTY.search(words)):
        match, said = commit_match(scope, tw, author, params, where=[REVERT_TITLE])
        said = ["whose subject starts with 'Revert'"] + said
        if count:
            cy = f"{match} RETURN count(DISTINCT c) AS count"
            return DevPlan("count_reverts", "count", cy, params, "commits " + ", ".join(said), filters=said)
        return _list("reverts_list", match, params, said, "DESC", None)
    return None


def _named(engine, question: str, taken: list, mentions: list[Mention], notes: list[str], dated: bool = False):
    """The author, the subject topic and the path scope the question names, read in that order, each
    taking its words: "g.denis" is an author, not a file; "commits that mention typeshed" a word, not a path."""
    author = _author_taken(engine, question, taken)
    topic = topic_words(_blank(question, taken))
    if topic is not None:
        taken.append(topic.span)
    return author, topic, _scope_of(engine, question, taken, mentions, notes, dated)


def _author_taken(engine, question: str, taken: list[tuple[int, int]]) -> str | None:
    """The author the question names, its words then taken (no path or intent is read from them)."""
    hit = _author(engine, question, taken)
    if hit is None:
        return None
    taken.append(hit[1])
    return hit[0]


def _how_many(rest: str, named: bool, first: bool) -> int | None:
    """The number of commits asked for: "the last 5", "the latest change" (1), "when did A last commit" and
    "when was F last changed" (1: ``named``, an author or a path), "how old is the repository" (its first
    commit)."""
    nm = _N.search(rest)
    if nm:
        return int(nm.group(1) or nm.group(2))
    if _ONE.search(rest) or named and _WHEN.search(rest) and (first or _LAST.search(rest)) or _HOW_OLD.search(rest):
        return 1
    return None


def _prs_by(author: str, tw: TimeWindow, params: dict) -> DevPlan:
    """The PRs merged by commits of ``author`` (a squash's author wrote the PR; a merge's clicked merge)."""
    params["author"] = author
    where = ["c.author = $author"] + time_bounds(tw, params)
    cy = (
        f"MATCH (c:commit)-[:merged_in]->(p) WHERE {' AND '.join(where)} "
        "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time ORDER BY time DESC"
    )
    return DevPlan("prs_by_author", "prs", cy, params, f"PRs merged by commits of {author}")


def _pr_mergers(tw: TimeWindow, params: dict) -> DevPlan:
    """ "Who merged the most PRs?": authors of the commits that merged PRs (``merged_in``: a merge's author
    clicked merge; a squash's author wrote the PR), by PRs."""
    where = ["p.type IN ['pull_request', 'pr']"] + time_bounds(tw, params)
    head = f"MATCH (c:commit)-[:merged_in]->(p) WHERE {' AND '.join(where)} "
    cy = (
        f"{head}RETURN c.author AS author, count(DISTINCT p) AS prs, max(c.time) AS last "
        f"ORDER BY prs DESC, author LIMIT {MAX_ITEMS}"
    )
    said = [tw.describe()] if tw.active else []
    expl = "authors of the commits that merged PRs (a squash's author wrote the PR), most PRs first"
    out = DevPlan("pr_mergers", "authors", cy, params, ", ".join([expl] + said), filters=said)
    out.count_cypher = f"{head}RETURN count(DISTINCT c.author) AS count"
    return out


def _prs_of(author, scope: Scope | None, who: bool, tw: TimeWindow, params: dict, count: bool) -> DevPlan | None:
    """PRs by an author, or the PRs whose commits touched a scope; None for other PR questions."""
    if author:
        return _prs_by(author, tw, params)
    if scope is not None and not who:
        return _prs_touching(scope, tw, params, count)
    return None


def _prs_touching(scope: Scope, tw: TimeWindow, params: dict, count: bool) -> DevPlan:
    """ "Which PRs touched DIR?": the PRs a commit touching the scope belongs to (its branch, ``part_of``)
    or merged (a squash, ``merged_in``)."""
    match, said = commit_match(scope, tw, None, params)
    pr_of = "MATCH (c)-[:merged_in|part_of]->(p) WHERE p.type IN ['pull_request', 'pr'] "
    head = f"{match} {pr_of}"
    expl = "PRs with commits " + ", ".join(said)
    ret = "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time ORDER BY time DESC"
    # a commit that moved a path of the scope away touches only the new path, yet `git log -- SCOPE` lists it
    moved = _renamed_away(scope, tw, None, params, ret=pr_of + ret)
    if count:  # the PRs' ids, with the renamed-away commits' PRs, counted when run
        out = DevPlan("count_prs_touching", "count", head + ret, params, expl)
    else:
        out = DevPlan("prs_touching", "prs", f"{head}{ret} LIMIT {MAX_ITEMS}", params, expl, filters=said)
        out.count_cypher = head + "RETURN count(DISTINCT p) AS count"
    out.extra = moved
    return out


def _at(question: str, phrase: str) -> int:
    """Where ``phrase`` stands on its own in the question: "CHECKPOINT-COMMIT" is not the end of
    "BPF-CHECKPOINT-COMMIT" (the first such place; else the first place at all)."""
    m = re.search(r"(?<![\w./-])" + re.escape(phrase) + r"(?![\w/-])", question)
    return m.start() if m else question.find(phrase)


def _scope_of(
    engine, question: str, taken: list, mentions: list[Mention], notes: list[str], dated: bool = False
) -> Scope | None:
    """The question's path scope: one path (a file mention counts), or several — "touched both A and B" needs
    every one, "commits to A and B" / "A or B" any of them; their spans are added to ``taken``."""

    def now(path: str) -> str:  # a dated question means the file as it was then: not read as today's file
        return f"file:{path}" if dated else _renamed_now(engine, path, notes)

    found = [(_at(question, sc.phrase), sc) for sc in _scopes(engine, question, taken, notes, now)]
    found += [(m.start, Scope("file", now(m.node[5:]), m.phrase)) for m in mentions if m.type == "file"]
    kept: list[tuple[int, Scope]] = []
    for at, sc in sorted(found, key=lambda t: (" " in t[1].phrase, -len(t[1].phrase))):
        # one stretch of text is one path, a written path before a bare directory phrase and the longest
        # first: "under include/linux/" is not also the bare directory "under include"
        end = at + len(sc.phrase)
        if all(sc.value != o.value for _, o in kept) and not any(at < a + len(o.phrase) and a < end for a, o in kept):
            kept.append((at, sc))
    scopes = [sc for _, sc in sorted(kept, key=lambda t: t[0])]
    taken += [(at, at + len(sc.phrase)) for at, sc in sorted(kept, key=lambda t: t[0])]
    if len(scopes) < 2:
        return scopes[0] if scopes else None
    both = re.search(r"\b(both|all of|together|at once|as well as)\b", question, re.I)
    joint = (" and " if both else " or ").join(sc.phrase for sc in scopes)
    return Scope("all" if both else "any", list(scopes), ("both " if both else "") + joint)


def _missing_scope(question: str, notes: list[str]) -> DevPlan | None:
    """A scoped question whose path names nothing in the store matches nothing — not every commit, with a
    note saying the scope was dropped."""
    if not any(n.startswith("no file") for n in notes):
        return None
    if _COUNT.search(question):
        return DevPlan("missing_scope", "count", "RETURN 0 AS count", {}, "the path names nothing in the store")
    if _COMMITS.search(question) or _WHO.search(question) or _LISTY.search(question):
        return DevPlan("missing_scope", "commits", "UNWIND [] AS x RETURN x AS id", {}, "the path names nothing")
    return None


def _plan_commit(question: str, commit: Mention, params: dict, who: bool, wants_prs: bool) -> DevPlan | None:
    """A question about one named commit: its author, the PR it was merged in, what reverted it."""
    params["a"] = commit.node
    if re.search(r"\brevert(?:s|ed|ing)?\b", question, re.I) and not wants_prs:
        # one edge per target, the strongest first: a revert that also says "Fixes: X" is stored as fixes,
        # so revert commits linked by fixes/refs count when no reverts edge names X
        by_rel = (
            f"MATCH (c:commit)-[e:reverts]->(a:Node {{id: $a}}) RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        by_title = (
            "MATCH (c:commit)-[e]->(a:Node {id: $a}) WHERE type(e) IN ['fixes', 'refs', 'follows_up'] "
            f"AND c.title STARTS WITH 'Revert' RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        if re.search(r"\b(?:which|what)\b[^?]*\brevert(?:ed|s)\b", question, re.I) and not re.search(
            r"\bdid\b", question, re.I
        ):
            fb = (by_title, "no reverts edge: revert commits that name it as fixed or referenced")
            return DevPlan("reverted_by", "commits", by_rel, params, f"commits that revert {commit.node}", fallback=fb)
        fwd = (
            "MATCH (a:Node {id: $a})-[e]->(c:commit) WHERE type(e) = 'reverts' OR "
            "(type(e) IN ['fixes', 'refs', 'follows_up'] AND a.title STARTS WITH 'Revert') "
            f"RETURN DISTINCT {C_RET}, type(e) AS rel ORDER BY time"
        )
        return DevPlan("reverts", "commits", fwd, params, f"commits {commit.node} reverts")
    if who or re.search(r"\bauthor", question, re.I):
        return DevPlan(
            "author_of",
            "author",
            f"MATCH (c:Node {{id: $a}}) RETURN {C_RET}",
            params,
            f"the author of {commit.node}",
        )
    if wants_prs and not _RELATION.search(question.replace(commit.phrase, "")):
        return DevPlan(
            "pr_of_commit",
            "prs",
            "MATCH (c:Node {id: $a})-[r]->(p) WHERE type(r) IN ['merged_in', 'part_of'] "
            "RETURN DISTINCT p.id AS id, p.title AS title, p.type AS type, p.time AS time, c.id AS anchor",
            params,
            f"the PR {commit.node} was merged in (merged_in, part_of)",
        )
    return None


def _plan_pr(question: str, pr: str, params: dict, who: bool, count: bool) -> DevPlan | None:
    """A question about one PR: its files, its commits, who merged it."""
    params["pr"] = pr
    merging = "MATCH (m:commit)-[:merged_in]->(p:Node {id: $pr}) WITH m ORDER BY m.time LIMIT 1 "
    if _FILES.search(question):
        return DevPlan(
            "pr_files",
            "files",
            merging + "MATCH (m)-[:touches]->(f:file) RETURN DISTINCT f.id AS id, f.title AS title, "
            "f.type AS type, m.id AS via ORDER BY id",
            params,
            f"files the commit that merged {pr} touches (a merge: its first-parent diff)",
        )
    if who:
        return DevPlan("pr_author", "author", merging + "WITH m AS c RETURN " + C_RET, params, f"who merged {pr}")
    if _COMMITS.search(question) or count:
        cy = (
            "MATCH (c:commit)-[r]->(p:Node {id: $pr}) WHERE type(r) IN ['merged_in', 'part_of'] "
            f"WITH DISTINCT c ORDER BY c.time, c.id RETURN {C_RET}"
        )
        return DevPlan("pr_commits", "commits", cy, params, f"commits part_of or merged_in {pr}")
    return None


def _plan_file(engine, question: str, scope: Scope, tw: TimeWindow, params: dict) -> DevPlan | None:
    """A question about one file's history: when it was renamed, created or removed; or its length.  "What
    happened to F? I can't find it" is its rename when F was renamed away, else its removal."""
    if (length := file_shapes.file_length(question, scope, tw, None, params)) is not None:
        return length  # "how long is F?"
    if file_shapes.ranks_commits_by_lines(question):
        return None  # "the commits that added the most lines to F": a ranking, not F's creation
    params["f"] = scope.value
    gone = bool(_GONE.search(question)) and not tw.active
    if _RENAMED.search(question) or gone and engine.code_history.renamed_away(str(scope.value)[5:]):
        params["p"] = str(scope.value)[5:]
        into = "[i IN range(0, size(c.renamed_from) - 1) WHERE c.renamed_from[i] = $p | c.renamed_into[i]]"
        direct = (
            "MATCH (c:commit) WHERE $p IN c.renamed_from AND size(coalesce(c.parents, [])) < 2 "
            f"RETURN {C_RET}, {into} AS renamed_to ORDER BY time"
        )
        # a store without rename metadata: the first non-merge commit touching each new path
        by_edge = (
            "MATCH (o:file {id: $f})-[:renamed_to]->(n:file) MATCH (c:commit)-[:touches]->(n) "
            "WHERE size(coalesce(c.parents, [])) < 2 WITH n, c ORDER BY c.time, c.id "
            f"WITH n, collect(c)[0] AS c RETURN {C_RET}, n.id AS renamed_to"
        )
        expl = f"the commit that renamed {scope.phrase}"
        fb = (by_edge, "no rename metadata: the first commit touching the new path")
        return DevPlan("file_renamed", "commits", direct, params, expl, fallback=fb)
    if (gone or _TWICE.search(question)) and not file_shapes.DELETED.search(question) and not tw.active:
        return file_shapes.file_events(scope, params)  # "what happened to F?": when it was added and removed
    if (file_shapes.DELETED.search(question) or file_shapes.STILL.search(question)) and not tw.active:
        return file_shapes.file_deleted(scope, params, who=False)
    if _CREATED.search(question) and not tw.active:
        cy = (
            "MATCH (c:commit)-[:touches]->(f:file {id: $f}) WHERE size(coalesce(c.parents, [])) < 2 "
            f"WITH DISTINCT c ORDER BY {by_time()} LIMIT {file_shapes.FIRST_COMMITS} RETURN {C_RET}, "
            "c.parents AS parents, "
            "c.author_time AS author_time"
        )
        return DevPlan("file_created", "commits", cy, params, f"the first commit touching {scope.phrase}")
    return None


def _blank(question: str, spans: list[tuple[int, int]]) -> str:
    out = list(question)
    for a, b in spans:
        out[a:b] = " " * (b - a)
    return "".join(out)


def _who_question(
    words: str, rest: str, scope, tw, author, params: dict, first: bool, has_filter: bool, notes: list[str]
) -> DevPlan | None:
    """A "who" question: with a filter, about the scoped commits; without one, only a question about the
    commits themselves ("who made the most / the first commit", "who are the top contributors"), so that
    "who knows about X" stays a search.  "Who created F" is the author of F's first commit, "who deleted
    F" the author of its removal; reviewers are not in the store, and the answer says so."""
    if _REVIEW.search(words):
        return None  # (said by ``_pr_anchor``, which reads every question: reviewers are not recorded)
    if _PRS.search(words) and (_RANKING.search(words) or re.search(r"\bmerg\w*", words, re.I)):
        return _pr_mergers(tw, params)
    if _LINES_RANKED.search(words) and not re.search(r"\b(?:remov|delet|drop)\w*", words, re.I):
        return _authors_by_lines(scope, tw, author, params)  # "who wrote the most lines (of F)?"
    if scope is not None and scope.kind == "file":
        if file_shapes.DELETED.search(words):
            return file_shapes.file_deleted(scope, params, who=True)
        first = first or bool(_CREATED.search(words))
    last = bool(_LAST.search(rest))
    whole = (
        _COMMITS.search(rest)
        and (first or last or _RANKING.search(rest))
        or re.search(r"\b(top|main|biggest|leading)\s+(contributors?|committers?|authors)\b", rest, re.I)
        or (first or last)
        and _PEOPLE.search(rest)  # "who was the first contributor?"
    )
    return _who(scope, tw, author, params, first, last) if has_filter or whole else None


_LINES_RANKED = re.compile(r"\b(?:most|top|biggest|largest)\b[^?]*\blines?\b|\blines?\b[^?]*\bmost\b", re.I)


def _authors_by_lines(scope, tw, author, params: dict) -> DevPlan:
    """ "Who wrote the most lines?": the authors by the lines their non-merge commits added (to the scoped
    files, if any), what ``git log --no-merges --numstat`` adds up per author; summed when run."""
    if scope is None:
        match, said = commit_match(None, tw, author, params, where=[NON_MERGE])
        said = ["(merge commits left out)"] + said
    else:
        match, said = commit_match(scope, tw, author, params, touching=True)
    path = "substring(f.id, 5)" if scope is not None else "null"
    cy = f"{match} RETURN DISTINCT c.idx AS idx, c.author AS author, {path} AS path ORDER BY idx, path"
    expl = "authors by the lines their commits added" + (" " + ", ".join(said) if said else "")
    out = DevPlan("authors_by_lines", "authors", cy, params, expl, filters=said)
    out.count_cypher = f"{match} RETURN count(DISTINCT c.author) AS count"
    return out


def _who(scope, tw, author, params: dict, first: bool, last: bool) -> DevPlan:
    """ "who last changed F" (the author of the newest scoped commit), "who first …", else the authors."""
    match, said = commit_match(scope, tw, author, params)
    if first or last:
        order = "ASC" if first else "DESC"
        # "who created F": its first commits, of which run_plan takes the one git says created it (clock skew)
        lim = file_shapes.FIRST_COMMITS if first and scope is not None and scope.kind == "file" else 1
        cy = f"{match} WITH DISTINCT c ORDER BY {by_time(order)} LIMIT {lim} RETURN {C_RET}"
        expl = f"the author of the {'first' if first else 'latest'} commit " + (", ".join(said) or "of the history")
        return DevPlan("who_first" if first else "who_last", "author", cy, params, expl, filters=said)
    cy = (
        f"{match} WITH DISTINCT c RETURN c.author AS author, count(c) AS commits, max(c.time) AS last "
        f"ORDER BY commits DESC, author LIMIT {MAX_ITEMS}"
    )
    expl = "authors of the commits " + ", ".join(said) if said else "authors of all commits, most commits first"
    out = DevPlan("who", "authors", cy, params, expl, filters=said)
    out.count_cypher = f"{match} RETURN count(DISTINCT c.author) AS count"
    out.extra = _renamed_away(scope, tw, author, params)
    return out


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
    return _list("latest_n" if n else "merges", match, params, said, "DESC", n)


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
        out = DevPlan("count_authors", "count", cy, params, expl, filters=said)
        out.extra = _renamed_away(scope, tw, author, params)
        return out
    if members:
        listed = _list("commits", match, params, said, "DESC", None)
        listed.extra = _renamed_away(scope, tw, author, params)
        return listed
    cy = f"{match} RETURN count(DISTINCT c) AS count"
    out = DevPlan("count", "count", cy, params, "commits " + ", ".join(said) if said else "all commits", filters=said)
    out.extra = _renamed_away(scope, tw, author, params)
    return out


# "how many files did the PEP 661 sentinels PR touch?", "… did the very first commit add?": one change, named by a
# description no shape resolves to a commit (a sha, #N or a quoted subject would be a mention, read before)
_ONE_CHANGE = re.compile(
    r"\bdid\s+(?P<what>(?:the|that|this|a)\s+[\w\s.-]{0,60}?\b(?:pr|pull\s+request|commit|change|patch|merge))\s+"
    r"(?:touch|add|chang|modif|remov|delet|creat|introduc)\w*",
    re.I,
)


def _unread_change(what: str) -> DevPlan:
    """Said, not answered: the question counts something of one change it names only by a description."""
    text = (
        f"Not understood: which change '{what.strip()}' is — name it by its sha, its #number or its quoted subject "
        "(the count of the whole history would not be its)."
    )
    return DevPlan("change_not_read", "commits", "UNWIND [] AS x RETURN x AS id", {}, "one change", none_text=text)


def _counted(
    words: str, scope, tw, author, params: dict, count: bool, wants_prs: bool, n: int | None
) -> DevPlan | None:
    """A count ("how many commits / authors / files ..."), or a ranking of files or directories ("which
    files change most often?", "the most recently changed file")."""
    if count and scope is None and author is None and (one := _ONE_CHANGE.search(words)) is not None:
        return _unread_change(one.group("what"))  # "how many files did the sentinels PR touch?": which PR?
    if count and file_shapes.COUNT_FILES.search(words) and not _PEOPLE.search(words):
        if (checked := file_shapes.added_or_removed(words, scope, tw, author, params)) is not None:
            return checked  # "how many files were added in 2023?": those created, not those touched
        if file_shapes.files_there(words, scope) and not tw.active and author is None:  # "files in dcb/ now"
            return file_shapes.files_now(scope, params, count=True)
        return file_shapes.count_files(scope, tw, author, params)
    if count and (length := file_shapes.file_length(words, scope, tw, author, params)) is not None:
        return length  # "how many lines does F have?": its length, not the lines its commits changed
    if count and (lines := file_shapes.count_lines(words, scope, tw, author, params)) is not None:
        return lines
    if scope is None and _MERGES.search(words) and (count or _LISTY.search(words) or n):
        return _merge_commits(scope, tw, author, params, count and not _ALSO_WHICH.search(words), n)
    if (busy := _BUSIEST.search(words)) is not None:  # "the most active months", "the busiest year"
        return _per_period(scope, tw, author, params, (busy.group(1) or busy.group(2)).lower(), busiest=True)
    if _PER_AUTHOR.search(words):  # "how many commits per author?": the authors with their commit counts
        return _who(scope, tw, author, params, False, False)
    if (count or _LISTY.search(words)) and (per := _PER.search(words)):
        return _per_period(scope, tw, author, params, (per.group(1) or per.group(2)).lower())
    if count:
        people = bool(_PEOPLE.search(words))
        return _count(scope, tw, author, params, wants_prs, people, members=bool(_ALSO_WHICH.search(words)))
    return file_shapes.ranking(words, scope, tw, author, params, n)


NO_REVIEWERS = "not recorded: a PR's reviews (git keeps only the Reviewed-by / Acked-by trailers of its commits)"


def _pr_anchor(engine, question: str, mentions: list[Mention], notes: list[str]) -> str | None:
    """``pr:N`` the question names ("PR #12", "pull request 12", "#12" when no issue 12 exists).  "Who reviewed
    PR #N" is said to be unrecorded here (no PR shape reads reviewers either)."""
    if _WHO.search(question) and _REVIEW.search(question) and _PRS.search(question):
        notes.append(NO_REVIEWERS)  # a commit's reviewers are its trailers (trailer_shapes); a PR's are not in git
    for m in mentions:
        if m.type in ("pull_request", "pr"):
            return m.node
    num = _PR_NUM.search(question)
    if num:
        node = f"pr:{int(num.group(1))}"
        if engine.store.node_types([node]):
            return node
        notes.append(f"no PR #{num.group(1)} in the store")
        return None
    for h in _HASHNUM.finditer(question):
        n = h.group(1)
        if not engine.store.node_types([f"issue:{n}", f"pr:{n}", f"pull_request:{n}"]):
            notes.append(f"no issue or PR #{n} in the store (no issue export ingested?)")
    return None


# ---------------------------------------------------------------------- running and answering
# shapes whose rows (one per file) are checked in Python after the query: every row must be read, and the
# graph server returns at most 1,000 per query (mypy's files removed were counted among its 1,000 most
# recently changed files: 9 of 1,300)
ROW_CHECKED = (
    "files_oldest",
    "files_newest",
    "files_deleted",
    "count_files_deleted",
    "files_added",
    "count_files_added",
    "authors_by_lines",
    "largest_commits_lines",
    "files_now",
    "count_files_now",
)
PAGE = 1000


def _all_rows(engine, p: DevPlan) -> list[dict]:
    """Every row of ``p.cypher`` (ordered, so pages do not overlap), read a page at a time."""
    rows: list[dict] = []
    while True:
        got = engine.cypher(f"{p.cypher} SKIP {len(rows)} LIMIT {PAGE}", p.params)["rows"]
        rows += got
        if len(got) < PAGE:
            return rows


def _one_root(engine) -> bool:
    """Whether the history has exactly one root commit (``$one_root`` of ``devplan.by_time``), per store state."""
    seq = engine.store.current_seq()
    hit = _ROOTS_SEEN.get(engine)
    if hit is None or hit[0] != seq:
        n = engine.cypher("MATCH (c:commit) WHERE size(coalesce(c.parents, [])) = 0 RETURN count(c) AS n")["rows"]
        hit = _ROOTS_SEEN[engine] = (seq, bool(n) and int(n[0]["n"]) == 1)
    return hit[1]


_ROOTS_SEEN: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _rows(engine, p: DevPlan) -> list[dict]:
    """The plan's rows, with what its shape reads beyond the query (renamed-away commits, the first of a
    same-second tie, the removal among a file's touches, the files of the latest change, the tip's walk)."""
    if "$one_root" in p.cypher or p.count_cypher and "$one_root" in p.count_cypher:
        p.params["one_root"] = _one_root(engine)
    rows = _all_rows(engine, p) if p.shape in ROW_CHECKED else engine.cypher(p.cypher, p.params)["rows"]
    if not rows and p.fallback:
        rows = engine.cypher(p.fallback[0], p.params)["rows"]
        p.explanation += f" ({p.fallback[1]})"
    if p.shape == "count_prs_touching":
        moved = engine.cypher(p.extra, p.params)["rows"] if p.extra else []
        return [{"count": len({r["id"] for r in rows} | {r["id"] for r in moved})}]
    if p.extra:
        rows = _add_renamed_away(engine, p, rows)
    if p.shape == "file_created" or p.shape == "who_first" and len(rows) > 1:
        # the first commit git says created it (a child dated before it: clock skew), and who wrote that one
        rows = _earliest(engine, file_shapes.creators(engine, rows, str(p.params["f"])[5:]))
    if p.shape in ("file_deleted", "who_deleted"):
        rows = file_shapes.resolve_deleted(engine, p, rows)
    if p.shape == "files_latest":
        rows = file_shapes.latest_only(rows)
    if keep := _KEEP_ROWS.get(p.shape):  # checked row by row: the removed files, the files there now
        rows = keep(engine, rows)
    if p.shape in ("files_added", "count_files_added", "files_oldest", "files_newest"):
        rows = file_shapes.keep_added(engine, rows, p.params)
    if p.shape in ("files_oldest", "files_newest"):
        rows = file_shapes.by_age(rows, p)
    if p.shape in ("count_files_added", "count_files_deleted", "count_files_now"):  # checked row by row
        rows = [{"count": len(rows)}]
    if summed := _SUMMED.get(p.shape):
        rows = summed(engine, p, rows)
    if p.shape == "latest_n" and not p.filters and " DESC" in p.cypher:
        rows = _walk_from_tip(engine, len(rows), rows)
    if p.shape in ("latest_n", "who_first") and not p.filters and " ASC" in p.cypher:
        rows = _root_first(engine, rows)
    return rows


_KEEP_ROWS = {
    "files_deleted": file_shapes.keep_removed,
    "count_files_deleted": file_shapes.keep_removed,
    "files_now": file_shapes.keep_present,
    "file_events": file_shapes.keep_events,
    "count_files_now": file_shapes.keep_present,
}
# shapes whose answer is summed from the stored diffs after the query (lines of a file, of commits, of authors)
_SUMMED = {
    "file_lines": lambda engine, p, rows: file_shapes.file_lines(engine, p) if rows else [],
    "count_lines_added": file_shapes.sum_lines,
    "count_lines_deleted": file_shapes.sum_lines,
    "count_lines_changed": file_shapes.sum_lines,
    "authors_by_lines": lambda engine, p, rows: file_shapes.lines_by_author(engine, rows),
    "largest_commits_lines": lambda engine, p, rows: file_shapes.commits_by_lines(
        engine, rows, int(p.params["lines_top"])
    ),
}


def _root_first(engine, rows: list[dict]) -> list[dict]:
    """ "The first commit" of the whole history is a root (no parent), the one ``git log --reverse`` lists
    first, even when a child of it is dated earlier; the other rows of "the first N" follow by time.  With
    one root ``devplan.by_time`` has ordered it first already; this picks the oldest of several roots."""
    if not rows:
        return rows
    roots = engine.cypher(
        f"MATCH (c:commit) WHERE size(coalesce(c.parents, [])) = 0 RETURN {C_RET}, c.parents AS parents "
        "ORDER BY time, id LIMIT 1"
    )["rows"]
    if not roots:
        return rows
    return roots + [r for r in rows if r["id"] != roots[0]["id"]][: len(rows) - 1]


def run_plan(engine, p: DevPlan) -> tuple[list[dict], dict, str, list[str]]:
    """``(rows, result, answer, refs)`` for a plan."""
    rows = _rows(engine, p)
    scope = ("; ".join(p.filters)) if p.filters else ""
    if p.shape == "count_authors":
        rows = [{"count": len(set(rows[0]["authors"])) if rows else 0}]
    if p.kind == "count" and not rows and p.none_text:
        return rows, {"kind": "count", "shape": p.shape, "value": None}, p.none_text, []
    if p.kind == "count":
        n = rows[0]["count"] if rows else 0
        result = {"kind": "count", "shape": p.shape, "value": int(n)}
        return rows, result, f"{n} — {p.explanation}.", []
    if p.kind == "author":
        if not rows or not rows[0].get("author"):
            return (
                rows,
                {"kind": "author", "shape": p.shape, "value": None},
                p.none_text or "Not found: no commit matches " + p.explanation + ".",
                [],
            )
        r = rows[0]
        result = {"kind": "author", "shape": p.shape, "value": r["author"], "items": [r["id"]]}
        line = f"{r['author']} — {p.explanation}: {_short(r)}"
        return rows, result, f"{line}\n[refs: {r['id']}]", [r["id"]]
    if p.kind == "authors":
        total = len(rows)
        if p.count_cypher and total >= MAX_ITEMS:  # the list is cut at MAX_ITEMS; the number of people is not
            total = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
        result = {"kind": "authors", "shape": p.shape, "items": [r["author"] for r in rows], "total": total}
        if not rows:
            return rows, result, p.none_text or f"No commits {scope or 'match'}.", []
        lines = [
            f"- {r['author']}: {_tally(r)}" + (f" (last {str(r['last'])[:10]})" if r.get("last") else "")
            for r in rows[:SHOW]
        ]
        whose = f"of the commits {scope}" if scope else "of all commits, most commits first"
        if p.shape in ("pr_mergers", "authors_by_lines", "trailer_ranking", "trailer_people"):
            whose = "— " + p.explanation
        noun = "people" if p.shape.startswith("trailer") else "authors"
        head = f"{total} {noun} {whose}" + (f" (showing {SHOW} of {total})" if total > SHOW else "")
        return rows, result, head + ":\n" + "\n".join(lines), []
    if p.kind in ("dirs", "periods"):
        groups: int | None = None
        if p.count_cypher and len(rows) >= MAX_ITEMS:  # the ranking stops at MAX_ITEMS; the number does not
            groups = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
        return rows, *file_shapes.dirs_answer(p, rows, total=groups)
    total = len(rows)
    if p.count_cypher and len(rows) >= MAX_ITEMS:
        total = int(engine.cypher(p.count_cypher, p.params)["rows"][0]["count"])
    ids = [r["id"] for r in rows[:MAX_ITEMS]]  # (a shape checked row by row, e.g. files removed, has no LIMIT)
    result = {"kind": p.kind, "shape": p.shape, "items": ids, "total": total}
    noun = {"commits": "commits", "files": "files", "prs": "PRs", "tags": "tags"}[p.kind]
    if not rows:
        return rows, result, p.none_text or f"No {noun}: {p.explanation} — none in the store.", []
    shown = rows[:SHOW]
    if total == 1 and noun != "PRs":
        noun = noun[:-1]  # "1 commit", "1 file", "1 tag"
    head = (
        f"{total} {noun} — {p.explanation}"
        + (f" (showing {len(shown)} of {total})" if total > len(shown) else "")
        + ":"
    )
    counted = [file_shapes.row_figure(r) for r in shown]  # files_most_changed: commits; by recency: the date
    lines = [f"- {_short(r)}{n} [{r['id']}]" for r, n in zip(shown, counted)]
    refs = [r["id"] for r in shown]
    return rows, result, head + "\n" + "\n".join(lines) + f"\n[refs: {', '.join(refs)}]", refs


def _tally(r: dict) -> str:
    """ "12 commits" / "3 PRs" / "1,200 lines" of an authors row."""
    if "lines" in r:
        return f"{r['lines']:,} lines added in {r['commits']} commit" + ("" if r["commits"] == 1 else "s")
    n, noun = (r["prs"], "PR") if "prs" in r else (r["commits"], "commit")
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _short(r: dict) -> str:
    rid = r.get("id", "")
    if rid.startswith("commit:"):
        bits = [rid[7:17], str(r.get("time") or "")[:10], r.get("author") or "", r.get("title") or ""]
        return " ".join(b for b in bits if b)
    if rid.startswith("tag:"):  # a tag's name and when it was made ("when was the first version tagged?")
        return " ".join(b for b in (rid[4:], str(r.get("time") or "")[:10]) if b)
    title = r.get("title")
    if not title or title in (rid, rid.removeprefix("file:")):
        return rid.removeprefix("file:")  # a file's title is its path: said once (the [ref] names the node)
    return f"{title} ({rid})"


def _earliest(engine, rows: list[dict]) -> list[dict]:
    """The first commit of rows ordered by time.  Commits of the same second (a rebase, ``git am``, an
    import) are told apart by ancestry: one that reaches another through same-second parents comes after
    it; then by author time."""
    if not rows:
        return rows
    tied = [r for r in rows if r.get("time") == rows[0].get("time")]
    if len(tied) > 1:
        ids = {r["id"] for r in tied}
        later = {r["id"] for r in tied if _reaches(engine, r, ids - {r["id"]}, rows[0].get("time"))}
        tied = [r for r in tied if r["id"] not in later] or tied
    tied.sort(key=lambda r: (r.get("author_time") or 0, r["id"]))
    return [tied[0]]


def _reaches(engine, row: dict, targets: set[str], t, limit: int = 64) -> bool:
    """Does ``row`` reach one of ``targets`` through parents committed in the same second ``t``?"""
    frontier = [f"commit:{p}" for p in row.get("parents") or []]
    seen: set[str] = set()
    while frontier and len(seen) < limit:
        if targets & set(frontier):
            return True
        seen.update(frontier)
        got = engine.cypher(
            "MATCH (c:commit) WHERE c.id IN $ids AND c.time = $t RETURN c.parents AS parents", {"ids": frontier, "t": t}
        )["rows"]
        frontier = [f"commit:{p}" for g in got for p in (g["parents"] or []) if f"commit:{p}" not in seen]
    return False


def _walk_from_tip(engine, n: int, rows: list[dict]) -> list[dict]:
    """ "The latest N commits" as ``git log -N`` lists them: from the newest commit, always the newest
    commit whose child was already listed.  Committer times are not monotonic along history (a commit
    dated after its own child: clock skew, mirrors), so the N newest by time can differ."""
    if not rows:
        return rows
    tip = _tip(engine, rows[0])
    seen = {tip["id"]}
    heap: list = []
    out: list[dict] = []
    nxt: dict | None = tip
    while nxt is not None and len(out) < n:
        out.append(nxt)
        parents = [f"commit:{p}" for p in (nxt.get("parents") or []) if f"commit:{p}" not in seen]
        if parents:
            seen.update(parents)
            got = engine.cypher(
                f"MATCH (c:commit) WHERE c.id IN $ids RETURN {C_RET}, c.parents AS parents", {"ids": parents}
            )["rows"]
            for g in got:
                heapq.heappush(heap, (_newest_first(g.get("time")), g["id"], g))
        nxt = heapq.heappop(heap)[2] if heap else None
    return out


def _tip(engine, row: dict, limit: int = 50) -> dict:
    """The head of history from the newest commit by time: while some commit has it as a parent (a child
    dated earlier), go to the newest such child."""
    for _ in range(limit):
        kids = engine.cypher(
            f"MATCH (c:commit) WHERE $sha IN c.parents RETURN {C_RET}, c.parents AS parents ORDER BY time DESC LIMIT 1",
            {"sha": row["id"][7:]},
        )["rows"]
        if not kids:
            return row
        row = kids[0]
    return row


def _newest_first(t) -> tuple:
    """A heap key that pops the newest ISO time first."""
    return tuple(-ord(ch) for ch in str(t or ""))


def _add_renamed_away(engine, p: DevPlan, rows: list[dict]) -> list[dict]:
    """Commits that moved a path of the scope elsewhere touch only the new path, yet ``git log -- SCOPE``
    lists them: add those that touch nothing in the scope (a count adds their number)."""
    extra = engine.cypher(p.extra or "", p.params)["rows"]
    if not extra:
        return rows
    if p.shape == "count_authors":
        return [{"authors": sorted(set(rows[0]["authors"] if rows else []) | {r["author"] for r in extra})}]
    if p.kind == "count":
        return [{"count": int(rows[0]["count"] if rows else 0) + len(extra)}]
    if p.kind == "authors":  # their authors count as well: one more commit each, and maybe a later "last"
        by = {r["author"]: dict(r) for r in rows}
        for r in extra:
            a = by.setdefault(r["author"], {"author": r["author"], "commits": 0, "last": r.get("time")})
            a["commits"] += 1
            a["last"] = max(str(a.get("last") or ""), str(r.get("time") or ""))
        return sorted(by.values(), key=lambda r: (-r["commits"], r["author"]))
    seen = {r["id"] for r in rows}
    merged = rows + [r for r in extra if r["id"] not in seen]
    merged.sort(key=lambda r: (str(r.get("time") or ""), r["id"]), reverse=" DESC" in p.cypher)
    return merged
