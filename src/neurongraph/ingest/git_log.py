"""One streaming ``git log -p -U0 -M`` read into commits: files with line counts, renames, hunks, code terms.

Why the patch alone and no ``--numstat``: the ``-U0`` hunk headers carry the line counts (their sums are
what ``--numstat`` prints next to ``-U0``) and the section headers the paths and renames, and git then
diffs each file once; asking for both would diff twice (measured on iproute2, git's CPU: numstat alone
1.9 s, ``-p -U0`` alone 1.7 s, both 2.6 s).  The output is read in 1 MiB chunks and cut into commits at a
marker that starts every commit's header, so only one commit's patch is ever held (ovs' full log is
135 MB); whole diffs are never kept: a commit keeps its hunk headers and the code tokens whose count its
added or removed lines changed.

Record layout: ``START sha SEP parents SEP an SEP ae SEP at SEP ct SEP message SEP``, then the patch: one
``diff --git a/P b/P`` section per file (``rename from/to`` lines for a rename, ``Binary files ...`` for
a binary file), each ``@@ -a,b +c,d @@`` followed by its removed then its added lines.  ``START`` and
``SEP`` hold a random nonce drawn for each read (:class:`_Frame`), written into ``--format`` as literal
text: no commit message, author field, path or file content can hold it, so none can end a field or start
a commit (a fixed marker let a file's content forge commits and rewrite stored ones, issue 40).  Every git
process runs with the repository's config disarmed (``git_cmd.py``).  A file over
:data:`git_cmd.BIG_FILE_THRESHOLD` bytes is not diffed (git prints it as binary: its commit lists it with
unknown line counts and names it in ``notes["too_large"]``); a date git cannot print as epoch seconds is
named in ``notes["date_unknown"]``.

A repository with missing objects (a damaged store, a partial clone) makes git stop with "unable to read
<sha>".  The commits read until then are kept; the failing commit is read again without its diff (file
names from the trees if those are there, else header only) and named in ``unreadable``; the rest are read
by a new stream over the remaining ids.  After :data:`MAX_RESTARTS` failures the rest is read by names
only in one stream (a blob-less partial clone would otherwise cost a process per commit).
"""

from __future__ import annotations

import codecs
import re
import secrets
import subprocess
import tempfile
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from queue import Queue
from typing import Any

from ..index.code_terms import STOP_BYTES as _STOP_B
from ..index.code_terms import count_identifiers_bytes
from .git_cmd import BIG_FILE_THRESHOLD, git_argv, git_env

__all__ = [
    "Commit",
    "path_text",
    "path_bytes",
    "read_log",
    "read_merge_hunks",
    "start_merge_hunks",
    "epoch_or_none",
    "MAX_CODE_LINES",
    "MAX_BULK_TERMS",
    "MAX_HUNKS_FILE",
    "MAX_HUNKS_COMMIT",
]

MARK = b"\x1e\x1dngr\x1f"  # the default of _records (its tests); every read uses a fresh _Frame
MAX_EPOCH = 253402300799  # 9999-12-31T23:59:59Z, the last second datetime can write
MAX_CODE_LINES = 20000  # a file with more changed lines (a vendor import, generated code) gets no code terms
MAX_HUNKS_FILE = 2000  # hunks kept per file ...
MAX_HUNKS_COMMIT = 20000  # ... and per commit (metadata["hunks_truncated"] when cut)
MAX_CODE_TERMS = 4000  # tokens kept per side (the largest count changes; metadata["code_truncated"] when cut)
MAX_BULK_TERMS = 50000  # ... and per side from files over MAX_CODE_LINES, not in the other files' lists
MAX_RESTARTS = 20  # failing commits read one by one before the rest is read by file names only
_CHUNK = 1 << 20
_AHEAD = 64  # chunks read ahead of the parse (64 MiB at most)

