"""Fresh by default for agents: ``ngr mcp --repo PATH`` / ``ngr serve --repo PATH`` sync new commits first.

An agent commits, then asks about what it just did; a server that answers from the store as of the last
manual ``ngr ingest git`` does not know it.  So before a search or ask the server reads the repositories'
ref tips (``git rev-parse`` of ``HEAD`` and the branches the store synced, ``git for-each-ref refs/tags``:
two git processes, the disarmed argv and environment of ``ingest/git_cmd.py``) and compares them with what
the store last synced (store meta ``ingest.git-tips.<source>``).  When they moved, the new commits are
synced first (``ingest.sync_source``, the same incremental sync as ``ngr ingest git``), for at most
``wait_s`` seconds; past that the call answers from what the store has, says how old it is, and the sync
finishes in the background.

Concurrency: one sync at a time, on a thread of its own, through a store connection and embedder of its own
(never the serving engine's: the engine is not thread-safe, and no model is called from two threads).  A sync
is one transaction, so a search running meanwhile reads the last committed state (SQLite WAL; the serving
engine catches up from the change feed at its next call, ``Engine.refresh``).  Checks and the sync's meta
reads never overlap on the shared connection (the lock below).

Every answer carries :meth:`Freshness.before_call`'s dict: ``stale``, ``syncing``, ``synced_at``, ``age_s``,
``head`` (the store's synced HEAD), ``repo_head`` and per repository the same (``repos``).
"""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..store.base import Store

__all__ = ["Freshness", "WAIT_S"]

WAIT_S = 3.0  # a call waits at most this long for a sync of new commits, then answers from the store as it is
RETRY_S = 60.0  # a sync that failed is tried again after this long, or at once when the tips move again


