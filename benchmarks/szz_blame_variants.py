"""B-SZZ with other ``git blame`` flags: does a blame that looks through whitespace (``-w``) or follows
moved lines (``-M``, ``-C``) name the origin first more often than plain blame?  (docs/code-history.md,
"Tried and rejected".)  The fixes are the diff protocol's main group of ``ngr bench history``; each fix's
deleted and modified lines are blamed at its first parent with each flag set, and the commit with the most
blamed lines is its answer (no tie-break: the first of the most).

Usage: .venv/bin/python benchmarks/szz_blame_variants.py --repo .ngr/history/iproute2 --db COPY-OF-STORE
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import time
from collections import Counter

import neurongraph as ngr
from neurongraph.bench import history as bh
from neurongraph.bench.szz import read_diffs
from neurongraph.index.code_history import line_ranges
from neurongraph.ingest.git import GitRepo

VARIANTS = {"plain": [], "w": ["-w"], "wM": ["-w", "-M"], "wMC": ["-w", "-M", "-C"]}
_PORCELAIN = re.compile(r"^([0-9a-f]{40}) \d+ (\d+)(?: \d+)?$")


def blame(repo: str, rev: str, path: str, lines: list[int], flags: list[str]) -> list[str]:
    """The commits ``git blame FLAGS`` names for ``lines`` of ``path`` at ``rev`` (empty when git cannot)."""
    args = ["git", "-C", repo, "blame", "--porcelain", *flags]
    for a, b in line_ranges(lines):
        args += ["-L", f"{a},{b}"]
    res = subprocess.run([*args, rev, "--", path], capture_output=True)
    if res.returncode:
        return []
    text = res.stdout.decode("utf-8", "replace").split("\n")
    return [m.group(1) for m in map(_PORCELAIN.match, text) if m]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", required=True)
    ap.add_argument("--db", required=True, help="a copy of the history benchmark's store")
    a = ap.parse_args()
    eng = ngr.open(a.db)
    prep = bh.prepare(a.repo, eng, input="diff")
    pairs = prep.groups["main"]
    diffs = read_diffs(GitRepo(a.repo), [p.fix.removeprefix("commit:") for p in pairs])
    hits: Counter[str] = Counter()
    n, t0 = 0, time.time()
    for p in pairs:
        sha = p.fix.removeprefix("commit:")
        fd = diffs.get(sha)
        if fd is None or not fd.lines:
            continue
        n += 1
        gold = {o.removeprefix("commit:") for o in p.origins}
        for name, flags in VARIANTS.items():
            votes: Counter[str] = Counter()
            for path, lines in fd.lines.items():
                votes.update(blame(a.repo, sha + "^", path, lines, flags))
            top = votes.most_common(1)
            hits[name] += bool(top and top[0][0] in gold)
    out = {"repo": a.repo, "fixes": n, "hit@1": {k: round(hits[k] / max(n, 1), 3) for k in VARIANTS}}
    out["seconds"] = round(time.time() - t0, 1)
    print(json.dumps(out))
    eng.close()


if __name__ == "__main__":
    main()
