"""``Engine.ask``: route → read-only Cypher and/or search → an answer that cites only what came back.

Output (JSON-able)::

    {"route": {"mode", "reason"}, "query": {"cypher", "params", "explanation"} | null, "rows": [...],
     "hits": [{"id", "type", "title", "score", "snippet"}], "answer": str, "refs": [ids], "trace_id": str}

plus ``"dropped_refs"`` when a model cited ids that were not retrieved (removed from the answer), and
``"stale": {"graph_seq", "store_seq", "reason"}`` when a graph query ran on a shared graph server's graph
that is behind the store and this engine may not bring up to date (the answer says so too).
One trace is stored per ask: the search hits and the nodes of the graph rows, so every cited id can be
reported with ``record_source_use`` on that trace.  The trace keeps the provider and model name, never a key.
"""

from __future__ import annotations

import re
import time
import uuid
from typing import Any

from ..errors import InvalidArgument
from ..graphdb.errors import CypherError, GraphGone, GraphServerError, QueryTimeout
from ..graphdb.schema import build_schema
from . import spelling
from .answer import NOT_FOUND, check_refs, evidence_ids, extractive_answer
from .code_questions import answer_code_question
from .compound import ask_parts
from .dev_run import run_plan
from .explain import explain
from .llm import LLM, LLMError, make_llm
from .names import find_mentions
from .nl2cypher import CypherQuery, relation_words, translate, type_words
from .question_people import author_taken
from .router import MODES, route
from .shapes import registry
from .unrecorded import not_recorded

__all__ = ["ask"]

_SAID_BY = {"not_recorded": "not in git"}  # a route reason's label for answers that are not the code history's

MAX_QUESTION_CHARS = 4000
SNIPPET = 300


def _hit_dict(h) -> dict:
    text = h.text if len(h.text) <= SNIPPET else h.text[:SNIPPET] + "…"
    out = {"id": h.id, "type": h.type, "title": h.title, "score": round(float(h.score), 4), "snippet": text}
    if h.meta:  # who and when: sha, date, author of a change
        out["meta"] = dict(h.meta)
    return out


def _person(engine, question: str) -> str | None:
    """The author ``question`` names, or None, also when the graph that lists the authors is down (the question
    is then asked whole, and answered from search like any other)."""
    try:
        return author_taken(engine, question, [])
    except (QueryTimeout, GraphGone, GraphServerError):
        return None


def ask(engine, question: str, mode: str = "auto", llm: LLM | str | None = None, limit: int = 5) -> dict:
    """:func:`_ask`; when the graph is down or timed out (``query_timeout``, the engine gone mid-query, or
    a shared server that is unreachable, refuses the credentials or holds no graph), it is answered from search
    instead, and ``route.reason`` and ``warnings`` say why.  A question that asks several things is asked part
    by part (ask/compound.py)."""
    named = lambda q: _person(engine, q)  # noqa: E731  (a person's activity: asked fact by fact)
    whole = ask_parts(lambda part: ask(engine, part, mode, llm, limit), question, named) if mode == "auto" else None
    if whole is not None:
        return whole
    try:
        return _ask(engine, question, mode, llm, limit)
    except (QueryTimeout, GraphGone, GraphServerError) as exc:
        why = f"the graph was not available (error[{exc.code}]: {exc.message}); answered from search instead"
    out = _ask(engine, question, "vector", llm, limit)
    out["route"]["reason"] += "; " + why
    out.setdefault("warnings", []).append(why)
    return out


