"""Leave-one-repository-out choice of a learning policy over benchmarks/learning_variants.py results.

Why: a rule tuned on the histories it is scored on says little about a history nobody tuned on.  For
each held-out history the policy is chosen on the others — the variant that keeps the 70/30 split's
ΔR@10 ≥ 0 and ΔMRR ≥ 0 on the most of them, then the smallest worst 70/30 ΔMRR loss, then the largest mean
shared-origin ΔMRR (ties: ΔR@10, then the name) — and its numbers on the held-out history are reported.
Only variants run on every history count.

Usage: python benchmarks/learning_loo.py ip=/tmp/ip.json bpf=/tmp/bpf.json ...   (several files per
history are merged: name=a.json,b.json)  -> a JSON report
"""

import json
import sys


def load(spec: str) -> tuple[str, dict]:
    name, _, files = spec.partition("=")
    merged: dict = {}
    for f in files.split(","):
        merged.update(json.load(open(f))["variants"])
    return name, merged


def row(v: dict) -> dict:
    return {
        k: round(v[split][m], 4)
        for split in ("70/30", "shared")
        for k, m in ((f"{split} ΔR@10", "delta_recall@10"), (f"{split} ΔMRR", "delta_mrr"))
    }


def ok(v: dict) -> bool:
    return v["70/30"]["delta_recall@10"] >= 0 and v["70/30"]["delta_mrr"] >= -1e-12


def main() -> None:
    hist = dict(load(a) for a in sys.argv[1:])
    common = sorted(set.intersection(*(set(v) for v in hist.values())))
    out = {"variants": common, "per_history": {h: {n: row(v[n]) for n in common} for h, v in hist.items()}}
    loo = {}
    for held in hist:
        train = [h for h in hist if h != held]

        def key(n, train=train):
            s = [hist[h][n]["shared"] for h in train]
            return (
                sum(ok(hist[h][n]) for h in train),  # histories where the 70/30 split loses nothing
                min(hist[h][n]["70/30"]["delta_mrr"] for h in train),  # then the smallest worst loss
                sum(x["delta_mrr"] for x in s) / len(s),
                sum(x["delta_recall@10"] for x in s) / len(s),
                n,
            )

        chosen = max(common, key=key)
        loo[held] = {
            "chosen": chosen,
            "meets_70/30_on_all_others": all(ok(hist[h][chosen]) for h in train),
            "held_out": row(hist[held][chosen]),
        }
    out["leave_one_out"] = loo
    print(json.dumps(out, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
