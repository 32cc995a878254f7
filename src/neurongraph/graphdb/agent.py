"""Cypher for an agent: a schema small enough for its context window, and read-only queries whose answer
stays within a row and size limit, with errors that name what is known.

Agents that write graph queries themselves (peers: Neo4j's ``get_neo4j_schema`` / ``read_neo4j_cypher``,
FalkorDB's ``get_graph_schema`` / ``query_graph_readonly``) need three things from the server: a schema that
fits the prompt, answers that cannot flood it, and read-only that holds.  Read-only is the projection's
(``GRAPH.RO_QUERY`` through a read-only Redis user, and the tokenizer guard, :mod:`.guard`); time is the
graph child's limit (``Limits.timeout_ms``).  This module adds:

* :func:`agent_schema`: labels with counts, relation types with direction and counts (both from
  :func:`.schema.build_schema`, the one schema of ask and ``ngr schema show``), each label's properties with
  their type and an example value (sampled through the projection, so they are what a query sees), and
  example queries built from what the store holds, each run before it is shown; at most
  :data:`SCHEMA_MAX_CHARS` characters of JSON (about 1,500 tokens).  Kept per projection state (``memo``).
* :func:`check_names`: a label, relation type or property a query names that the graph does not hold is a
  ``query_error`` naming the closest known ones (the engine itself silently returns no rows).
* :func:`run_query`: the query through the projection, cut to ``limit`` rows and ``max_chars`` characters
  of JSON, saying whether it was cut and whether more rows exist; an empty answer whose hop points against
  every stored edge of its relation says so (:func:`direction_hints`).
"""

from __future__ import annotations

import difflib
import json
import re
from collections import Counter
from typing import Any

from ..model import strict_dumps
from ..store.base import Store
from .errors import CypherError, QueryError
from .guard import check_read_only
from .projection import label
from .schema import build_schema
from .server import Limits

__all__ = [
    "SCHEMA_MAX_CHARS",
    "DEFAULT_ROWS",
    "MAX_ROWS",
    "DEFAULT_CHARS",
    "MAX_CHARS",
    "MAX_TIMEOUT_MS",
    "agent_schema",
    "check_names",
    "direction_hints",
    "graph_names",
    "query_names",
    "run_query",
]

SCHEMA_MAX_CHARS = 6_000  # the graph_schema answer as JSON: ~1,500 tokens
DEFAULT_ROWS = 100
MAX_ROWS = Limits().resultset_size  # the graph child's result-set cap (1,000): no query returns more
MAX_TIMEOUT_MS = Limits().timeout_ms  # the graph child's time limit (2,000 ms): no query runs longer
DEFAULT_CHARS = 20_000  # one answer as JSON
MAX_CHARS = 50_000
MIN_CHARS = 1_000
ENVELOPE_CHARS = 400  # the answer's keys, counts and note around its columns and rows
N_EXAMPLES = 10
SAMPLE_NODES = 200  # nodes per label read to find its properties, their types and examples
MAX_LABELS = 30  # labels listed with their counts
MAX_PROP_LABELS = 12  # labels listed with their properties (the most common)
HIDDEN_PROPS = {"idx", "eid", "type"}  # internal (idx, eid) or the label itself (type)
_FIRST_PROPS = ("id", "title", "time")


