"""Diff-aware git ingest (READER_VERSION 8): hunks, renames and pickaxe code terms in commit metadata,
PR branch commits `part_of` their PR, damaged object stores, and the source name a repository gives.
Real repositories made in the test, real SQLite stores."""

from __future__ import annotations

import io
import shutil
import subprocess

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import git_log, sync_source
from neurongraph.ingest.git import READER_VERSION, read_git, reader_key

BODY = "".join(f"int line_{i};\n" for i in range(10))


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "gadget")
    r.c1 = r.commit("Add the core", {"src/core.c": BODY, "README": "hello\n"})
    r.c2 = r.commit(
        "Add ensure_sync",
        {"src/core.c": BODY + 'void ensure_sync(void) { log("--sync-now failed"); }\n'},
    )
    moved = 'void ensure_sync(void) { log("--sync-now failed"); }\n' + BODY.replace("line_3;", "line_three;")
    r.c3 = r.commit("Move ensure_sync to the top", {"src/core.c": moved})
    r.git("mv", "src/core.c", "src/main.c")
    r.c4 = r.commit("Rename core.c", {"src/main.c": moved.replace("ensure_sync", "ensure_flush")})
    return r


def test_hunks_renames_and_code_terms(repo):
    b = read_git(repo.path)
    md = {n.id.removeprefix("commit:"): n.metadata for n in b.nodes if n.type == "commit"}
    # exactly git's -U0 numbers, keyed by the new path
    assert md[repo.c1]["hunks"] == {"README": [[0, 0, 1, 1]], "src/core.c": [[0, 0, 1, 10]]}
    assert md[repo.c2]["hunks"] == {"src/core.c": [[10, 0, 11, 1]]}
    assert md[repo.c2]["code"] == {"added": ["--sync-now", "ensure_sync", "failed", "log"], "removed": []}
    # a token moved within a file is in neither side; only the renamed line_3 counts
    assert md[repo.c3]["code"] == {"added": ["line_three"], "removed": ["line_3"]}
    assert md[repo.c3]["hunks"]["src/core.c"] == [[0, 0, 1, 1], [4, 1, 5, 1], [11, 1, 11, 0]]
    assert md[repo.c4]["renames"] == [["src/core.c", "src/main.c"]]
    assert md[repo.c4]["code"] == {"added": ["ensure_flush"], "removed": ["ensure_sync"]}
    assert md[repo.c4]["files"] == [{"path": "src/main.c", "added": 1, "deleted": 1}]
    assert "renames" not in md[repo.c2] and "code_truncated" not in md[repo.c2]
    # git's own word on whole files: created (c1), and none for a change or a rename with edits
    assert md[repo.c1]["files"] == [
        {"path": "README", "added": 1, "deleted": 0, "status": "A"},
        {"path": "src/core.c", "added": 10, "deleted": 0, "status": "A"},
    ]
    assert md[repo.c1]["file_status"] == 1 and "status" not in md[repo.c2]["files"][0]
    assert READER_VERSION == 9


def test_deleted_binary_and_empty_files_have_a_status(repo):
    """A binary or an empty file has no hunk to read: git's "deleted file mode" still says it went."""
    (repo.path / "logo.png").write_bytes(bytes(range(256)) * 4)
    (repo.path / "EMPTY").write_text("")
    repo.git("add", "logo.png", "EMPTY")
    added = repo.commit("Add a logo and an empty marker")
    repo.git("rm", "-q", "logo.png", "EMPTY")
    gone = repo.commit("Drop the logo and the marker")
    md = {n.id.removeprefix("commit:"): n.metadata for n in read_git(repo.path).nodes if n.type == "commit"}
    assert {f["path"]: f.get("status") for f in md[added]["files"]} == {"EMPTY": "A", "logo.png": "A"}
    assert {f["path"]: (f["added"], f.get("status")) for f in md[gone]["files"]} == {
        "EMPTY": (0, "D"),
        "logo.png": (None, "D"),
    }
    assert "EMPTY" not in md[gone].get("hunks", {})


