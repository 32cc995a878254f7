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

import datetime as dt
import random
import time

from ..ask.answer import NOT_FOUND, extractive_answer
from ..ask.nl2cypher import translate
from ..store.base import Store
from .retrieval import Dataset, passage_id

__all__ = ["run_qa", "markdown_table"]


def _norm(s: str) -> str:
    return " ".join(s.lower().split())


def _support(engine, refs: list[str], answers: list[str]) -> int:
    if not refs or not answers:
        return 0
    rows = engine.store.nodes_by_idx(engine.store.lookup_idx(refs).values())
    text = _norm(" ".join(f"{r.title} {r.text}" for r in sorted(rows.values(), key=lambda r: r.id)))
    return int(any(_norm(a) and _norm(a) in text for a in answers))


def run_qa(engine, ds: Dataset, limit: int = 5) -> dict:
    per: dict[str, list[dict]] = {"ask": [], "hybrid_only": []}
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
            per[name].append(
                {
                    "support": _support(engine, refs, answers),
                    "precision": (len(set(refs) & gold) / len(refs)) if refs else 0.0,
                    "n_refs": len(refs),
                    "not_found": answer == NOT_FOUND,
                }
            )
    n = max(1, len(ds.queries))
    systems: dict[str, dict] = {}
    out = {"dataset": ds.name, "questions": len(ds.queries), "routes": routes, "systems": systems}
    for name, rows in per.items():
        systems[name] = {
            "answer_support_recall": round(sum(x["support"] for x in rows) / n, 3),
            "citation_precision": round(sum(x["precision"] for x in rows) / n, 3),
            "mean_refs": round(sum(x["n_refs"] for x in rows) / n, 2),
            "not_found": round(sum(x["not_found"] for x in rows) / n, 3),
            "ms_per_question": round(1000 * (t_ask if name == "ask" else t_base) / n, 1),
        }
    return out


def markdown_table(res: dict) -> str:
    lines = [
        f"{res['dataset']}: {res['questions']} questions; ask routes {res['routes']}",
        "",
        "| system | answer-support recall | citation precision | mean refs | not found | ms/question |",
        "|---|---|---|---|---|---|",
    ]
    for name, s in res["systems"].items():
        lines.append(
            f"| {name} | {s['answer_support_recall']:.3f} | {s['citation_precision']:.3f} | {s['mean_refs']} "
            f"| {s['not_found']:.3f} | {s['ms_per_question']} |"
        )
    return "\n".join(lines)


# ---------------------------------------------------------------------------- (1) NL→Cypher on a real history
# Several phrasings per kind (one drawn per question), so the number measures more than one template.
PHRASES = {
    "fixes": ["Which commit does commit {s} fix?", "What did commit {s} fix?", "Commit {s} fixes which commit?"],
    "fixed_by": ["Which commit fixes commit {s}?", "What fixed commit {s}?", "Commit {s} was fixed by which commit?"],
    "merged_in": [
        "Which PR was commit {s} merged in?",
        "In which pull request did commit {s} land?",
        "Which pull request merged commit {s}?",
    ],
    "follows_up": [
        "What does commit {s} follow up?",
        "Commit {s} is a follow-up to what?",
        "Which PR does commit {s} follow up on?",
    ],
    "follow_up_pr": ["Which PR introduced the change that commit {s} follows up?"],
    "touched_before": [
        "What touched {f} before {t}?",
        "Which commits changed {f} before {t}?",
        "List the commits that modified {f} before {t}.",
    ],
}


def history_questions(store: Store, per_kind: int = 100, seed: int = 0, sha_chars: int = 10) -> list[dict]:
    """Questions with exact answers generated from the typed edges of a git-ingested store (issue 8):

    * ``fixes``: "Which commit does commit <sha> fix?" — every ``fixes`` target of that commit;
    * ``fixed_by``: "Which commit fixes commit <sha>?" — every commit with a ``fixes`` edge to it;
    * ``merged_in``: "Which PR was commit <sha> merged in?"; ``follows_up``: "What does commit <sha> follow up?";
    * ``follow_up_pr``: "Which PR introduced the change that commit <sha> follows up?" —
      ``Y -follows_up-> Z -merged_in-> pr:N``;
    * ``touched_before``: "What touched <path> before <time>?" — commits with a ``touches`` edge to the file
      and a commit time earlier than a time taken from that file's history (1–25 answers).
    """
    rnd = random.Random(seed)

    def sha(cid: str) -> str:
        return cid.split(":", 1)[1][:sha_chars]

    def sample(kind: str, groups: dict[str, set]) -> list[dict]:
        """``per_kind`` random keys of ``groups``, each a question about its sha with the group as gold."""
        return [
            {"kind": kind, "question": rnd.choice(PHRASES[kind]).format(s=sha(key)), "gold": sorted(groups[key])}
            for key in rnd.sample(sorted(groups), min(per_kind, len(groups)))
        ]

    by_src: dict[str, set] = {}
    by_dst: dict[str, set] = {}
    for s, d in store.edge_pairs("fixes"):
        if s.startswith("commit:") and d.startswith("commit:"):
            by_src.setdefault(s, set()).add(d)
            by_dst.setdefault(d, set()).add(s)
    merged: dict[str, set] = {}
    for s, d in store.edge_pairs("merged_in"):
        merged.setdefault(s, set()).add(d)
    follows = store.edge_pairs("follows_up")
    direct: dict[str, set] = {}
    chain: dict[str, set] = {}
    for y, z in follows:
        if y.startswith("commit:"):
            direct.setdefault(y, set()).add(z)
            if z in merged:
                chain.setdefault(y, set()).update(merged[z])
    qs = sample("fixes", by_src) + sample("fixed_by", by_dst) + sample("merged_in", merged)
    qs += sample("follows_up", direct) + sample("follow_up_pr", chain)
    return qs + _touched_before(store, rnd, per_kind)


