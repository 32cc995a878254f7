"""A file's length from the stored diffs (``CodeHistory.line_count``) against ``git show HEAD:F``.

Samples up to ``--n`` text files of the repository's HEAD tree (seeded), counts each file's lines as
``wc -l`` does plus an unterminated last line, and compares the store's answer: exact, wrong, or None
("not known": no stored hunk gives a count, e.g. an empty file or one over the ingest's hunk caps).

Usage (a copy of the benchmark store; nothing is written to it):
    .venv/bin/python benchmarks/line_count_check.py --repo .ngr/history/iproute2 --db COPY.db [--n 300]
"""

from __future__ import annotations

import argparse
import json
import random
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from neurongraph.engine import open_engine  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repo", required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    files = subprocess.run(["git", "-C", a.repo, "ls-files"], capture_output=True, text=True, check=True).stdout
    paths = [p for p in files.splitlines() if p]
    sample = random.Random(a.seed).sample(paths, min(a.n, len(paths)))
    eng = open_engine(a.db, embedder="hashing")
    out = {"exact": 0, "wrong": [], "not_known": [], "binary": 0}
    try:
        for p in sample:
            raw = subprocess.run(["git", "-C", a.repo, "show", f"HEAD:{p}"], capture_output=True, check=True).stdout
            if b"\0" in raw[:8000]:
                out["binary"] += 1
                continue
            want = raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)
            got = eng.code_history.line_count(p)
            if got is None:
                out["not_known"].append(p)
            elif got == want:
                out["exact"] += 1
            else:
                out["wrong"].append({"path": p, "git": want, "store": got})
    finally:
        eng.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
