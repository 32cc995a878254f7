#!/usr/bin/env python3
"""A synthetic git history of any size, made of the dev histories' vocabulary, for ingest at scale (issue 30).

Why a real git repository (not the JSONL the other adapters read): ``ngr ingest git`` is the path a big
history takes (``git log --numstat``, the message parser, file/PR/Fixes edges, placeholders), so the
measured time is that path's.  The repository is written with ``git fast-import`` (one stream, no work
tree), so 1M commits take minutes, not hours.

What it looks like (deterministic for a seed and the source histories):
* subjects: ``area: text``, the area drawn from the sources' real subject prefixes and the text from a
  word-bigram chain trained on their real subjects;
* bodies: one to three paragraphs from a bigram chain over real body lines, sometimes a ``Fixes: <sha>
  ("subject")`` line naming an earlier synthetic commit, then ``Signed-off-by`` trailers;
* authors: first and last names recombined from the sources' authors (nobody's real pair by design);
* paths: the sources' real directories and file names, recombined into a tree that grows with the
  history (about one path per 25 commits, at least the sources' own count), each commit touching 1-4
  files with Zipf-like popularity; every 40th commit a merge of a two-commit side branch titled
  ``Merge pull request #N from user/topic`` (the PR placeholders the git ingest writes).

Usage: python benchmarks/synthetic_history.py --commits 100000 --out /tmp/syn100k [--seed 7]
       [--source .ngr/history/ovs --source .ngr/history/iproute2 ...]
"""

from __future__ import annotations

import argparse
import bisect
import random
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SOURCES = [ROOT / ".ngr" / "history" / n for n in ("ovs", "iproute2", "libbpf", "mypy-paths-only")]
START_EPOCH = 1262304000  # 2010-01-01
_SEP = "\x1e"
_TRAILER = re.compile(r"^[A-Z][A-Za-z-]+-by: |^Fixes: |^Reported-at: |^Link: |^Cc: ", re.M)


class Chain:
    """A word-bigram chain: real word pairs, so the text reads like the source without copying a line."""

    def __init__(self, lines: list[str]):
        nxt: dict[str, list[str]] = defaultdict(list)
        for line in lines:
            words = line.split()
            for a, b in zip(["<s>", *words], [*words, "</s>"]):
                nxt[a].append(b)
        self.nxt = dict(nxt)

    def sentence(self, rng: random.Random, max_words: int) -> str:
        out, w = [], "<s>"
        while len(out) < max_words:
            w = rng.choice(self.nxt.get(w) or ["</s>"])
            if w == "</s>":
                break
            out.append(w)
        return " ".join(out)


class Vocabulary:
    """What the generator draws from, read once from the source histories with ``git log``."""

    def __init__(self, sources: list[Path], max_commits: int = 20000):
        subjects, body_lines, first, last, areas = [], [], [], [], []
        dirs: set[str] = set()
        names: set[str] = set()
        for src in sources:
            log = subprocess.run(
                ["git", "-C", str(src), "log", f"-{max_commits}", f"--format={_SEP}%an%x1f%s%x1f%b", "--name-only"],
                capture_output=True,
                check=True,
            ).stdout.decode("utf-8", "replace")
            for rec in log.split(_SEP)[1:]:
                head, _, rest = rec.partition("\x1f")
                subject, _, tail = rest.partition("\x1f")
                body, _, files = tail.rpartition("\n\n") if "\n\n" in tail else (tail, "", "")
                parts = head.split()
                if len(parts) >= 2:
                    first.append(parts[0])
                    last.append(parts[-1])
                if ": " in subject:
                    area, subject = subject.split(": ", 1)
                    if len(area) <= 30:
                        areas.append(area)
                subjects.append(subject)
                body_lines += [
                    ln.strip() for ln in body.splitlines() if len(ln.split()) >= 4 and not _TRAILER.match(ln)
                ]
                for f in files.split("\n"):
                    f = f.strip()
                    if f and not f.startswith(" "):
                        d, _, n = f.rpartition("/")
                        dirs.add(d)
                        names.add(n)
        if not subjects:
            raise SystemExit("error: the source histories have no commits")
        self.subjects, self.bodies = Chain(subjects), Chain(body_lines)
        self.areas = areas or ["core"]
        self.first, self.last = first or ["Ann"], last or ["Example"]
        self.dirs, self.names = sorted(dirs), sorted(names)


