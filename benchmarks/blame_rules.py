"""Issue 46's blame and code-credit rules on one history: every grid point of the given search options,
searched with the benchmark's own protocol (``bench.history.prepare``: the same questions, working sets and
B-SZZ as ``ngr bench history``), and the B-SZZ rows beside them.

One process prepares the history once and searches each point (a diff-protocol point costs a few seconds
on iproute2, under a minute on ovs); the results are appended to ``--out`` (JSON lines), one per point, so
several histories' files feed :func:`loo` (leave-one-repository-out choice, ``--loo A.jsonl B.jsonl ...``).

Usage:
    python benchmarks/blame_rules.py --repo .ngr/history/iproute2 --db COPY.db --input diff \\
        --grid '{"blame_recency": [0, 0.5, 1], "blame_recency_days": [7, 30]}' --out iproute2.jsonl
    python benchmarks/blame_rules.py ... --grid '{"neurongraph.retrieval.code_evidence.RARE_DF": [0, 25]}'
    python benchmarks/blame_rules.py --loo iproute2.jsonl libbpf.jsonl ovs.jsonl [--slack 0.01]
    python benchmarks/blame_rules.py --repo .ngr/history/iproute2 --db COPY.db --misses iproute2-misses.jsonl

``--misses`` reads the defaults' rank-1 misses of the diff protocol one by one (issue 46's classes): per question
the gold's and the first hit's blame, code, text and age, B-SZZ's rank of the gold, and a class: ``wrong blame``
(B-SZZ does not name the gold; the first hit is blamed), ``newer picked`` / ``older picked`` (both are blamed),
``unblamed first`` (the gold is blamed, the first hit is not), ``neither``.

``--top`` writes every question's top 40 under the defaults with the parts of each hit's score and a few facts
the search does not read (the author is the fix's, the earlier fixes that name the hit, its files); ``--rescore``
re-orders those lists under rules that change the blame and code parts of the score, one grid point a row in
``--out``'s format, so ``--loo`` chooses among them as it does among searched points (it takes the grid's first
point as the baseline: list each rule's "off" value of ``RESCORE`` first):

    python benchmarks/blame_rules.py --repo .ngr/history/ovs --db COPY.db --top ovs-top.jsonl
    python benchmarks/blame_rules.py --rescore ovs-top.jsonl --grid '{"age_days": [0, 365], "age_power": [0.5]}' \\
        --out ovs-rescore.jsonl

A grid name with dots is a module constant (set before the point is searched), the others search options.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neurongraph.bench.history import DIFF_SYSTEMS, _canonical, _config, _metrics, _Units, prepare  # noqa: E402
from neurongraph.engine import open_engine  # noqa: E402
from neurongraph.index.embedder import make_embedder  # noqa: E402

METRICS = ("hit@1", "recall@10", "mrr")


def points(grid: dict[str, list]) -> list[dict]:
    names = sorted(grid)
    return [dict(zip(names, vals)) for vals in itertools.product(*(grid[n] for n in names))]


def _patch(point: dict) -> dict:
    """Set the module constants a point names (``package.module.NAME``); the rest are search options."""
    opts = {}
    for k, v in point.items():
        if "." in k:
            mod, _, name = k.rpartition(".")
            setattr(importlib.import_module(mod), name, v)
        else:
            opts[k] = v
    return opts


def run(args: argparse.Namespace) -> None:
    grid = json.loads(args.grid) if args.grid else {}
    szz_cache = str(Path(args.db).with_suffix("")) + "-szz.json"  # the file `ngr bench history` keeps
    with open_engine(args.db, make_embedder(None)) as eng:
        prep = prepare(args.repo, eng, input=args.input, limit=args.limit, szz_cache=szz_cache)
        tokens = {cid: c["tokens"] for cid, c in prep.hist.commits.items()}
        base = ["szz", "szz-newest"] if args.input == "diff" else []
        runs = [(name, DIFF_SYSTEMS[name], None) for name in base] + [("ngr", {}, p) for p in points(grid)]
        with open(args.out, "a") as fh:
            for name, overrides, point in runs:
                if point is not None:  # module constants are not part of the memo's key: search afresh
                    overrides = _patch(point) | ({} if args.input == "diff" else {"changes": None})
                    prep._memo.clear()
                    prep.found_as.clear()
                t = time.perf_counter()
                ranked, lat = prep.rank(eng, name, overrides)
                row = {
                    "repo": prep.repo.name,
                    "input": args.input,
                    "system": name,
                    "point": point,
                    "seconds": round(time.perf_counter() - t, 1),
                }
                if lat:  # search latency (ms) of the point's questions
                    row["latency_ms"] = {
                        "p50": round(float(np.median(lat)), 2),
                        "p90": round(float(np.percentile(lat, 90)), 2),
                    }
                for group, plist in prep.groups.items():
                    if group != "reverts":
                        m = _metrics(ranked[group], plist, tokens)
                        row[group] = {k: round(m[k], 4) for k in METRICS} | {"n": len(plist)}
                fh.write(json.dumps(row) + "\n")
                fh.flush()
                print(json.dumps(row), flush=True)


def _hit_row(h, commits: dict, as_of: float, szz: list[str], unit: str) -> dict:
    """One hit as the miss reading shows it: title, age (days before the question), blame, code, the score
    without the code evidence (text, graph, priors), its entry ranks, and whether B-SZZ blamed it."""
    s = h.scores
    part = s.get("code_scale", 0.0) * (2 * s.get("blame", 0.0) + s.get("code_weight", 0.0) * s.get("code", 0.0))
    return {
        "id": h.id,
        "title": h.title[:100],
        "age_days": round((as_of - commits.get(h.id, {}).get("time", as_of)) / 86400, 1),
        "blame": round(s.get("blame", 0.0), 3),
        "code": round(s.get("code", 0.0), 3),
        "without_code": round(s["final"] - part, 3),
        "lexical_rank": h.ranks.get("lexical"),
        "dense_rank": h.ranks.get("dense"),
        "szz_blamed": unit in szz,
        "evidence": h.evidence[:3],
    }


def _miss_class(gold: dict | None, top: dict, szz_rank: int | None) -> str:
    if szz_rank is None:
        return "wrong blame" if top["blame"] > 0 or top["szz_blamed"] else "neither"
    if not top["szz_blamed"]:
        return "unblamed first"
    return "newer picked" if gold is not None and gold["age_days"] > top["age_days"] else "older picked"


def misses(args: argparse.Namespace) -> None:
    """The defaults' rank-1 misses of the diff protocol, one JSON line each, and their classes counted."""
    szz_cache = str(Path(args.db).with_suffix("")) + "-szz.json"
    counts: dict[str, int] = {}
    with open_engine(args.db, make_embedder(None)) as eng, open(args.misses, "w") as fh:
        prep = prepare(args.repo, eng, input="diff", limit=args.limit, szz_cache=szz_cache)
        units, commits = _Units(prep.hist), prep.hist.commits
        for p in prep.groups["main"]:
            cfg = _config(eng, p, {}, prep.changes.get(id(p))).replace(limit=40)
            hits = eng.search(p.query, config=cfg, qvec=prep.qv[id(p)], record=False).hits
            raw: dict[str, str] = {}
            ranked = _canonical([h.id for h in hits], units, p.fix, raw)
            gold = {u for a in p.accepted() for u in a}
            szz = _canonical(prep.szz.get(id(p), []), units, p.fix)
            rank = next((i + 1 for i, x in enumerate(ranked) if x in gold), None)
            if rank == 1 or not ranked:
                continue
            by = {h.id: h for h in hits}
            top = _hit_row(by[raw[ranked[0]]], commits, p.as_of, szz, ranked[0])
            g = _hit_row(by[raw[ranked[rank - 1]]], commits, p.as_of, szz, ranked[rank - 1]) if rank else None
            szz_rank = next((i + 1 for i, x in enumerate(szz) if x in gold), None)
            cls = _miss_class(g, top, szz_rank)
            counts[cls] = counts.get(cls, 0) + 1
            row = {"fix": p.fix, "query": p.query, "rank": rank, "szz_rank": szz_rank, "class": cls}
            fh.write(json.dumps(row | {"gold": g, "first": top}) + "\n")
        print(json.dumps({"repo": prep.repo.name, "questions": len(prep.groups["main"]), "misses": counts}))


