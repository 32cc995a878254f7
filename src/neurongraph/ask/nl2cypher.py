"""LLM-free NL → Cypher for the common shapes of questions over the store's schema.

Shapes (tried in order):

* **path**: two named nodes and "path / connect / link / related / between" (or no relation word) →
  the paths of up to 3 hops between them;
* **one hop**: a relation word and a named node → the other ends ("which commit fixes #12", "what did
  commit 3f2a fix", "what touched src/x.py before 2021-05-01", "which issues were fixed by PR 40");
* **list**: a type word and no name → nodes of that type, optionally before/after a date, newest first
  ("latest 5 commits", "issues after 2023");
* **neighbourhood**: a name and nothing else → its typed edges.

Names come from :mod:`.names` (ids, ``#123``, shas, paths, quoted titles, the query linker); relation words
from the registry's relation names and inverse names (``blocks`` reads ``blocked_by`` backwards) with
simple stemming and a few synonyms; who is subject comes from the relation's type pairs when they decide it,
else from word order and the passive ("fixed by").  Everything a user typed goes in as a ``$param``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from ..graphdb.projection import label
from .names import Mention, find_mentions

__all__ = ["CypherQuery", "RelWord", "translate", "relation_words", "type_words", "stem"]

LIMIT = 25
_WORDS = re.compile(r"[A-Za-z][A-Za-z']*")
SYNONYMS = {
    "resolv": "fix",
    "clos": "fix",
    "repair": "fix",
    "chang": "touch",
    "modifi": "touch",
    "modify": "touch",
    "edit": "touch",
    "mention": "ref",
    "referenc": "ref",
    "refer": "ref",
    "undo": "revert",
    "undid": "revert",
    "replac": "supersed",
    "introduc": "merged",
    "land": "merged",
    "merg": "merged",
    "renam": "renamed",
    "follow": "follows",
    "cit": "cite",
    "implement": "implemented",
}
PATH_WORDS = {"path", "connect", "connected", "link", "linked", "related", "relate", "between", "relationship"}
LATEST = {"latest", "newest", "recent", "last", "most"}
OLDEST = {"oldest", "first", "earliest"}
_TIME = re.compile(
    r"\b(before|after|since|until|prior to)\s+(\d{4}(?:-\d{2}(?:-\d{2})?)?(?:[T ]\d{2}:\d{2}(?::\d{2})?)?)", re.I
)
_COUNT = re.compile(r"\bhow many\b", re.I)
_NUM = re.compile(r"\b(?:latest|last|newest|first|oldest|top)\s+(\d{1,3})\b", re.I)


def stem(w: str) -> str:
    w = w.lower().replace("'", "")
    for suf in ("ing", "ed", "es", "s"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 3 else w


@dataclass
class CypherQuery:
    """A generated read-only query with its parameters and a one-line explanation a user can check."""

    cypher: str
    params: dict
    explanation: str
    shape: str = ""
    anchors: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"cypher": self.cypher, "params": self.params, "explanation": self.explanation}


@dataclass
class RelWord:
    """A relation word found in the question (possibly through its inverse name) and where it stands."""

    rel: str  # stored relation name
    flipped: bool  # matched through its inverse name
    start: int
    end: int
    passive: bool  # "... by" right after the verb


def _tokens(q: str) -> list[tuple[str, int, int]]:
    return [(m.group(), m.start(), m.end()) for m in _WORDS.finditer(q)]


def relation_words(question: str, relations: dict[str, dict]) -> list[RelWord]:
    """Relation words in the question, by stem of each relation name's (and inverse name's) first word."""
    vocab: dict[str, list[tuple[str, bool, list[str]]]] = {}
    for name, r in relations.items():
        for nm, flipped in ((name, False), (r.get("inverse"), True)):
            if not nm:
                continue
            parts = [p for p in re.split(r"[_\s-]+", nm) if p]
            if parts:
                vocab.setdefault(stem(parts[0]), []).append((name, flipped, [p.lower() for p in parts[1:]]))
    toks = _tokens(question)
    out: list[RelWord] = []
    for i, (w, s, e) in enumerate(toks):
        st = stem(w)
        cands = vocab.get(st) or vocab.get(stem(SYNONYMS.get(st, "")))
        if not cands:
            continue
        nxt = [t[0].lower() for t in toks[i + 1 : i + 3]]
        # prefer a multi-word name whose next words follow ("blocked by" -> blocked_by over blocks)
        best = max(cands, key=lambda c: (bool(c[2]) and nxt[: len(c[2])] == c[2], -len(c[2])))
        rel, flipped, rest = best
        matched_rest = bool(rest) and nxt[: len(rest)] == rest
        end = toks[i + len(rest)][2] if matched_rest else e
        # "fixed by X" reads backwards; a name that itself ends in "by" (blocked_by) already says so
        passive = nxt[:1] == ["by"] and not matched_rest
        out.append(RelWord(rel, flipped, s, end, passive))
    return out


def type_words(question: str, labels: dict[str, int]) -> list[tuple[str, int]]:
    """Node types the question names (plural or singular; "PR" / "pull request" for either spelling)."""
    by_stem: dict[str, str] = {}
    for t in labels:
        by_stem.setdefault(stem(t.replace("_", " ").split()[-1] if "_" in t else t), t)
    pr = next((t for t in ("pr", "pull_request") if t in labels), None)
    out: list[tuple[str, int]] = []
    low = question.lower()
    if pr:
        for m in re.finditer(r"\b(prs?|pull requests?)\b", low):
            out.append((pr, m.start()))
    for w, s, _ in _tokens(question):
        named = by_stem.get(stem(w))
        if named and named != pr:
            out.append((named, s))
    return sorted(set(out), key=lambda x: x[1])


# words a plain listing of nodes by type may hold besides its type word, its order and its time
_LISTING = frozenset(
    "a an the all any every some me us show list give get find tell see what whats which who are is was were be do "
    "does did there here have has had we i you please of in on at by for from to and or with before after since "
    "until during between this that these those last past year years month months week weeks day days ago today "
    "yesterday now ever so far recent recently latest newest most oldest first earliest new old total number many "
    "how count ones one hey hi thanks just only about each every".split()
)
_TAG_KIN = frozenset("release releases version versions".split())  # what a tag is, said beside it
_MONTHS = re.compile(r"^(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*$", re.I)


def _words_beyond_a_list(question: str, types: list[tuple[str, int]]) -> list[str]:
    """The words of ``question`` that a listing by type would leave unread (not its type words, order, time or
    filler): a question holding any asks something else, and a list of the newest nodes would look like its answer."""
    at = {p for _, p in types}
    kin = _TAG_KIN if any(t == "tag" for t, _ in types) else frozenset()  # "the newest release tag"
    out = []
    for w, s, e in _tokens(question):
        low = w.lower().strip("'")
        if s in at or any(p <= s < p + 16 and question[p:e].lower().startswith(("pr", "pull")) for p in at):
            continue
        if (
            low in _LISTING
            or low in kin
            or _MONTHS.match(low)
            or len(low) <= 1
            or low.endswith("'s")
            and low[:-2] in _LISTING
        ):
            continue
        out.append(low)
    return out


def _time_filter(question: str) -> tuple[str, str] | None:
    m = _TIME.search(question)
    if not m:
        return None
    op = "<" if m.group(1).lower() in ("before", "until", "prior to") else ">="
    return op, m.group(2).replace(" ", "T")


def _node(var: str, t: str | None) -> str:
    return f"({var}:{label(t)})" if t else f"({var})"


def _returns(var: str) -> str:
    return f"{var}.id AS id, {var}.title AS title, {var}.type AS type, {var}.time AS time"


def _anchor_is_src(schema, r: RelWord, anchor_type: str, target: str | None, anchor_pos: int) -> bool:
    """Is the named node the stored src of relation ``r``?  The type pairs decide when they can; else word
    order (a name before the verb is its subject), the passive ("fixed by") and an inverse name flip it."""
    pairs = [tuple(p) for p in schema.relations.get(r.rel, {}).get("pairs", [])]
    can_src = any(s in ("*", anchor_type) and (target is None or d in ("*", target)) for s, d in pairs)
    can_dst = any(d in ("*", anchor_type) and (target is None or s in ("*", target)) for s, d in pairs)
    if pairs and can_src != can_dst:
        return can_src
    src = (anchor_pos < r.start) != r.passive
    return not src if r.flipped else src


def _compounds(question: str, rels: list[RelWord]) -> list[RelWord]:
    """Two relation words side by side name one relation, the last one's ("follow-up fixes to X": the fixes of
    X, not the follow-ups of X's fixes); words apart stay a chain ("the PR that merged the commit X follows")."""
    out: list[RelWord] = []
    for r in sorted(rels, key=lambda r: r.start):
        if out and re.fullmatch(r"[\s-]*(?:ups?)?[\s-]*", question[out[-1].end : r.start]):
            out[-1] = r
        else:
            out.append(r)
    return out


