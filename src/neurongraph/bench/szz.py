"""B-SZZ, the literature's baseline for "which commit introduced what this fix repairs" (issue 24, §4).

A fix's deleted and modified lines were, by assumption, the faulty ones; ``git blame`` of those lines in
the fix's parent names the commits that last wrote them, ranked by how many lines each wrote (ties: the
newer first).  Blank lines are not blamed (they carry no fault); a fix that only adds lines has nothing
to blame and is a miss, as the literature scores it.  Everything here is git, nothing the engine stores:
the baseline must not share the engine's mistakes.  The fixes' diffs are read in one ``git log``
process, and each (fix, file) is one ``git blame`` with every range of that file as its own ``-L``.
"""

from __future__ import annotations

import json
import re
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..ingest.git import GitRepo
from ..ingest.git_blame import blame_with_git

__all__ = ["FixDiff", "read_diffs", "old_side", "blame_lines", "szz_rank", "SzzCache"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")
_SEP = "\x01"


@dataclass
class FixDiff:
    """One fix's first-parent diff (-U0) and its old side: per old path, the deleted or modified
    non-blank line numbers (1-based, as of the parent); ``old_lines`` counts every such line, blank or not
    (zero = a pure addition), ``added_lines`` the added ones."""

    sha: str
    text: str
    lines: dict[str, list[int]] = field(default_factory=dict)
    old_lines: int = 0
    added_lines: int = 0


def _path(header: str) -> str | None:
    p = header[4:].split("\t", 1)[0].strip()
    if p == "/dev/null":
        return None
    if len(p) >= 2 and p[0] == '"' and p[-1] == '"':
        p = p[1:-1]
    return p[2:] if p[:2] in ("a/", "b/") else p


def _hunk_lines(diff: str) -> list[str]:
    """The +/- lines inside hunks (not the ---/+++ file headers)."""
    out, in_hunk = [], False
    for raw in diff.split("\n"):
        if raw.startswith("diff --git "):
            in_hunk = False
        elif raw.startswith("@@"):
            in_hunk = True
        elif in_hunk and raw[:1] in "+-":
            out.append(raw)
    return out


def old_side(diff: str) -> tuple[dict[str, list[int]], int]:
    """The non-blank deleted/modified old-side lines per old path, and the count of all of them."""
    out: dict[str, list[int]] = {}
    total = 0
    old: str | None = None
    line = 0
    in_hunk = False
    for raw in diff.split("\n"):
        if raw.startswith("diff --git "):
            old, in_hunk = None, False
        elif not in_hunk and raw.startswith("--- "):
            old = _path(raw)
        elif raw.startswith("@@"):
            m = _HUNK.match(raw)
            in_hunk = m is not None
            if m:
                line = int(m.group(1))
        elif in_hunk and raw.startswith("-"):
            total += 1
            if old is not None and raw[1:].strip():
                out.setdefault(old, []).append(line)
            line += 1
        elif in_hunk and raw.startswith(" "):  # context (absent with -U0, kept for other diffs)
            line += 1
    return out, total


def read_diffs(repo: GitRepo, shas: list[str]) -> dict[str, FixDiff]:
    """Every commit's diff against its first parent (``-U0 -M``), in one ``git log`` process."""
    if not shas:
        return {}
    res = repo._git(
        "log",
        "--no-walk=unsorted",
        "--stdin",
        "-p",
        "-U0",
        "-M",
        "--diff-merges=first-parent",
        f"--format={_SEP}%H",
        input=("\n".join(shas) + "\n").encode(),
    )
    out: dict[str, FixDiff] = {}
    for chunk in res.stdout.decode("utf-8", "replace").split(_SEP)[1:]:
        sha, _, text = chunk.partition("\n")
        lines, total = old_side(text)
        added = sum(1 for ln in _hunk_lines(text) if ln.startswith("+"))
        out[sha] = FixDiff(sha, text.strip("\n") + "\n", lines, total, added)
    return out


def blame_lines(
    repo: GitRepo, rev: str, path: str, lines: list[int], *, ignore_ws: bool = False
) -> dict[int, str] | None:
    """``{line: sha}`` for ``lines`` of ``path`` as of ``rev`` (``ingest/git_blame.py``: the call the engine's
    exact provenance makes too)."""
    return blame_with_git(repo, rev, path, lines, ignore_ws=ignore_ws)


def szz_rank(repo: GitRepo, fix: FixDiff, parent: str, times: dict[str, float]) -> list[tuple[str, int]]:
    """B-SZZ candidates of one fix: (sha, blamed lines), most lines first, ties the newer first."""
    counts: Counter[str] = Counter()
    for path, lines in fix.lines.items():
        got = blame_lines(repo, parent, path, lines)
        if got:
            counts.update(got.values())
    return sorted(counts.items(), key=lambda kv: (-kv[1], -times.get(kv[0], 0.0), kv[0]))


class SzzCache:
    """B-SZZ rankings per fix sha in a JSON file next to the benchmark store: blame is the slow part of
    the diff protocol (a second or two per hundred fixes' files), and its answer never changes."""

    VERSION = 1

    def __init__(self, path: str | Path | None):
        self.path = Path(path) if path else None
        self.data: dict[str, list[list]] = {}
        if self.path and self.path.exists():
            try:
                raw = json.loads(self.path.read_text())
                if raw.get("version") == self.VERSION:
                    self.data = raw.get("rankings", {})
            except (OSError, ValueError):
                self.data = {}
        self.seconds = 0.0
        self.computed = 0

    def rank(self, repo: GitRepo, fix: FixDiff, parent: str, times: dict[str, float]) -> list[tuple[str, int]]:
        key = f"{fix.sha}:{parent}"
        if key not in self.data:
            t = time.perf_counter()
            self.data[key] = [[s, n] for s, n in szz_rank(repo, fix, parent, times)]
            self.seconds += time.perf_counter() - t
            self.computed += 1
        return [(s, int(n)) for s, n in self.data[key]]

    def save(self) -> None:
        if self.path and self.computed:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps({"version": self.VERSION, "rankings": self.data}))
            tmp.replace(self.path)
