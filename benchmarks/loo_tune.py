"""Leave-one-repository-out tuning of the code-evidence and history weights (issue 24, "Tune by LOO").

A weight tuned on the history it is scored on says little about a history nobody has seen.  For each
held-out history, this picks the grid point with the best mean MRR over the *other* histories (ties: mean
hit@1, then the grid's order) and reports the held-out history's numbers under that choice, next to the
shipped defaults' numbers on it.  Two selections:

- ``brief`` — the issue's: iproute2, ovs, libbpf in the diff protocol (full code), mypy-paths-only in the
  text protocol (its store has paths only);
- ``text`` — every history in the text protocol (the issue's text target: hit@1 >= 0.45, R@10 >= 0.85 on
  the worst history under leave-one-out).

Every (history, protocol, grid point) result is cached in ``--cache`` (JSON, written after each point), so
an interrupted run resumes where it stopped and a wider grid only searches its new points.  The benchmark
stores are the ones ``ngr bench history`` builds (.ngr/bench/history/<repo>-<model>.db); ingest and
embedding happen once, there.  In the text protocol the blame weights cannot act (no working set), so
those points are searched once and shared.

Usage (heavy: wrap in ``flock /tmp/ngr-heavy.lock``):
    .venv/bin/python benchmarks/loo_tune.py [--embedder hashing] [--limit N] [--grid '{"code_weight": [0.5, 1]}']
        [--out-md loo.md] [--out-json loo.json]
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neurongraph.bench.history import _metrics, prepare  # noqa: E402
from neurongraph.config import SearchConfig  # noqa: E402
from neurongraph.engine import open_engine  # noqa: E402
from neurongraph.index.embedder import make_embedder  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
HISTORIES = ("iproute2", "ovs", "libbpf", "mypy-paths-only")
WITH_CODE = ("iproute2", "ovs", "libbpf")
SELECTIONS = {
    "brief": {"iproute2": "diff", "ovs": "diff", "libbpf": "diff", "mypy-paths-only": "text"},
    "text": dict.fromkeys(HISTORIES, "text"),
}
GRID: dict[str, list[float]] = {  # 36 points; the defaults (1.0, 0.5, 0.5, 0.6) are among them
    "blame_weight": [0.5, 1.0, 2.0],
    "blame_seed_weight": [0.5, 1.0],
    "code_weight": [0.5, 1.0],
    "recency_weight": [0.45, 0.6, 0.75],
}
TEXT_INERT = ("blame_weight", "blame_seed_weight")  # no working set in the text protocol: these cannot act
METRICS = ("hit@1", "recall@10", "mrr")


def points(grid: dict[str, list[float]]) -> list[dict[str, float]]:
    names = sorted(grid)
    return [dict(zip(names, vals)) for vals in itertools.product(*(grid[n] for n in names))]


def effective(point: dict[str, float], protocol: str) -> dict[str, float]:
    """The point as the protocol can feel it (text: the blame weights at their defaults)."""
    if protocol != "text":
        return dict(point)
    d = SearchConfig()
    return {k: (getattr(d, k) if k in TEXT_INERT else v) for k, v in point.items()}


def key(point: dict[str, float]) -> str:
    return json.dumps(point, sort_keys=True)


class Cache:
    """{history: {protocol: {point key: metrics}}} in one JSON file, saved after every new point."""

    def __init__(self, path: Path, model: str, limit: int | None):
        self.path = path
        self.tag = f"{model}|limit={limit}"
        raw = json.loads(path.read_text()) if path.exists() else {}
        self.data: dict = raw.get(self.tag, {})
        self.all = raw

    def get(self, h: str, proto: str, k: str) -> dict | None:
        return self.data.get(h, {}).get(proto, {}).get(k)

    def put(self, h: str, proto: str, k: str, m: dict) -> None:
        self.data.setdefault(h, {}).setdefault(proto, {})[k] = m
        self.all[self.tag] = self.data
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.all))
        tmp.replace(self.path)


def evaluate(args, needed: dict[str, set[str]], grid_points: list[dict[str, float]], cache: Cache) -> None:
    """Search every missing (history, protocol, point) and cache its metrics on the main questions."""
    emb = make_embedder(args.embedder)
    model = emb.model_id.replace(":", "_").replace("/", "_")
    defaults = {k: getattr(SearchConfig(), k) for k in grid_points[0]}
    for h, protos in needed.items():
        todo = {
            p: [pt for pt in [defaults, *grid_points] if cache.get(h, p, key(effective(pt, p))) is None]
            for p in sorted(protos)
        }
        if not any(todo.values()):
            continue
        db = ROOT / ".ngr/bench/history" / f"{h}-{model}.db"
        eng = open_engine(db, emb)
        try:
            for proto, pts in todo.items():
                t0 = time.perf_counter()
                szz = str(db.with_suffix("")) + "-szz.json"
                prep = prepare(ROOT / ".ngr/history" / h, eng, input=proto, limit=args.limit, szz_cache=szz)
                main = prep.groups["main"]
                tokens = {cid: c["tokens"] for cid, c in prep.hist.commits.items()}
                print(f"{h} ({proto}): {len(main)} questions, ready in {time.perf_counter() - t0:.1f}s", flush=True)
                seen: set[str] = set()
                for i, pt in enumerate(pts):
                    eff = effective(pt, proto)
                    k = key(eff)
                    if k in seen or cache.get(h, proto, k) is not None:
                        continue
                    seen.add(k)
                    t = time.perf_counter()
                    ranked, lat = prep.rank(eng, "ngr", eff)
                    m = _metrics(ranked["main"], main, tokens)
                    m["questions"] = len(main)
                    cache.put(h, proto, k, m)
                    print(
                        f"  [{i + 1}/{len(pts)}] {k}: hit@1 {m['hit@1']:.3f} R@10 {m['recall@10']:.3f} "
                        f"MRR {m['mrr']:.3f} ({time.perf_counter() - t:.1f}s)",
                        flush=True,
                    )
        finally:
            eng.close()


def leave_one_out(selection: dict[str, str], grid_points: list[dict[str, float]], cache: Cache) -> list[dict]:
    """Per held-out history: the point best on the others (mean MRR, then mean hit@1), scored on it."""
    defaults = {k: getattr(SearchConfig(), k) for k in grid_points[0]}
    rows = []
    for held, proto in selection.items():
        train = [(h, p) for h, p in selection.items() if h != held]

        def score(pt: dict[str, float], train=train) -> tuple[float, float]:
            ms = [cache.get(h, p, key(effective(pt, p))) for h, p in train]
            if any(m is None for m in ms):
                return (-1.0, -1.0)
            return (
                sum(m["mrr"] for m in ms) / len(ms),  # type: ignore[index]
                sum(m["hit@1"] for m in ms) / len(ms),  # type: ignore[index]
            )

        best = max(grid_points, key=score)  # first of equals: the grid's order
        chosen = cache.get(held, proto, key(effective(best, proto))) or {}
        dflt = cache.get(held, proto, key(effective(defaults, proto))) or {}
        rows.append(
            {
                "held_out": held,
                "protocol": proto,
                "chosen": best,
                "train_mean_mrr": score(best)[0],
                "held_out_chosen": {k: chosen.get(k) for k in METRICS},
                "held_out_defaults": {k: dflt.get(k) for k in METRICS},
                "questions": chosen.get("questions"),
            }
        )
    return rows


def all_histories_best(selection: dict[str, str], grid_points: list[dict[str, float]], cache: Cache) -> dict:
    """The point best on all histories of the selection together (the value to ship)."""

    def score(pt: dict[str, float]) -> tuple[float, float]:
        ms = [cache.get(h, p, key(effective(pt, p))) for h, p in selection.items()]
        if any(m is None for m in ms):
            return (-1.0, -1.0)
        return (sum(m["mrr"] for m in ms) / len(ms), sum(m["hit@1"] for m in ms) / len(ms))  # type: ignore[index]

    best = max(grid_points, key=score)
    return {"point": best, "mean_mrr": score(best)[0], "mean_hit@1": score(best)[1]}


def markdown(result: dict) -> str:
    out = [
        f"Leave-one-repository-out over {result['grid_points']} grid points "
        f"({', '.join(f'{k} {v}' for k, v in result['grid'].items())}); encoder `{result['embedder']}`"
        + (f", first {result['limit']} questions per history" if result["limit"] else "")
        + ".",
    ]
    for sel, rows in result["selections"].items():
        out += [
            "",
            f"**{sel}** selection — chosen on the other histories, scored on the held-out one "
            "(defaults' numbers on it in brackets):",
            "",
            "| held out | protocol | chosen | hit@1 | R@10 | MRR |",
            "|---|---|---|---|---|---|",
        ]
        for r in rows:
            c, d = r["held_out_chosen"], r["held_out_defaults"]
            cells = [
                "–" if c.get(m) is None else f"{c[m]:.3f} ({'–' if d.get(m) is None else f'{d[m]:.3f}'})"
                for m in METRICS
            ]
            ch = ", ".join(f"{k}={v:g}" for k, v in r["chosen"].items())
            out.append(f"| {r['held_out']} | {r['protocol']} | {ch} | " + " | ".join(cells) + " |")
        worst = min(rows, key=lambda r: r["held_out_chosen"].get("hit@1") or 0.0)
        out.append(
            f"| **worst** | | | {worst['held_out_chosen']['hit@1']:.3f} ({worst['held_out']}) | "
            f"{min(r['held_out_chosen']['recall@10'] or 0 for r in rows):.3f} | "
            f"{min(r['held_out_chosen']['mrr'] or 0 for r in rows):.3f} |"
        )
        b = result["best_on_all"][sel]
        out.append(
            f"\nBest on all {sel} histories together: "
            + ", ".join(f"{k}={v:g}" for k, v in b["point"].items())
            + f" (mean MRR {b['mean_mrr']:.3f}, mean hit@1 {b['mean_hit@1']:.3f})."
        )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--embedder", default=None, help="default: the real model; 'hashing' while developing")
    ap.add_argument("--limit", type=int, default=None, help="only the first N questions per history")
    ap.add_argument("--grid", default=None, help="JSON {weight: [values]} replacing the default grid")
    ap.add_argument("--selection", choices=[*SELECTIONS, "both"], default="both")
    ap.add_argument("--only", default=None, help="comma-separated histories (default: all four)")
    ap.add_argument("--cache", type=Path, default=ROOT / ".ngr/bench/loo/cache.json")
    ap.add_argument("--out-md", type=Path, default=None)
    ap.add_argument("--out-json", type=Path, default=None)
    args = ap.parse_args(argv)
    grid = json.loads(args.grid) if args.grid else GRID
    grid_points = points(grid)
    sels = list(SELECTIONS) if args.selection == "both" else [args.selection]
    only = set(args.only.split(",")) if args.only else set(HISTORIES)
    selections = {s: {h: p for h, p in SELECTIONS[s].items() if h in only} for s in sels}
    needed: dict[str, set[str]] = {}
    for s in sels:
        for h, p in selections[s].items():
            needed.setdefault(h, set()).add(p)
    model = make_embedder(args.embedder).model_id
    cache = Cache(args.cache, model, args.limit)
    evaluate(args, needed, grid_points, cache)
    result = {
        "embedder": model,
        "limit": args.limit,
        "grid": grid,
        "grid_points": len(grid_points),
        "selections": {s: leave_one_out(selections[s], grid_points, cache) for s in sels},
        "best_on_all": {s: all_histories_best(selections[s], grid_points, cache) for s in sels},
    }
    md = markdown(result)
    print(md)
    if args.out_md:
        args.out_md.write_text(md + "\n")
    if args.out_json:
        args.out_json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
