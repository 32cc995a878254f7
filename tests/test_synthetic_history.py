"""benchmarks/synthetic_history.py: a deterministic git history built from a source history's vocabulary
that the real git ingest reads (commits, merge PRs, Fixes: by quoted subject).  The source is a real git
repository made in the test; the synthetic one is written by git fast-import; a real SQLite store."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from git_fixtures import Repo
from neurongraph.cli.main import app

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "synthetic_history.py"


def _source(tmp_path: Path) -> Path:
    r = Repo(tmp_path / "source")
    r.commit("netdev: Fix the vlan offload flags on resume", {"lib/netdev.c": "int a;\n"})
    r.commit(
        "ofproto: Add a counter for dropped upcalls\n\nThe counter shows how many upcalls were lost.",
        {"ofproto/ofproto.c": "int b;\n", "tests/ofproto.at": "AT\n"},
    )
    r.commit("docs: Describe the tunnel options and their defaults", {"Documentation/tunnels.rst": "x\n"})
    return r.path


def _generate(src: Path, out: Path, commits: int, seed: int = 3) -> str:
    subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--commits",
            str(commits),
            "--out",
            str(out),
            "--seed",
            str(seed),
            "--source",
            str(src),
        ],
        check=True,
        capture_output=True,
    )
    return subprocess.run(
        ["git", "-C", str(out), "rev-parse", "HEAD"], check=True, capture_output=True, text=True
    ).stdout.strip()


def test_the_same_seed_gives_the_same_history_and_the_git_ingest_reads_it(tmp_path):
    src = _source(tmp_path)
    head = _generate(src, tmp_path / "a", 120)
    assert head == _generate(src, tmp_path / "b", 120)  # deterministic: same commits, same sha
    assert head != _generate(src, tmp_path / "c", 120, seed=4)
    log = subprocess.run(
        ["git", "-C", str(tmp_path / "a"), "log", "--format=%s"], check=True, capture_output=True, text=True
    ).stdout.splitlines()
    assert len(log) == 120 and sum(s.startswith("Merge pull request #") for s in log) == 3
    assert all(": " in s for s in log if not s.startswith("Merge"))  # area: text, areas from the source
    r = CliRunner().invoke(
        app,
        ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ingest", "git", str(tmp_path / "a"), "--json"],
        catch_exceptions=False,
    )
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["adapter"]["commits"] == 120 and s["written_node_types"]["commit"] == 120
    assert s["written_node_types"].get("pull_request", 0) == 3  # the merges' PR placeholders
    rel = s["written_edge_relations"]
    assert rel["touches"] >= 120 and rel["merged_in"] == 3
    assert rel.get("fixes", 0) >= 1  # Fixes: <not a sha> ("subject") found by the quoted subject


def test_a_non_empty_target_is_refused(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("x")
    p = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--commits",
            "5",
            "--out",
            str(tmp_path / "full"),
            "--source",
            str(_source(tmp_path)),
        ],
        capture_output=True,
        text=True,
    )
    assert p.returncode == 2 and "not empty" in p.stderr
