"""A real git repository built commit by commit in a test (deterministic dates, one hour apart)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path


class Repo:
    """A real git repository built commit by commit, with deterministic dates."""

    def __init__(self, path: Path):
        self.path = path
        self.t = 1_700_000_000
        path.mkdir()
        self.git("init", "-q", "-b", "main")
        self.author("Ada Dev")

    def author(self, name: str) -> None:
        """Commit as ``name`` from now on (email: the first name, lowercased, at example.org)."""
        self.git("config", "user.name", name)
        self.git("config", "user.email", name.split()[0].lower() + "@example.org")

    def git(self, *args: str) -> str:
        env = {**os.environ, "GIT_AUTHOR_DATE": f"@{self.t} +0000", "GIT_COMMITTER_DATE": f"@{self.t} +0000"}
        return subprocess.run(
            ["git", "-C", str(self.path), *args], check=True, capture_output=True, text=True, env=env
        ).stdout.strip()

    def commit(self, message: str, files: dict[str, str] | None = None) -> str:
        self.t += 3600
        for name, content in (files or {}).items():
            p = self.path / name
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(content)
            self.git("add", name)
        self.git("commit", "-q", "--allow-empty", "-m", message)
        return self.git("rev-parse", "HEAD")
