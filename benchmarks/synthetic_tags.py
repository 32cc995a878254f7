"""Synthetic tags on a copy of a real clone, to measure the tag shapes of ``ngr bench ask --repo`` on a real
history (the dev clones under .ngr/history carry no tags).

Tags every STEP-th first-parent commit of HEAD ``v0.K`` (annotated for odd K, tagger date = commit date +
2 days, so creation time and commit time differ; else lightweight) and the second parent of every
MSTEP-th merge ``branch-K`` (a branch tip that reaches HEAD only through its merge, dated before tags made
on the main line meanwhile).  Usage::

    git clone -q --no-local .ngr/history/mypy-paths-only /tmp/etags/mypy-tagged
    python benchmarks/synthetic_tags.py /tmp/etags/mypy-tagged 60 15
"""

from __future__ import annotations

import os
import subprocess
import sys


def main(repo: str, step: int, mstep: int) -> int:
    def git(*args: str, env: dict | None = None) -> str:
        return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True, text=True, env=env).stdout

    listing = git("rev-list", "--first-parent", "--reverse", "--format=%H %ct", "HEAD").split("\n")
    rows = [line.split() for line in listing if line and not line.startswith("commit ")]
    n = 0
    for k, (sha, ct) in enumerate(rows[::step]):
        name = f"v0.{k}"
        if k % 2:
            env = {
                **os.environ,
                "GIT_COMMITTER_DATE": f"@{int(ct) + 2 * 86400} +0000",
                "GIT_COMMITTER_NAME": "Rel Eng",
                "GIT_COMMITTER_EMAIL": "rel@example.org",
            }
            git("tag", "-a", name, "-m", f"Release {name}", sha, env=env)
        else:
            git("tag", name, sha)
        n += 1
    merges = [m for m in git("rev-list", "--merges", "--reverse", "--parents", "HEAD").split("\n") if m]
    for k, line in enumerate(merges[::mstep]):
        parts = line.split()
        if len(parts) >= 3:
            git("tag", f"branch-{k}", parts[2])
            n += 1
    print(n, "tags")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])))
