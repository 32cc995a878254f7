"""A stranger's repository read right: releases on a release branch, pull requests that are this repository's
(not a fork's), issue references as nodes, GitHub's reverts, and the release questions `ngr ask` answers on them.

One repository made in the test, shaped like a GitHub project: a main line with a squash merge and GitHub merge
commits of both titles, a contributor's branch that carries a merge made inside their fork, and a release branch
with a backport and a tag that main does not reach."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source


def _edges(eng, rel: str) -> set[tuple[str, str]]:
    ids = eng.store.relation_ids([rel])
    if not ids:
        return set()
    rows = eng.store.conn.execute(
        "SELECT s.id, d.id FROM edges e JOIN nodes s ON s.idx = e.src JOIN nodes d ON d.idx = e.dst WHERE e.rel_id = ?",
        (ids[rel],),
    ).fetchall()
    return {(a, b) for a, b in rows}


@pytest.fixture
def project(tmp_path) -> tuple[Repo, dict[str, str]]:
    r = Repo(tmp_path / "proj")
    c: dict[str, str] = {}
    c["root"] = r.commit("Initial import", {"core.py": "a\n", "old_locale.py": "x\n"})
    c["v1"] = r.commit("Add the parser (#3)", {"parser.py": "p\n"})
    r.git("tag", "-a", "1.0", "-m", "release 1.0")
    # a contributor's branch; inside their fork they merged their own PR #1 (a fork-internal number)
    r.git("checkout", "-q", "-b", "feature")
    c["f1"] = r.commit("Teach the parser PowerShell completion", {"parser.py": "p\nps\n"})
    r.git("checkout", "-q", "-b", "fork-topic")
    c["f2"] = r.commit("Tidy the completion script", {"complete.ps1": "x\n"})
    r.git("checkout", "-q", "feature")
    r.t += 60
    r.git("merge", "-q", "--no-ff", "fork-topic", "-m", "Merge pull request #1 from someone/unstable\n\nTidy")
    c["fork_merge"] = r.git("rev-parse", "HEAD")
    r.git("checkout", "-q", "main")
    r.t += 60
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Add PowerShell completion (#7)")  # GitHub's merge, titled
    c["m7"] = r.git("rev-parse", "HEAD")
    c["fix"] = r.commit("Handle an empty prompt suffix\n\nThis fixes #12. See #13 and other/repo#14.", {"b.py": "1\n"})
    c["drop"] = r.commit("Remove the old locale detection", {})
    r.git("rm", "-q", "old_locale.py")
    r.git("commit", "-q", "--amend", "--no-edit")
    c["drop"] = r.git("rev-parse", "HEAD")
    c["reverted"] = r.commit("Use shlex.quote for the editor (#20)", {"edit.py": "q\n"})
    c["revert"] = r.commit(
        'Revert "Use shlex.quote for the editor (#20)" (#21)\n\nReverts someone/proj#20\n\nBreaks less -FRSX.',
        {"edit.py": "\n"},
    )
    # the release branch: a backport and the release tag, off main's line
    r.git("checkout", "-q", "-b", "stable", c["v1"])
    c["backport"] = r.commit(
        f"Handle an empty prompt suffix\n\nThis fixes #12.\n\n(cherry picked from commit {c['fix']})", {"b.py": "1\n"}
    )
    r.git("tag", "-a", "1.1", "-m", "release 1.1")
    r.git("checkout", "-q", "main")
    r.git("branch", "-D", "feature", "fork-topic")
    r.git("tag", "-a", "2.0", "-m", "release 2.0")
    c["late"] = r.commit("Cache the parsed table", {"cache.py": "c\n"})
    r.git("checkout", "-q", "stable")
    c["late_pick"] = r.commit(f"Cache the parsed table\n\n(cherry picked from commit {c['late']})", {"cache.py": "c\n"})
    r.git("tag", "-a", "1.2", "-m", "release 1.2")
    r.git("checkout", "-q", "main")
    return r, c


def test_every_tag_is_read_and_the_refs_are_remembered(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", r.path)
        assert s["adapter"]["tags"] == 4  # 1.1 and 1.2 live on the release branch only: git log HEAD --tags
        assert eng.store.get_node("commit:" + c["backport"]) is not None
        assert eng.store.get_node("tag:1.1") is not None
        again = sync_source(eng, "git", r.path)
        assert again["adapter"]["up_to_date"] and again["new_nodes"] == 0
    with ngr.open(tmp_path / "notags.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path, tags=False)
        assert eng.store.get_node("commit:" + c["backport"]) is None and eng.store.get_node("tag:1.1") is None
        sync_source(eng, "git", r.path)  # remembered: still HEAD alone
        assert eng.store.get_node("tag:1.1") is None
        s = sync_source(eng, "git", r.path, refs=["stab*"], tags=False)  # a glob names the release branch
        assert eng.store.get_node("commit:" + c["backport"]) is not None and s["adapter"]["commits"] == 2


def test_a_fork_merge_is_no_pull_request_of_this_repository(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        assert eng.store.get_node("pr:1") is None
        fork = eng.store.get_node("commit:" + c["fork_merge"])
        assert fork.metadata["pr_elsewhere"] == 1 and fork.metadata["aggregate"] is True
        # GitHub's merge titled "Title (#7)" is PR 7, and the branch it merged is part of it
        part_of = _edges(eng, "part_of")
        assert {("commit:" + c[k], "pr:7") for k in ("f1", "f2", "fork_merge")} <= part_of
        assert ("commit:" + c["m7"], "pr:7") in _edges(eng, "merged_in")
        assert ("commit:" + c["v1"], "pr:3") in _edges(eng, "merged_in")  # a squash on the main line


def test_issue_references_are_nodes_with_typed_edges(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        fix = "commit:" + c["fix"]
        assert (fix, "issue:12") in _edges(eng, "fixes")
        assert (fix, "issue:13") in _edges(eng, "refs")
        assert eng.store.get_node("issue:14") is None  # another repository's number
        assert eng.store.get_node("issue:12").metadata["placeholder"] is True
        ans = eng.ask("which commit fixed issue #12?")
        assert fix in ans["refs"]


def test_github_reverts_link_the_reverted_commit_and_pr(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        reverts = _edges(eng, "reverts")
        assert ("commit:" + c["revert"], "commit:" + c["reverted"]) in reverts


def test_release_questions_read_the_tag_graph(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        first = eng.ask("which release first ships powershell completion?")
        assert first["refs"] == ["tag:2.0"]
        dropped = eng.ask("in which version did old_locale.py get dropped?")
        assert dropped["refs"] == ["tag:2.0"]
        held = eng.ask(f"which release first contained {c['v1'][:8]}?")
        assert held["refs"] == ["tag:1.0"]
        nothing = eng.ask("which release first ships the flux capacitor?")
        assert "tag:" not in " ".join(nothing["refs"])
        late = eng.ask(f"which release first contained {c['late'][:8]}?")  # in no release; its backport is
        assert late["refs"] == ["tag:1.2"] and "cherry-pick" in late["answer"]
        assert ("commit:" + c["late_pick"], "commit:" + c["late"]) in _edges(eng, "cherry_pick_of")
        between = eng.ask("what changed between 1.0 and 2.0? how many non-merge commits, and which ones")
        assert between["answer"].startswith("6 commits")  # f1, f2, fix, drop, reverted, revert (no merges)


def test_source_names_are_unique_per_repository(tmp_path):
    from neurongraph.ingest.git import GitRepo, url_name

    assert url_name("https://github.com/pallets/click.git") == "pallets/click"
    assert url_name("git@gitlab.com:group-a/proj.git") == "group-a/proj"
    assert url_name("ssh://git@host:2222/group-b/proj.git") == "group-b/proj"
    assert url_name("file:///srv/mirrors/repo") == "mirrors/repo"
    assert url_name("/srv/mirrors/repo/.git") == "mirrors/repo"
    names = set()
    for owner in ("one", "two"):  # two mirrors whose remotes end in the same bare name
        (tmp_path / owner).mkdir()
        upstream = Repo(tmp_path / owner / "repo")
        upstream.commit(f"start {owner}", {"a.txt": owner})
        clone = tmp_path / f"clone-{owner}"
        upstream.git("clone", "-q", str(upstream.path), str(clone))
        names.add(GitRepo(clone).name)
    assert names == {"one/repo", "two/repo"}


def test_a_misspelt_domain_word_is_read_as_meant_and_said():
    from neurongraph.ask.spelling import normalise

    assert normalise("gimme all the relases tagged last year") == (
        "gimme all the releases tagged last year",
        ["'relases' read as 'releases'"],
    )
    assert normalise("how many commmits did Merce make?")[0] == "how many commits did Merce make?"
    assert normalise("who toched it most recntly?")[0] == "who touched it most recently?"  # "most recently": last
    assert normalise("decently") == ("decently", [])
    assert normalise("what fixed issue 6898?") == ("what fixed issue #6898?", ["'issue 6898' read as 'issue #6898'"])
    assert normalise("which files did pull request no. 42 touch?")[0] == "which files did pull request #42 touch?"
    for kept in ("how many issues 2023 were fixed", "PR 12 files", "issue 3.5 of the magazine"):
        assert normalise(kept) == (kept, [])  # a year after a plural, a count, a version
    for kept in ("who reverted the merger", "src/relases/x.c", "Relases", "the change", "removes"):
        assert normalise(kept) == (kept, [])  # a word of its own, a path, a name, two candidates, a known form


def test_the_releases_of_a_period_are_tags(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("gimme all the relases tagged in 2023")
        assert out["result"]["shape"] == "tags" and {x["id"] for x in out["rows"]} == {
            "tag:1.0",
            "tag:1.1",
            "tag:2.0",
            "tag:1.2",
        }
        assert "'relases' read as 'releases'" in out["answer"]


def test_the_release_before_or_after_a_named_one_is_by_tag_time(project, tmp_path):
    r, c = project
    by_time = r.git("tag", "--sort=creatordate").split()
    with ngr.open(tmp_path / "n.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        before = eng.ask("which version was released right before 1.1?")
        assert [x["id"] for x in before["rows"]] == ["tag:" + by_time[by_time.index("1.1") - 1]]
        after = eng.ask("what release came after 1.1?")
        assert [x["id"] for x in after["rows"]] == ["tag:" + by_time[by_time.index("1.1") + 1]]
        assert eng.ask(f"which version came before {by_time[0]}?")["answer"].startswith("No tag before")
        assert eng.ask("which version was released before 9.9.9?")["route"]["mode"] != "graph"  # no such tag


def test_since_the_last_release_is_git_describe_on_the_default_branch(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("how many commits since the last release?")
        assert out["result"]["value"] == 1  # 2.0..HEAD: 1.2 is newer but on the release branch only
        assert "2.0" in out["answer"]
        newest = eng.ask("what is the latest release?")
        assert newest["refs"] == ["tag:1.2"]  # the newest tag of all, by its time


def test_what_a_named_commit_changed_says_what_the_commit_is(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask(f"what did {c['m7'][:7]} change? which files")
        assert "Add PowerShell completion (#7)" in out["answer"] and "commit:" + c["m7"] in out["refs"]


def test_who_wrote_a_name_that_looks_like_code_is_its_introducer(tmp_path):
    r = Repo(tmp_path / "code")
    r.commit("Start", {"pager.py": "def show(): pass\n"})
    r.author("Craig Writer")
    r.commit("Add a file-like pager", {"pager.py": "def show(): pass\ndef get_pager_file(): pass\n"})
    r.author("Ada Dev")
    r.commit("Document the pager", {"README": "the docs\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("who wrote mod.get_pager_file ?")
        assert out["answer"].startswith("Craig Writer — `get_pager_file` was introduced by")
        assert out["result"]["shape"] == "identifier_introduced"
        assert eng.ask("who wrote the docs?").get("result", {}).get("shape") != "identifier_introduced"


def test_trailers_name_reviewers_and_ackers(tmp_path):
    r = Repo(tmp_path / "trail")
    r.commit("Start", {"a.c": "x\n"})
    msg = "Fix the parser\n\nReviewed-by: Jo Reviewer <jo@x.org>\nAcked-by: Al Acker <al@x.org>"
    c1 = r.commit(msg, {"a.c": "1\n"})
    r.commit("Fix the lexer\n\nReviewed-by: Jo Reviewer <jo@x.org>\nReviewed-by: Kim Second <k@x.org>", {"a.c": "2\n"})
    r.commit("Tidy\n\nSigned-off-by: Ada Dev <ada@example.org>", {"a.c": "3\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        assert eng.store.get_node("commit:" + c1).metadata["reviewed_by"] == ["Jo Reviewer"]
        ranked = eng.ask("who reviews the most patches here (Reviewed-by)?")
        assert ranked["result"]["items"] == ["Jo Reviewer", "Kim Second"]
        assert ranked["answer"].startswith("2 people") and "Jo Reviewer: 2 commits" in ranked["answer"]
        assert eng.ask("who has the most Acked-by tags?")["result"]["items"] == ["Al Acker"]
        assert eng.ask(f"who acked {c1[:8]}?")["result"]["items"] == ["Al Acker"]
        assert eng.ask("who tested the most commits?")["answer"].startswith("No commit here carries a Tested-by")
        assert eng.ask("who wrote the most commits?")["result"]["shape"] != "trailer_ranking"


def test_shell_habits_and_why(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        assert eng.ask("wc -l parser.py at HEAD?")["answer"].startswith("2 — lines in parser.py")
        listed = eng.ask("git log b.py for 2023 - which commits?")
        assert {x["id"] for x in listed["rows"]} == {"commit:" + c["fix"]}  # main's history; merges left out
        assert eng.ask("git log b.py for 2031 - which commits?")["rows"] == []
        why = eng.ask(f"what did {c['revert'][:8]} change, and why?")
        assert "Breaks less -FRSX." in why["answer"]


def test_a_bare_name_of_a_moved_file_is_the_file_now(tmp_path):
    r = Repo(tmp_path / "moved")
    r.commit("Start", {"checkexpr.py": "a = 1\n"})
    r.git("rm", "-q", "checkexpr.py")
    r.commit("Move code into the package", {"pkg/checkexpr.py": "import os\nimport sys\n\n\ndef check():\n    pass\n"})
    r.author("Jo Later")
    last = r.commit("Infer more", {"pkg/checkexpr.py": "import os\nimport sys\n\n\ndef check():\n    return 1\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("who last touched checkexpr.py?")
        assert out["answer"].startswith("Jo Later") and out["refs"] == ["commit:" + last]
        assert "read as pkg/checkexpr.py" in out["answer"]


def test_quoted_subjects_name_commits_or_filter_them(tmp_path):
    r = Repo(tmp_path / "quoted")
    origin = r.commit("dpll: Add dpll command", {"dpll.c": "a\n"})
    r.commit("sync: latest changes from upstream", {"x.c": "1\n"})
    f1 = r.commit(f'dpll: fix the man page\n\nFixes: {origin[:12]} ("dpll: Add dpll command")', {"dpll.c": "b\n"})
    r.commit("sync: latest changes from upstream", {"x.c": "2\n"})
    f2 = r.commit(f'dpll: fix monitor mode\n\nFixes: {origin[:12]} ("dpll: Add dpll command")', {"dpll.c": "c\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("were there follow-up fixes to the original 'dpll: Add dpll command' patch? list them")
        assert set(out["refs"]) == {"commit:" + f1, "commit:" + f2}  # the fixes of it, not a two-hop chain
        out = eng.ask("which later commits fixed 'Add dpll command'?")  # its subject without the prefix
        assert set(out["refs"]) == {"commit:" + f1, "commit:" + f2}
        counted = eng.ask("how many 'sync: latest changes from upstream' commits were there in 2023?")
        assert counted["result"]["value"] == 2


def test_tags_on_a_branch_only_and_on_neither(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        q = "which tags are on the stable branch only and not on main? any on neither?"
        out = eng.ask(q)
        assert out["refs"] == ["tag:1.1", "tag:1.2"] and "'stable' is not synced" in out["answer"]
        sync_source(eng, "git", r.path, refs=["stable"])  # HEAD is still read, stable besides it
        out = eng.ask(q)
        assert out["refs"] == ["tag:1.1", "tag:1.2"]
        assert "on stable and not in HEAD's history: 1.1, 1.2" in out["answer"]
        assert "on neither HEAD's history nor stable: none" in out["answer"]
        assert eng.ask("how many commits since the last release?")["result"]["value"] == 1  # HEAD still read


def test_files_under_a_directory_now_are_git_ls_tree(tmp_path):
    r = Repo(tmp_path / "tree")
    r.commit("Start", {"pkg/a.py": "a\nb\nc\n", "pkg/b.py": "b\n", "pkg/empty.py": "", "docs/x.md": "x\n"})
    (r.path / "pkg" / "logo.png").write_bytes(b"\x89PNG\x00\x01binary")
    (r.path / "pkg" / "old.bin").write_bytes(b"\x00\x02old")
    r.git("add", "pkg/logo.png", "pkg/old.bin")
    r.commit("Add images")
    r.git("rm", "-q", "pkg/b.py", "pkg/old.bin")
    r.commit("Drop b and the old blob")
    r.git("mv", "pkg/a.py", "pkg/c.py")
    r.commit("Rename a to c")
    listed = r.git("ls-tree", "-r", "--name-only", "HEAD", "pkg").split()
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("how many files are under pkg/ right now?")
        assert out["result"]["value"] == len(listed) == 3  # c.py, empty.py, logo.png
        assert eng.ask("how many files are under pkg/?")["result"]["value"] == 3  # a directory asked now
        assert eng.ask("how many files were ever touched under pkg/?")["result"]["value"] == 6  # every path


def test_a_first_name_where_a_person_stands_and_the_last_one_of_a_count(project, tmp_path):
    r, c = project
    r.author("Guido Writer")
    g = r.commit("Support the new guard", {"guard.py": "g\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("when did guido last commit?")
        assert out["refs"] == ["commit:" + g] and "by Guido Writer" in out["answer"]
        merges = eng.ask("how many merge commits are there, and when was the last one?")
        assert merges["answer"].startswith("2 commits") and merges["refs"][0] == "commit:" + c["m7"]


def test_what_happened_to_a_file_and_plain_counts(project, tmp_path):
    r, c = project
    r.git("mv", "parser.py", "lib_parser.py")
    moved = r.commit("Move the parser")
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("what happened to parser.py? I can't find it anymore")
        assert out["refs"] == ["commit:" + moved] and "renamed to lib_parser.py" in out["answer"]
        gone = eng.ask("what happened to old_locale.py?")  # when it was added, and removed
        assert gone["refs"] == ["commit:" + c["root"], "commit:" + c["drop"]] and ": removed it" in gone["answer"]
        assert eng.ask("how many lines in lib_parser.py?")["answer"].startswith("2 — lines in lib_parser.py")
        last = eng.ask("when was the most recent merge commit?")
        assert last["refs"] == ["commit:" + c["m7"]]


def test_one_change_named_by_a_description_is_said_not_counted(project, tmp_path):
    r, c = project
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("how many files did the powershell completion PR touch?")
        assert out["answer"].startswith("Not understood: which change") and not out["refs"] and not out["rows"]
        topic = eng.ask("list the commits about powershell (completion scripts)")  # an aside is not required
        assert "commit:" + c["f1"] in topic["refs"]


def test_a_directory_move_from_a_to_b(tmp_path):
    r = Repo(tmp_path / "mv")
    r.commit("Start", {"pkg/core.py": "import os\n\n\ndef run():\n    return 1\n", "pkg/util.py": "x = 1\ny = 2\n"})
    (r.path / "src").mkdir()
    r.git("mv", "pkg", "src/pkg")
    moved = r.commit("move to src directory")
    r.commit("Tidy", {"src/pkg/util.py": "x = 1\ny = 3\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("when did the package move from pkg/ to src/pkg/?")
        assert out["result"]["shape"] == "dir_moved" and out["refs"] == ["commit:" + moved]


def test_a_merged_revert_pr_is_not_a_revert_of_its_own(tmp_path):
    """GitHub merges a revert PR as "Merge pull request #N from …/revert-…", with the PR's title ('Revert "X"')
    as its body's first line, which the ingest takes for its title; git's subject says merge, and `git log
    --format=%s` counts one revert here, so does the answer."""
    r = Repo(tmp_path / "rv")
    x = r.commit("Use the fast parser", {"p.c": "fast\n"})
    r.git("checkout", "-q", "-b", "revert-x")
    r.commit(f'Revert "Use the fast parser"\n\nThis reverts commit {x}.', {"p.c": "slow\n"})
    r.git("checkout", "-q", "main")
    r.t += 60
    message = 'Merge pull request #5 from someone/revert-x\n\nRevert "Use the fast parser"'
    r.git("merge", "-q", "--no-ff", "revert-x", "-m", message)
    with ngr.open(tmp_path / "rv.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        subjects = r.git("log", "--format=%s").splitlines()
        assert sum(s.startswith("Revert") for s in subjects) == 1
        assert eng.ask("How many revert commits are there?")["result"]["value"] == 1


def test_issue_urls_of_a_clone_of_a_local_path_or_a_bundle_are_its_own(tmp_path):
    """A clone whose remote is a local path (or a bundle) is named by its folders (``mirrors/proj``), which name
    no owner: an issue URL into ``…/proj/issues/N`` is still this repository's issue; a URL into a repository of
    another name is not. With a hosted remote the owner counts too."""
    (tmp_path / "mirrors").mkdir()
    up = Repo(tmp_path / "mirrors" / "proj")
    up.commit("Initial import", {"a.c": "a\n"})
    fix = up.commit(
        "Fix OOB read in the dumper\n\nCloses: https://github.com/acme/proj/issues/928\n"
        "See https://github.com/other/thing/issues/5",
        {"a.c": "b\n"},
    )
    clone = tmp_path / "clone"
    up.git("clone", "-q", str(up.path), str(clone))
    with ngr.open(tmp_path / "local.db", embedder="hashing") as eng:
        sync_source(eng, "git", clone)
        assert ("commit:" + fix, "issue:928") in _edges(eng, "fixes")
        assert eng.store.get_node("issue:5") is None  # another repository's number
        assert "commit:" + fix in eng.ask("which commit closed github issue 928?")["refs"]
    up.git("-C", str(clone), "remote", "set-url", "origin", "https://github.com/someone-else/proj.git")
    with ngr.open(tmp_path / "hosted.db", embedder="hashing") as eng:
        sync_source(eng, "git", clone)
        assert eng.store.get_node("issue:928") is None  # acme/proj is not someone-else/proj
