"""The working set: the lines an agent is changing, as search input (issue 24, DESIGN.md §2.6a).

An agent asks for history while it edits code.  What it knows — the files, the line ranges, or its own
diff — says more about "which earlier change is this about?" than the question's words: the commits
that last touched those lines (blame) are the standard answer (SZZ), and the identifiers in the changed
lines name what the earlier change added or removed.  A :class:`WorkingSet` is that knowledge as a plain
value: parsed once at the boundary (a unified diff, or ``PATH[:A-B]`` specs), JSON-safe for traces, MCP
and HTTP, and read by the engine's code-history index (``index/code_history.py``).

Line numbers are old-side (the file as of the search's time), 1-based and inclusive.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidArgument
from ..index.code_history import line_ranges

__all__ = ["FileChange", "WorkingSet", "MAX_FILES", "MAX_TERMS"]

MAX_FILES = 200  # files one working set may name (a vendor import is not a working set)
MAX_TERMS = 200  # identifiers kept per side and file, most frequent first
MAX_DIFF_CHARS = 5_000_000

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_SHA = re.compile(r"^[0-9a-fA-F]{4,40}$")
_SPEC = re.compile(r"^(?P<path>.+?):(?P<a>\d+)(?:-(?P<b>\d+))?$")


def _strip_prefix(p: str) -> str | None:
    p = p.split("\t", 1)[0].strip()
    if p == "/dev/null":
        return None
    if p.startswith('"') and p.endswith('"') and len(p) >= 2:
        p = p[1:-1]
    for pre in ("a/", "b/"):
        if p.startswith(pre):
            return p[len(pre) :]
    while p.startswith("./"):
        p = p[2:]
    return p


def _clean_path(p: str) -> str:
    q = p.strip()
    while q.startswith("./"):
        q = q[2:]
    if not q or q.startswith("/") and q == "/":
        raise InvalidArgument(f"empty file path in working set: {p!r}")
    return q


def _ranges(lines: list[int]) -> tuple[tuple[int, int], ...]:
    return tuple(line_ranges(lines))


@dataclass(frozen=True)
class FileChange:
    """One file of the working set: the old-side lines changed or deleted, the anchor lines around pure
    insertions (blamed instead, and said so), and the identifiers in removed and added lines."""

    path: str
    old_ranges: tuple[tuple[int, int], ...] = ()
    anchors: tuple[int, ...] = ()
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for a, b in self.old_ranges:
            if a < 1 or b < a:
                raise InvalidArgument(f"bad line range {a}-{b} for {self.path} (need 1 <= A <= B)")

    @property
    def old_lines(self) -> list[int]:
        return [n for a, b in self.old_ranges for n in range(a, b + 1)]

    @property
    def pure_addition(self) -> bool:
        """Only insertions: no old-side line is changed, so blame falls back to the anchors."""
        return not self.old_ranges and bool(self.anchors)

    def to_dict(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "old_ranges": [list(r) for r in self.old_ranges],
            "anchors": list(self.anchors),
            "added": list(self.added),
            "removed": list(self.removed),
        }


class _DiffReader:
    """One pass over a diff's lines: file headers, hunk headers, and the lines inside each hunk."""

    def __init__(self) -> None:
        from ..index.code_terms import identifiers  # the tokenizer the git ingest counts the same terms with

        self.identifiers = identifiers
        self.files: list[FileChange] = []
        self.cur: dict[str, Any] | None = None
        self.old_no = self.old_left = self.new_left = 0
        self.pending_add = self.removed_in_block = self.saw_hunk = False

    def feed(self, lines: list[str], i: int) -> int:
        """Read the line at ``i``; returns the index of the next unread line."""
        line = lines[i]
        if (self.old_left > 0 or self.new_left > 0) and self._hunk_line(line):
            return i + 1
        self._end_block()
        if line.startswith("diff --git "):
            m = re.match(r'^diff --git ("?a/.+?"?) ("?b/.+"?)$', line)
            self._start(_strip_prefix(m.group(1)) if m else None, _strip_prefix(m.group(2)) if m else None)
        elif line.startswith("--- ") and i + 1 < len(lines) and lines[i + 1].startswith("+++ "):
            old, new = _strip_prefix(line[4:]), _strip_prefix(lines[i + 1][4:])
            if self.cur is None or self.cur["hunks"]:
                self._start(old, new)
            else:
                self.cur["path"] = old or new
            return i + 2
        elif line.startswith("rename from ") and self.cur is not None:
            self.cur["path"] = line[len("rename from ") :].strip()
        else:
            m = _HUNK.match(line)
            if m and self.cur is not None:
                self.saw_hunk = True
                self.cur["hunks"] += 1
                a, b = int(m.group(1)), int(m.group(2) or 1)
                self.old_left, self.new_left = b, int(m.group(4) or 1)
                self.old_no = a if b > 0 else a + 1  # "-10,0": the insertion comes after old line 10
        return i + 1

    def _hunk_line(self, line: str) -> bool:
        """A line inside a hunk; False for a malformed one (the hunk is then closed)."""
        tag, cur = line[:1], self.cur
        if tag == "-":
            if cur is not None:
                if line[1:].strip():
                    cur["old"].append(self.old_no)
                cur["minus"].update(self.identifiers(line[1:]))
            self.old_no += 1
            self.old_left -= 1
            self.removed_in_block = True
        elif tag == "+":
            if cur is not None:
                cur["plus"].update(self.identifiers(line[1:]))
            self.pending_add = self.pending_add or not self.removed_in_block
            self.new_left -= 1
        elif tag == "\\":  # "\ No newline at end of file"
            pass
        elif tag == " " or line == "":
            self._end_block()
            self.old_no += 1
            self.old_left -= 1
            self.new_left -= 1
        else:
            self.old_left = self.new_left = 0
            return False
        return True

    def _end_block(self) -> None:
        if self.pending_add and self.cur is not None:
            self.cur["anchors"].extend(n for n in (self.old_no - 1, self.old_no) if n >= 1)
        self.pending_add = self.removed_in_block = False

    def _start(self, old: str | None, new: str | None) -> None:
        self._flush()
        self.cur = {"path": old or new, "old": [], "anchors": [], "plus": Counter(), "minus": Counter(), "hunks": 0}

    def _flush(self) -> None:
        cur = self.cur
        if cur is not None and cur["path"]:
            self.files.append(
                FileChange(
                    cur["path"],
                    _ranges(cur["old"]),
                    tuple(sorted(set(cur["anchors"]) - set(cur["old"]))),
                    tuple(t for t, _ in cur["plus"].most_common(MAX_TERMS)),
                    tuple(t for t, _ in cur["minus"].most_common(MAX_TERMS)),
                )
            )
        self.cur = None

    def finish(self) -> list[FileChange]:
        self._end_block()
        self._flush()
        return self.files


