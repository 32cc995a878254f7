"""Re-ask ``ngr bench code``'s identifiers under other search weights (what would reach the 90% target?).

Reads the ``--out`` JSON of ``ngr bench code`` (its identifiers and gold commits, so the sample and the
gold are exactly the benchmark's) and the benchmark store, and prints the rank-1 share of each wording
for every configuration given (``SearchConfig`` overrides as JSON objects; ``{}`` = the defaults).

Usage: .venv/bin/python benchmarks/code_sweep.py CODE.json STORE.db '{}' '{"code_weight": 4}' ...
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neurongraph.bench.code_bench import WORDINGS, K, _pr_commit  # noqa: E402
from neurongraph.engine import open_engine  # noqa: E402


def main(argv: list[str]) -> int:
    if len(argv) < 3:
        print(__doc__)
        return 2
    res = json.loads(Path(argv[0]).read_text())
    eng = open_engine(argv[1])
    try:
        pr_commit = _pr_commit(eng)
        qs = [(p["gold"], w, f.format(x=p["identifier"])) for p in res["per_identifier"] for w, f in WORDINGS.items()]
        vecs = eng.embedder.embed([q for *_, q in qs])
        for raw in argv[2:]:
            cfg = eng.config.replace(limit=K, **json.loads(raw))
            first: dict[str, list[bool]] = {w: [] for w in WORDINGS}
            for (gold, w, q), v in zip(qs, vecs):
                hits = eng.search(q, config=cfg, qvec=v, record=False).hits
                ids = list(dict.fromkeys(pr_commit.get(h.id, h.id) for h in hits))
                first[w].append(ids[:1] == ["commit:" + gold])
            print(raw, {w: round(sum(v) / max(1, len(v)), 3) for w, v in first.items()}, flush=True)
    finally:
        eng.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
