"""A crash mid-ingest leaves the store as it was or as the whole batch made it: `ngr ingest git` is
killed with SIGKILL at several points of a real run (timed against a complete run on this machine),
and the store is checked after each kill; a re-run then completes the sync."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import pytest

N = 1200


def _fast_import_repo(path, n: int) -> None:
    """A repository of ``n`` commits (each touching two files), written by one `git fast-import`."""
    subprocess.run(["git", "init", "-q", "-b", "main", str(path)], check=True)
    lines = []
    for k in range(n):
        msg = f"Change {k}: tune the widget cache\n\nFollow-up to #{k}.\n" if k else "Initial widget\n"
        body = f"content {k}\n"
        lines += [
            "commit refs/heads/main",
            f"mark :{k + 1}",
            f"committer Dev <dev@example.org> {1_700_000_000 + 3600 * k} +0000",
            f"data {len(msg.encode())}",
            msg,
        ]
        if k:
            lines.append(f"from :{k}")
        lines += [
            f"M 644 inline src/mod{k % 40}.c",
            f"data {len(body)}",
            body,
            f"M 644 inline docs/page{k % 7}.md",
            f"data {len(body)}",
            body,
            "",
        ]
    subprocess.run(["git", "-C", str(path), "fast-import", "--quiet"], input="\n".join(lines).encode(), check=True)
    subprocess.run(["git", "-C", str(path), "checkout", "-q", "main"], check=True)


def _state(db) -> tuple[int, int]:
    if not os.path.exists(db):
        return 0, 0
    con = sqlite3.connect(db)
    try:
        if not con.execute("SELECT count(*) FROM sqlite_master WHERE name = 'nodes'").fetchone()[0]:
            return 0, 0
        commits = con.execute("SELECT count(*) FROM nodes WHERE type = 'commit'").fetchone()[0]
        touches = con.execute(
            "SELECT count(*) FROM edges e JOIN relations r ON r.id = e.rel_id WHERE r.name = 'touches'"
        ).fetchone()[0]
        return commits, touches
    finally:
        con.close()


def _cmd(db, repo):
    return [
        sys.executable,
        "-m",
        "neurongraph.cli.main",
        "--db",
        str(db),
        "--embedder",
        "hashing",
        "ingest",
        "git",
        str(repo),
    ]


ENV = {**os.environ, "HF_HUB_OFFLINE": "1"}


@pytest.fixture(scope="module")
def timed_repo(tmp_path_factory):
    root = tmp_path_factory.mktemp("durable")
    _fast_import_repo(root / "r", N)
    t = time.perf_counter()
    subprocess.run(_cmd(root / "full.db", root / "r"), check=True, capture_output=True, env=ENV)
    return root / "r", time.perf_counter() - t


@pytest.mark.parametrize("fraction", [0.55, 0.7, 0.85, 0.95])
def test_kill_9_mid_ingest_leaves_all_or_nothing(timed_repo, tmp_path, fraction):
    repo, full_s = timed_repo
    db = tmp_path / "k.db"
    p = subprocess.Popen(_cmd(db, repo), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)
    try:
        time.sleep(full_s * fraction)
        p.kill()
    finally:
        p.wait(timeout=60)
    assert _state(db) in ((0, 0), (N, 2 * N)), _state(db)
    done = subprocess.run(_cmd(db, repo), capture_output=True, env=ENV, timeout=120)
    assert done.returncode == 0, done.stderr.decode()
    assert _state(db) == (N, 2 * N)