def _touched_before(store: Store, rnd: random.Random, per_kind: int) -> list[dict]:
    """ "What touched <path> before <time>?": commits with a ``touches`` edge to a file and a commit time
    before a time taken from that file's own history (questions with 1..25 answers)."""
    touched: dict[str, list] = {}
    touches = store.edge_pairs("touches")
    commits = store.nodes_by_idx(store.lookup_idx({cid for cid, _ in touches}).values())
    commit_time = {r.id: r.metadata.get("commit_time") for r in commits.values() if isinstance(r.metadata, dict)}
    for cid, f in touches:
        t = commit_time.get(cid)
        if "/" in f and t is not None:
            touched.setdefault(f, []).append((int(t), cid))
    files = [f for f, v in touched.items() if len(v) >= 2]
    qs = []
    for f in rnd.sample(sorted(files), min(per_kind, len(files))):
        v = sorted(touched[f])
        k = rnd.randint(1, min(25, len(v) - 1))
        t_cut = v[k][0]
        gold = sorted({cid for t, cid in v if t < t_cut})
        if not gold or len(gold) > 25:
            continue
        when = dt.datetime.fromtimestamp(t_cut, dt.UTC).strftime("%Y-%m-%dT%H:%M:%S")
        qs.append(
            {
                "kind": "touched_before",
                "question": rnd.choice(PHRASES["touched_before"]).format(f=f.split(":", 1)[1], t=when),
                "gold": gold,
            }
        )
    return qs


def run_history(engine, per_kind: int = 100, seed: int = 0) -> dict:
    """Exact-answer accuracy of the LLM-free translator (``ask`` in graph mode, no LLM)."""
    qs = history_questions(engine.store, per_kind, seed)
    schema = engine.graph_schema()
    kinds: dict[str, dict] = {}
    fails: list[dict] = []
    t0 = time.perf_counter()
    for q in qs:
        k = kinds.setdefault(q["kind"], {"questions": 0, "exact": 0, "translated": 0, "example": q["question"]})
        k["questions"] += 1
        cq = translate(engine, q["question"], schema)
        got: set = set()
        if cq is not None:
            k["translated"] += 1
            rows = engine.cypher(cq.cypher, cq.params)["rows"]
            got = {r["id"] for r in rows if isinstance(r.get("id"), str)}
        if got == set(q["gold"]):
            k["exact"] += 1
        elif len(fails) < 10:
            fails.append(
                {
                    "question": q["question"],
                    "cypher": cq.cypher if cq else None,
                    "gold": q["gold"][:5],
                    "got": sorted(got)[:5],
                }
            )
    n = max(1, len(qs))
    for k in kinds.values():
        k["accuracy"] = round(k["exact"] / max(1, k["questions"]), 3)
    return {
        "questions": len(qs),
        "exact_accuracy": round(sum(k["exact"] for k in kinds.values()) / n, 3),
        "ms_per_question": round(1000 * (time.perf_counter() - t0) / n, 1),
        "kinds": kinds,
        "failures": fails,
    }


def history_table(res: dict) -> str:
    lines = [
        f"{res['questions']} questions, exact-answer accuracy {res['exact_accuracy']:.3f} "
        f"({res['ms_per_question']} ms/question)",
        "",
        "| kind | questions | translated | exact | accuracy | example |",
        "|---|---|---|---|---|---|",
    ]
    for name, k in res["kinds"].items():
        lines.append(
            f"| {name} | {k['questions']} | {k['translated']} | {k['exact']} | {k['accuracy']:.3f} | {k['example']} |"
        )
    return "\n".join(lines)
