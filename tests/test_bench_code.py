"""`ngr bench code`: identifier sampling from the code at HEAD, gold = the oldest `git log -S` commit (the
one-pass search agrees with git itself), and a run through the CLI, on a real repository made in the test."""

from __future__ import annotations

import json

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.bench.code_bench import (
    distinctive,
    head_identifiers,
    introducing_commits,
    pickaxe_oldest,
    run_code_bench,
)
from neurongraph.ingest.git import GitRepo


def _repo(tmp_path):
    r = Repo(tmp_path / "lib")
    r.base = r.commit("initial layout", {"README": "a library\n", "core.c": "int main_loop(void);\n"})
    r.sync = r.commit("app: flush on exit", {"app.py": "def ensure_sync(x):\n    return x\n"})
    r.git("checkout", "-q", "-b", "feature")
    r.camel = r.commit("parser: tokens", {"parse.js": "function readToken() {}\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch feature")
    r.moved = r.commit("app: call it twice", {"app.py": "def ensure_sync(x):\n    return x\n\nensure_sync(1)\n"})
    r.count = r.commit("core: loop", {"core.c": "int main_loop(void);\nint main_loop_count;\n"})
    r.commit("spread the name", {f"f{k}.c": "int main_loop(void);\n" for k in range(4)})
    return r


def test_distinctive_identifiers_only():
    assert distinctive("ensure_sync") and distinctive("readToken") and distinctive("BPF_MAP_TYPE")
    assert not distinctive("return") and not distinctive("a_b") and not distinctive("_private")
    assert not distinctive("abcdefgh")  # a plain word


def test_sampling_and_gold_agree_with_git(tmp_path):
    r = _repo(tmp_path)
    g = GitRepo(r.path)
    ids = head_identifiers(g)
    assert ids["ensure_sync"] == 1 and ids["readToken"] == 1
    assert "main_loop" not in ids  # in 6 files at HEAD: not distinctive of one change
    gold = introducing_commits(g, ["ensure_sync", "readToken", "main_loop_count", "main_loop"])
    # the oldest commit whose diff changes the identifier's count; a branch commit, not its merge
    assert gold == {"ensure_sync": r.sync, "readToken": r.camel, "main_loop_count": r.count, "main_loop": r.base}
    for x, sha in gold.items():
        assert pickaxe_oldest(g, x) == sha


def test_run_and_cli(tmp_path):
    r = _repo(tmp_path)
    with ngr.open(tmp_path / "c.db", embedder="hashing") as eng:
        res = run_code_bench(r.path, eng, n=50, seed=1, check=2)
    assert res["identifiers"] == len(res["per_identifier"]) >= 3
    assert res["gold_check"]["checked"] == 2 and res["gold_check"]["agree_with_git_log_S"] == 2
    for m in res["wordings"].values():
        assert 0 <= m["rank1"] <= m["recall@5"] <= 1 and 0 <= m["mrr"] <= 1
    for row in res["per_identifier"]:
        assert set(row["rank"]) == {"question", "bare"}
    json.dumps(res, allow_nan=False)

    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    out = tmp_path / "code.json"
    args = ["--embedder", "hashing", "bench", "code", "--repo", str(r.path), "--db", str(tmp_path / "d.db")]
    got = CliRunner().invoke(app, [*args, "--n", "2", "--out", str(out), "--json"])
    assert got.exit_code == 0, got.output
    assert json.loads(out.read_text())["identifiers"] == 2
    bad = CliRunner().invoke(app, [*args, "--n", "zero", "--json"])
    assert bad.exit_code == 2 and json.loads(bad.stdout)["error"]["code"] == "invalid_argument"