def top(args: argparse.Namespace) -> None:
    """Every question's top 40 under the defaults (diff protocol), one JSON line each: per hit the score's parts
    and facts the rules of :func:`rescore` read."""
    szz_cache = str(Path(args.db).with_suffix("")) + "-szz.json"
    with open_engine(args.db, make_embedder(None)) as eng, open(args.top, "w") as fh:
        prep = prepare(args.repo, eng, input="diff", limit=args.limit, szz_cache=szz_cache)
        units, commits = _Units(prep.hist), prep.hist.commits
        author = {r.id: r.metadata.get("author_email", "") for r in eng.store.iter_nodes() if r.type == "commit"}
        named: dict[str, list[float]] = {}  # commit -> times of the fixes that name it
        for f, o in prep.hist.edges["fixes"]:
            if f in commits:
                named.setdefault(o, []).append(commits[f]["time"])
        for p in prep.groups["main"]:
            cfg = _config(eng, p, {}, prep.changes.get(id(p))).replace(limit=40)
            hits = eng.search(p.query, config=cfg, qvec=prep.qv[id(p)], record=False).hits
            raw: dict[str, str] = {}
            ranked = _canonical([h.id for h in hits], units, p.fix, raw)
            gold = {u for a in p.accepted() for u in a}
            by = {h.id: h for h in hits}
            rows = []
            for u in ranked:
                h, c = by[raw[u]], commits.get(raw[u], {})
                s = h.scores
                rows.append(
                    {k: round(s.get(k, 0.0), 5) for k in ("final", "blame", "code", "code_weight", "code_scale")}
                    | {
                        "gold": u in gold,
                        "age_days": round((p.as_of - c.get("time", p.as_of)) / 86400, 2),
                        "same_author": bool(author.get(p.fix)) and author.get(raw[u]) == author.get(p.fix),
                        "named_by_fixes": sum(1 for x in named.get(raw[u], []) if x <= p.as_of),
                        "files": len(c.get("files", [])),
                        "lexical_rank": h.ranks.get("lexical"),
                        "dense_rank": h.ranks.get("dense"),
                    }
                )
            fh.write(json.dumps({"repo": prep.repo.name, "fix": p.fix, "hits": rows}) + "\n")