def _ask(engine, question: str, mode: str, llm: LLM | str | None, limit: int) -> dict:
    """Route the question, retrieve (graph query and/or search), answer citing only retrieved ids, and
    store one trace with every retrievable id: the four named steps below."""
    _check_args(question, mode, limit)
    if isinstance(llm, str):
        llm = make_llm(llm)
    if mode in ("auto", "graph", "hybrid"):
        engine.cypher_projection().prefetch()  # the child loads its dump while the question is read
    graph_mark = _graph_queries(engine)
    engine.refresh()
    schema = build_schema(engine.store, lazy=True)  # property names only if a model's prompt needs them
    asked = question  # stored in the trace as typed; read with its misspelt domain words as meant
    question, spelled = spelling.normalise(question)
    mentions = find_mentions(engine, question)
    # lines of a file, an identifier's introduction or removal: the code history answers exactly (no graph query)
    code = not_recorded(engine, question)  # CI runs, review threads, downloads: "git does not record that"
    exact = code is None and mode in ("auto", "graph")
    dev, q, entry = registry.plan(engine, question, schema, mentions) if exact else (None, None, None)
    said = spelled + (q.notes if q is not None else [])
    if exact and (dev is None or not dev.about_file):  # "which commit added F": F a store file
        code = answer_code_question(engine, question)
        if code is not None:
            dev = None
    notes: list[str] = []
    result = None
    dropped: list[str] = []
    hits_objs: list = []
    query: dict | None
    if code is not None:
        chosen, reason = "graph", f"{_SAID_BY.get(code.shape, 'code history')} ({code.shape}): {code.explanation}"
        query = {"cypher": None, "params": {}, "explanation": code.explanation}
        rows, result, answer, refs = code.rows, code.result, code.answer, code.refs
    elif dev is not None:  # a developer question (scoped list, count, who, PR files/commits): answered exactly
        chosen, reason = "graph", f"developer question ({dev.shape}): {dev.explanation}"
        query = dev.to_dict()
        try:
            rows, result, answer, refs = run_plan(engine, dev)
        except CypherError as exc:
            rows, result, answer, refs = [], None, f"The graph query failed: error[{exc.code}]: {exc.message}", []
    else:
        chosen, reason = _unread_route(entry, q) or _route_question(question, schema, mentions, mode, llm)
        author = q.author if q is not None else None
        query, rows, hits_objs = _retrieve(engine, question, schema, mentions, chosen, llm, limit, notes, author)
    hits = [_hit_dict(h) for h in hits_objs]
    allowed = evidence_ids(engine, rows, hits)
    if dev is None and code is None:
        answer, refs, dropped = _answer(engine, question, rows, hits_objs, allowed, llm, notes)
    if said:  # phrases not understood and names not found are said in the answer, never dropped
        answer = answer + "\nNote: " + "; ".join(said) + "."
        notes += said
    stale = _stale_graph(engine, graph_mark)  # rows from a shared graph behind the store: said, not hidden
    answer = _with_stale_note(answer, stale, notes)
    if notes:
        reason = reason + "; " + "; ".join(notes)
    trace_id = "tr_" + uuid.uuid4().hex[:20]
    refused = engine.store.try_save_trace(
        {
            "id": trace_id,
            "created_at": time.time(),
            "query": asked,
            "params": {
                "ask": {
                    "mode": chosen,
                    "requested_mode": mode,
                    "llm": llm.name if llm else None,
                    "query": query,
                    "limit": limit,
                }
            },
            "fingerprint": f"ask:{engine.embedder.model_id}",
            "hits": _stored_hits(hits_objs, allowed),
        }
    )
    out: dict[str, Any] = {
        "route": {"mode": chosen, "reason": reason},
        "query": query,
        "rows": rows,
        "hits": hits,
        "answer": answer,
        "refs": refs,
        "trace_id": trace_id,
    }
    if refused is not None:  # a full or read-only store: the answer stands, its trace was not kept
        out["trace_saved"] = False
        out["warnings"] = [f"the trace was not stored ({refused}): feedback on this answer cannot be recorded"]
    _add_stale(out, stale)
    if result is not None:
        out["result"] = result
    if dropped:
        out["dropped_refs"] = dropped
    out["explain"] = explain(q, entry.name if entry is not None and dev is not None else None, dev, code, chosen)
    return out


def _graph_queries(engine) -> int:
    """How many queries the engine's shared-graph projection has run (0 for a private child or none yet)."""
    return int(getattr(getattr(engine, "_cypher", None), "queries", 0) or 0)


