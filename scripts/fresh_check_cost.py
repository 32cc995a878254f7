#!/usr/bin/env python3
"""What ``ngr mcp --repo`` / ``ngr serve --repo`` cost an agent's call (docs/mcp.md, "Fresh by default").

Opens STORE (synced from REPO before, with ``ngr ingest git REPO``) and a ``Freshness`` over REPO
(``neurongraph.service.freshness``), times ``before_call()`` on the unchanged repository (the ref check alone),
then makes commits in REPO and times the call that syncs each one, and the search that finds it.  It COMMITS
INTO REPO and writes the store: run it on a clone and a copy of the store.

Usage: python scripts/fresh_check_cost.py STORE.db REPO [EMBEDDER] [--calls N] [--commits N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import neurongraph as ngr
from neurongraph.index.embedder import make_embedder
from neurongraph.service.freshness import Freshness

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Fresh Check",
    "GIT_AUTHOR_EMAIL": "fresh@example.org",
    "GIT_COMMITTER_NAME": "Fresh Check",
    "GIT_COMMITTER_EMAIL": "fresh@example.org",
    "PATH": "/usr/local/bin:/usr/bin:/bin",
}


def _git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=GIT_ENV).stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("store")
    ap.add_argument("repo")
    ap.add_argument("embedder", nargs="?", default=None, help="as --embedder (default: the real model)")
    ap.add_argument("--calls", type=int, default=50)
    ap.add_argument("--commits", type=int, default=3)
    a = ap.parse_args()
    eng = ngr.open(a.store, embedder=a.embedder)
    fresh = Freshness(a.store, [a.repo], lambda: make_embedder(a.embedder))
    out: dict = {"source": fresh.repos[0].source}
    try:
        t = time.perf_counter()
        first = fresh.before_call()
        out["first_call_s"] = round(time.perf_counter() - t, 3)
        if fresh._thread is not None:
            fresh._thread.join()
        out["first_call_stale"] = first["stale"]
        took = []
        for _ in range(a.calls):
            t = time.perf_counter()
            view = fresh.before_call()
            took.append((time.perf_counter() - t) * 1000)
            assert not view["stale"], view
        took.sort()
        out["unchanged_check_ms"] = {
            "median": round(statistics.median(took), 1),
            "p90": round(took[int(len(took) * 0.9) - 1], 1),
            "max": round(took[-1], 1),
            "calls": len(took),
        }
        out["new_commits"] = []
        for i in range(a.commits):
            name = f"FRESH_CHECK_{i}.txt"
            with open(f"{a.repo}/{name}", "w", encoding="utf-8") as fh:
                fh.write(f"frobnicator {i}\n")
            _git(a.repo, "add", name)
            _git(a.repo, "commit", "-q", "-m", f"Fix the frobnicator overflow number {i}")
            sha = _git(a.repo, "rev-parse", "HEAD").strip()
            t = time.perf_counter()
            view = fresh.before_call()
            sync_s = time.perf_counter() - t
            t = time.perf_counter()
            hits = [h.id for h in eng.search(f"frobnicator overflow number {i}", limit=5, record=False).hits]
            out["new_commits"].append(
                {
                    "call_s": round(sync_s, 3),
                    "stale": view["stale"],
                    "search_s": round(time.perf_counter() - t, 3),
                    "found": f"commit:{sha}" in hits,
                }
            )
    finally:
        fresh.close()
        eng.close()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