RESCORE = {
    "repair": 0.0,
    "author": 0.0,
    "files_over": 0,
    "files_power": 0.0,
    "age_days": 0,
    "age_power": 0.0,
    "no_code_blame": 1.0,
    "rest_times": 1.0,
    "blame_times": 1.0,
    "code_times": 1.0,
}  # the grid names of --rescore and their "off" values


def _rescored(h: dict, pt: dict) -> float:
    """One hit's final score under a rescore point: the blame part (``2 · blame · code_scale``, blame_weight 2)
    scaled by the file-count, age and no-code rules, the blame and code parts by the repair and author rules;
    ``*_times`` scale the three parts (text, graph and priors; blame; code) as they are."""
    rest = h["final"] - h["code_scale"] * (2 * h["blame"] + h["code_weight"] * h["code"])  # text, graph, priors
    blame_part = h["code_scale"] * 2 * h["blame"]
    code_part = h["code_scale"] * h["code_weight"] * h["code"]
    if pt["files_over"] and h["files"] > pt["files_over"]:
        blame_part *= (pt["files_over"] / h["files"]) ** pt["files_power"]
    if pt["age_days"]:
        blame_part *= (pt["age_days"] / (pt["age_days"] + max(h["age_days"], 0.0))) ** pt["age_power"]
    if h["code"] <= 0:
        blame_part *= pt["no_code_blame"]
    m = (1 + pt["repair"] * float(np.log1p(h["named_by_fixes"]))) * (1 + pt["author"] * h["same_author"])
    return rest * pt["rest_times"] + (blame_part * pt["blame_times"] + code_part * pt["code_times"]) * m


