"""The global ``--db`` (and ``NGR_DB``) reaches the benchmarks (issue 40): ``ngr --db COPY bench history``
ignored COPY and started a fresh ingest into its own cache under ``.ngr/bench/history`` (9 minutes on a
real history); ``bench code``, ``bench retrieval``, ``bench ask --dataset`` and ``bench learning`` did the
same.  Now a benchmark builds or reuses the command's own ``--db``, else the global one, else its cache.
Real ``ngr`` processes in a working folder of their own, so a cache written there would be seen."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys

import pytest

from git_fixtures import Repo


def _ngr(cwd, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--embedder", "hashing:64", *args]
    e = {k: v for k, v in os.environ.items() if k != "NGR_DB"}
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=300, env={**e, **(env or {})})


def _commits(db) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM nodes WHERE type = 'commit'").fetchone()[0]
    finally:
        con.close()


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "tool")
    o = r.commit("route: add multipath weights", {"route.c": "int route_weight_table;\n", "README": "tool\n"})
    r.commit("link: print statistics", {"link.c": "long link_stats_counter;\n"})
    r.commit(f'route: weights overflow\n\nFixes: {o[:12]} ("route: add multipath weights")', {"route.c": "long w;\n"})
    return r


@pytest.fixture
def work(tmp_path):
    w = tmp_path / "work"
    w.mkdir()
    return w


HISTORY = ("bench", "history", "--system", "paths", "--no-learning", "--limit", "1", "--json")


def test_bench_history_uses_the_global_db_and_writes_no_cache(repo, work, tmp_path):
    db = tmp_path / "copy.db"
    r = _ngr(work, "--db", str(db), *HISTORY, "--repo", str(repo.path))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["db"] == str(db)
    assert _commits(db) == 3
    assert not (work / ".ngr").exists(), "a cache store was built beside the --db given"
    # the same through NGR_DB
    env_db = tmp_path / "env.db"
    r = _ngr(work, *HISTORY, "--repo", str(repo.path), env={"NGR_DB": str(env_db)})
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["db"] == str(env_db) and _commits(env_db) == 3
    assert not (work / ".ngr").exists()


def test_the_commands_own_db_wins_over_the_global_one(repo, work, tmp_path):
    glob, own = tmp_path / "global.db", tmp_path / "own.db"
    r = _ngr(work, "--db", str(glob), *HISTORY, "--repo", str(repo.path), "--db", str(own))
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["db"] == str(own) and _commits(own) == 3
    assert not glob.exists() and not (work / ".ngr").exists()


def test_without_any_db_the_cache_is_used_as_before(repo, work):
    r = _ngr(work, *HISTORY, "--repo", str(repo.path))
    assert r.returncode == 0, r.stderr
    path = json.loads(r.stdout)["db"]
    assert path.startswith(".ngr/bench/history/tool-") and (work / path).exists()


def test_bench_code_uses_the_global_db(repo, work, tmp_path):
    db = tmp_path / "code.db"
    r = _ngr(work, "--db", str(db), "bench", "code", "--repo", str(repo.path), "--n", "2", "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["db"] == str(db) and _commits(db) == 3
    assert not (work / ".ngr").exists()


@pytest.fixture
def dataset(tmp_path):
    ds = tmp_path / "tiny"
    ds.mkdir()
    passages = [
        {"id": k, "title": f"Topic {k}", "text": f"Passage {k}: widget {k % 3}, gadget {k % 5}."} for k in range(12)
    ]
    queries = [{"qid": f"q{k}", "question": f"widget {k % 3} gadget {k % 5}?", "gold_ids": [k]} for k in range(8)]
    (ds / "corpus.jsonl").write_text("\n".join(json.dumps(p) for p in passages))
    (ds / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in queries))
    return ds


def _passages(db) -> int:
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM nodes WHERE type = 'passage'").fetchone()[0]
    finally:
        con.close()


def test_bench_retrieval_uses_the_global_db(work, dataset, tmp_path):
    db = tmp_path / "ret.db"
    r = _ngr(work, "--db", str(db), "bench", "retrieval", "--dataset", str(dataset), "--system", "bm25", "--json")
    assert r.returncode == 0, r.stderr
    assert _passages(db) == 12
    assert not (work / ".ngr").exists()


def test_bench_learning_builds_its_template_in_the_global_db(work, dataset, tmp_path):
    db = tmp_path / "learn.db"
    r = _ngr(work, "--db", str(db), "bench", "learning", "--dataset", str(dataset), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["n_passages"] == 12
    assert _passages(db) == 12  # the template it copies; each run works on a private copy
    assert not (work / ".ngr").exists()