class Generator:
    """Writes the fast-import stream for ``commits`` commits (merges included) to ``out``."""

    def __init__(self, vocab: Vocabulary, commits: int, seed: int):
        self.v, self.n, self.rng = vocab, commits, random.Random(seed)
        n_paths = max(len(vocab.names), commits // 25)
        rng = random.Random(seed + 1)
        paths = {f"{d}/{n}" if d else n for d, n in zip(vocab.dirs, vocab.names)}
        while len(paths) < n_paths:
            d, n = rng.choice(vocab.dirs), rng.choice(vocab.names)
            stem, dot, ext = n.rpartition(".")
            n = f"{stem}_{rng.randrange(1000)}.{ext}" if dot else f"{n}_{rng.randrange(1000)}"
            paths.add(f"{d}/{n}" if d else n)
        self.paths = sorted(paths)
        rng.shuffle(self.paths)
        # Zipf-like popularity: a few files change often, most rarely
        weights = [1.0 / (k + 1) ** 0.9 for k in range(len(self.paths))]
        self.cum = [0.0]
        for w in weights:
            self.cum.append(self.cum[-1] + w)
        self.revision: dict[str, int] = {}
        self.people = [
            (f"{self.rng.choice(vocab.first)} {self.rng.choice(vocab.last)}") for _ in range(max(50, commits // 400))
        ]
        self.subjects: list[str] = []  # of the commits written so far (Fixes: lines cite them)
        self.t = START_EPOCH

    def _path(self) -> str:
        return self.paths[bisect.bisect_left(self.cum, self.rng.random() * self.cum[-1]) - 1]

    def _person(self) -> str:
        name = self.rng.choice(self.people)
        return f"{name} <{name.lower().replace(' ', '.')}@example.org>"

    def _message(self) -> tuple[str, str, str]:
        rng = self.rng
        subject = f"{rng.choice(self.v.areas)}: {self.v.subjects.sentence(rng, 12) or 'update'}"
        paras = []
        for _ in range(rng.choice((0, 1, 1, 2, 2, 3))):
            lines = [self.v.bodies.sentence(rng, 14) for _ in range(rng.randint(1, 4))]
            paras.append("\n".join(x for x in lines if x))
        if self.subjects and rng.random() < 0.08:
            k = rng.randrange(len(self.subjects))
            # a sha-like token git cannot resolve: the ingest finds the commit by the quoted subject
            paras.append(f'Fixes: {k + 1:012x} ("{self.subjects[k]}")')
        author = self._person()
        paras.append(f"Signed-off-by: {author}")
        return subject, author, "\n\n".join(p for p in paras if p)

    def _commit(self, w, mark: int, branch: str, parent: int | None, merge: int | None) -> None:
        subject, author, body = self._message()
        if merge is not None:
            subject = f"Merge pull request #{mark} from {author.split()[0].lower()}/topic-{mark}"
        self.subjects.append(subject)
        self.t += self.rng.randint(60, 7200)
        msg = f"{subject}\n\n{body}\n".encode()
        who = author.encode()
        w(b"commit refs/heads/%s\nmark :%d\n" % (branch.encode(), mark))
        w(b"author %s %d +0000\ncommitter %s %d +0000\n" % (who, self.t, who, self.t))
        w(b"data %d\n%s\n" % (len(msg), msg))
        if parent is not None:
            w(b"from :%d\n" % parent)
        if merge is not None:
            w(b"merge :%d\n" % merge)
        for path in {self._path() for _ in range(self.rng.choice((1, 1, 1, 2, 2, 3, 4)))}:
            r = self.revision.get(path, 0) + 1
            self.revision[path] = r
            data = f"{path}\nrevision {r}\n{self.v.bodies.sentence(self.rng, 10)}\n".encode()
            w(b"M 100644 inline %s\ndata %d\n%s\n" % (path.encode(), len(data), data))

    def write(self, w, progress=None) -> None:
        """The stream: mainly ``main``, every 40th commit a merge of a two-commit ``topic`` branch."""
        mark, tip = 0, None
        while mark < self.n:
            if tip is not None and mark % 40 == 37 and mark + 3 <= self.n:
                side = tip
                for _ in range(2):
                    mark += 1
                    self._commit(w, mark, "topic", side, None)
                    side = mark
                mark += 1
                self._commit(w, mark, "main", tip, side)
            else:
                mark += 1
                self._commit(w, mark, "main", tip, None)
            tip = mark
            if progress and mark % 10000 == 0:
                progress(mark)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--commits", type=int, required=True)
    p.add_argument("--out", type=Path, required=True, help="a new directory: the git repository")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--source", type=Path, action="append", help="a source history (default: the dev histories)")
    a = p.parse_args(argv)
    if a.commits < 1:
        p.error("--commits must be at least 1")
    if a.out.exists() and any(a.out.iterdir()):
        p.error(f"{a.out} exists and is not empty")
    t0 = time.perf_counter()
    vocab = Vocabulary(a.source or [s for s in DEFAULT_SOURCES if s.exists()])
    gen = Generator(vocab, a.commits, a.seed)
    subprocess.run(["git", "init", "-q", "-b", "main", str(a.out)], check=True)
    fi = subprocess.Popen(["git", "-C", str(a.out), "fast-import", "--quiet"], stdin=subprocess.PIPE)
    assert fi.stdin is not None
    out = fi.stdin
    gen.write(out.write, progress=lambda k: print(f"{k} commits ({time.perf_counter() - t0:.0f}s)", file=sys.stderr))
    out.close()
    if fi.wait() != 0:
        return 1
    print(f"{a.out}: {a.commits} commits, {len(gen.paths)} paths ({time.perf_counter() - t0:.0f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
