"""Never confidently wrong when part of a count or a period was not read: "how many docker pulls" is not the
number of commits, and "between March and June 2025" is not the whole history (or the whole year) — the
answer says what was not understood instead (ask/shapes/counts.py ``_unread_count``, registry ``_ignored``),
while counts of commits, people, PRs and of a topic the question names stay exact."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source

Y2024 = 1_704_153_600  # 2024-01-02


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("unread") / "sw")
    for k in range(6):
        r.t = Y2024 + k * 45 * 86400  # one commit every 45 days through 2024
        r.commit(f"Fix a bug in module {k}" if k % 2 else f"Tidy module {k}", {f"lib/m{k}.c": f"{k}\n"})
    e = ngr.open(tmp_path_factory.mktemp("db") / "u.db", embedder="hashing")
    sync_source(e, "git", str(r.path))
    yield e
    e.close()


@pytest.mark.parametrize(
    "question", ["How many docker pulls does the image have?", "How many release tags are there in total?"]
)
def test_a_count_of_something_git_does_not_count_is_said_not_answered(eng, question):
    res = eng.ask(question)
    assert res["answer"].startswith("Not understood: what 'How many ")
    assert "6" not in res["answer"].split("—")[0]  # not the number of commits


def test_counts_of_commits_people_and_a_named_topic_stay_exact(eng):
    assert eng.ask("How many commits are there?")["result"]["value"] == 6
    assert eng.ask("How many times was lib/m1.c changed?")["result"]["value"] == 1
    assert eng.ask("How many bug fixes are there?")["result"]["value"] == 3
    assert eng.ask("How many authors are there?")["result"]["value"] == 1


def test_time_words_no_reading_took_turn_the_answer_into_a_search(eng):
    res = eng.ask("How many commits touched lib/ between Mar and the end of June 2024?")
    assert res["route"]["mode"] == "vector"
    assert "does not read the time words 'Mar'" in res["route"]["reason"]  # ("June 2024" is read)
    months = eng.ask("How many commits touched lib/ between March and June 2024?")
    assert months["result"]["value"] == 3  # Apr 1, May 16, Jun 30
    rest = eng.ask("How many commits touched lib/ in the better half of 2024?")  # a half no reading takes
    assert rest["route"]["mode"] == "vector" and "'half'" in rest["route"]["reason"]
    half = eng.ask("How many commits touched lib/ in the first half of 2024?")  # read (ask/year_parts.py)
    assert half["result"]["value"] == 5  # Jan 2, Feb 16, Apr 1, May 16, Jun 30; not Aug 14
    assert eng.ask("How many commits touched lib/ in 2024?")["result"]["value"] == 6  # a period it reads