@dataclass(frozen=True)
class WorkingSet:
    """The files and lines an agent is changing (see the module docstring)."""

    files: tuple[FileChange, ...] = field(default_factory=tuple)
    base: str | None = (
        None  # the commit the old-side lines are of (a sha or prefix); None: the mainline as of the search
    )

    # ------------------------------------------------------------ construction
    @classmethod
    def from_specs(cls, specs: list[str] | tuple[str, ...]) -> WorkingSet:
        """``PATH``, ``PATH:A`` or ``PATH:A-B`` (1-based, inclusive) per entry."""
        files: list[FileChange] = []
        for s in specs:
            if not isinstance(s, str) or not s.strip():
                raise InvalidArgument(f"bad file spec {s!r}: expected PATH or PATH:A-B")
            if s.strip().startswith(":"):
                raise InvalidArgument(f"bad file spec {s!r}: the path is missing (PATH:A-B)")
            m = _SPEC.match(s.strip())
            if m:
                a = int(m.group("a"))
                b = int(m.group("b") or a)
                if a < 1 or b < a:
                    raise InvalidArgument(f"bad line range in {s!r}: need 1 <= A <= B")
                files.append(FileChange(_clean_path(m.group("path")), ((a, b),)))
            else:
                files.append(FileChange(_clean_path(s)))
        return cls(tuple(files)).merged()

    @classmethod
    def from_diff(cls, text: str) -> WorkingSet:
        """A unified diff or patch (``git diff``, ``git show``, ``git format-patch``, ``diff -u``), any
        context size.  Deleted/modified old-side lines are kept unless blank (B-SZZ); a run of added
        lines with nothing removed records the old lines around the insertion point as anchors."""
        if not isinstance(text, str):
            raise InvalidArgument("diff must be text")
        if len(text) > MAX_DIFF_CHARS:
            raise InvalidArgument(f"diff is longer than {MAX_DIFF_CHARS} characters")
        reader = _DiffReader()
        lines = text.splitlines()
        i = 0
        while i < len(lines):
            i = reader.feed(lines, i)
        files = reader.finish()
        if not files and not reader.saw_hunk:
            raise InvalidArgument("the diff has no file headers or hunks (expected a unified diff, e.g. `git diff`)")
        return cls(tuple(files)).merged()

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WorkingSet:
        if not isinstance(d, dict) or not isinstance(d.get("files", []), list):
            raise InvalidArgument("working set must be an object with a 'files' list")
        out = []
        for f in d.get("files", []):
            if not isinstance(f, dict) or not isinstance(f.get("path"), str):
                raise InvalidArgument("each working-set file needs a string 'path'")
            try:
                out.append(
                    FileChange(
                        _clean_path(f["path"]),
                        tuple((int(a), int(b)) for a, b in f.get("old_ranges", [])),
                        tuple(int(x) for x in f.get("anchors", [])),
                        tuple(str(x) for x in f.get("added", [])),
                        tuple(str(x) for x in f.get("removed", [])),
                    )
                )
            except (TypeError, ValueError):
                raise InvalidArgument(f"bad working-set entry for {f.get('path')!r}") from None
        base = d.get("base")
        if base is not None and (not isinstance(base, str) or not _SHA.match(base)):
            raise InvalidArgument(f"working-set base must be a commit sha (4-40 hex digits), got {base!r}")
        return cls(tuple(out), base).merged()

    @classmethod
    def coerce(cls, value: Any) -> WorkingSet | None:
        """The forms an interface passes: None, a WorkingSet, diff text, ``PATH[:A-B]`` specs or the JSON object."""
        if value is None or isinstance(value, WorkingSet):
            return value
        if isinstance(value, str):
            return cls.from_diff(value)
        if isinstance(value, (list, tuple)):
            return cls.from_specs(list(value))
        if isinstance(value, dict):
            return cls.from_dict(value)
        raise InvalidArgument(f"changes must be a diff, a list of PATH[:A-B] or a working-set object, got {value!r}")

    # ------------------------------------------------------------ combination and reading
    def merged(self) -> WorkingSet:
        """One entry per path (ranges, anchors and terms united); refuses an oversized set."""
        by: dict[str, dict[str, Any]] = {}
        for f in self.files:
            e = by.setdefault(f.path, {"old": [], "anchors": [], "added": {}, "removed": {}})
            e["old"].extend(f.old_lines)
            e["anchors"].extend(f.anchors)
            e["added"].update(dict.fromkeys(f.added))
            e["removed"].update(dict.fromkeys(f.removed))
        if len(by) > MAX_FILES:
            raise InvalidArgument(f"the working set names {len(by)} files (at most {MAX_FILES})")
        return WorkingSet(
            base=self.base,
            files=tuple(
                FileChange(
                    p,
                    _ranges(e["old"]),
                    tuple(sorted(set(e["anchors"]) - set(e["old"]))),
                    tuple(e["added"]),
                    tuple(e["removed"]),
                )
                for p, e in by.items()
            ),
        )

    def merge(self, other: WorkingSet | None) -> WorkingSet:
        return self if other is None else WorkingSet(self.files + other.files, self.base or other.base).merged()

    @property
    def paths(self) -> tuple[str, ...]:
        return tuple(f.path for f in self.files)

    @property
    def has_lines(self) -> bool:
        return any(f.old_ranges or f.anchors for f in self.files)

    @property
    def pure_addition(self) -> bool:
        """No old-side line changed anywhere, but something was inserted (blame uses the anchors)."""
        return not any(f.old_ranges for f in self.files) and any(f.anchors for f in self.files)

    def terms(self) -> tuple[list[str], list[str]]:
        """Identifiers of removed lines and of added lines, each in first-seen order without repeats."""
        rem = list(dict.fromkeys(t for f in self.files for t in f.removed))
        add = list(dict.fromkeys(t for f in self.files for t in f.added))
        return rem, add

    def with_base(self, base: str | None) -> WorkingSet:
        """The same lines, read as of commit ``base``."""
        if base is not None and not _SHA.match(base):
            raise InvalidArgument(f"working-set base must be a commit sha (4-40 hex digits), got {base!r}")
        return WorkingSet(self.files, base)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"files": [f.to_dict() for f in self.files]}
        if self.base:
            d["base"] = self.base
        return d

    def __bool__(self) -> bool:
        return bool(self.files)
