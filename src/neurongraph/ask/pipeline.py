"""``Engine.ask``: route → read-only Cypher and/or search → an answer that cites only what came back.

Output (JSON-able)::

    {"route": {"mode", "reason"}, "query": {"cypher", "params", "explanation"} | null, "rows": [...],
     "hits": [{"id", "type", "title", "score", "snippet"}], "answer": str, "refs": [ids], "trace_id": str}

plus ``"dropped_refs"`` when a model cited ids that were not retrieved (removed from the answer).
One trace is stored per ask: the search hits and the nodes of the graph rows, so every cited id can be
reported with ``record_source_use`` on that trace.  The trace keeps the provider and model name, never a key.
"""

from __future__ import annotations

import time
import uuid

from ..errors import InvalidArgument
from ..graphdb.errors import CypherError
from .answer import NOT_FOUND, check_refs, evidence_ids, extractive_answer
from .llm import LLM, LLMError, make_llm
from .names import find_mentions
from .nl2cypher import CypherQuery, relation_words, translate, type_words
from .router import MODES, route

__all__ = ["ask"]

MAX_QUESTION_CHARS = 4000
SNIPPET = 300


def _hit_dict(h) -> dict:
    text = h.text if len(h.text) <= SNIPPET else h.text[:SNIPPET] + "…"
    return {"id": h.id, "type": h.type, "title": h.title, "score": round(float(h.score), 4), "snippet": text}


def ask(engine, question: str, mode: str = "auto", llm: LLM | str | None = None, limit: int = 5) -> dict:
    if not isinstance(question, str) or not question.strip():
        raise InvalidArgument("question must be a non-empty string")
    if len(question) > MAX_QUESTION_CHARS:
        raise InvalidArgument(f"question is longer than {MAX_QUESTION_CHARS} characters")
    if mode not in MODES:
        raise InvalidArgument(f"mode must be one of {list(MODES)}, got {mode!r}")
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= 50:
        raise InvalidArgument("limit must be an integer in 1..50")
    if isinstance(llm, str):
        llm = make_llm(llm)
    t0 = time.perf_counter()
    engine.refresh()
    schema = engine.graph_schema()
    mentions = find_mentions(engine, question)
    rels = relation_words(question, schema.relations)
    types = type_words(question, schema.labels)
    notes: list[str] = []

    # 1) route
    if mode != "auto":
        chosen, reason = mode, "mode given by the caller"
    elif llm is not None:
        try:
            chosen, reason = llm.route(question)
            reason = f"{llm.name}: {reason}"
        except LLMError as exc:
            chosen, reason = route(question, mentions, rels, types)
            reason += f" (rules; the model's route failed: {exc.code})"
    else:
        chosen, reason = route(question, mentions, rels, types)

    # 2) channels
    query: dict | None = None
    rows: list[dict] = []
    if chosen in ("graph", "hybrid"):
        q, rows, qnote = _graph(engine, question, schema, mentions, llm)
        query = q
        if qnote:
            notes.append(qnote)
    hits_objs = []
    if chosen in ("vector", "hybrid") or (chosen == "graph" and not rows):
        if chosen == "graph":
            notes.append("the graph query returned nothing; searched instead")
        res = engine.search(question, limit, record=False)
        hits_objs = res.hits
    hits = [_hit_dict(h) for h in hits_objs]

    # 3) answer, citing only what was retrieved
    allowed = evidence_ids(engine, rows, hits)
    full = [{"id": h.id, "type": h.type, "title": h.title, "text": h.text} for h in hits_objs]
    dropped: list[str] = []
    if not rows and not hits:
        answer, refs = NOT_FOUND, []
    elif llm is not None:
        try:
            text = llm.synthesize(question, rows, full)
            answer, refs, dropped = check_refs(text, allowed)
            if not refs:  # a model answer that cites nothing retrieved is not an answer from the history
                answer = (answer + "\n" if answer.strip() else "") + "(no retrieved source was cited)"
        except LLMError as exc:
            notes.append(f"synthesis by the model failed ({exc.code}); extractive answer")
            answer, refs = extractive_answer(engine, question, rows, full)
    else:
        answer, refs = extractive_answer(engine, question, rows, full)

    # 4) one trace with every retrievable id
    trace_id = "tr_" + uuid.uuid4().hex[:20]
    stored_hits = [
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
    seen = {h["id"] for h in stored_hits}
    for nid in allowed:
        if nid not in seen:
            seen.add(nid)
            stored_hits.append(
                {
                    "rank": len(stored_hits) + 1,
                    "id": nid,
                    "scores": {},
                    "ranks": {},
                    "paths": [],
                    "seed": False,
                    "via": "cypher",
                }
            )
    if notes:
        reason = reason + "; " + "; ".join(notes)
    engine.store.save_trace(
        {
            "id": trace_id,
            "created_at": time.time(),
            "query": question,
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
            "hits": stored_hits,
        }
    )
    out = {
        "route": {"mode": chosen, "reason": reason},
        "query": query,
        "rows": rows,
        "hits": hits,
        "answer": answer,
        "refs": refs,
        "trace_id": trace_id,
    }
    if dropped:
        out["dropped_refs"] = dropped
    out_ms = round((time.perf_counter() - t0) * 1000, 1)
    engine._last_ask_ms = out_ms
    return out


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