def translate(engine, question: str, schema=None, mentions: list[Mention] | None = None) -> CypherQuery | None:
    """A read-only Cypher query for ``question``, or ``None`` when no shape fits."""
    schema = schema or engine.graph_schema()
    mentions = find_mentions(engine, question) if mentions is None else mentions
    rels = relation_words(question, schema.relations)
    # a relation word inside a named span (a title that says "fix") is part of the name
    rels = [r for r in rels if not any(m.start <= r.start < m.end for m in mentions)]
    rels = _compounds(question, rels)
    # a type word inside a name, or naming the node right after it ("commit 3f2a", "PR #40"), is not a target
    types = [
        (t, p)
        for t, p in type_words(question, schema.labels)
        if not any(
            m.start <= p < m.end
            or (m.type == t and m.start > p and re.fullmatch(r"\w+(?:\s+\w+)?\s*", question[p : m.start]))
            for m in mentions
        )
    ]
    words = {w.lower() for w, _, _ in _tokens(question)}
    tf = _time_filter(question)
    params: dict = {}
    where = []
    if tf:
        params["t"] = tf[1]
        where.append(f"x.time {tf[0]} $t")

    # ---- path between two named nodes
    if len(mentions) >= 2 and (not rels or words & PATH_WORDS):
        a, b = mentions[0], mentions[1]
        return CypherQuery(
            "MATCH p = (a:Node {id: $a})-[*1..3]-(b:Node {id: $b}) RETURN p, length(p) AS hops ORDER BY hops LIMIT 5",
            {"a": a.node, "b": b.node},
            f"paths of up to 3 hops between {a.node} and {b.node}",
            "path",
            [a.node, b.node],
        )

    # ---- two relations and one name: a chain, the relation nearest the name first
    #      ("which PR introduced the change that commit Y follows up": Y -follows_up-> m -merged_in-> x:pr)
    distinct = list({r.rel: r for r in rels}.values())
    if len(distinct) >= 2 and len(mentions) == 1:
        anchor = mentions[0]
        near = min(distinct, key=lambda r: abs(r.start - anchor.start))
        far = next(r for r in distinct if r is not near)
        target = next((t for t, p in types if t != anchor.type), None)
        src1 = _anchor_is_src(schema, near, anchor.type, None, anchor.start)
        p2 = [tuple(p) for p in schema.relations.get(far.rel, {}).get("pairs", [])]
        if (
            target is not None
            and p2
            and any(d in ("*", target) for _, d in p2) != any(s in ("*", target) for s, _ in p2)
        ):
            x_dst = any(d in ("*", target) for _, d in p2)
        else:
            x_dst = not far.flipped
        hop1 = (
            f"(a:Node {{id: $a}})-[r1:{label(near.rel)}]->(m)"
            if src1
            else f"(a:Node {{id: $a}})<-[r1:{label(near.rel)}]-(m)"
        )
        hop2 = (
            f"(m)-[r:{label(far.rel)}]->{_node('x', target)}"
            if x_dst
            else f"(m)<-[r:{label(far.rel)}]-{_node('x', target)}"
        )
        params["a"] = anchor.node
        cy = (
            f"MATCH {hop1}, {hop2}"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" RETURN DISTINCT {_returns('x')}, m.id AS via, a.id AS anchor ORDER BY x.time LIMIT {LIMIT}"
        )
        return CypherQuery(
            cy,
            params,
            f"{target or 'nodes'} two hops from {anchor.node}: {near.rel} then {far.rel}",
            "chain",
            [anchor.node],
        )

    # ---- one hop over a relation from a named node
    if rels and mentions:
        r = rels[0]
        anchor = min(mentions, key=lambda m: abs(m.start - r.start))
        rinfo = schema.relations.get(r.rel, {})
        target = next((t for t, p in types if t != anchor.type or len(types) == 1), None)
        pairs = [tuple(p) for p in rinfo.get("pairs", [])]
        can_src = any(s in ("*", anchor.type) and (target is None or d in ("*", target)) for s, d in pairs)
        can_dst = any(d in ("*", anchor.type) and (target is None or s in ("*", target)) for s, d in pairs)
        if can_src != can_dst and pairs:
            anchor_src = can_src
        else:
            anchor_src = (anchor.start < r.start) != r.passive
            if r.flipped:
                anchor_src = not anchor_src
        if (
            target is not None
            and pairs
            and not any(
                (s in ("*", anchor.type) and d in ("*", target))
                if anchor_src
                else (d in ("*", anchor.type) and s in ("*", target))
                for s, d in pairs
            )
        ):
            target = None  # the type word does not fit this relation: let the schema decide the type
        arrow = "-" if not rinfo.get("directed", True) else "->"
        pat = (
            f"(a:Node {{id: $a}})-[r:{label(r.rel)}]{arrow}{_node('x', target)}"
            if anchor_src
            else f"{_node('x', target)}-[r:{label(r.rel)}]{arrow}(a:Node {{id: $a}})"
        )
        params["a"] = anchor.node
        order = " ORDER BY x.time DESC" if words & LATEST else " ORDER BY x.time"
        cy = (
            f"MATCH {pat}"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" RETURN {_returns('x')}, type(r) AS rel, startNode(r) = a AS outgoing, a.id AS"
            + f" anchor{order} LIMIT {LIMIT}"
        )
        side = f"{anchor.node} -[{r.rel}]-> ?" if anchor_src else f"? -[{r.rel}]-> {anchor.node}"
        expl = f"{target or 'nodes'} on the other end of {side}" + (f", time {tf[0]} {tf[1]}" if tf else "")
        return CypherQuery(cy, params, expl, "one_hop", [anchor.node])

    # ---- list by type (and time): only when nothing else is asked ("the most recent version bump commit and its
    # PR" is no list of the newest commits)
    if types and not mentions and not _words_beyond_a_list(question, types):
        t = types[0][0]
        if _COUNT.search(question):
            cy = (
                f"MATCH (x:{label(t)})"
                + (f" WHERE {' AND '.join(where)}" if where else "")
                + " RETURN count(x) AS count"
            )
            return CypherQuery(cy, params, f"number of {t} nodes" + (f", time {tf[0]} {tf[1]}" if tf else ""), "count")
        n = _NUM.search(question)
        lim = min(int(n.group(1)), LIMIT) if n else LIMIT
        desc = bool(words & LATEST) or (tf is not None and tf[0] == "<" and not words & OLDEST)
        cy = (
            f"MATCH (x:{label(t)})"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" RETURN {_returns('x')} ORDER BY x.time {'DESC' if desc else 'ASC'}, x.id LIMIT {lim}"
        )
        return CypherQuery(
            cy,
            params,
            f"{t} nodes" + (f", time {tf[0]} {tf[1]}" if tf else "") + (", newest first" if desc else ", oldest first"),
            "list",
        )

    # ---- everything next to one named node
    if mentions:
        a = mentions[0]
        params["a"] = a.node
        cy = (
            "MATCH (a:Node {id: $a})-[r]-(x)"
            + (f" WHERE {' AND '.join(where)}" if where else "")
            + f" RETURN {_returns('x')}, type(r) AS rel, startNode(r) = a AS outgoing, a.id AS anchor"
            f" ORDER BY x.time LIMIT {LIMIT}"
        )
        return CypherQuery(cy, params, f"typed edges of {a.node}", "neighbourhood", [a.node])
    return None