def _iso(t: float | None) -> str | None:
    return None if t is None else datetime.fromtimestamp(t, UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


@dataclass
class _Repo:
    path: Path
    source: str
    git: Any  # its ingest.git.GitRepo (reads tags and expands globs through ingest/git_cmd.py)
    head: str | None = None  # the store's synced HEAD
    repo_head: str | None = None  # the repository's HEAD at the last check
    stale: bool = True
    synced_at: float | None = None  # when the store last held every tip the repository had (wall clock)
    error: str | None = None
    failed: dict[str, str] | None = None  # the tips a sync failed on: not retried until they move (or RETRY_S)
    failed_at: float = 0.0
    moved: dict[str, str] = field(default_factory=dict)  # the tips the pending sync is for

    def view(self, now: float, syncing: bool) -> dict[str, Any]:
        out: dict[str, Any] = {
            "repo": str(self.path),
            "source": self.source,
            "head": self.head,
            "repo_head": self.repo_head,
            "stale": self.stale,
            "syncing": syncing and self.stale,
            "synced_at": _iso(self.synced_at),
            "age_s": None if self.synced_at is None else round(max(0.0, now - self.synced_at), 3),
        }
        if self.error:
            out["error"] = self.error
        return out


class _Writer:
    """What ``ingest.sync_source`` needs of an engine (``store``, ``vectors_for``, ``last_embedded``,
    ``refresh``), over a connection and an embedder of its own.  It holds no in-memory index: the serving
    engine catches up from the store's change feed at its next call."""

    def __init__(self, store: Store, embedder: Any) -> None:
        self.store, self.embedder, self.last_embedded = store, embedder, 0

    def vectors_for(
        self,
        texts: Sequence[str],
        progress: Callable[[int, int], None] | None = None,
        batch: int = 256,
        *,
        widen: bool = True,
    ) -> Any:
        from ..index.vector_cache import cached_embeddings

        out, embedded = cached_embeddings(self.store, self.embedder, texts, progress, batch)
        if embedded is not None:
            self.last_embedded = embedded
        return out

    def refresh(self, progress: object = None) -> int:
        return 0


def _git(path: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    from ..ingest.git_cmd import git_argv, git_env

    return subprocess.run(git_argv(path, *args), capture_output=True, env=git_env(), timeout=30)


class Freshness:
    """Keeps a store in step with git repositories before each agent call (see the module docstring).

    ``db``: the store's path or URL (a second connection is opened on it for syncing); ``repos``: working
    trees or bare repositories; ``make_embedder``: a fresh embedder like the serving engine's (the writer's
    own, loaded on its first embedding); ``wait_s``: how long a call waits for a sync."""

    def __init__(
        self,
        db: str | os.PathLike[str],
        repos: Sequence[str | os.PathLike[str]],
        make_embedder: Callable[[], Any],
        *,
        wait_s: float = WAIT_S,
    ):
        from ..index import multilingual
        from ..ingest.git import GitRepo, source_name
        from ..ingest.git_cmd import trusted_dirs
        from ..store import open_store

        self.wait_s = max(0.0, float(wait_s))
        trusted_dirs()  # read once now, not inside the first call's check
        store = open_store(str(db))
        try:
            self.repos: list[_Repo] = []
            for p in dict.fromkeys(Path(r).expanduser().resolve() for r in repos):
                g = GitRepo(p)
                self.repos.append(_Repo(p, source_name(g, store), g))
            emb = multilingual.for_open(store, make_embedder(), 0)  # the serving engine's model (0: never widen)
            self._writer = _Writer(store, emb)
        except BaseException:
            store.close()
            raise
        self._lock = threading.Lock()  # checks, state and the writer's connection outside a sync
        self._thread: threading.Thread | None = None
        self.last_check_ms = 0.0

    # ------------------------------------------------------------------ reading tips
    def _stored(self, r: _Repo) -> tuple[dict[str, str], list[str], bool]:
        """(the tips the store last synced, the refs and the tags flag that sync was given)."""
        from ..ingest.git import refs_key, tips_key

        def meta(key: str) -> dict[str, Any]:
            try:
                val = json.loads(self._writer.store.get_meta(key) or "{}")
            except ValueError:
                return {}
            return val if isinstance(val, dict) else {}

        chosen = meta(refs_key(r.source))
        refs = [str(x) for x in chosen["refs"]] if isinstance(chosen.get("refs"), list) else []
        return meta(tips_key(r.source)), refs, bool(chosen.get("tags", True))

    def _current(self, r: _Repo, refs: list[str], tags: bool) -> dict[str, str]:
        """The tips a sync would read now, in the store's form (``ingest/git.py`` ``_tips``): ``HEAD`` and the
        named refs (a glob: each branch it matches), and with ``tags`` ``refs/tags/NAME`` of every tag."""
        named = ["HEAD"]
        for ref in refs:
            named += r.git.expand(ref) if any(ch in ref for ch in "*?[") else [ref]
        named = list(dict.fromkeys(named))
        res = _git(r.path, "rev-parse", *(n + "^{commit}" for n in named))
        shas = res.stdout.decode("ascii", "replace").split()
        if res.returncode != 0 or len(shas) != len(named):
            raise RuntimeError(f"cannot read the refs of {r.path}: {res.stderr.decode(errors='replace').strip()[:300]}")
        tips = dict(zip(named, shas))
        return {**(r.git.tag_tips() if tags else {}), **tips}

    def _check(self, r: _Repo) -> bool:
        """Compare the repository's tips with the store's; True when a sync is due."""
        now = time.time()
        try:
            stored, refs, tags = self._stored(r)
            current = self._current(r, refs, tags)
        except Exception as exc:  # a repository gone or damaged: say so, answer from the store
            r.error, r.stale = f"{type(exc).__name__}: {exc}", True
            return False
        r.head, r.repo_head = stored.get("HEAD"), current.get("HEAD")
        if current == stored:
            r.stale, r.synced_at, r.error, r.failed = False, now, None, None
            return False
        r.stale = True
        if current == r.failed and now - r.failed_at < RETRY_S:  # the last sync of these very tips failed
            return False
        r.moved = current
        return True

    # ------------------------------------------------------------------ syncing
    def _sync(self, due: list[_Repo]) -> None:
        from ..ingest import sync_source

        for r in due:
            began = time.time()
            try:
                sync_source(self._writer, "git", r.path, name=r.source)
            except Exception as exc:
                r.error, r.failed, r.failed_at = f"sync failed: {type(exc).__name__}: {exc}"[:500], r.moved, time.time()
            else:
                r.error, r.failed, r.synced_at = None, None, began

    def syncing(self) -> bool:
        t = self._thread
        return t is not None and t.is_alive()

    def before_call(self) -> dict[str, Any]:
        """Bring the store up to date with the repositories, waiting at most ``wait_s``; the freshness
        the call's answer has (what :meth:`view` returns)."""
        start = time.monotonic()
        deadline = start + self.wait_s
        for _ in range(4):
            with self._lock:
                t = self._thread
                if t is None or not t.is_alive():
                    c0 = time.perf_counter()
                    due = [r for r in self.repos if self._check(r)]
                    self.last_check_ms = (time.perf_counter() - c0) * 1000
                    if not due:
                        break
                    t = self._thread = threading.Thread(target=self._sync, args=(due,), name="ngr-sync", daemon=True)
                    t.start()
            left = deadline - time.monotonic()
            if left <= 0:
                break
            t.join(left)
            if t.is_alive():
                break
        return self.view(waited_s=time.monotonic() - start)

    def view(self, waited_s: float = 0.0) -> dict[str, Any]:
        """``stale`` (some repository has commits or tips the store lacks), ``syncing`` (a sync of them is
        running), ``synced_at`` / ``age_s`` (the oldest time the store last held every tip), ``head`` /
        ``repo_head`` (the first repository's), ``repos`` (each one), ``waited_ms``, ``note`` when stale."""
        now, syncing = time.time(), self.syncing()
        repos = [r.view(now, syncing) for r in self.repos]
        times = [r.synced_at for r in self.repos]
        oldest = None if any(t is None for t in times) else min(t for t in times if t is not None)
        out: dict[str, Any] = {
            "stale": any(v["stale"] for v in repos),
            "syncing": any(v["syncing"] for v in repos),
            "synced_at": _iso(oldest),
            "age_s": None if oldest is None else round(max(0.0, now - oldest), 3),
            "head": repos[0]["head"] if repos else None,
            "repo_head": repos[0]["repo_head"] if repos else None,
            "waited_ms": round(waited_s * 1000, 1),
            "repos": repos,
        }
        if out["stale"]:
            age = f"{out['age_s']:.0f} s old" if out["age_s"] is not None else "of an unknown age"
            why = (
                "a sync of the new commits is running in the background; call again for them"
                if out["syncing"]
                else "; ".join(v["error"] for v in repos if v.get("error")) or "the repository moved"
            )
            out["note"] = f"answered from the store as it is ({age}): {why}"
        return out

    def close(self, wait_s: float = 5.0) -> None:
        """Let a running sync finish (at most ``wait_s``: a client that disconnects expects the server to
        exit), then close the writer's connection.  A sync still running is one open transaction, which the
        process exit rolls back: the store stays as it was, and the next call's check syncs again."""
        t = self._thread
        if t is not None:
            t.join(wait_s)
            if t.is_alive():
                return  # a daemon thread in a transaction: the process exit rolls it back
        self._writer.store.close()
