""" "When did X start?" puts the earliest change whose subject names X first (scores.origin), not the later
follow-ups that match X as well; a topic in plain words, a question that asks no beginning, and changes the
search may not show (``as_of``) are left to the ranking."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source
from neurongraph.retrieval.origin import asks_origin


def test_a_beginning_is_asked_with_when_and_a_word_of_beginning():
    assert asks_origin("when did Geneve support begin?")
    assert asks_origin("when was TypeGuard support first added?")
    assert asks_origin("which commit introduced ParamSpec?")
    assert asks_origin("who wrote the first DPDK support?")
    assert not asks_origin("when was the Geneve checksum fix added?")  # a fix, not a beginning
    assert not asks_origin("Geneve crashes on first packet")  # no when / which question


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("origin") / "sw")
    r.commit("datapath: Add support for Geneve tunneling.", {"src/geneve.c": "a\n"})
    r.commit("Add string template helpers", {"src/tmpl.c": "t\n"})
    for k in range(12):  # the follow-ups: each names Geneve, all newer
        r.commit(f"geneve: Fix Geneve support for option {k}.", {f"src/geneve{k}.c": f"{k}\n"})
    r.commit("Support template strings in the parser", {"src/tmpl.c": "u\n"})
    for k in range(30):  # a history large enough that 'geneve' is a rare word
        r.commit(f"misc: tidy module {k}", {f"src/m{k}.c": f"{k}\n"})
    e = ngr.open(tmp_path_factory.mktemp("db") / "t.db", embedder="hashing")
    sync_source(e, "git", str(r.path))
    yield e
    e.close()


def test_when_did_x_start_gets_its_first_change_first(eng):
    res = eng.search("when did Geneve support begin?", 5, record=False)
    assert res.hits[0].title == "datapath: Add support for Geneve tunneling."
    assert res.hits[0].scores["origin"] == 1.0
    line, value = res.hits[0].formula()
    assert "earliest change" in line and value == pytest.approx(res.hits[0].scores["final"])  # the line adds up
    assert all(h.scores["origin"] == 0.0 for h in res.hits[1:])


def test_what_is_not_read_is_left_to_the_ranking(eng):
    plain = eng.search("when did the parser start to support template strings?", 5, record=False)
    assert all("origin" not in h.scores for h in plain.hits)  # plain words: not read
    fix = eng.search("when was the Geneve fix for option 3 added?", 5, record=False)
    assert all("origin" not in h.scores for h in fix.hits)
    first = eng.search("when did Geneve support begin?", 5, record=False).hits[0]
    hidden = eng.search("when did Geneve support begin?", 5, record=False, as_of=first.meta["date"] + "T00:00:00Z")
    assert all(h.id != first.id for h in hidden.hits)  # as_of before the first change hides it
