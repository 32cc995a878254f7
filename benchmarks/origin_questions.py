"""'When did X start?' questions written by hand over four dev histories, with the beginning read from git.

Gold: the commits of the series that began X, read from ``git log --reverse --format='%h %ad %s' | grep -i X`` in
each history (the commits of the first series that adds X). Prints each question's first hit with and without the
origin rule (retrieval/origin.py) and the totals. Usage: ``python benchmarks/origin_questions.py [STORES_DIR]``
(stores built with the defaults: ``ngr --db STORES_DIR/NAME.db ingest git NAME``).
"""

from __future__ import annotations

import os
import sys

import neurongraph as ngr
from neurongraph.retrieval import pipeline

CASES = {
    "ovs": [
        ("when did OVS start supporting DPDK?", ["20ebd7715", "8a9562d21", "8617affff"]),
        ("when was IPsec support first added?", ["a3acf0b0c"]),
        ("when was ERSPAN introduced?", ["8e53509cc"]),
        ("when did Geneve support begin?", ["c1fc1411d"]),
        ("when did OVS first support AF_XDP?", ["0de1b4259"]),
    ],
    "libbpf": [("when was USDT support introduced?", ["f5390e4", "1b4b798", "406386b44"])],
    "iproute2": [
        ("when did iproute2 start supporting MPTCP?", ["7e0767cd", "712fdd98", "02ade5a8"]),
        ("when was SRv6 support first added?", ["85dd6ab5", "93863328", "e1b7f883"]),
        ("when was VXLAN introduced?", ["a5494df2c"]),
        ("when did ip start to support JSON output?", ["6377572f0"]),
    ],
    "click": [
        ("when was CliRunner introduced?", ["3f695c6ec"]),
        ("when did click first support Windows?", ["47f9cb435"]),
        ("when was ParamType introduced?", ["4101de3da"]),
    ],
}


def main() -> None:
    stores = sys.argv[1] if len(sys.argv) > 1 else ".ngr/new"
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    real = pipeline._origin
    totals = {"with": 0, "without": 0}
    for name, cases in CASES.items():
        eng = ngr.open(f"{stores}/{name}.db")
        for question, gold in cases:
            line = []
            for mode in ("with", "without"):
                pipeline._origin = real if mode == "with" else (lambda q, x: None)
                hits = eng.search(question, 1, record=False).hits
                first = hits[0] if hits else None
                ok = first is not None and any(first.id.removeprefix("commit:").startswith(g) for g in gold)
                totals[mode] += ok
                line.append(f"{mode}: {'ok ' if ok else 'MISS'} {first.title[:50] if first else '-'}")
            print(f"{name:9} {question[:45]:45} | " + " | ".join(line))
        eng.close()
    pipeline._origin = real
    n = sum(len(c) for c in CASES.values())
    print(f"first hit is the beginning: with the rule {totals['with']}/{n}, without {totals['without']}/{n}")


if __name__ == "__main__":
    main()