def rescore(args: argparse.Namespace) -> None:
    """Each grid point re-orders every ``--top`` question; hit@1, R@10 and MRR per history, as :func:`run`'s rows."""
    grid = json.loads(args.grid) if args.grid else {}
    unknown = set(grid) - set(RESCORE)
    if unknown:
        raise SystemExit(f"--rescore knows {sorted(RESCORE)}, not {sorted(unknown)}")
    qs = [json.loads(line) for f in args.rescore for line in Path(f).read_text().splitlines()]
    with open(args.out, "a") as fh:
        for point in [{}] + points(grid):
            pt = RESCORE | point
            for repo in dict.fromkeys(q["repo"] for q in qs):
                hit1, r10, rr = [], [], []
                for q in (q for q in qs if q["repo"] == repo):
                    order = sorted(q["hits"], key=lambda h: -_rescored(h, pt))
                    first = next((i for i, h in enumerate(order) if h["gold"]), None)
                    hit1.append(first == 0)
                    r10.append(first is not None and first < 10)
                    rr.append(0.0 if first is None else 1 / (first + 1))
                main = {"hit@1": float(np.mean(hit1)), "recall@10": float(np.mean(r10)), "mrr": float(np.mean(rr))}
                row = {"repo": repo, "input": "diff-rescored", "system": "ngr", "point": point or None}
                row["main"] = {k: round(v, 4) for k, v in main.items()} | {"n": len(hit1)}
                if point:  # the defaults' row ({}) is printed, not written: --loo takes the grid's first point
                    fh.write(json.dumps(row) + "\n")
                print(json.dumps(row), flush=True)


def loo(files: list[str], slack: float) -> None:
    """Each history held out: the point with the best mean hit@1 (then MRR) on the others, among the points
    that lose no more than ``slack`` hit@1 against the defaults' point (the first of the grid) on any of them."""
    rows: dict[str, dict[str, dict]] = {}
    order: list[str] = []
    for f in files:
        for line in Path(f).read_text().splitlines():
            r = json.loads(line)
            if r["point"] is None:
                continue
            k = json.dumps(r["point"], sort_keys=True)
            if k not in order:
                order.append(k)
            rows.setdefault(f"{r['repo']}/{r['input']}", {})[k] = r["main"]
    hists = sorted(rows)
    common = [k for k in order if all(k in rows[h] for h in hists)]
    base = common[0]
    for held in hists:
        others = [h for h in hists if h != held]
        ok = [k for k in common if all(rows[h][k]["hit@1"] >= rows[h][base]["hit@1"] - slack for h in others)]
        best = max(ok, key=lambda k: (sum(rows[h][k]["hit@1"] for h in others), sum(rows[h][k]["mrr"] for h in others)))
        got, ref = rows[held][best], rows[held][base]
        print(
            f"{held} held out: chose {best}; held-out hit@1 / R@10 / MRR "
            f"{got['hit@1']:.3f} / {got['recall@10']:.3f} / {got['mrr']:.3f} "
            f"(defaults {ref['hit@1']:.3f} / {ref['recall@10']:.3f} / {ref['mrr']:.3f})"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo")
    ap.add_argument("--db")
    ap.add_argument("--input", default="diff", choices=("text", "diff"))
    ap.add_argument("--grid", default="")
    ap.add_argument("--limit", type=int)
    ap.add_argument("--out", default="blame_rules.jsonl")
    ap.add_argument("--loo", nargs="*")
    ap.add_argument("--slack", type=float, default=0.01)
    ap.add_argument("--misses", help="write the defaults' rank-1 misses (diff protocol) here, one JSON line each")
    ap.add_argument("--top", help="write every question's top 40 under the defaults (diff protocol) here")
    ap.add_argument("--rescore", nargs="*", help="re-order --top files under the --grid's rules (RESCORE)")
    args = ap.parse_args()
    if args.loo:
        loo(args.loo, args.slack)
    elif args.misses:
        misses(args)
    elif args.top:
        top(args)
    elif args.rescore:
        rescore(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
