"""One streaming ``git log --numstat -p -U0`` read into commits: numstat, renames, hunks and code terms.

Why one process with the patch and not a second pass: the numstat already makes git diff every file, so
asking for the ``-U0`` patch in the same run costs git ~25% more (iproute2: 3.6 s -> 4.5 s) instead of a
second full diff.  The output is read in 1 MiB chunks and cut into commits at a marker that starts every
commit's header, so only one commit's patch is ever held (ovs' full log is 135 MB); whole diffs are never
kept: a commit keeps its hunk headers and the code tokens whose count its added or removed lines changed.

Record layout (``-z``): ``MARK sha US parents US an US ae US at US ct US message US NUL LF``, then the
numstat entries, NUL-terminated (a rename is ``a TAB d TAB NUL old NUL new NUL``), then a NUL, then the
patch: one ``diff --git`` section per numstat entry, in the same order.

A repository with missing objects (a damaged store, a partial clone) makes git stop with "unable to read
<sha>".  The commits read until then are kept; the failing commit is read again without its diff (file
names from the trees if those are there, else header only) and named in ``unreadable``; the rest are read
by a new stream over the remaining ids.  After :data:`MAX_RESTARTS` failures the rest is read by names
only in one stream (a blob-less partial clone would otherwise cost a process per commit).
"""

from __future__ import annotations

import codecs
import os
import re
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..index.code_terms import count_identifiers_bytes, is_term

__all__ = ["Commit", "read_log", "LOG_FORMAT", "MAX_CODE_LINES", "MAX_HUNKS_FILE", "MAX_HUNKS_COMMIT"]

MARK = b"\x1e\x1dngr\x1f"
LOG_FORMAT = "%x1e%x1dngr%x1f%H%x1f%P%x1f%an%x1f%ae%x1f%at%x1f%ct%x1f%B%x1f"
MAX_CODE_LINES = 5000  # a file with more changed lines (a vendor import, generated code) gets no code terms
MAX_HUNKS_FILE = 2000  # hunks kept per file ...
MAX_HUNKS_COMMIT = 20000  # ... and per commit (metadata["hunks_truncated"] when cut)
MAX_CODE_TERMS = 400  # tokens kept per side (the largest count changes; metadata["code_truncated"] when cut)
MAX_RESTARTS = 20  # failing commits read one by one before the rest is read by file names only
_CHUNK = 1 << 20