def _stale_graph(engine, mark: int) -> dict | None:
    """The shared graph's staleness, when this ask ran a query on it (after ``mark``) and it was behind."""
    proj = getattr(engine, "_cypher", None)
    stale = getattr(proj, "stale", None)
    if not stale or _graph_queries(engine) == mark:
        return None
    return {"graph_seq": stale["graph_seq"], "store_seq": stale["store_seq"], "reason": stale["reason"]}


def _stale_warning(stale: dict) -> str:
    return (
        f"the shared graph reflects store sequence {stale['graph_seq']} of {stale['store_seq']} "
        f"({stale['reason']}); changes after it are missing from the graph rows"
    )


def _with_stale_note(answer: str, stale: dict | None, notes: list[str]) -> str:
    if stale is None:
        return answer
    notes.append("stale shared graph")
    return answer + "\nNote: " + _stale_warning(stale) + "."


def _add_stale(out: dict, stale: dict | None) -> None:
    if stale is not None:
        out["stale"] = stale
        out.setdefault("warnings", []).append(_stale_warning(stale))


def _check_args(question: str, mode: str, limit: int) -> None:
    if not isinstance(question, str) or not question.strip():
        raise InvalidArgument("question must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidArgument(f"question is longer than {MAX_QUESTION_CHARS} characters")
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {list(MODES)}, got {mode!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        raise InvalidArgument("limit must be an integer in 1..50")


def _unread_route(entry, q) -> tuple[str, str] | None:
    """A search, said so, when the question's shape was not read (an entry that says ``then="search"``), or when
    a shape of its kind dropped a filter the question names: the translator would drop it too (a count of every
    file for "how many files were added in 8.2.0?")."""
    if entry is not None and entry.then == "search":
        return "vector", "search: part of the question was not understood (below)"
    if q is not None and any(" shape does not read " in n for n in q.notes):
        return "vector", "search: no shape reads all the question names (below)"
    return None


def _route_question(question: str, schema, mentions: list, mode: str, llm: LLM | None) -> tuple[str, str]:
    """Step 1: graph, vector or hybrid — the caller's mode, else the model's route, else the rules."""
    if mode != "auto":
        return mode, "mode given by the caller"
    rels = relation_words(question, schema.relations)
    types = type_words(question, schema.labels)
    if llm is not None:
        try:
            chosen, reason = llm.route(question)
            return chosen, f"{llm.name}: {reason}"
        except LLMError as exc:
            chosen, reason = route(question, mentions, rels, types)
            return chosen, reason + f" (rules; the model's route failed: {exc.code})"
    return route(question, mentions, rels, types)


def _retrieve(
    engine,
    question: str,
    schema,
    mentions: list,
    chosen: str,
    llm: LLM | None,
    limit: int,
    notes: list[str],
    author: str | None = None,
) -> tuple[dict | None, list[dict], list]:
    """Step 2: the channels — a read-only graph query and/or a search (the search also when the graph
    query of a graph route returned nothing)."""
    query: dict | None = None
    rows: list[dict] = []
    if chosen in ("graph", "hybrid"):
        query, rows, qnote = _graph(engine, question, schema, mentions, llm)
        if qnote:
            notes.append(qnote)
    hits_objs: list = []
    if chosen in ("vector", "hybrid") or (chosen == "graph" and not rows):
        if chosen == "graph":
            notes.append("the graph query returned nothing; searched instead")
        hits_objs = _search(engine, question, limit, author, notes)
    return query, rows, hits_objs


AUTHOR_POOL = 50  # search hits read to find a named person's own changes among them


def _search(engine, question: str, limit: int, author: str | None, notes: list[str]) -> list:
    """The search hits; when the question names an author, that person's changes among the first
    :data:`AUTHOR_POOL` hits come first ("when did Ben Pfaff step down as a maintainer?" is his own commit).
    The name is a filter, not words to match: searched for, it matches every commit that person signed off."""
    if author is None:
        return engine.search(question, limit, record=False).hits
    pool = engine.search(without_person(question, author), max(limit, AUTHOR_POOL), record=False).hits
    own = [h for h in pool if (h.meta or {}).get("author") == author]
    if own:
        notes.append(f"search hits by {author} first")
    return (own + [h for h in pool if h not in own])[:limit]


def without_person(question: str, author: str) -> str:
    """The question without the words of a person's name ("Ben", "Pfaff", "Pfaff's")."""
    parts = [re.escape(w) for w in author.split() if len(w) > 1]
    if not parts:
        return question
    rest = re.sub(rf"\b(?:{'|'.join(parts)})(?:'s)?\b", " ", question, flags=re.I)
    return " ".join(rest.split()) or question


def _answer(
    engine, question: str, rows: list[dict], hits_objs: list, allowed: list[str], llm: LLM | None, notes: list[str]
) -> tuple[str, list[str], list[str]]:
    """Step 3: the answer, citing only what was retrieved (the model's, checked, or an extractive one)."""
    full = [{"id": h.id, "type": h.type, "title": h.title, "text": h.text, "meta": h.meta} for h in hits_objs]
    if not rows and not hits_objs:
        return NOT_FOUND, [], []
    if llm is not None:
        try:
            text = llm.synthesize(question, rows, full)
            answer, refs, dropped = check_refs(text, allowed)
            if not refs:  # a model answer that cites nothing retrieved is not an answer from the history
                answer = (answer + "\n" if answer.strip() else "") + "(no retrieved source was cited)"
            return answer, refs, dropped
        except LLMError as exc:
            notes.append(f"synthesis by the model failed ({exc.code}); extractive answer")
    answer, refs = extractive_answer(engine, question, rows, full)
    return answer, refs, []


def _stored_hits(hits_objs: list, allowed: list[str]) -> list[dict]:
    """Step 4: the trace's hits — the search hits, then every other id the answer may cite (via cypher)."""
    stored = [
        {
            "rank": k + 1,
            "id": h.id,
            "type": h.type,
            "title": h.title,
            "scores": h.scores,
            "ranks": h.ranks,
            "paths": h.paths,
            "seed": h.seed,
            "via": "search",
        }
        for k, h in enumerate(hits_objs)
    ]
    seen = {h["id"] for h in stored}
    for nid in allowed:
        if nid not in seen:
            seen.add(nid)
            stored.append(
                {
                    "rank": len(stored) + 1,
                    "id": nid,
                    "scores": {},
                    "ranks": {},
                    "paths": [],
                    "seed": False,
                    "via": "cypher",
                }
            )
    return stored


def _graph(engine, question, schema, mentions, llm) -> tuple[dict | None, list[dict], str]:
    """The generated query and its rows; an LLM query gets one repair round, then the rule translator."""
    note = ""
    if llm is not None:
        prompt = schema.prompt()
        try:
            gen = llm.cypher(question, prompt)
        except LLMError as exc:
            gen, _err = None, exc
            try:  # malformed output: one repair round with the error
                gen = llm.cypher(question, prompt, failed={"input": {}}, error=exc.message)
            except LLMError as exc2:
                note = f"the model gave no usable query ({exc2.code}); rule-based translation"
        if gen is not None:
            q = {"cypher": gen["cypher"], "params": gen["params"], "explanation": gen["explanation"]}
            try:
                return q, engine.cypher(q["cypher"], q["params"])["rows"], ""
            except CypherError as exc:
                try:
                    gen = llm.cypher(question, prompt, failed=gen, error=f"error[{exc.code}]: {exc.message}")
                    q = {"cypher": gen["cypher"], "params": gen["params"], "explanation": gen["explanation"]}
                    return q, engine.cypher(q["cypher"], q["params"])["rows"], f"repaired after error[{exc.code}]"
                except (CypherError, LLMError) as exc2:
                    note = (
                        f"the model's query failed twice (error[{exc.code}], then error[{exc2.code}]); "
                        "rule-based translation"
                    )
    cq: CypherQuery | None = translate(engine, question, schema, mentions)
    if cq is None:
        return None, [], (note + "; " if note else "") + "no graph query shape fits the question"
    try:
        rows = engine.cypher(cq.cypher, cq.params)["rows"]
    except CypherError as exc:
        return cq.to_dict(), [], (note + "; " if note else "") + f"graph query failed: error[{exc.code}]"
    return cq.to_dict(), rows, note
