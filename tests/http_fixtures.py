"""Shared by the HTTP tests: a small real store and a real ``ngr serve`` process on loopback.

``served(db, ...)`` starts ``python -m neurongraph.cli.main ... serve --port 0 --json`` (the real
command; port 0 = a free port), reads the ready line for the URL, and always stops the process
(SIGTERM, then SIGKILL), also when the test fails.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import neurongraph as ngr

T0 = 1_700_000_000  # 2023-11-14: the event times of the corpus are days after this
DAY = 86_400

NODES = [
    ngr.Node(
        "decision:12",
        "decision",
        "Use JWT for sessions",
        "We decided to replace cookie sessions with signed JWT tokens.",
        metadata={"time": T0, "source": "app", "state": "accepted"},
    ),
    ngr.Node(
        "pr:40",
        "pull_request",
        "Implement token middleware",
        "Adds middleware that validates bearer headers on every request.",
        metadata={"time": T0 + 2 * DAY, "source": "app", "state": "merged", "number": 40},
    ),
    ngr.Node(
        "issue:77",
        "issue",
        "Clock skew breaks token validation",
        "Expired checks fail when server clocks drift; tokens are rejected.",
        metadata={"time": T0 + 9 * DAY, "source": "app", "state": "open"},
    ),
    ngr.Node(
        "wiki:deploy",
        "wiki",
        "Deploy guide",
        "How to roll out a release (and new session tokens) to the cluster with helm.",
        metadata={"source": "wiki"},
    ),
    ngr.Node("note:helm", "note", "Helm chart values", "Chart values for the cluster release.", metadata={}),
    ngr.Node(
        "issue:88",
        "issue",
        "ログインが遅い",
        "ログインボタンを押してから画面が表示されるまで5秒以上かかる。",
        metadata={"time": T0 + 20 * DAY, "source": "app", "lang": "ja"},
    ),
    ngr.Node(
        "pr:90",
        "pull_request",
        "Lower the bcrypt cost for logins",
        "bcrypt at cost 14 blocked the event loop; lower it to 12 and hash in a thread pool.",
        metadata={"time": T0 + 21 * DAY, "source": "app"},
    ),
    ngr.Node("file:src/auth.py", "file", "src/auth.py", "src/auth.py", metadata={}),
]
EDGES = [
    ngr.Edge("decision:12", "implemented_by", "pr:40", weight=0.5),
    ngr.Edge("pr:40", "corrected_by", "issue:77", weight=0.5),
    ngr.Edge("wiki:deploy", "mentions", "note:helm", weight=0.5),
    ngr.Edge("issue:88", "caused_by", "pr:90", weight=0.6),
    ngr.Edge("pr:40", "touches", "file:src/auth.py", weight=1.0),
    ngr.Edge("pr:90", "touches", "file:src/auth.py", weight=1.0),
]
QUERY = "why did we replace cookie sessions with JWT tokens"


def build_store(path: Path) -> Path:
    eng = ngr.open(path, embedder="hashing")
    try:
        eng.add_nodes(NODES)
        eng.add_edges(EDGES)
    finally:
        eng.close()
    return path


def ngr_command(db: Path, *args: str) -> list[str]:
    return [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing", *args]


def _env(extra: dict | None) -> dict:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONUNBUFFERED": "1"}
    env.pop("NGR_TOKEN", None)
    env.update(extra or {})
    return env


@contextmanager
def served(db: Path, *args: str, env: dict | None = None, timeout: float = 60.0):
    """``(base_url, process)`` of a running ``ngr serve`` over ``db``; stopped afterwards, whatever happens."""
    proc = subprocess.Popen(
        ngr_command(db, "serve", "--port", "0", "--json", *args),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=_env(env),
        text=True,
    )
    try:
        sel = selectors.DefaultSelector()
        sel.register(proc.stdout, selectors.EVENT_READ)
        deadline = time.monotonic() + timeout
        line = ""
        while not line:
            left = deadline - time.monotonic()
            if left <= 0 or proc.poll() is not None:
                err = proc.stderr.read() if proc.poll() is not None else ""
                raise RuntimeError(f"ngr serve did not start (exit {proc.poll()}): {err[-2000:]}")
            if sel.select(timeout=min(left, 0.5)):
                line = proc.stdout.readline()
        info = json.loads(line)
        yield info["url"].rstrip("/"), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=15)
        for f in (proc.stdout, proc.stderr):
            if f:
                f.close()


def run_ngr(db: Path, *args: str, env: dict | None = None, timeout: float = 120.0) -> subprocess.CompletedProcess:
    return subprocess.run(ngr_command(db, *args), capture_output=True, text=True, env=_env(env), timeout=timeout)