def test_big_files_caps_and_chunked_stream(repo, monkeypatch):
    repo.c5 = repo.commit("Vendor a table", {"vendor/t.c": "".join(f"int tbl_{i};\n" for i in range(60))})
    monkeypatch.setattr(git_log, "MAX_CODE_LINES", 50)  # the ~5,000-line rule, scaled down
    monkeypatch.setattr(git_log, "MAX_CODE_TERMS", 2)
    monkeypatch.setattr(git_log, "MAX_BULK_TERMS", 40)
    monkeypatch.setattr(git_log, "_CHUNK", 7)  # records cut across many reads
    md = {n.id.removeprefix("commit:"): n.metadata for n in read_git(repo.path).nodes if n.type == "commit"}
    big = md[repo.c5]
    assert big["hunks"] == {"vendor/t.c": [[0, 0, 1, 60]]} and big["code_skipped"] == 1
    # the big file's tokens are kept apart, under their own cap (the largest count changes, then by name)
    assert big["code"]["added"] == [] and big["bulk_truncated"] is True and "code_truncated" not in big
    assert len(big["code"]["bulk_added"]) == 40 and big["code"]["bulk_removed"] == []
    assert md[repo.c2]["code"]["added"] == ["ensure_sync", "failed"] or md[repo.c2]["code_truncated"] is True
    assert md[repo.c2]["code_truncated"] is True and len(md[repo.c2]["code"]["added"]) == 2
    monkeypatch.setattr(git_log, "MAX_HUNKS_FILE", 2)
    md = {n.id.removeprefix("commit:"): n.metadata for n in read_git(repo.path).nodes if n.type == "commit"}
    assert md[repo.c3]["hunks"]["src/core.c"] == [[0, 0, 1, 1], [4, 1, 5, 1]] and md[repo.c3]["hunks_truncated"]


def test_records_split_at_the_marker_only():
    m = git_log.MARK
    data = m + b"a\x1e\x1fb" + m + b"second" + m + b"x" * 5
    for size in (1, 3, 64):
        monkey = git_log._CHUNK
        try:
            git_log._CHUNK = size
            assert list(git_log._records(io.BytesIO(data))) == [b"a\x1e\x1fb", b"second", b"xxxxx"]
        finally:
            git_log._CHUNK = monkey


def test_branch_commits_are_part_of_their_pr(repo, tmp_path):
    repo.git("checkout", "-q", "-b", "feature")
    f1 = repo.commit("Feature part one", {"src/f.c": "int f1;\n"})
    repo.git("checkout", "-q", "main")
    m0 = repo.commit("Mainline work", {"src/m.c": "int m;\n"})
    repo.git("checkout", "-q", "feature")
    repo.t += 3600
    repo.git("merge", "-q", "--no-ff", "main", "-m", "Merge branch 'main' into feature")
    back = repo.git("rev-parse", "HEAD")
    f2 = repo.commit("Feature part two", {"src/f.c": "int f2;\n"})
    repo.git("checkout", "-q", "main")
    repo.t += 3600
    repo.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #7 from ada/feature\n\nThe feature")
    merge = repo.git("rev-parse", "HEAD")
    want = set(repo.git("rev-list", f"{merge}^1..{merge}^2").split())
    assert want == {f1, back, f2}
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)
        assert s["adapter"]["part_of"] == 3
        rows = eng.store.conn.execute(
            "SELECT s.id, d.id, e.meta FROM edges e JOIN nodes s ON s.idx=e.src JOIN nodes d ON d.idx=e.dst "
            "JOIN relations r ON r.id=e.rel_id WHERE r.name='part_of'"
        ).fetchall()
        assert {(a, b) for a, b, _ in rows} == {("commit:" + c, "pr:7") for c in want}
        assert all(f'"owner": "commit:{merge}"' in m for _, _, m in rows)  # retracted with the merge commit
        assert ("commit:" + m0, "pr:7") not in {(a, b) for a, b, _ in rows}
        # merged_in keeps its meaning: only the merge commit
        merged = eng.store.conn.execute(
            "SELECT s.id FROM edges e JOIN nodes s ON s.idx=e.src JOIN relations r ON r.id=e.rel_id "
            "WHERE r.name='merged_in'"
        ).fetchall()
        assert merged == [("commit:" + merge,)]
    from neurongraph.schema.registry import BUILTIN_RELATIONS

    assert BUILTIN_RELATIONS["part_of"].directed


