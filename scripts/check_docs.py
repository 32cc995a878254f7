#!/usr/bin/env python3
"""Keep the docs' stated facts honest: no commit hashes in docs/, and line counts that match the files.

Why: docs say what the code does now; history (which commit did what) belongs in CHANGELOG.md, and a
number a reader cannot reproduce drifts silently.  Three checks, all plain text (nothing is imported):

* a commit hash in ``docs/**/*.md``: a free-standing word of 7 to 40 hex digits with at least one digit
  and one letter (``1000000`` and ``defaced`` are not hashes; ``commit:<sha>`` node ids and hex inside
  a file name or URL are not free-standing);
* a stated line count of a file (``engine.py`` is 738 lines, ``store/sqlite.py`` (1,103 lines)) in
  docs/ or README.md that is off by more than 5% from the file's ``wc -l`` now;
* a pointer to a design document this repository does not hold (``DESIGN §2.1``, ``seed 003``).

    python scripts/check_docs.py

Exit status 1 on a finding, each printed as ``path:line: message``.  Files listed in ``NOT_YET`` are
only counted (their owners clean them); remove an entry once its file is clean.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOT_YET: set[str] = set()  # hashes and outside references counted, not failed yet
HASH = re.compile(r"(?<![\w:/.@#=+-])[0-9a-f]{7,40}(?![\w/+-])")
LINES = re.compile(
    r"`?(?P<path>[\w./-]+\.(?:py|md|sh|toml|js|css|html))`?\s*(?:is\s+|has\s+|\(|:\s*|,\s*)?"
    r"(?:now\s+)?(?P<n>\d{1,3}(?:,\d{3})*|\d+)\s+lines\b"
)
TOLERANCE = 0.05
ELSEWHERE = re.compile(r"\bDESIGN\b|\bseed 00\d\b")  # documents outside this repository


def is_hash(word: str) -> bool:
    return any(c.isdigit() for c in word) and any(c in "abcdef" for c in word)


def hashes(text: str) -> list[tuple[int, str]]:
    """(line number, word) of every free-standing commit-hash-like word."""
    return [
        (k, m.group()) for k, line in enumerate(text.splitlines(), 1) for m in HASH.finditer(line) if is_hash(m.group())
    ]


def ours(words: set[str]) -> set[str]:
    """The words that name a commit of this repository (``git cat-file --batch-check``); all of them when git
    cannot say.  A sha of a benchmark history in an example question ("who is the author of 878dadc79d?") is
    data, not this project's history."""
    if not words:
        return set()
    order = sorted(words)
    try:
        out = subprocess.run(
            ["git", "cat-file", "--batch-check"],
            cwd=ROOT,
            input="".join(f"{w}^{{commit}}\n" for w in order),
            capture_output=True,
            text=True,
            check=True,
        ).stdout.splitlines()
    except (OSError, subprocess.CalledProcessError):
        return set(words)
    return {w for w, line in zip(order, out) if not line.endswith(" missing") and " commit " in f" {line} "}


def tracked_files() -> list[str]:
    try:
        out = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return [str(p.relative_to(ROOT)) for p in ROOT.rglob("*") if p.is_file() and ".git" not in p.parts]
    return out.splitlines()


def resolve(name: str, files: list[str]) -> Path | None:
    """The one tracked file ``name`` means: a path from the root, from ``src/neurongraph/``, or a unique
    path suffix; None when it names none or several."""
    for cand in (name, f"src/neurongraph/{name}"):
        if cand in files:
            return ROOT / cand
    hits = [f for f in files if f.endswith("/" + name)]
    return ROOT / hits[0] if len(hits) == 1 else None


def line_counts(text: str, files: list[str]) -> list[tuple[int, str]]:
    """Stated line counts off by more than TOLERANCE, as (line number, message)."""
    found = []
    for k, line in enumerate(text.splitlines(), 1):
        for m in LINES.finditer(line):
            path = resolve(m.group("path"), files)
            if path is None or not path.is_file():
                continue
            stated = int(m.group("n").replace(",", ""))
            actual = len(path.read_text(encoding="utf-8", errors="replace").splitlines())
            if abs(actual - stated) > TOLERANCE * max(actual, 1):
                found.append((k, f"{m.group('path')} is {actual} lines, not {stated} (wc -l {path.relative_to(ROOT)})"))
    return found


def main() -> int:
    files = tracked_files()
    docs = sorted((ROOT / "docs").rglob("*.md"))
    bad = 0
    pending = {}
    found_in = {doc: hashes(doc.read_text(encoding="utf-8")) for doc in docs}
    commits = ours({w for found in found_in.values() for _, w in found})
    for doc in docs:
        rel = str(doc.relative_to(ROOT))
        found = [(k, w) for k, w in found_in[doc] if w in commits]
        if rel in NOT_YET:
            pending[rel] = len(found)
            continue
        for k, word in found:
            print(f"{rel}:{k}: commit hash {word} (history goes to CHANGELOG.md; say what is true now)")
            bad += 1
    for doc in [*docs, ROOT / "README.md"]:
        if not doc.is_file():
            continue
        rel = str(doc.relative_to(ROOT))
        text = doc.read_text(encoding="utf-8")
        for k, msg in line_counts(text, files):
            print(f"{rel}:{k}: {msg}")
            bad += 1
        for k, line in enumerate(text.splitlines(), 1):
            for m in ELSEWHERE.finditer(line):
                if rel in NOT_YET:
                    pending[rel] = pending.get(rel, 0) + 1
                    continue
                print(f"{rel}:{k}: {m.group()!r} names a document that is not in this repository")
                bad += 1
    note = ", ".join(f"{p} {n}" for p, n in pending.items() if n)
    print(f"docs: {len(docs)} files, {bad} findings" + (f" (not checked yet: {note})" if note else ""))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
