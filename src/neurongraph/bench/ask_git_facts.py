"""The repository's git data for ``ngr bench ask --repo``: the listing the questions are sampled from.

It exists so that every gold answer comes from git itself: ``GitFacts`` reads the commits, the non-merge
files per commit, the renames, the tags reachable from HEAD and the PR merges once, and runs the ``git``
command each question's gold needs (``bench/ask_git_questions.py``).  Author names as the commits record them
(``-c log.mailmap=false``), dates in UTC.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections import Counter, defaultdict
from pathlib import Path

from ..errors import InvalidArgument
from ..ingest.git_cmd import git_argv, git_env

__all__ = ["GitFacts", "MAX_FILES_PER_COMMIT", "MERGE_RE", "SQUASH_RE"]

MAX_FILES_PER_COMMIT = 200
SQUASH_RE = re.compile(r"\(#(\d+)\)\s*$")
MERGE_RE = re.compile(r"^Merge pull request #(\d+) from ")


class GitFacts:
    """The repository's git data: one listing for sampling; every gold answer from its own git command."""

    def __init__(self, repo: str | Path):
        self.repo = str(repo)
        if not os.path.isdir(os.path.join(self.repo, ".git")) and not os.path.isfile(os.path.join(self.repo, "HEAD")):
            raise InvalidArgument(f"{self.repo} is not a git repository")
        self.commits: list[tuple[str, list[str], str, int, str]] = []  # sha, parents, author, time, subject
        for line in self.git("log", "--format=%H%x1f%P%x1f%an%x1f%ct%x1f%s").splitlines():
            sha, parents, an, ct, subj = line.split("\x1f", 4)
            self.commits.append((sha, parents.split(), an, int(ct), subj))
        self.by_sha = {c[0]: c for c in self.commits}
        self.file_commits: dict[str, list[str]] = defaultdict(list)  # non-merge commits per path, newest first
        self.big: set[str] = set()
        sha = ""
        for line in self.git("log", "--no-merges", "--no-renames", "--format=%x1e%H", "--name-only").split("\n"):
            if line.startswith("\x1e"):
                sha = line[1:]
            elif line.strip():
                self.file_commits[line].append(sha)
        per_commit = Counter(s for shas in self.file_commits.values() for s in shas)
        self.big = {s for s, n in per_commit.items() if n > MAX_FILES_PER_COMMIT}
        self.renamed: dict[str, list[tuple[str, str]]] = defaultdict(list)  # old path -> [(commit, new)]
        self.rename_paths: set[str] = set()
        sha = ""
        for line in self.git("log", "--no-merges", "-M", "--diff-filter=R", "--format=%x1e%H", "--name-status").split(
            "\n"
        ):
            if line.startswith("\x1e"):
                sha = line[1:]
            elif line.startswith("R"):
                _, old, new = line.split("\t")
                self.renamed[old].append((sha, new))
                self.rename_paths |= {old, new}

    def git(self, *args: str) -> str:
        env = git_env({"TZ": "UTC", "GIT_LITERAL_PATHSPECS": "1"})
        # author names as the commits record them (no .mailmap: git_cmd's log.mailmap=false), which is what the
        # ingest stores; the repository's config runs no program (git_cmd.py)
        res = subprocess.run(git_argv(self.repo, *args), capture_output=True, env=env, check=True)
        return res.stdout.decode("utf-8", "replace")

    def shas(self, *args: str) -> list[str]:
        return self.git("log", "--format=%H", *args).split()

    def tags(self) -> list[tuple[str, str, int]]:
        """(name, commit, creation time) of the tags reachable from HEAD that name a commit, oldest first
        (``git for-each-ref --merged HEAD``: what the ingest writes for a HEAD sync)."""
        if not hasattr(self, "_tags"):
            fmt = "%(refname:strip=2)%1f%(objecttype)%1f%(*objectname)%1f%(objectname)%1f%(creatordate:unix)"
            rows = []
            for line in self.git("for-each-ref", "refs/tags", "--merged=HEAD", f"--format={fmt}").splitlines():
                name, otype, peeled, obj, t = line.split("\x1f")
                sha = peeled if otype == "tag" else obj
                if sha in self.by_sha:
                    rows.append((name, sha, int(t)))
            self._tags = sorted(rows, key=lambda r: (r[2], r[0]))
        return self._tags

    def every_tag(self) -> list[tuple[str, int]]:
        """(name, creation time) of every tag that names a commit, oldest first: what ``git tag`` lists, tags on
        release branches and past ``HEAD`` included (an ingest reads them all)."""
        if not hasattr(self, "_every_tag"):
            fmt = "%(refname:strip=2)%1f%(objecttype)%1f%(*objecttype)%1f%(creatordate:unix)"
            rows = []
            for line in self.git("for-each-ref", "refs/tags", f"--format={fmt}").splitlines():
                name, otype, peeled_type, t = line.split("\x1f")
                if "commit" in (otype, peeled_type):
                    rows.append((name, int(t)))
            self._every_tag = sorted(rows, key=lambda r: (r[1], r[0]))
        return self._every_tag

    # ------------------------------------------------------------------ PR data (from subjects)
    def pr_commit(self) -> dict[int, str]:
        """PR number -> the commit that merged it: a ``Merge pull request #N`` merge, a merge GitHub titled with the
        PR's title (``… (#N)``, click's "deprecate base classes … (#2591)"), or a ``(#N)`` squash."""
        out: dict[int, str] = {}
        for sha, parents, _, _, subj in reversed(self.commits):  # oldest first: the first one wins
            if len(parents) > 1:
                m = MERGE_RE.match(subj) or SQUASH_RE.search(subj)
            else:
                m = SQUASH_RE.search(subj) if len(parents) == 1 else None
            if m:
                out.setdefault(int(m.group(1)), sha)
        return out