# over a section's body from its first "\n@@": a leading newline lets the engine search a literal prefix
_HUNK = re.compile(rb"\n@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ADDED = re.compile(rb"\n\+([^\n]*)")
_REMOVED = re.compile(rb"\n-([^\n]*)")
_PLUS_PATH = re.compile(rb"^\+\+\+ (.*)$", re.M)
_MINUS_PATH = re.compile(rb"^--- (.*)$", re.M)
_RENAME_FROM = re.compile(rb"^rename from (.*)$", re.M)
_RENAME_TO = re.compile(rb"^rename to (.*)$", re.M)
_QUOTED = re.compile(rb'"(?:[^"\\]|\\.)*"')  # a C-quoted path as git prints it
_INDEX = re.compile(rb"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.M)
_UNREADABLE = re.compile(
    r"(?:unable to|could not) (?:read|fetch) ([0-9a-f]{7,64})|missing (?:blob|tree|commit) ([0-9a-f]{7,64})",
    re.IGNORECASE,
)


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
    status: dict[str, str] = field(default_factory=dict)  # path -> "A" (new file) / "D" (deleted file)
    hunks: dict[str, list[list[int]]] = field(default_factory=dict)  # new path -> [[a, b, c, d], ...]
    hunks_p2: dict[str, list[list[int]]] = field(default_factory=dict)  # a merge's hunks against its 2nd parent
    code_added: list[str] = field(default_factory=list)
    code_removed: list[str] = field(default_factory=list)
    code_bulk_added: list[str] = field(default_factory=list)  # from files over MAX_CODE_LINES
    code_bulk_removed: list[str] = field(default_factory=list)
    flags: dict[str, int | bool] = field(default_factory=dict)  # hunks_truncated, code_truncated, code_skipped
    unreadable: str | None = None  # why the diff could not be read (git's message), when it could not
    # metadata the commit's node carries besides the reader's: "date_unknown" (["author_time"] ...: git gave no
    # date it could print, stored as the other date or 0), "too_large" (paths over BIG_FILE_THRESHOLD, not diffed)
    notes: dict[str, list[str]] = field(default_factory=dict)
    blobs: list[tuple[str, bytes, bytes]] = field(default_factory=list)  # binary sections: path, old, new blob


@dataclass(frozen=True)
class _Frame:
    """The markers of one read: ``start`` begins a commit's record, ``sep`` ends each header field.  Both
    hold a nonce drawn for this read (``secrets``), so no byte sequence the repository holds can match."""

    start: bytes
    sep: bytes

    @classmethod
    def new(cls) -> _Frame:
        nonce = secrets.token_hex(16)
        return cls(f"{nonce}s".encode(), f"{nonce}f".encode())

    @property
    def format(self) -> str:
        sep = self.sep.decode()
        return "--format=" + self.start.decode() + sep.join(_FIELDS) + sep


_FIELDS = ("%H", "%P", "%an", "%ae", "%at", "%ct", "%B")


def epoch_or_none(raw: bytes | str) -> int | None:
    """A date git printed as epoch seconds (``%at``, ``%ct``), or None: git prints nothing for a date it
    cannot parse (negative, missing) and the digits as they are for one too large (a crafted commit's
    ``author A <a> 99999999999999999999 +0000``); only 0 ..  :data:`MAX_EPOCH` is a date."""
    raw = raw.strip()
    if not raw or not raw.isdigit() or len(raw) > 12:
        return None
    t = int(raw)
    return t if t <= MAX_EPOCH else None


def parse_record(rec: bytes, sep: bytes, names: bool = False) -> Commit | None:
    """One commit's record (the bytes after the frame's start); None when it is cut short (no header).
    ``sep``: the read's field end (:attr:`_Frame.sep`); ``names``: the record of a ``-z --name-only`` log (file
    names, no counts)."""
    parts = rec.split(sep, 7)
    if len(parts) < 8:
        return None
    sha, parents, an, ae = (p.decode("utf-8", "replace") for p in parts[:4])
    at, ct = epoch_or_none(parts[4]), epoch_or_none(parts[5])
    subject, _, body = parts[6].decode("utf-8", "replace").strip("\n").partition("\n")
    c = Commit(sha, parents.split(), an, ae, 0, 0, subject.strip(), body.strip("\n"))
    c.author_time = at if at is not None else ct or 0  # a crafted date: the other one, else 0, and named
    c.commit_time = ct if ct is not None else at or 0
    unknown = [k for k, v in (("author_time", at), ("commit_time", ct)) if v is None]
    if unknown:
        c.notes["date_unknown"] = unknown
    tail = parts[7].lstrip(b"\0\n")
    if names:
        c.files = [(path_text(t), None, None) for t in tail.split(b"\0") if t.strip(b"\n")]
    elif tail.startswith(b"diff --git "):
        _read_patch(c, tail[len(b"diff --git ") :])
    return c


def _read_patch(c: Commit, patch: bytes) -> None:
    """Files, renames, hunks and code terms, one ``diff --git`` section at a time.  Line counts are the
    hunks' sums (what ``--numstat`` prints next to ``-U0``); a binary file counts None; the two sections of
    a type change (symlink -> file) add up under one path."""
    added: dict[bytes, int] = {}
    removed: dict[bytes, int] = {}
    bulk_added: dict[bytes, int] = {}  # the same, from files over MAX_CODE_LINES (generated headers, imports)
    bulk_removed: dict[bytes, int] = {}
    files: dict[str, list[int | None]] = {}
    n_hunks = skipped = 0
    for sec in patch.split(b"\ndiff --git "):
        at = sec.find(b"\n@@ ")
        head = sec if at < 0 else sec[:at]
        path = _section_path(c, head)
        if at < 0:  # binary, mode change, pure rename: no lines
            binary = b"\nBinary files " in head or b"\nGIT binary patch" in head
            files.setdefault(path, [None, None] if binary else [0, 0])
            if binary and (ix := _INDEX.search(head)):  # binary, or over BIG_FILE_THRESHOLD: read_log asks git
                c.blobs.append((path, ix.group(1), ix.group(2)))
            continue
        body = sec[at:]
        hunks = [[int(o), int(oc or 1), int(n), int(nc or 1)] for o, oc, n, nc in _HUNK.findall(body)]
        n_old = sum(h[1] for h in hunks)
        n_new = sum(h[3] for h in hunks)
        counts = files.setdefault(path, [0, 0])
        if counts[0] is not None and counts[1] is not None:
            counts[0] += n_new
            counts[1] += n_old
        keep = min(len(hunks), MAX_HUNKS_FILE, MAX_HUNKS_COMMIT - n_hunks)
        if keep < len(hunks):
            c.flags["hunks_truncated"] = True
        if keep > 0:
            c.hunks.setdefault(path, []).extend(hunks[:keep])
            n_hunks += keep
        bulk = n_old + n_new > MAX_CODE_LINES
        if bulk:
            skipped += 1
        plus = count_identifiers_bytes(b"\n".join(_ADDED.findall(body))) if n_new else {}
        minus = count_identifiers_bytes(b"\n".join(_REMOVED.findall(body))) if n_old else {}
        both = plus.keys() & minus.keys()
        if both:  # only tokens on both sides need a count comparison (the rest is set algebra in C)
            plus, minus = dict(plus), dict(minus)
            for t in both:
                k = plus[t] - minus[t]
                if k > 0:
                    plus[t] = k
                    del minus[t]
                elif k < 0:
                    minus[t] = -k
                    del plus[t]
                else:  # moved within the file: neither
                    del plus[t], minus[t]
        if bulk:
            bulk_added.update(plus)
            bulk_removed.update(minus)
        else:
            added.update(plus)  # the count change in the last file that changed it (ranks tokens at the cap)
            removed.update(minus)
    c.files = [(p, a, d) for p, (a, d) in files.items()]
    if skipped:
        c.flags["code_skipped"] = skipped
    c.code_added = _top(added, c.flags)
    c.code_removed = _top(removed, c.flags)
    if bulk_added or bulk_removed:
        c.code_bulk_added = _top(_only(bulk_added, added), c.flags, MAX_BULK_TERMS, "bulk_truncated")
        c.code_bulk_removed = _top(_only(bulk_removed, removed), c.flags, MAX_BULK_TERMS, "bulk_truncated")


def _only(bulk: dict[bytes, int], kept: dict[bytes, int]) -> dict[bytes, int]:
    """The bulk files' tokens that the commit's other files did not already list on that side."""
    return {t: k for t, k in bulk.items() if t not in kept} if kept else bulk


def _section_path(c: Commit, head: bytes) -> str:
    """The new path of one ``diff --git`` section, recording its rename and whole-file status on ``c``."""
    path, old = _paths(head)
    if old is not None:
        c.renames.append((old, path))
    if st := _whole_file(head):
        c.status[path] = st
    return path


def _whole_file(head: bytes) -> str | None:
    """ "A" / "D" when a section's header says git created or deleted the whole file ("new / deleted file
    mode": binary and empty files too, which have no hunk to read), else None."""
    if b"\ndeleted file mode " in head:
        return "D"
    if b"\nnew file mode " in head:
        return "A"
    return None


def _paths(head: bytes) -> tuple[str, str | None]:
    """(new path, old path of a rename or None) of a section: from ``rename from/to``, else the
    ``+++ b/`` line (``--- a/`` for a deletion), else the ``a/P b/P`` of the ``diff --git`` line."""
    rf, rt = _RENAME_FROM.search(head), _RENAME_TO.search(head)
    if rf and rt:
        return _unquote(rt.group(1)), _unquote(rf.group(1))
    m = _PLUS_PATH.search(head)
    if m and m.group(1) == b"/dev/null":
        m = _MINUS_PATH.search(head)
    if m:
        return _unquote(m.group(1).rstrip(b"\t"), 2), None  # git ends a name that has a space with a tab
    line = head.split(b"\n", 1)[0]
    if line.endswith(b'"'):  # ... "b/quoted name": after the a-side, quoted or not (an unquoted one has no '"')
        q = _QUOTED.match(line) if line.startswith(b'"') else None
        at = q.end() + 1 if q else line.find(b' "') + 1
        return _unquote(line[at:], 2), None
    n = (len(line) - 5) // 2  # "a/P b/P"
    if line[2 + n :] == b" b/" + line[2 : 2 + n]:
        return _unquote(line[2 : 2 + n]), None
    return _unquote(line[line.rfind(b" b/") + 1 :], 2), None


def path_text(raw: bytes) -> str:
    """A path's bytes as text, one-to-one (docs/reliability.md, "Paths keep their bytes"): valid UTF-8 is
    kept as is, except that a backslash is written ``\\x5c``; a byte that is not part of valid UTF-8 is
    written ``\\xNN`` (two lower-case hex digits).  Why not U+FFFD: ``caf\\xe9.c`` and ``caf\\xe8.c``
    (Latin-1 names) would both become ``caf\ufffd.c``, one node for two files.  Why not surrogateescape:
    a lone surrogate is not valid Unicode, refused by every store and JSON writer.  Every backslash in the
    result starts an escape, so :func:`path_bytes` gives the original bytes back."""
    if b"\\" in raw:
        raw = raw.replace(b"\\", b"\\x5c")
    return raw.decode("utf-8", "backslashreplace")


_ESCAPED = re.compile(r"\\x([0-9a-f]{2})")


def path_bytes(text: str) -> bytes:
    """The bytes :func:`path_text` was given (to hand a stored path back to git)."""
    if "\\" not in text:
        return text.encode("utf-8")
    out = bytearray()
    at = 0
    for m in _ESCAPED.finditer(text):
        out += text[at : m.start()].encode("utf-8")
        out.append(int(m.group(1), 16))
        at = m.end()
    out += text[at:].encode("utf-8")
    return bytes(out)


def _unquote(raw: bytes, prefix: int = 0) -> str:
    """A path as git prints it: C-quoted when it has a tab, a quote, a backslash; ``prefix`` (``a/``) cut;
    its bytes kept (:func:`path_text`)."""
    if raw.startswith(b'"') and raw.endswith(b'"') and len(raw) >= 2:
        raw = codecs.escape_decode(raw[1:-1])[0]
    return path_text(raw[prefix:])


def _top(counts: dict[bytes, int], flags: dict, cap: int = 0, flag: str = "code_truncated") -> list[str]:
    """The code terms (keywords dropped), decoded and sorted; over the cap (:data:`MAX_CODE_TERMS` by
    default), the ones whose count changed most (ties by name)."""
    cap = cap or MAX_CODE_TERMS
    for t in _STOP_B.intersection(counts):
        del counts[t]
    if not counts:
        return []
    if len(counts) > cap:
        flags[flag] = True
        keep = sorted(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:cap])
        return [t.decode("ascii") for t, _ in keep]
    return b"\n".join(sorted(counts)).decode("ascii").split("\n")  # bytes order = str order for ASCII


class _Git:
    """Runs ``git`` in one repository with its config disarmed and the reader's environment (``git_cmd.py``:
    no program of the repository's config runs, no prompt, no lazy fetch); one :class:`_Frame` per read."""

    def __init__(self, path: Path):
        self.path = path
        self.env = git_env()
        self.frame = _Frame.new()

    def argv(self, *args: str) -> list[str]:
        return git_argv(self.path, *args, big_files=False)

    def stream(
        self, args: list[str], stdin: bytes | None, out: list[Commit], on_commit: Callable[[int], None] | None = None
    ) -> str | None:
        """Append the commits of one ``git log`` to ``out`` as they arrive; git's error text, or None.
        ``on_commit(len(out))`` every :data:`PROGRESS_EVERY` commits (the ingest's progress bar).

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
            names = "--name-only" in args
            sep = self.frame.sep
            last: bytes | None = None
            for rec in _records(proc.stdout, self.frame.start):
                if last is not None:
                    c = parse_record(last, sep, names)
                    if c is not None:
                        out.append(c)
                        if on_commit is not None and len(out) % PROGRESS_EVERY == 0:
                            on_commit(len(out))
                last = rec
            rc = proc.wait()
            if rc == 0:
                if last is not None and (c := parse_record(last, sep, names)) is not None:
                    out.append(c)
                return None
            err.seek(0)
            msg = err.read().decode("utf-8", "replace").strip()
            head = last.split(sep, 1)[0].decode("ascii", "replace") if last else ""
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


def _chunks(stream) -> Iterator[bytes]:
    """The stream's bytes in chunks of up to :data:`_CHUNK`, read by a thread: git never waits on a full
    pipe while this process parses, so git's diffing and the parse run at the same time (on iproute2 the
    sequential pipe made the read ~git's time + the parse's).  At most :data:`_AHEAD` chunks are held."""
    q: Queue[bytes | BaseException] = Queue(_AHEAD)

    def pump() -> None:
        try:
            while chunk := stream.read(_CHUNK):
                q.put(chunk)
            q.put(b"")
        except BaseException as e:  # handed to the parsing side
            q.put(e)

    threading.Thread(target=pump, daemon=True).start()
    while True:
        item = q.get()
        if isinstance(item, BaseException):
            raise item
        if not item:
            return
        yield item


def _records(stream, mark: bytes = MARK) -> Iterator[bytes]:
    """The bytes between consecutive ``mark`` s (a read's :attr:`_Frame.start`), read in chunks (one record
    in memory at a time)."""
    buf = bytearray()
    start = 0  # where the current record begins in buf
    started = False
    scan = 0
    for chunk in _chunks(stream):
        buf += chunk
        while True:
            at = buf.find(mark, scan)
            if at < 0:
                scan = max(start, len(buf) - len(mark) + 1)
                break
            if started:
                yield bytes(buf[start:at])
            started = True
            start = scan = at + len(mark)
        if start:  # compact once per chunk, not once per record
            del buf[:start]
            scan -= start
            start = 0
    if started:
        yield bytes(buf[start:])


PROGRESS_EVERY = 1000  # commits between two on_commit calls of a streaming read
_DIFF = ["-p", "-U0", "-M", "--diff-merges=first-parent", "--no-notes"]  # + the read's _Frame.format
_NAMES = ["-z", "--name-only", "--no-renames", "--diff-merges=first-parent", "--no-notes"]
_HEADER = ["--no-notes"]


# a merge's id line, a section's header from its "diff --git" line to its "+++ b/.." line (header lines start
# with a lower-case word; a patch line starts with "+", "-", " " or "\\", so a removed line "-- x" followed by
# an added "++ y" cannot pass for a path), or a hunk header
_P2_LINE = re.compile(
    rb"^(?:([0-9a-f]{40,64})|diff --git [^\n]*\n(?:[a-z][^\n]*\n)*?--- [^\n]*\n\+\+\+ ([^\n]*)"
    rb"|@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@[^\n]*)$",
    re.M,
)


def start_merge_hunks(path: Path, rev_args: list[str]) -> Callable[[], dict[str, dict[str, list[list[int]]]]]:
    """:func:`read_merge_hunks` of the merges in ``rev_args`` (a cheap ``git rev-list --merges --parents``
    names them), run in a thread while the main log streams; call the result to wait for it."""
    listed = subprocess.run(
        git_argv(path, "rev-list", "--merges", "--parents", *rev_args, "--"), capture_output=True, env=git_env()
    )
    pairs = [(p[0], p[2]) for p in (ln.split() for ln in listed.stdout.decode().splitlines()) if len(p) >= 3]
    box: list[Any] = []

    def run() -> None:
        try:
            box.append(read_merge_hunks(path, pairs))
        except BaseException as e:  # re-raised by the caller
            box.append(e)

    t = threading.Thread(target=run, daemon=True)
    t.start()

    def wait() -> dict[str, dict[str, list[list[int]]]]:
        t.join()
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]

    return wait


def read_merge_hunks(path: Path, merges: list[tuple[str, str]]) -> dict[str, dict[str, list[list[int]]]]:
    """Each merge's ``-U0`` hunks against its second parent, per new path, for ``(merge, second parent)``
    pairs: one ``git diff-tree --stdin`` process fed ``M P2`` lines (git diffs P2 -> M, printing ``M`` first;
    ``--always`` prints it for an empty diff too), so only the second-parent diffs are made (the first-parent
    ones are the main log's).  Why: blame from stored hunks follows a line a merge brought into the branch it
    came from, exactly as ``git blame`` does, instead of guessing by time (index/code_history.py).  Hunk
    headers only, parsed with one regex over 1 MiB chunks (only header, ``+++`` and ``@@`` lines reach
    Python); a deleted file has none; a merge git cannot diff is left out (its lines fall back to the
    branch walk)."""
    if not merges:
        return {}
    argv = git_argv(path, "diff-tree", "--stdin", "--always", "-p", "-U0", "-M", big_files=False)  # git_cmd.py
    env = git_env()
    wanted = {m for m, _ in merges}
    out: dict[str, dict[str, list[list[int]]]] = {}
    with subprocess.Popen(
        argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env
    ) as proc:
        _feed(proc, "".join(f"{m} {p2}\n" for m, p2 in merges).encode())
        assert proc.stdout is not None
        hunks: dict[str, list[list[int]]] = {}
        cur = ""
        rest = b""
        chunks = _chunks(proc.stdout)
        while True:
            chunk = next(chunks, b"")
            data = rest + chunk
            if chunk:  # parse up to the last section start: a section's lines never straddle two parses
                cut = data.rfind(b"\ndiff --git ") + 1
                data, rest = data[:cut], data[cut:]
            for sha, plus, o, oc, n, nc in _P2_LINE.findall(data):
                if sha:
                    hunks, cur = {}, ""
                    if sha.decode() in wanted:
                        out[sha.decode()] = hunks
                elif plus:
                    cur = _unquote(plus.rstrip(b"\t"), 2) if plus != b"/dev/null" else ""
                elif cur:
                    hunks.setdefault(cur, []).append([int(o), int(oc or 1), int(n), int(nc or 1)])
            if not chunk:
                break
        proc.wait()
    return out


def read_log(
    path: Path, rev_args: list[str], on_commit: Callable[[int], None] | None = None
) -> tuple[list[Commit], list[tuple[str, str]]]:
    """(every commit of ``rev_args`` that could be read, in ``git log`` order, those read without their
    diff with ``unreadable`` set; (id, why) of the commits left out: not even their header could be
    read).  Streams; see the module docstring.  ``on_commit(n)``: n commits read so far (progress)."""
    git = _Git(path)
    out: list[Commit] = []
    failed = git.stream(["log", *_DIFF, git.frame.format, *rev_args, "--"], None, out, on_commit)
    if failed is None:
        _finish(git, out)
        return out, []
    lost: list[tuple[str, str]] = []
    listed = git.run("rev-list", *rev_args, "--")
    if listed.returncode != 0:  # not even the commit graph: what streamed is all there is
        culprit, _, msg = failed.partition("\n")
        _finish(git, out)
        return out, [(culprit or "?", "history from here on unreadable: " + _reason(msg))]
    order = listed.stdout.decode().split()
    restarts = 0
    while failed is not None:
        done = {c.sha for c in out} | {s for s, _ in lost}
        rest = [s for s in order if s not in done]
        culprit, _, msg = failed.partition("\n")
        if culprit not in rest:
            culprit = rest[0] if rest else ""
        if not culprit:
            break
        restarts += 1
        if restarts > MAX_RESTARTS:  # the rest by names only, in one stream
            got: list[Commit] = []
            names = ["log", "--no-walk=unsorted", "--stdin", *_NAMES, git.frame.format]
            git.stream(names, "\n".join(rest).encode() + b"\n", got)
            for g in got:
                g.unreadable = "diffs not read after repeated failures: " + _reason(msg)
            out += got
            seen = {g.sha for g in got}
            lost += [(s, "not read: " + _reason(msg)) for s in rest if s not in seen]
            break
        one = _without_diff(git, culprit, _reason(msg))
        if one is not None:
            out.append(one)
        else:
            lost.append((culprit, "not even the commit's header could be read: " + _reason(msg)))
        rest = [s for s in rest if s != culprit]
        if not rest:
            break
        again = ["log", "--no-walk=unsorted", "--stdin", *_DIFF, git.frame.format]
        failed = git.stream(again, "\n".join(rest).encode() + b"\n", out)
    rank = {s: i for i, s in enumerate(order)}
    out.sort(key=lambda c: rank.get(c.sha, len(rank)))
    _finish(git, out)
    return out, lost


def _finish(git: _Git, commits: list[Commit]) -> None:
    """Name the files git did not diff for their size (``notes["too_large"]``: one ``git cat-file
    --batch-check`` over the blobs of the binary sections)."""
    blobs = {b for c in commits for _, *pair in c.blobs for b in pair if b.strip(b"0")}
    if blobs:
        res = git.run(
            "cat-file", "--batch-check=%(rest) %(objectsize)", stdin=b"".join(b + b" " + b + b"\n" for b in blobs)
        )
        size = {}
        for line in res.stdout.split(b"\n"):
            name, _, n = line.partition(b" ")
            if n.isdigit():
                size[name] = int(n)
        for c in commits:
            big = [p for p, old, new in c.blobs if max(size.get(old, 0), size.get(new, 0)) > BIG_FILE_THRESHOLD]
            if big:
                c.notes["too_large"] = sorted(set(big))
    for c in commits:
        c.blobs = []


def _reason(msg: str) -> str:
    m = _UNREADABLE.search(msg)
    if m:
        return f"unable to read object {m.group(1) or m.group(2)}"
    return msg.splitlines()[-1][:200] if msg else "git failed"


def _without_diff(git: _Git, sha: str, reason: str) -> Commit | None:
    """The commit with file names only (from its trees), else its header only; None if even that fails."""
    for args in (_NAMES, _HEADER):
        got: list[Commit] = []
        if git.stream(["log", "--no-walk", *args, git.frame.format, sha, "--"], None, got) is None and got:
            got[0].unreadable = reason
            return got[0]
    return None
