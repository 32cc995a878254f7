"""The code history's columns (:class:`~.code_facts.CodeFacts`) in a file beside a file store: ``<db>.codehistory``.

Why: the first code-aware search of a process read every commit's metadata to build the code history
(~1 s on a 12k-commit store, most of a cold ``ngr search`` that names an identifier); this file holds
the parsed columns, so the next process loads them in milliseconds.  It is derived state, trusted only
when all of these hold, else the index is built from the store again (and the file rewritten):

* the store vouches for it: each write puts a fresh random token into the file and then into the store's
  ``meta`` (``code_history.token``): another database's file, a database restored from a backup, or a
  write that died before its token reached the store all mean a rebuild;
* it was made at change-feed sequence ``S`` not ahead of the store's.  Commit nodes written or deleted
  since ``S`` (a sync that brought new commits) are re-read on top of it, as a running engine does with
  its change feed, up to ``MAX_CATCH_UP_COMMITS`` of them; more mean a rebuild (and a new file).  When no
  commit changed (feedback, other node types) the file is stamped with the new sequence;
* it parses: the magic line, a JSON header naming each array's dtype (integers, floats, booleans only:
  nothing is unpickled), shape and byte range inside the file, a CRC-32 of the arrays' bytes (a damaged
  block), and columns that agree with each other (:meth:`~.code_facts.CodeFacts.from_arrays`).  Any
  damage means a rebuild, never a crash.

Written atomically (a temporary file, then ``os.replace``; one a killed writer left is removed by the
next write), never inside a caller's transaction; 0600 like the store.  SQL stays in store/:
this module reads the store's meta, sequence and change records through its API.
"""

from __future__ import annotations

import glob
import json
import math
import os
import struct
import uuid
import zlib
from pathlib import Path

import numpy as np

from ..store.base import Store
from .code_facts import CodeFacts

__all__ = ["CodeHistoryFile", "TOKEN_KEY", "FORMAT"]

TOKEN_KEY = "code_history.token"
FORMAT = 2  # 2: the identifiers sorted at the end of the string table (term_lo)
_MAGIC = b"NGR-CODE-HISTORY\n"
_DTYPES = {"<i8": np.int64, "<i4": np.int32, "<f8": np.float64, "|b1": np.bool_, "|u1": np.uint8}
MAX_CATCH_UP = 200_000  # changes since the file's sequence read to see whether commits changed; more: rebuild
MAX_CATCH_UP_COMMITS = 500  # commits re-read on top of the file; more: rebuild (about as costly, and rewritten)


