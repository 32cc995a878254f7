"""Run the question sets that were held out once and then read (``benchmarks/dev_sets/``): a regression check.

Each set was written from git by a session that had read no code, run once on the code of its day (the held-out
figures in docs/benchmarks.md and docs/ask.md), and then read for misses, so it is a development set now. Gold
comes from git alone.

* ``search``: every question is searched with the defaults (``-n 20``); a hit counts when it, or a commit of its
  change (its commits, the merge that landed it, a folded duplicate), is one of the gold shas. Prints top 1 / 5 /
  10 per history and in all.
* ``ask``: every question is asked (``ngr ask``, defaults); the answers go to ``--out`` as JSON lines beside the
  gold, to be read (the golds are prose). ``--compare PREV`` prints the questions whose answer changed since a
  previous run.

    python benchmarks/dev_sets.py search benchmarks/dev_sets/search_set3.json --db-dir .ngr/new
    python benchmarks/dev_sets.py ask benchmarks/dev_sets/ask_set9.json --db-dir .ngr/new --out ask9.jsonl \\
        --compare ask9-before.jsonl

The stores are those of ``ngr ingest git`` on ``../shared/bench/history`` bundles, named by history
(``click.db``, ``iproute2.db``, ``libbpf.db``, ``ovs.db``, ``mypy-paths-only.db``).
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
from pathlib import Path


def _engines(db_dir: Path):
    import neurongraph as ngr

    opened: dict[str, object] = {}

    def get(history: str):
        if history not in opened:
            path = db_dir / f"{history}.db"
            if not path.exists():
                sys.exit(f"no store {path}: ingest the history first (ngr --db {path} ingest git …)")
            opened[history] = ngr.open(path)
        return opened[history]

    return get, opened


def _rank(hits, gold: list[str]) -> int | None:
    for i, hit in enumerate(hits, 1):
        change = hit.change or {}
        members = [
            hit.id,
            *(change.get("commits") or []),
            *(change.get("landed_by") or []),
            *(change.get("folded") or []),
        ]
        if any(m.split(":")[-1] in gold for m in members):
            return i
    return None


def run_search(questions: list[dict], get) -> dict:
    """Ranks of the gold per question, and top 1 / 5 / 10 per history."""
    rows, tally = [], collections.defaultdict(lambda: [0, 0, 0, 0])
    for q in questions:
        hits = get(q["history"]).search(q["question"], limit=20, record=False).hits
        rank = _rank(hits, q["gold"])
        rows.append({"history": q["history"], "question": q["question"], "rank": rank})
        for key in (q["history"], "all"):
            t = tally[key]
            t[0] += 1
            t[1] += rank == 1
            t[2] += rank is not None and rank <= 5
            t[3] += rank is not None and rank <= 10
    return {"rows": rows, "tally": {k: dict(zip(("n", "top1", "top5", "top10"), v)) for k, v in tally.items()}}


def run_ask(questions: list[dict], get) -> list[dict]:
    """Each question's answer, route and shape beside its gold."""
    out = []
    for q in questions:
        res = get(q["history"]).ask(q["question"])
        route = res.get("route") or {}
        out.append(
            {
                **q,
                "answer": res.get("answer", ""),
                "route": f"{route.get('mode')}: {route.get('reason')}",
                "shape": (res.get("explain") or {}).get("shape"),
            }
        )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("kind", choices=("search", "ask"))
    ap.add_argument("set", type=Path, help="a set of benchmarks/dev_sets/")
    ap.add_argument("--db-dir", type=Path, default=Path(".ngr/new"))
    ap.add_argument("--out", type=Path)
    ap.add_argument("--compare", type=Path, help="ask: a previous --out to compare the answers with")
    args = ap.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    data = json.loads(args.set.read_text())
    if data.get("kind") != args.kind:
        sys.exit(f"{args.set} is a {data.get('kind')} set, not {args.kind}")
    get, opened = _engines(args.db_dir)
    try:
        if args.kind == "search":
            result = run_search(data["questions"], get)
            for key, t in sorted(result["tally"].items(), key=lambda kv: kv[0] == "all"):
                print(f"{key:18} {t['top1']:3} / {t['top5']:3} / {t['top10']:3} of {t['n']} (top 1 / 5 / 10)")
            if args.out:
                args.out.write_text(json.dumps(result, indent=1))
            return 0
        answers = run_ask(data["questions"], get)
        if args.out:
            args.out.write_text("".join(json.dumps(a, ensure_ascii=False) + "\n" for a in answers))
        before = {}
        if args.compare:
            before = {r["question"]: r["answer"] for r in map(json.loads, args.compare.read_text().splitlines())}
        for a in answers:
            if args.compare and before.get(a["question"], "")[:200] == a["answer"][:200]:
                continue
            print(f"[{a['history']}] {a['question']}\n  gold: {a['gold'][:300]}\n  ngr:  {a['answer'][:300]!r}\n")
        return 0
    finally:
        for e in opened.values():
            e.close()


if __name__ == "__main__":
    raise SystemExit(main())