# ----------------------------------------------------------------------------- names a query uses
_TOKEN = re.compile(
    r"""(?P<str>'(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")
      |(?P<comment>//[^\n]*|/\*.*?\*/)
      |(?P<quoted>`[^`]*`)
      |(?P<param>\$[A-Za-z_][A-Za-z0-9_]*)
      |(?P<ident>[A-Za-z_][A-Za-z0-9_]*)
      |(?P<num>[0-9]+)
      |(?P<space>\s+)
      |(?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)
# keywords after which "(" opens a node pattern rather than a function call's arguments
_PATTERN_AFTER = {"MATCH", "MERGE", "CREATE", "WHERE", "AND", "OR", "XOR", "NOT", "OPTIONAL", "WITH", "RETURN"}
_PATTERN_AFTER |= {"WHEN", "THEN", "ELSE", "IN", "UNWIND"}


def _tokens(query: str) -> list[tuple[str, str]]:
    """``(kind, text)`` of the query's tokens; strings and comments dropped, backtick names unquoted."""
    out = []
    for m in _TOKEN.finditer(query):
        kind = m.lastgroup or "punct"
        if kind in ("space", "comment"):
            continue
        text = m.group()
        if kind == "quoted":
            kind, text = "ident", text[1:-1]
        out.append((kind, text))
    return out


def query_names(query: str) -> dict[str, set[str]]:
    """The labels, relation types and node/relationship properties ``query`` names.

    A reader of the grammar's shape, not a parser: ``:Name`` inside a node pattern or a ``WHERE n:Name``
    test is a label, inside ``-[ ]-`` a relation type (``|`` alternatives too); ``v.prop`` counts only where
    ``v`` is bound by a node or relationship pattern (a map or a parameter may hold any key), and so does a
    key of a pattern's property map (``(f:file {path: $p})``).  Map literals and projections are skipped."""
    toks = _tokens(query)
    labels: set[str] = set()
    types: set[str] = set()
    props: set[str] = set()
    pattern_vars: set[str] = set()
    accesses: list[tuple[str, str]] = []
    stack: list[str] = []  # node, rel, paren, list, map, propmap
    n = len(toks)

    def at(i: int) -> tuple[str, str]:
        return toks[i] if 0 <= i < n else ("", "")

    for i, (kind, text) in enumerate(toks):
        prev, nxt, nxt2 = at(i - 1), at(i + 1), at(i + 2)
        top = stack[-1] if stack else ""
        if kind == "punct" and text == "(":
            pattern = _node_pattern(prev, at(i - 2), nxt, nxt2)
            stack.append("node" if pattern else "paren")
            if pattern and nxt[0] == "ident":
                pattern_vars.add(nxt[1])
        elif kind == "punct" and text == "[":
            rel = prev[1] == "-"
            stack.append("rel" if rel else "list")
            if rel and nxt[0] == "ident" and nxt2[1] in ("]", ":", "{", "*"):
                pattern_vars.add(nxt[1])
        elif kind == "punct" and text == "{":
            stack.append("propmap" if top in ("node", "rel") else "map")
        elif kind == "punct" and text in ")]}":
            if stack:
                stack.pop()
        elif kind == "punct" and text == ":" and nxt[0] == "ident" and top not in ("map", "propmap"):
            if top == "rel":
                types.update(_alternatives(toks, i + 1))
            else:
                labels.add(nxt[1])
        elif kind == "ident" and top == "propmap" and nxt[1] == ":" and prev[1] in ("{", ","):
            props.add(text)
        elif kind == "ident" and prev[1] == "." and at(i - 2)[0] == "ident" and at(i - 3)[1] != ".":
            accesses.append((at(i - 2)[1], text))
    props.update(p for v, p in accesses if v in pattern_vars)
    return {"labels": labels, "types": types, "props": props}


def _node_pattern(prev: tuple[str, str], prev2: tuple[str, str], nxt: tuple[str, str], nxt2: tuple[str, str]) -> bool:
    """Whether a ``(`` opens a node pattern: not a function call's (``count(c)``, ``db.labels()``), and
    followed by ``)``, ``:``, ``{`` or a variable and one of those."""
    if prev[0] == "ident" and (prev[1].upper() not in _PATTERN_AFTER or prev2[1] == "."):
        return False
    return nxt[1] in (")", ":", "{") or nxt[0] == "ident" and nxt2[1] in (")", ":", "{")


def _alternatives(toks: list[tuple[str, str]], i: int) -> list[str]:
    """The relation types of ``[:a|b|:c]`` from the token of ``a`` on."""
    names, n = [], len(toks)
    while i < n and toks[i][0] == "ident":
        names.append(toks[i][1])
        if i + 1 >= n or toks[i + 1][1] != "|":
            break
        i += 3 if i + 2 < n and toks[i + 2][1] == ":" else 2
    return names


def graph_names(run, store: Store | None = None) -> dict[str, Any]:
    """What the graph holds, as the engine lists it (``db.labels()`` and friends), for :func:`check_names`;
    ``run(query)`` is a projection's query.  With ``store``, also each relation's ``(source, target)`` label
    pairs (:func:`.schema.build_schema`, cached per store state), for the direction hint of an empty answer."""
    labels = [r["label"] for r in run("CALL db.labels()")["rows"]]
    types = [r["relationshipType"] for r in run("CALL db.relationshipTypes()")["rows"]]
    props = [r["propertyKey"] for r in run("CALL db.propertyKeys()")["rows"]]
    out: dict[str, Any] = {"labels": sorted(labels), "types": sorted(types), "props": sorted(props)}
    if store is not None:
        rels = build_schema(store, lazy=True).relations
        out["pairs"] = {name: [tuple(p) for p in r["pairs"]] for name, r in rels.items() if r.get("directed", True)}
    return out


# (:S)-[:T]->(:D), (:S)<-[:T]-(:D): a hop between two labelled nodes (strings blanked first); lookahead for chains
_HOP = re.compile(
    r"(?=\(\s*\w*\s*:\s*(\w+)[^()]*\)\s*(<?)-\s*\[\s*\w*\s*:\s*(\w+)[^\]]*\]\s*-(>?)\s*\(\s*\w*\s*:\s*(\w+))"
)
_STRING = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def direction_hints(query: str, pairs: dict[str, list[tuple[str, str]]]) -> list[str]:
    """Hops of ``query`` that point against every stored edge of their relation (``(:file)-[:touches]->
    (:commit)`` where the graph has ``(:commit)-[:touches]->(:file)`` only): why an answer is empty."""
    out = []
    for m in _HOP.finditer(_STRING.sub("''", query)):
        left, back, rel, fwd, right = m.groups()
        if rel not in pairs or bool(back) == bool(fwd):
            continue
        src, dst = (right, left) if back else (left, right)
        have = pairs[rel]
        if (src, dst) not in have and (dst, src) in have:
            out.append(f"the graph has (:{dst})-[:{rel}]->(:{src}); the query asks (:{src})-[:{rel}]->(:{dst})")
    return list(dict.fromkeys(out))


def _closest(name: str, known: list[str]) -> list[str]:
    same_case = [k for k in known if k.lower() == name.lower()]
    close = difflib.get_close_matches(name.lower(), [k.lower() for k in known], n=3, cutoff=0.6)
    by_lower = {k.lower(): k for k in known}
    return list(dict.fromkeys(same_case + [by_lower[c] for c in close]))


def check_names(query: str, known: dict[str, list[str]]) -> None:
    """Raise ``query_error`` for the first label, relation type or property ``query`` names that the graph
    does not hold, with the known names of that kind and the closest ones (difflib)."""
    used = query_names(query)
    kinds = (("labels", "label", "labels"), ("types", "relation type", "relation types"), ("props", "property", ""))
    for key, what, plural in kinds:
        have = set(known[key])
        for name in sorted(used[key]):
            if name in have:
                continue
            close = _closest(name, known[key])
            if plural:
                shown = ", ".join(known[key][:25]) + (" …" if len(known[key]) > 25 else "")
                listed = f" — known {plural}: {shown}" if known[key] else f" — this graph has no {plural}"
            else:
                listed = " — `graph_schema` lists each label's properties"
            hint = f"; did you mean {' or '.join(repr(c) for c in close)}?" if close else ""
            raise QueryError(
                f"unknown {what} {name!r}{listed}{hint}",
                unknown={"kind": what, "name": name, "did_you_mean": close},
            )


# ----------------------------------------------------------------------------- running a query within limits
def _size(value: Any) -> int:
    return len(strict_dumps(value, ensure_ascii=False, default=str))


def _shorten(row: dict, budget: int) -> dict:
    """A row over the whole budget: each cell's JSON cut to its share (the only way one huge cell, a
    ``collect()`` of thousands, can still be shown)."""
    share = max(80, budget // max(1, len(row)) - 40)
    out = {}
    for k, v in row.items():
        text = strict_dumps(v, ensure_ascii=False, default=str)
        out[k] = v if len(text) <= share else {"cut": text[:share] + "…", "chars": len(text)}
    return out


def run_query(
    run,
    known,
    query: str,
    params: dict | None = None,
    *,
    limit: int = DEFAULT_ROWS,
    max_chars: int = DEFAULT_CHARS,
    timeout_ms: int | None = None,
) -> dict:
    """``query`` read-only through ``run`` (a projection's ``query``), checked against the names ``known()``
    returns (:func:`graph_names`), cut to ``limit`` rows and ``max_chars`` characters of JSON rows.

    Returns ``columns``, ``rows``, ``row_count`` (rows returned), ``truncated`` (rows were cut: by the
    limit, the size or the engine's cap of :data:`MAX_ROWS`), ``more`` (more rows exist than returned),
    ``cut_by`` when cut, and ``stale`` when a shared graph is behind the store."""
    if not 1 <= limit <= MAX_ROWS:
        raise QueryError(f"limit must be in 1..{MAX_ROWS}")
    if not MIN_CHARS <= max_chars <= MAX_CHARS:
        raise QueryError(f"max_chars must be in {MIN_CHARS}..{MAX_CHARS}")
    check_read_only(query)  # a write is read_only before it can be an unknown name
    known_now = known()
    check_names(query, known_now)
    res = run(query, params, timeout_ms)
    rows_all = res["rows"]
    rows: list[dict] = []
    used = _size(res["columns"]) + ENVELOPE_CHARS  # the answer around the rows: columns, counts, note
    cut_by = None
    for row in rows_all:
        if len(rows) >= limit:
            cut_by = "limit"
            break
        size = _size(row) + 2  # and ", " between rows
        if used + size > max_chars:
            cut_by = "max_chars"
            if not rows:  # one row alone is over the budget: show it with its cells cut
                rows.append(_shorten(row, max_chars - used))
                used += _size(rows[-1]) + 2
                continue
            break
        rows.append(row)
        used += size
    more = len(rows_all) > len(rows) or bool(res.get("truncated"))
    if cut_by is None and res.get("truncated"):
        cut_by = "engine_cap"
    out: dict[str, Any] = {
        "columns": res["columns"],
        "rows": rows,
        "row_count": len(rows),
        "truncated": cut_by is not None,
        "more": more,
    }
    if cut_by:
        out["cut_by"] = cut_by
        out["note"] = (
            f"{len(rows)} rows shown ({'limit ' + str(limit) if cut_by == 'limit' else ''}"
            f"{'max_chars ' + str(max_chars) if cut_by == 'max_chars' else ''}"
            f"{'the engine returns at most ' + str(MAX_ROWS) if cut_by == 'engine_cap' else ''}); "
            "aggregate (count, collect), filter, ORDER BY … LIMIT, or return fewer columns"
        )
    if not rows_all and known_now.get("pairs"):
        hints = direction_hints(query, known_now["pairs"])
        if hints:
            out["note"] = "no rows: " + "; ".join(hints) + " (turn the arrow around, or write -[:rel]- for either way)"
    if res.get("stale"):
        out["stale"] = res["stale"]
    return out


# ----------------------------------------------------------------------------- the schema for a prompt
def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        inner = {_type_name(x) for x in v}
        return f"list<{inner.pop()}>" if len(inner) == 1 else "list"
    return type(v).__name__


def _example(v: Any, chars: int) -> str:
    if isinstance(v, list):
        v = v[:1]
    text = strict_dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= chars else text[: chars - 1] + "…"


def _properties(run, labels: list[str]) -> dict[str, list[tuple[str, str, str]]]:
    """Each label's properties, most common first, as ``(name, type, example as JSON)`` from up to
    :data:`SAMPLE_NODES` of its nodes."""
    out: dict[str, list[tuple[str, str, str]]] = {}
    for lab in labels:
        rows = run(f"MATCH (n:{label(lab)}) WITH n LIMIT {SAMPLE_NODES} RETURN properties(n) AS p")["rows"]
        seen: Counter = Counter()
        types: dict[str, Counter] = {}
        examples: dict[str, Any] = {}
        for r in rows:
            p = r["p"] if isinstance(r.get("p"), dict) else {}
            for k, v in p.items():
                if k in HIDDEN_PROPS or v is None:
                    continue
                seen[k] += 1
                types.setdefault(k, Counter())[_type_name(v)] += 1
                if k not in examples or v not in ("", []) and examples[k] in ("", []):
                    examples[k] = v
        order = [k for k in _FIRST_PROPS if k in seen] + [k for k, _ in seen.most_common() if k not in _FIRST_PROPS]
        out[lab] = [(k, types[k].most_common(1)[0][0], _example(examples[k], 60)) for k in order]
    return out


def _shown_properties(props: dict[str, list[tuple[str, str, str]]], per_label: int, chars: int) -> dict:
    """``{label: {name: "type example"}}``: ``per_label`` properties each, examples cut to ``chars``
    (none at 0)."""

    def cell(t: str, ex: str) -> str:
        if not chars:
            return t
        return f"{t} {ex if len(ex) <= chars else ex[: chars - 1] + '…'}"

    return {lab: {k: cell(t, ex) for k, t, ex in p[:per_label]} for lab, p in props.items()}


def _relations(schema) -> list[str]:
    out = []
    for name, r in sorted(schema.relations.items(), key=lambda kv: -kv[1]["count"]):
        arrow = "->" if r.get("directed", True) else "-"
        pairs = ", ".join(f"(:{s})-[:{name}]{arrow}(:{d})" for s, d in r["pairs"][:4]) or f"()-[:{name}]->()"
        out.append(f"{pairs} {r['count']}")
    return out


# Example queries: (group, what it answers, Cypher, a probe whose one row gives the $params, what the store must
# hold: relations as "rel:src>dst" ("rel:>dst": any source) and properties as "label.prop").  The first
# template of a group that the store can answer is shown; the probes read real values (the most touched file,
# an issue that something fixes, ...), and each example is run before it is shown.
_TEMPLATES: list[tuple[str, str, str, str | None, tuple[str, ...]]] = [
    (
        "file",
        "commits touching a file, newest first",
        "MATCH (c:commit)-[:touches]->(f:file {id: $file}) RETURN c.id, c.title, c.time ORDER BY c.time DESC LIMIT 10",
        "MATCH (:commit)-[:touches]->(f:file) RETURN f.id AS file, count(*) AS n ORDER BY n DESC LIMIT 1",
        ("touches:commit>file",),
    ),
    (
        "fixed",
        "what fixed issue N",
        "MATCH (x)-[:fixes]->(i:issue {number: $number}) RETURN x.id, x.type, x.title",
        "MATCH ()-[:fixes]->(i:issue) WHERE i.number IS NOT NULL RETURN i.number AS number LIMIT 1",
        ("fixes:>issue", "issue.number"),
    ),
    (
        "fixed",
        "commits that name issue N",
        "MATCH (c:commit)-[:refs]->(i:issue {number: $number}) RETURN c.id, c.title, c.time",
        "MATCH (:commit)-[:refs]->(i:issue) WHERE i.number IS NOT NULL RETURN i.number AS number LIMIT 1",
        ("refs:commit>issue", "issue.number"),
    ),
    (
        "fixes",
        "later commits that fix a commit (Fixes: trailers)",
        "MATCH (fix:commit)-[:fixes]->(c:commit {id: $commit}) RETURN fix.id, fix.title, fix.time",
        "MATCH (:commit)-[:fixes]->(c:commit) RETURN c.id AS commit LIMIT 1",
        ("fixes:commit>commit",),
    ),
    (
        "tag",
        "tags on a commit",
        "MATCH (t:tag)-[:tags]->(c:commit {id: $commit}) RETURN t.id, t.time",
        "MATCH (:tag)-[:tags]->(c:commit) RETURN c.id AS commit LIMIT 1",
        ("tags:tag>commit",),
    ),
    (
        "tags",
        "the latest tags and the commit each points at",
        "MATCH (t:tag)-[:tags]->(c:commit) RETURN t.id, t.time, c.id ORDER BY t.time DESC LIMIT 10",
        None,
        ("tags:tag>commit",),
    ),
    (
        "pr",
        "commits of PR N",
        "MATCH (c:commit)-[:merged_in|part_of]->(p:pull_request {number: $number}) RETURN c.id, c.title",
        "MATCH (:commit)-[:merged_in]->(p:pull_request) RETURN p.number AS number LIMIT 1",
        ("merged_in:commit>pull_request", "part_of:commit>pull_request", "pull_request.number"),
    ),
    (
        "pr",
        "commits of PR N",
        "MATCH (c:commit)-[:merged_in]->(p:pull_request {number: $number}) RETURN c.id, c.title",
        "MATCH (:commit)-[:merged_in]->(p:pull_request) RETURN p.number AS number LIMIT 1",
        ("merged_in:commit>pull_request", "pull_request.number"),
    ),
    (
        "pr_author",
        "PRs of an author",
        "MATCH (p:pull_request {author: $author}) RETURN p.id, p.title, p.time ORDER BY p.time DESC LIMIT 10",
        "MATCH (p:pull_request) WHERE p.author IS NOT NULL RETURN p.author AS author LIMIT 1",
        ("pull_request.author",),
    ),
    (
        "pr_author",
        "PRs of an author (the PRs their commits were merged in)",
        "MATCH (c:commit {author: $author})-[:merged_in]->(p:pull_request) RETURN DISTINCT p.id, p.title",
        "MATCH (c:commit)-[:merged_in]->(:pull_request) RETURN c.author AS author, count(*) AS n "
        "ORDER BY n DESC LIMIT 1",
        ("merged_in:commit>pull_request", "commit.author"),
    ),
    (
        "reverts",
        "reverts, newest first",
        "MATCH (r)-[:reverts]->(x) RETURN r.id, r.title, x.id AS reverted ORDER BY r.time DESC LIMIT 10",
        None,
        ("reverts:>",),
    ),
    (
        "authors",
        "authors with the most commits",
        "MATCH (c:commit) RETURN c.author AS author, count(*) AS commits ORDER BY commits DESC LIMIT 10",
        None,
        ("commit.author",),
    ),
    (
        "dir",
        "commits under a directory since a date",
        "MATCH (c:commit)-[:touches]->(f:file) WHERE f.path STARTS WITH $dir AND c.time >= $since "
        "RETURN c.id, c.title, count(f) AS files ORDER BY files DESC LIMIT 10",
        "MATCH (c:commit)-[:touches]->(f:file) WHERE f.path CONTAINS '/' RETURN left(f.path, size(f.path) - "
        "size(last(split(f.path, '/')))) AS dir, left(c.time, 4) + '-01-01' AS since LIMIT 1",
        ("touches:commit>file", "file.path", "commit.time"),
    ),
    (
        "renames",
        "earlier names of a file",
        "MATCH (old:file)-[:renamed_to*1..10]->(f:file {id: $file}) RETURN old.id",
        "MATCH (:file)-[:renamed_to]->(f:file) RETURN f.id AS file LIMIT 1",
        ("renamed_to:file>file",),
    ),
    (
        "unfixed",
        "issues nothing fixes",
        "MATCH (i:issue) WHERE NOT ()-[:fixes]->(i) RETURN i.id, i.title LIMIT 10",
        None,
        ("fixes:>issue",),
    ),
]
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PARAM = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")


def _name(name: str) -> str:
    """A label or relation type as a query writes it: backticks only where needed."""
    return name if _IDENT.match(name) else label(name)


def _holds(needs: tuple[str, ...], schema, props: dict[str, set[str]]) -> bool:
    for need in needs:
        if ":" in need:
            rel, _, ends = need.partition(":")
            src, _, dst = ends.partition(">")
            pairs = schema.relations.get(rel, {}).get("pairs", [])
            if not any(src in ("", s) and dst in ("", d) for s, d in pairs):
                return False
        else:
            lab, _, key = need.partition(".")
            if key not in props.get(lab, ()):
                return False
    return True


def _candidates(schema, props: dict[str, set[str]]) -> list[tuple[str, str, str | None]]:
    """``(what, cypher, probe)`` in the order shown: the templates this store can answer, then for every
    relation no template shows, what points at one node through it; the newest nodes; nodes per type."""
    out: list[tuple[str, str, str | None]] = []
    groups: set[str] = set()
    covered: set[str] = set()
    for group, what, q, probe, needs in _TEMPLATES:
        if group not in groups and _holds(needs, schema, props):
            groups.add(group)
            out.append((what, q, probe))
            covered.update(n.partition(":")[0] for n in needs if ":" in n)
    for name, r in sorted(schema.relations.items(), key=lambda kv: -kv[1]["count"]):
        if name in covered or not r["pairs"]:
            continue
        s, d = r["pairs"][0]
        a, rel, b = _name(s), _name(name), _name(d)
        out.append(
            (
                f"{s} nodes linked by {name} to a given {d}",
                f"MATCH (a:{a})-[:{rel}]->(b:{b} {{id: $id}}) RETURN a.id, a.title LIMIT 10",
                f"MATCH (:{a})-[:{rel}]->(b:{b}) RETURN b.id AS id LIMIT 1",
            )
        )
    timed = [lab for lab in props if "time" in props[lab]]
    if timed:
        lab = max(timed, key=lambda x: schema.labels.get(x, 0))
        q = f"MATCH (n:{_name(lab)}) RETURN n.id, n.title, n.time ORDER BY n.time DESC LIMIT 10"
        out.append((f"the newest {lab} nodes", q, None))
    out.append(("nodes per type", "MATCH (n:Node) RETURN n.type AS type, count(*) AS n ORDER BY n DESC", None))
    return out


def _example_queries(run, schema, props: dict[str, set[str]], n: int) -> list[dict]:
    """Up to ``n`` example queries that run on this store and return rows, the most telling first."""
    out: list[dict] = []
    for what, q, probe in _candidates(schema, props):
        if len(out) >= n:
            break
        try:
            params = None
            if probe is not None:
                rows = run(probe)["rows"]
                if not rows:
                    continue
                params = {k: rows[0][k] for k in dict.fromkeys(_PARAM.findall(q))}
                if any(v is None for v in params.values()):
                    continue
            if not run(q, params)["rows"]:
                continue
        except (CypherError, KeyError):
            continue  # a query this store cannot answer is not shown
        out.append({"what": what, "cypher": q, **({"params": params} if params else {})})
    return out


def _notes(props: dict[str, list[tuple[str, str, str]]]) -> list[str]:
    """How ids, times and lists are written in this store, from the properties' examples."""
    ids = []
    for p in props.values():
        ex = next((json.loads(e) for k, t, e in p if k == "id" and t == "string" and not e.endswith("…")), None)
        if isinstance(ex, str):
            ids.append(repr(ex[: ex.index(":") + 13] + "…" if ":" in ex and len(ex) > ex.index(":") + 16 else ex))
    notes = [
        "Every node also has the label Node and a unique `id`"
        + (f" ({', '.join(ids[:4])})" if ids else "")
        + "; start from one with {id: $id}."
    ]
    if any(k == "time" for p in props.values() for k, _, _ in p):
        notes.append("`time` is ISO-8601 UTC text: compare it as a string (n.time >= '2024-01-01').")
    listed = next(((lab, k) for lab, p in props.items() for k, t, _ in p if t.startswith("list")), None)
    tail = f" A list property is tested with IN ('x' IN n.{listed[1]} on {listed[0]})." if listed else ""
    notes.append("Relations point as listed; -[:r]- matches either way." + tail)
    notes.append(f"Read-only; at most {MAX_ROWS} rows and {MAX_TIMEOUT_MS} ms per query; pass values as $params.")
    return notes


def agent_schema(projection, store: Store, max_chars: int = SCHEMA_MAX_CHARS) -> dict:
    """The schema an agent writes Cypher against, at most ``max_chars`` characters of JSON; kept per
    projection state (recomputed after the store changes)."""
    return projection.memo(f"agent_schema:{max_chars}", lambda: _agent_schema(projection, store, max_chars))


def _agent_schema(projection, store: Store, max_chars: int) -> dict:
    schema = build_schema(store, lazy=True)  # labels, relations: the schema of ask and `ngr schema show`

    def run(q: str, params: dict | None = None) -> dict:
        return projection.query(q, params)

    labels = dict(sorted(schema.labels.items(), key=lambda kv: -kv[1])[:MAX_LABELS])
    props_all = _properties(run, list(labels)[:MAX_PROP_LABELS])
    names = {lab: {k for k, _, _ in p} for lab, p in props_all.items()}
    examples = _example_queries(run, schema, names, N_EXAMPLES)
    relations = _relations(schema)
    notes = _notes(props_all)
    out: dict = {}
    # shrink until it fits: fewer properties per label, shorter examples, then fewer labels and relations
    for per_label, chars, n_labels, n_rels in (
        (24, 28, 12, 30),
        (16, 24, 12, 30),
        (12, 20, 10, 24),
        (10, 16, 8, 20),
        (8, 0, 8, 16),
        (6, 0, 6, 12),
        (4, 0, 4, 8),
    ):
        props = _shown_properties(dict(list(props_all.items())[:n_labels]), per_label, chars)
        more = [f"… {len(relations) - n_rels} more"] if len(relations) > n_rels else []
        out = {
            "labels": labels,
            "relations": relations[:n_rels] + more,
            "properties": props,
            "notes": notes,
            "examples": examples,
        }
        if _size(out) <= max_chars:
            return out
    while examples and _size(out) > max_chars:
        examples.pop()
    return out