class CodeHistoryFile:
    """The cache file of one file store (module docstring); None-safe: :meth:`beside` gives None where no
    file can sit beside the store (in memory, PostgreSQL)."""

    def __init__(self, store: Store, path: Path):
        self.store = store
        self.path = path

    @classmethod
    def beside(cls, store: Store) -> CodeHistoryFile | None:
        p = getattr(store, "path", "") or ""
        if not p or p == ":memory:" or p.startswith("file:") or "://" in p:
            return None
        return cls(store, Path(p + ".codehistory"))

    def seq(self) -> int:
        return self.store.current_seq()

    def load(self) -> tuple[CodeFacts, np.ndarray] | None:
        """The columns and the commit nodes written or deleted since they were made (to re-read on top of
        them), if the file is valid for the store now (module docstring); else None."""
        token = self.store.get_meta(TOKEN_KEY)
        if token is None:
            return None
        got = _read(self.path)
        if got is None:
            return None
        header, cols, strings = got
        seq, now = header.get("seq"), self.seq()
        if header.get("token") != token or not isinstance(seq, int) or not 0 <= seq <= now:
            return None
        facts = CodeFacts.from_arrays(cols, strings)
        if facts is None:
            return None
        changed = np.zeros(0, np.int64)
        if seq < now:
            since = self._changed_commits(seq, now, facts)
            if since is None:
                return None
            changed = since
            if not changed.size:
                self._write(facts, now, token)  # still exact: stamped with the new sequence (cheap next time)
        return facts, changed

    def _changed_commits(self, seq: int, now: int, facts: CodeFacts) -> np.ndarray | None:
        """Commit nodes written or deleted after ``seq`` (and nodes of the file that stopped being
        commits); None when there are too many to re-read."""
        if self.store.change_count_since(seq) > MAX_CATCH_UP:
            return None
        known = facts["c_idx"]
        recs = self.store.node_records(seq, now)
        written = np.array([int(r[0]) for r in recs], np.int64)
        is_commit = np.array([r[2] == "commit" for r in recs], bool)
        gone = np.array([int(k) for kind, k in self.store.tombstones_between(seq, now) if kind == "node"], np.int64)
        changed = np.union1d(written[is_commit | np.isin(written, known)], gone[np.isin(gone, known)])
        return changed if changed.size <= MAX_CATCH_UP_COMMITS else None

    def save(self, facts: CodeFacts, seq: int) -> bool:
        """Write the columns made at ``seq``, then vouch for them in the store; False when either fails (a
        read-only store or directory, a full disk): the next process builds from the store again."""
        if getattr(self.store, "in_transaction", False):
            return False  # never a write inside the caller's transaction (its rollback would orphan the file)
        token = uuid.uuid4().hex
        try:
            self._remove_stale_temporaries()
            if not self._write(facts, seq, token):
                return False
            self.store.set_meta(TOKEN_KEY, token)
        except Exception:  # a cache write must never fail the search that made it
            return False
        return True

    def _remove_stale_temporaries(self) -> None:
        """``<file>.<pid>.<rand>.tmp`` left by a writer that died mid-write (its process is gone)."""
        for tmp in self.path.parent.glob(glob.escape(self.path.name) + ".*.tmp"):
            pid = tmp.name[len(self.path.name) + 1 :].split(".")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not _alive(int(pid)):
                tmp.unlink(missing_ok=True)

    def _write(self, facts: CodeFacts, seq: int, token: str) -> bool:
        if any("\0" in s for s in facts.strings):
            return False  # the string table is NUL-separated (no git path, sha or identifier holds one)
        blob = "\0".join(facts.strings).encode("utf-8", "surrogatepass")
        arrays = {**facts.arrays(), "strings": np.frombuffer(blob, np.uint8)}
        specs, off = {}, 0
        for name, a in arrays.items():
            a = np.ascontiguousarray(a)
            arrays[name] = a
            specs[name] = [a.dtype.str, list(a.shape), off]
            off += -(-a.nbytes // 8) * 8  # every array 8-byte aligned
        body = b"".join(a.tobytes() + b"\0" * (-a.nbytes % 8) for a in arrays.values())
        meta = {"format": FORMAT, "token": token, "seq": int(seq), "n_strings": len(facts.strings), "arrays": specs}
        header = json.dumps({**meta, "crc32": zlib.crc32(body)}).encode()
        tmp = self.path.with_name(f"{self.path.name}.{os.getpid()}.{uuid.uuid4().hex[:8]}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0), 0o600)
            with os.fdopen(fd, "wb") as f:
                header += b" " * (-(len(_MAGIC) + 8 + len(header)) % 8)  # the arrays start 8-byte aligned
                f.write(_MAGIC + struct.pack("<Q", len(header)) + header + body)
            os.replace(tmp, self.path)
        except OSError:
            return False
        finally:
            if tmp.exists():
                tmp.unlink()
        return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or no pid we can ask about): leave its file alone
    return True


def _read(path: Path) -> tuple[dict, dict[str, np.ndarray], list[str]] | None:
    """Header, arrays and strings of a file, or None for anything unreadable (module docstring)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        if not data.startswith(_MAGIC) or len(data) < len(_MAGIC) + 8:
            return None
        at = len(_MAGIC)
        (n,) = struct.unpack("<Q", data[at : at + 8])
        body = at + 8 + n
        if body > len(data):
            return None
        header = json.loads(data[at + 8 : body])
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            return None
        if header.get("crc32") != zlib.crc32(memoryview(data)[body:]):
            return None  # damaged on disk
        cols = {}
        for name, spec in dict(header["arrays"]).items():
            cols[name] = _array(data, body, spec)
        strings = bytes(cols.pop("strings")).decode("utf-8", "surrogatepass").split("\0")
        if strings == [""] and header.get("n_strings") == 0:
            strings = []
        if len(strings) != header.get("n_strings"):
            return None
        return header, cols, strings
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, UnicodeDecodeError, struct.error):
        return None


def _array(data: bytes, body: int, spec) -> np.ndarray:
    """One array of the file, a view of its bytes; ValueError when the spec does not fit the file."""
    dt, shape, off = spec
    dtype = np.dtype(_DTYPES[dt])
    shape = tuple(int(s) for s in shape)
    if len(shape) not in (1, 2) or any(s < 0 for s in shape) or not isinstance(off, int) or off < 0:
        raise ValueError("bad array spec")
    count = math.prod(shape)
    start = body + off
    if count * dtype.itemsize > len(data) - start:
        raise ValueError("array past the end of the file")
    return np.frombuffer(data, dtype, count, start).reshape(shape)