_HUNK = re.compile(rb"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.M)
_ADDED = re.compile(rb"^\+(.*)", re.M)
_REMOVED = re.compile(rb"^-(.*)", re.M)
_PLUS_PATH = re.compile(rb"^\+\+\+ (.*)$", re.M)
_MINUS_PATH = re.compile(rb"^--- (.*)$", re.M)
_UNREADABLE = re.compile(r"unable to read ([0-9a-f]{7,64})|missing (?:blob|tree|commit) ([0-9a-f]{7,64})")


@dataclass
class Commit:
    """One commit as the streaming ``git log`` reader parses it."""

    sha: str
    parents: list[str]
    author: str
    email: str
    author_time: int
    commit_time: int
    subject: str
    body: str
    files: list[tuple[str, int | None, int | None]] = field(default_factory=list)  # path, added, deleted
    renames: list[tuple[str, str]] = field(default_factory=list)
    hunks: dict[str, list[list[int]]] = field(default_factory=dict)  # new path -> [[a, b, c, d], ...]
    code_added: list[str] = field(default_factory=list)
    code_removed: list[str] = field(default_factory=list)
    flags: dict[str, int | bool] = field(default_factory=dict)  # hunks_truncated, code_truncated, code_skipped
    unreadable: str | None = None  # why the diff could not be read (git's message), when it could not


def _count(x: bytes) -> int | None:
    return None if x == b"-" else int(x)


def _numstat(block: bytes) -> tuple[list[tuple[str, int | None, int | None]], list[tuple[str, str]]]:
    files: list[tuple[str, int | None, int | None]] = []
    renames: list[tuple[str, str]] = []
    toks = block.split(b"\0")
    i = 0
    while i < len(toks):
        t = toks[i].strip(b"\n")
        if not t:
            i += 1
            continue
        f = t.split(b"\t", 2)
        if len(f) == 3 and f[2] == b"" and i + 2 < len(toks):  # a rename: "a\td\t\0old\0new\0"
            old, new = toks[i + 1].decode("utf-8", "replace"), toks[i + 2].decode("utf-8", "replace")
            files.append((new, _count(f[0]), _count(f[1])))
            renames.append((old, new))
            i += 3
        elif len(f) == 3:
            files.append((f[2].decode("utf-8", "replace"), _count(f[0]), _count(f[1])))
            i += 1
        else:  # --name-only: a bare path
            files.append((t.decode("utf-8", "replace"), None, None))
            i += 1
    return files, renames


def parse_record(rec: bytes) -> Commit | None:
    """One commit's record (the bytes after :data:`MARK`); None when it is cut short (no header)."""
    parts = rec.split(b"\x1f", 7)
    if len(parts) < 8:
        return None
    sha, parents, an, ae, at, ct, message = (p.decode("utf-8", "replace") for p in parts[:7])
    subject, _, body = message.strip("\n").partition("\n")
    c = Commit(sha, parents.split(), an, ae, int(at or 0), int(ct or 0), subject.strip(), body.strip("\n"))
    tail = parts[7].lstrip(b"\0\n")
    cut = tail.find(b"\0\0")
    if cut < 0 and tail.startswith(b"diff --git "):
        block, patch = b"", tail
    elif cut < 0:
        block, patch = tail, b""
    else:
        block, patch = tail[:cut], tail[cut + 2 :].lstrip(b"\0\n")
    c.files, c.renames = _numstat(block)
    if patch.startswith(b"diff --git "):
        _read_patch(c, patch)
    return c


def _read_patch(c: Commit, patch: bytes) -> None:
    """Hunks and code terms per ``diff --git`` section, keyed by the section's new path (old path for a
    deletion; a type change's two sections merge)."""
    added: dict[bytes, int] = {}
    removed: dict[bytes, int] = {}
    n_hunks = skipped = 0
    for sec in patch.split(b"\ndiff --git "):
        at = sec.find(b"\n@@ ")
        if at < 0:  # binary, mode change, pure rename: no lines
            continue
        path = _section_path(sec[:at])
        body = sec[at + 1 :]
        hunks = [[int(o), int(oc or 1), int(n), int(nc or 1)] for o, oc, n, nc in _HUNK.findall(body)]
        if hunks and path is not None:
            keep = min(len(hunks), MAX_HUNKS_FILE, MAX_HUNKS_COMMIT - n_hunks)
            if keep < len(hunks):
                c.flags["hunks_truncated"] = True
            if keep > 0:
                c.hunks.setdefault(path, []).extend(hunks[:keep])
                n_hunks += keep
        n_old = sum(h[1] for h in hunks)
        n_new = sum(h[3] for h in hunks)
        if n_old + n_new > MAX_CODE_LINES:
            skipped += 1
            continue
        plus = count_identifiers_bytes(b"\n".join(_ADDED.findall(body))) if n_new else {}
        minus = count_identifiers_bytes(b"\n".join(_REMOVED.findall(body))) if n_old else {}
        for t, k in plus.items():
            k -= minus.get(t, 0)
            if k > 0 and k > added.get(t, 0):
                added[t] = k
        for t, k in minus.items():
            k -= plus.get(t, 0)
            if k > 0 and k > removed.get(t, 0):
                removed[t] = k
    if skipped:
        c.flags["code_skipped"] = skipped
    c.code_added = _top(added, c.flags)
    c.code_removed = _top(removed, c.flags)


def _section_path(head: bytes) -> str | None:
    """The new path of a section from its ``+++ b/...`` line (``--- a/...`` for a deletion)."""
    m = _PLUS_PATH.search(head)
    if m and m.group(1) == b"/dev/null":
        m = _MINUS_PATH.search(head)
    if not m:
        return None
    raw = m.group(1).rstrip(b"\t")  # git ends a name that has a space with a tab
    if raw.startswith(b'"') and raw.endswith(b'"'):  # C-quoted (a tab, a quote, a backslash in the name)
        raw = codecs.escape_decode(raw[1:-1])[0]
    return raw.decode("utf-8", "replace")[2:] if raw[:2] in (b"a/", b"b/") else raw.decode("utf-8", "replace")


def _top(counts: dict[bytes, int], flags: dict) -> list[str]:
    """The code terms (keywords dropped), decoded and sorted; over the cap, the ones whose count changed
    most (ties by name)."""
    terms = {t: k for t, k in counts.items() if is_term(t)}
    if len(terms) > MAX_CODE_TERMS:
        flags["code_truncated"] = True
        terms = dict(sorted(terms.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_CODE_TERMS])
    return sorted(t.decode("ascii") for t in terms)


class _Git:
    """Runs ``git`` in one repository with the reader's environment (no prompts, no lazy fetches)."""

    def __init__(self, path: Path):
        self.path = path
        self.env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_NO_LAZY_FETCH": "1"}

    def argv(self, *args: str) -> list[str]:
        return ["git", "-C", str(self.path), "-c", "core.quotepath=off", *args]

    def stream(self, args: list[str], stdin: bytes | None, out: list[Commit]) -> str | None:
        """Append the commits of one ``git log`` to ``out`` as they arrive; git's error text, or None.

        On a failure the last record (possibly cut short) is dropped from ``out`` and its sha returned
        first in the message, as ``<sha>\\n<stderr>``."""
        with tempfile.TemporaryFile() as err:
            proc = subprocess.Popen(
                self.argv(*args),
                stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                env=self.env,
            )
            if stdin is not None:
                _feed(proc, stdin)
            assert proc.stdout is not None
            last: bytes | None = None
            for rec in _records(proc.stdout):
                if last is not None:
                    c = parse_record(last)
                    if c is not None:
                        out.append(c)
                last = rec
            rc = proc.wait()
            if rc == 0:
                if last is not None and (c := parse_record(last)) is not None:
                    out.append(c)
                return None
            err.seek(0)
            msg = err.read().decode("utf-8", "replace").strip()
            head = last.split(b"\x1f", 1)[0].decode("ascii", "replace") if last else ""
            return f"{head}\n{msg or f'git exited with status {rc}'}"

    def run(self, *args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess:
        return subprocess.run(self.argv(*args), input=stdin, capture_output=True, env=self.env)


def _feed(proc: subprocess.Popen, data: bytes) -> None:
    """Write the ids to git's stdin from a thread (git starts printing before it has read them all)."""
    import threading

    def write() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
        except BrokenPipeError:
            pass
        finally:
            try:
                proc.stdin.close()
            except BrokenPipeError:
                pass

    threading.Thread(target=write, daemon=True).start()


def _records(stream) -> Iterator[bytes]:
    """The bytes between consecutive :data:`MARK` s, read in chunks (one record in memory at a time)."""
    buf = bytearray()
    start = 0  # where the current record begins in buf (-1: before the first mark)
    started = False
    scan = 0
    while True:
        chunk = stream.read(_CHUNK)
        if not chunk:
            break
        buf += chunk
        while True:
            at = buf.find(MARK, scan)
            if at < 0:
                scan = max(start, len(buf) - len(MARK) + 1)
                break
            if started:
                yield bytes(buf[start:at])
            started = True
            start = scan = at + len(MARK)
        if start:  # compact once per chunk, not once per record
            del buf[:start]
            scan -= start
            start = 0
    if started:
        yield bytes(buf[start:])


_DIFF = ["-z", "--numstat", "-p", "-U0", "-M", "--diff-merges=first-parent", f"--format={LOG_FORMAT}"]
_NAMES = ["-z", "--name-only", "--no-renames", "--diff-merges=first-parent", f"--format={LOG_FORMAT}"]
_HEADER = [f"--format={LOG_FORMAT}"]


def read_log(path: Path, rev_args: list[str]) -> tuple[list[Commit], list[str]]:
    """(every commit of ``rev_args`` that could be read, in ``git log`` order, those read without their
    diff with ``unreadable`` set; the ids of commits not even their header could be read of).  Streams;
    see the module docstring."""
    git = _Git(path)
    out: list[Commit] = []
    failed = git.stream(["log", *_DIFF, *rev_args, "--"], None, out)
    if failed is None:
        return out, []
    lost: list[str] = []
    listed = git.run("rev-list", *rev_args, "--")
    order = listed.stdout.decode().split() if listed.returncode == 0 else [c.sha for c in out]
    restarts = 0
    while failed is not None:
        done = {c.sha for c in out} | set(lost)
        rest = [s for s in order if s not in done]
        culprit, _, msg = failed.partition("\n")
        if culprit not in rest:
            culprit = rest[0] if rest else ""
        if not culprit:
            break
        restarts += 1
        if restarts > MAX_RESTARTS:  # the rest by names only, in one stream
            got: list[Commit] = []
            git.stream(["log", "--no-walk=unsorted", "--stdin", *_NAMES], "\n".join(rest).encode() + b"\n", got)
            for g in got:
                g.unreadable = "diffs not read after repeated failures: " + _reason(msg)
            out += got
            break
        one = _without_diff(git, culprit, _reason(msg))
        if one is not None:
            out.append(one)
        else:
            lost.append(culprit)  # not even its header
        rest = [s for s in rest if s != culprit]
        if not rest:
            break
        failed = git.stream(["log", "--no-walk=unsorted", "--stdin", *_DIFF], "\n".join(rest).encode() + b"\n", out)
    rank = {s: i for i, s in enumerate(order)}
    out.sort(key=lambda c: rank.get(c.sha, len(rank)))
    return out, lost


def _reason(msg: str) -> str:
    m = _UNREADABLE.search(msg)
    if m:
        return f"unable to read object {m.group(1) or m.group(2)}"
    return msg.splitlines()[-1][:200] if msg else "git failed"


def _without_diff(git: _Git, sha: str, reason: str) -> Commit | None:
    """The commit with file names only (from its trees), else its header only; None if even that fails."""
    for args in (_NAMES, _HEADER):
        got: list[Commit] = []
        if git.stream(["log", "--no-walk", *args, sha, "--"], None, got) is None and got:
            got[0].unreadable = reason
            return got[0]
    return None
