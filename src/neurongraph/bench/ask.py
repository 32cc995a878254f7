"""``ngr bench ask``: ask (no LLM) on QA sets with gold answers, against a hybrid-only baseline.

Per question, for each system, the ids its answer cites (``refs``):

* **answer-support recall**: 1 if a gold answer string (any alias, case-insensitive) appears in the
  title + text of a cited node, else 0 — does the cited evidence contain the answer;
* **citation precision**: cited ids that are gold passages / cited ids (0 when nothing is cited);
* also the share of questions answered "not found" and the mean number of refs.

Systems: ``ask`` = ``Engine.ask`` with ``mode=auto`` and no LLM (router, LLM-free NL→Cypher, default
graph search, extractive answer); ``hybrid_only`` = the same extractive answer over hybrid search
without any graph (``channel="none"``), i.e. the baseline a plain RAG would cite.
"""
from __future__ import annotations

import time

from ..ask.answer import NOT_FOUND, extractive_answer
from .retrieval import Dataset, passage_id

__all__ = ["run_qa", "markdown_table"]


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _support(engine, refs: list[str], answers: list[str]) -> int:
    if not refs or not answers:
        return 0
    rows = engine.store.conn.execute(f"SELECT title || ' ' || text FROM nodes WHERE id IN ({','.join('?' * len(refs))})",
                                     refs).fetchall()
    text = _norm(" ".join(r[0] for r in rows))
    return int(any(_norm(a) and _norm(a) in text for a in answers))


def run_qa(engine, ds: Dataset, limit: int = 5) -> dict:
    per = {"ask": [], "hybrid_only": []}
    routes: dict[str, int] = {}
    t_ask = t_base = 0.0
    for q in ds.queries:
        gold = {passage_id(g) for g in q.get("gold_ids", [])}
        answers = [a for a in (q.get("answers") or ([q["answer"]] if q.get("answer") else [])) if isinstance(a, str)]
        t0 = time.perf_counter()
        r = engine.ask(q["question"], limit=limit)
        t_ask += time.perf_counter() - t0
        routes[r["route"]["mode"]] = routes.get(r["route"]["mode"], 0) + 1
        t0 = time.perf_counter()
        res = engine.search(q["question"], limit, record=False, channel="none")
        full = [{"id": h.id, "type": h.type, "title": h.title, "text": h.text} for h in res.hits]
        base_answer, base_refs = extractive_answer(engine, q["question"], [], full)
        t_base += time.perf_counter() - t0
        for name, refs, answer in (("ask", r["refs"], r["answer"]), ("hybrid_only", base_refs, base_answer)):
            per[name].append({"support": _support(engine, refs, answers),
                              "precision": (len(set(refs) & gold) / len(refs)) if refs else 0.0,
                              "n_refs": len(refs), "not_found": answer == NOT_FOUND})
    n = max(1, len(ds.queries))
    out = {"dataset": ds.name, "questions": len(ds.queries), "routes": routes, "systems": {}}
    for name, rows in per.items():
        out["systems"][name] = {
            "answer_support_recall": round(sum(x["support"] for x in rows) / n, 3),
            "citation_precision": round(sum(x["precision"] for x in rows) / n, 3),
            "mean_refs": round(sum(x["n_refs"] for x in rows) / n, 2),
            "not_found": round(sum(x["not_found"] for x in rows) / n, 3),
            "ms_per_question": round(1000 * (t_ask if name == "ask" else t_base) / n, 1),
        }
    return out


def markdown_table(res: dict) -> str:
    lines = [f"{res['dataset']}: {res['questions']} questions; ask routes {res['routes']}", "",
             "| system | answer-support recall | citation precision | mean refs | not found | ms/question |",
             "|---|---|---|---|---|---|"]
    for name, s in res["systems"].items():
        lines.append(f"| {name} | {s['answer_support_recall']:.3f} | {s['citation_precision']:.3f} | {s['mean_refs']} "
                     f"| {s['not_found']:.3f} | {s['ms_per_question']} |")
    return "\n".join(lines)