def test_missing_object_is_skipped_and_named(repo, tmp_path):
    blob = repo.git("rev-parse", f"{repo.c2}:src/core.c")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with ngr.open(tmp_path / "d.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)
        a = s["adapter"]
        # c2 wrote the blob, c3 diffs against it: both cannot be diffed
        assert set(a["unreadable"]) == {repo.c2, repo.c3} and a["unreadable_commits"] == 2
        named = {i["item"]: i["reason"] for i in s["skipped_items"]}
        assert f"unable to read object {blob}" in named["commit:" + repo.c2]
        for c in (repo.c1, repo.c2, repo.c3, repo.c4):
            assert eng.get_node("commit:" + c) is not None
        broken = eng.get_node("commit:" + repo.c2)["metadata"]
        assert broken["unreadable"].startswith("unable to read") and "hunks" not in broken
        assert [f["path"] for f in broken["files"]] == ["src/core.c"]  # names still read from the trees
        assert eng.get_node("commit:" + repo.c4)["metadata"]["code"]["added"] == ["ensure_flush"]


def test_source_name_survives_another_folder(repo, tmp_path):
    with ngr.open(tmp_path / "n.db", embedder="hashing") as eng:
        first = sync_source(eng, "git", repo.path)
        assert first["source"] == "gadget"
        copy = tmp_path / "elsewhere"
        shutil.copytree(repo.path, copy)  # no remote: the store's name for the root commit
        again = sync_source(eng, "git", copy)
        assert again["source"] == "gadget" and again["new_nodes"] == again["updated_nodes"] == 0
        clone = tmp_path / "checkout-2"
        subprocess.run(["git", "clone", "-q", str(repo.path), str(clone)], check=True)  # remote .../gadget
        third = sync_source(eng, "git", clone)
        assert third["source"] == "gadget" and third["new_nodes"] == third["updated_nodes"] == 0
    with ngr.open(tmp_path / "fresh.db", embedder="hashing") as eng:
        assert sync_source(eng, "git", copy)["source"] == "elsewhere"  # a brand-new store: the folder


def test_remote_names(tmp_path, repo):
    repo.git("remote", "add", "upstream", "https://git.kernel.org/pub/scm/network/iproute2/iproute2.git")
    assert read_git(repo.path).source == "iproute2/iproute2"  # the last two parts: never a bare name
    repo.git("remote", "add", "origin", "git@github.com:acme/widget-kit.git")
    assert read_git(repo.path).source == "acme/widget-kit"


def test_a_store_of_the_previous_reader_is_read_once_without_reembedding(repo, tmp_path):
    with ngr.open(tmp_path / "v.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        eng.store.set_meta(reader_key("gadget"), "2")
        again = sync_source(eng, "git", repo.path)
        assert again["adapter"]["full_reread"] and again["adapter"]["commits"] == 4
        assert again["embedded"] == 0 and again["new_nodes"] == 0
        assert eng.store.get_meta(reader_key("gadget")) == str(READER_VERSION)
        assert sync_source(eng, "git", repo.path)["adapter"]["up_to_date"]


def test_many_failures_read_the_rest_by_names_in_one_stream(repo, monkeypatch):
    blob = repo.git("rev-parse", f"{repo.c1}:src/core.c")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    monkeypatch.setattr(git_log, "MAX_RESTARTS", 0)
    commits, lost = git_log.read_log(repo.path, ["HEAD"])
    assert [c.sha for c in commits] == repo.git("rev-list", "HEAD").split() and lost == []
    failed = [c for c in commits if c.unreadable]
    assert failed and all(c.unreadable.startswith("diffs not read after repeated failures") for c in failed)
    assert all(c.files and c.files[0][1] is None for c in failed)  # names from the trees, no counts


def test_a_missing_commit_object_ends_the_history_there_and_is_named(repo, tmp_path):
    (repo.path / ".git" / "objects" / repo.c1[:2] / repo.c1[2:]).unlink()
    with ngr.open(tmp_path / "c.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)  # no exception: a sync never fails for unreadable objects
        assert s["adapter"]["unreadable_commits"] >= 1
        assert any(f"unable to read object {repo.c1}" in i["reason"] for i in s["skipped_items"])
        assert eng.get_node("commit:" + repo.c4) is not None


def test_merge_hunks_against_the_second_parent(repo):
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("Topic work", {"src/t.c": "int t1;\nint t2;\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Main work", {"src/m.c": "int m;\n"})
    repo.t += 3600
    repo.git("merge", "-q", "--no-ff", "topic", "-m", "Merge branch 'topic'")
    merge = repo.git("rev-parse", "HEAD")
    p2 = repo.git("rev-parse", "HEAD^2")
    got = git_log.read_merge_hunks(repo.path, [(merge, p2)])
    # P2 -> M: the merge adds main's src/m.c to what the topic branch had
    assert got == {merge: {"src/m.c": [[0, 0, 1, 1]]}}
    md = {n.id: n.metadata for n in read_git(repo.path).nodes}
    assert md["commit:" + merge]["hunks_p2"] == {"src/m.c": [[0, 0, 1, 1]]}
    assert md["commit:" + merge]["hunks"] == {"src/t.c": [[0, 0, 1, 2]]}  # first parent: what the branch brought
    # a merge whose tree is its second parent's has empty hunks, and is still listed
    repo.git("checkout", "-q", "topic")
    repo.t += 3600
    repo.git("merge", "-q", "--no-ff", "main", "-m", "Merge branch 'main' into topic")
    back = repo.git("rev-parse", "HEAD")
    assert git_log.read_merge_hunks(repo.path, [(back, repo.git("rev-parse", "HEAD^2"))]) == {back: {}}
