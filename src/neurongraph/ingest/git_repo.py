"""A git repository on disk, driven through the ``git`` executable: refs, tips, roots, listings, remotes.

It exists apart from the reader (``ingest/git.py``) so that every question asked of the repository itself
(what a ref or glob names, which commits a tip reaches, which tags there are, what the remote calls the
project) reads in one place; the sync, the blame of stored lines (``ingest/git_blame.py``) and the
benchmarks all open a repository through :class:`GitRepo`.  Each call is one ``git`` process, with the
repository's config and attributes running no program (``git_cmd.py``).
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from ..errors import InvalidArgument

__all__ = ["GitError", "GitRepo", "url_name"]

# a URL with a host: scheme://[user@]host[:port]/PATH or scp-like [user@]host:PATH
_HOSTED = re.compile(r"^(?:[a-z][a-z0-9+.-]*://(?:[^@/]*@)?[^/]+/+|(?:[^@/:]+@)?[^/:]{2,}:(?!/))(?P<path>.+)$", re.I)


class GitError(InvalidArgument):
    """A ``git`` command failed, or the path holds no repository (error code ``git_error``)."""

    code = "git_error"


class GitRepo:
    """A repository on disk (working tree or bare), driven through the ``git`` executable."""

    def __init__(self, path: str | os.PathLike):
        p = Path(path).expanduser()
        if not p.exists():
            raise InvalidArgument(f"no such repository path: {p}")
        if not p.is_dir():
            hint = f"; a git bundle is read after `git clone {p} DIR`, as DIR" if p.suffix == ".bundle" else ""
            raise InvalidArgument(f"{p} is not a directory (expected a git working tree or a bare repository){hint}")
        self.path = p.resolve()
        try:
            out = self._git("rev-parse", "--git-dir", check=False)
        except FileNotFoundError:
            raise GitError("the `git` executable is not installed (needed to read a repository)") from None
        if out.returncode != 0:
            raise GitError(f"{p} is not a git repository ({out.stderr.decode(errors='replace').strip()})")

    def _git(self, *args: str, check: bool = True, input: bytes | None = None) -> subprocess.CompletedProcess:
        from .git_cmd import git_argv, git_env

        # the repository's config and attributes run no program, inherited GIT_* variables are dropped (git_cmd.py)
        res = subprocess.run(git_argv(self.path, *args), capture_output=True, env=git_env(), input=input)
        if check and res.returncode != 0:
            raise GitError(
                f"git {' '.join(args[:3])} failed in {self.path}: {res.stderr.decode(errors='replace').strip()[:500]}"
            )
        return res

    @property
    def name(self) -> str:
        """The name the repository itself gives: its remote's (:meth:`remote_name`: ``owner/repo`` for a GitHub
        origin, the name a GitHub export of the same repository gets, so both land under one source), else the
        folder's name."""
        return self.remote_name() or self.path.name.removesuffix(".git")

    def remote_name(self) -> str | None:
        """The name a remote's URL gives (origin first, else the first remote by name): ``owner/repo`` on
        GitHub, ``group/proj`` on GitLab, the last two parts of a local path (``mirrors/repo``), never a bare
        last part that two repositories could share (:func:`url_name`)."""
        urls = []
        res = self._git("remote", "get-url", "origin", check=False)
        if res.returncode == 0:
            urls.append(res.stdout.decode(errors="replace").strip())
        if not urls:  # -z: NUL between entries, a newline between key and value (a URL cannot fake an entry)
            res = self._git("config", "-z", "--get-regexp", r"^remote\..*\.url$", check=False)
            entries = res.stdout.decode(errors="replace").split("\0")
            urls = sorted(e.split("\n", 1)[1] for e in entries if "\n" in e)
        for url in urls:
            if name := url_name(url):
                return name
        return None

    def remote_is_hosted(self) -> bool:
        """Whether the remote :meth:`remote_name` reads is a URL with a host (a project's identity), not a
        local path (a clone of a clone says nothing about which project it is)."""
        res = self._git("remote", "get-url", "origin", check=False)
        url = res.stdout.decode(errors="replace").strip() if res.returncode == 0 else ""
        return bool(url) and _HOSTED.match(url) is not None and not url.lower().startswith("file:")

    def roots(self, tips: list[str]) -> list[str]:
        """The root commits (no parent) reachable from ``tips``, sorted."""
        out = self._git("rev-list", "--max-parents=0", *tips, "--", check=False)
        return sorted(out.stdout.decode().split()) if out.returncode == 0 else []

    def resolve(self, ref: str) -> str:
        if not ref or ref.startswith("-"):
            raise InvalidArgument(f"bad ref {ref!r}")
        res = self._git("rev-parse", "--verify", "--quiet", ref + "^{commit}", check=False)
        if res.returncode != 0:
            raise GitError(f"ref {ref!r} does not name a commit in {self.path}")
        return res.stdout.decode().strip()

    def has_commit(self, sha: str) -> bool:
        return self._git("cat-file", "-e", sha + "^{commit}", check=False).returncode == 0

    def is_ancestor(self, a: str, b: str) -> bool:
        return self._git("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def expand(self, ref: str) -> list[str]:
        """The refs a name stands for: itself when it names a commit (``HEAD``, ``main``, ``origin/stable``, a
        sha), else every ref a glob matches (``origin/release-*`` as ``refs/remotes/origin/release-*``, and
        under ``refs/heads/`` and ``refs/tags/``), sorted; an error when it names nothing."""
        if not ref or ref.startswith("-") or any(ord(ch) < 0x20 for ch in ref):
            raise InvalidArgument(f"bad ref {ref!r}")
        if not any(ch in ref for ch in "*?["):
            self.resolve(ref)
            return [ref]
        pats = [ref] if ref.startswith("refs/") else [f"refs/{k}/{ref}" for k in ("heads", "remotes", "tags")]
        out = self._git("for-each-ref", "--format=%(refname)", *pats, check=False).stdout.decode("utf-8", "replace")
        names = sorted({ln for ln in out.splitlines() if ln and not ln.endswith("/HEAD")})
        if not names:
            raise GitError(f"ref pattern {ref!r} matches no branch or tag in {self.path}")
        return names

    def tag_tips(self) -> dict[str, str]:
        """``refs/tags/NAME`` → the commit each tag names (peeled), for every tag of a commit (a tag of a tree
        or a blob has none).  Ref names hold no space or control character (git check-ref-format), so one
        line per tag, split on spaces, cannot be forged by a tag's name or message."""
        fmt = "%(refname) %(objecttype) %(objectname) %(*objecttype) %(*objectname)"
        out = self._git("for-each-ref", "refs/tags", f"--format={fmt}", check=False).stdout.decode("ascii", "replace")
        tips: dict[str, str] = {}
        for line in out.splitlines():
            parts = line.split(" ")
            if len(parts) == 5 and parts[1] == "commit":
                tips[parts[0]] = parts[2]
            elif len(parts) == 5 and parts[1] == "tag" and parts[3] == "commit":
                tips[parts[0]] = parts[4]
        return tips

    def mainline(self, tips: list[str]) -> set[str]:
        """The commits on the first-parent chains of ``tips``: where this repository's own pull requests land
        (a squash commit, or the merge commit GitHub makes).  A merge inside a contributor's fork ("Merge
        pull request #1 from someone/unstable") sits on a merged branch, off these chains."""
        out = self._git("rev-list", "--first-parent", *tips, "--", check=False)
        return set(out.stdout.decode("ascii", "replace").split()) if out.returncode == 0 else set()

    def listing(self, tips: list[str]) -> list[tuple[str, int, str]]:
        """(sha, committer time, subject) of every commit reachable from ``tips`` (those git could read,
        when the object store is damaged: git stops there, the reader names what it could not read)."""
        import secrets

        from .git_log import epoch_or_none

        # one record per commit, framed by a per-run nonce no subject can hold; sha and time before the subject
        nonce = secrets.token_hex(16)
        out = self._git("log", f"--format={nonce}%H %ct %s", *tips, "--", check=False).stdout
        rows = []
        for rec in out.split(nonce.encode())[1:]:
            sha, _, rest = rec.partition(b" ")
            ct, _, subject = rest.partition(b" ")
            if len(sha) >= 40 and subject.endswith(b"\n"):
                t = epoch_or_none(ct) or 0
                rows.append((sha.decode("ascii", "replace"), t, subject[:-1].decode("utf-8", "replace")))
        return rows


def url_name(url: str) -> str | None:
    """A remote URL's name: the last two parts of its path on the host (``pallets/click``, ``group/proj``) or of
    a local path or ``file://`` URL (``mirrors/repo``), ``.git`` / ``.bundle`` cut."""
    url = url.strip()
    m = _HOSTED.match(url) if not url.lower().startswith("file:") else None
    path = m.group("path") if m else url.removeprefix("file://")
    parts = [p for p in re.split(r"[/\\]", path) if p not in ("", ".", "..")]
    if parts and parts[-1] == ".git":
        parts.pop()
    if not parts:
        return None
    parts[-1] = parts[-1].removesuffix(".git").removesuffix(".bundle")
    name = "/".join(p for p in parts[-2:] if p)
    return name or None
