"""A repository is someone else's data (issue 40): what it holds cannot forge commits, stop a sync, run a
program or overwrite good data with worse.  Each test builds a real repository; the expectations come from
git itself, one commit at a time (never from the reader's parser)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source
from neurongraph.ingest.git import GitRepo
from neurongraph.ingest.git_blame import SourceBlame, blame_with_git
from neurongraph.ingest.git_log import path_text

OLD_MARK = b"\x1e\x1dngr\x1f"
NGR = [sys.executable, "-m", "neurongraph.cli.main"]


def _git(path: Path, *args: str, input: bytes | None = None, env: dict | None = None) -> bytes:
    return subprocess.run(
        ["git", "-C", str(path), *args], input=input, capture_output=True, check=True, env=env or os.environ
    ).stdout


def _raw_commit(path: Path, tree: str, parents: list[str], author: bytes, message: bytes, date: bytes) -> str:
    """A commit object written as given (``hash-object --literally``): any author bytes, any date."""
    head = b"tree " + tree.encode() + b"\n" + b"".join(b"parent " + p.encode() + b"\n" for p in parents)
    head += b"author " + author + b" " + date + b" +0000\ncommitter C Mitter <c@example.org> 1700000000 +0000\n"
    out = _git(path, "hash-object", "-t", "commit", "-w", "--literally", "--stdin", input=head + b"\n" + message)
    return out.decode().strip()


def _nodes(eng, kind: str = "commit") -> dict[str, dict]:
    rows = eng.store.conn.execute("SELECT id FROM nodes WHERE type=?", (kind,)).fetchall()
    return {r[0]: eng.get_node(r[0]) for r in rows}


def _edges(eng, rel: str) -> set[tuple[str, str]]:
    rows = eng.store.conn.execute(
        "SELECT s.id, d.id FROM edges e JOIN nodes s ON s.idx=e.src JOIN nodes d ON d.idx=e.dst "
        "JOIN relations r ON r.id=e.rel_id WHERE r.name=?",
        (rel,),
    ).fetchall()
    return {(s, d) for s, d in rows}


def _show(path: Path, fmt: str, sha: str) -> str:
    """One field of one commit as ``git show`` prints it (its own process: no framing to break)."""
    out = _git(path, "show", "-s", f"--format={fmt}", sha)
    return out[:-1].decode("utf-8", "replace") if out.endswith(b"\n") else out.decode("utf-8", "replace")


# ---- 1. forged commits ------------------------------------------------------------------------------------


def test_a_marker_in_a_file_or_a_message_forges_no_commit(tmp_path):
    repo = Repo(tmp_path / "r")
    real = repo.commit("Add the parser", {"p.c": "int parse;\n"})
    fake = "f" * 40
    forged = (
        OLD_MARK
        + f"{fake}\x1f\x1fMallory\x1fm@evil\x1f1\x1f1\x1fForged title\n\nThis reverts commit {real}.\x1f".encode()
    )
    (repo.path / "evil.txt").write_bytes(b"x\n" + forged + b"\n")
    repo.git("add", "evil.txt")
    victim = repo.commit("Innocent change")
    says = repo.commit("Message with the old marker " + forged.decode(), {"n.c": "int n;\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        nodes = _nodes(eng)
        assert set(nodes) == {"commit:" + s for s in repo.git("rev-list", "HEAD").split()}
        assert nodes["commit:" + victim]["title"] == "Innocent change"
        assert nodes["commit:" + victim]["metadata"]["author"] == "Ada Dev"
        assert [f["path"] for f in nodes["commit:" + victim]["metadata"]["files"]] == ["evil.txt"]
        # only the commit whose own message says so reverts (the file's text is no commit's message)
        assert _edges(eng, "reverts") == {("commit:" + says, "commit:" + real)}
        # a later sync reads the new commit only and rewrites none of the stored ones
        repo.commit("Another marker " + forged.decode(), {"m.c": "int m;\n"})
        s = sync_source(eng, "git", repo.path)
        assert s["new_nodes"] >= 1 and s["updated_nodes"] == 0
        assert _nodes(eng)["commit:" + victim] == nodes["commit:" + victim]
        assert ("commit:" + fake) not in _nodes(eng)


def test_a_separator_in_a_tag_message_or_tagger_forges_no_tag(tmp_path):
    repo = Repo(tmp_path / "r")
    repo.commit("One", {"a.c": "int a;\n"})
    msg = "Release\x1e\x1fevil\x1fcommit\x1fcommit\x1f" + "e" * 40 + "\x1f" + "e" * 40 + "\x1f1\x1fM\x1f1\x1fx\x1e"
    repo.git("-c", "user.name=Tag\x1fger", "tag", "-a", "v1", "-m", msg)
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        tags = _nodes(eng, "tag")
        assert set(tags) == {"tag:v1"}
        assert tags["tag:v1"]["metadata"]["tagger"] == "Tag\x1fger"
        assert tags["tag:v1"]["text"] == msg.strip()


def test_a_hunk_line_cannot_pass_for_a_path_in_merge_hunks(tmp_path):
    from neurongraph.ingest import git_log

    # the merge's diff against its second parent removes "-- keep" and adds "++ forged/path": as patch lines
    # "--- keep" and "+++ forged/path", which the old pattern read as a file header
    repo = Repo(tmp_path / "r")
    repo.commit("Base", {"a.txt": "-- keep\nmid\nold\n"})
    repo.git("checkout", "-q", "-b", "topic")
    repo.commit("Topic", {"t.c": "int t;\n"})
    repo.git("checkout", "-q", "main")
    repo.commit("Main", {"a.txt": "++ forged/path\nmid\nnew\n"})
    repo.t += 3600
    repo.git("merge", "-q", "--no-ff", "topic", "-m", "Merge branch 'topic'")
    merge = repo.git("rev-parse", "HEAD")
    got = git_log.read_merge_hunks(repo.path, [(merge, repo.git("rev-parse", "HEAD^2"))])
    assert got == {merge: {"a.txt": [[1, 1, 1, 1], [3, 1, 3, 1]]}}


# ---- 2. author names and dates of any bytes ---------------------------------------------------------------


def test_author_names_and_crafted_dates_never_stop_a_sync(tmp_path):
    repo = Repo(tmp_path / "r")
    base = repo.commit("Base", {"a.c": "int a;\n"})
    repo.git("commit", "-q", "--allow-empty", "--author", "Ev\x1fil \x1e\x1d<e\x1fvil@example.org>", "-m", "Odd name")
    tree = repo.git("rev-parse", "HEAD^{tree}")
    tip = repo.git("rev-parse", "HEAD")
    crafted = {}
    for label, date in (("negative", b"-5"), ("missing", b""), ("huge", b"9" * 20), ("big", b"253402300800")):
        tip = _raw_commit(repo.path, tree, [tip], b"Crafted <c@example.org>", f"Date {label}\n".encode(), date)
        crafted[label] = tip
    repo.git("update-ref", "refs/heads/main", tip)
    db = tmp_path / "h.db"
    run = subprocess.run(
        [*NGR, "--db", str(db), "--embedder", "hashing", "ingest", "git", str(repo.path), "--json"],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    summary = json.loads(run.stdout)
    with ngr.open(db, embedder="hashing") as eng:
        nodes = _nodes(eng)
        odd_sha = repo.git("rev-parse", f"{crafted['negative']}~1")
        odd = nodes["commit:" + odd_sha]["metadata"]
        assert odd["author"] == _show(repo.path, "%an", odd_sha) and odd["author"].startswith("Ev\x1fil")
        assert odd["author_email"] == "e\x1fvil@example.org" and nodes["commit:" + odd_sha]["title"] == "Odd name"
        for label, sha in crafted.items():
            md = nodes["commit:" + sha]["metadata"]
            assert md["date_unknown"] == ["author_time"], label
            assert md["author_time"] == md["commit_time"] == md["time"] == 1700000000  # the valid date stands
            assert any(i["item"] == "commit:" + sha and "date unknown" in i["reason"] for i in summary["skipped_items"])
        assert "date_unknown" not in nodes["commit:" + base]["metadata"]


def test_a_crafted_tag_date_is_named_not_a_traceback(tmp_path):
    repo = Repo(tmp_path / "r")
    sha = repo.commit("One", {"a.c": "int a;\n"})
    for name, date in (("huge", "9" * 20), ("negative", "-5")):
        obj = f"object {sha}\ntype commit\ntag {name}\ntagger T <t@example.org> {date} +0000\n\nRelease {name}\n"
        tag = _git(repo.path, "hash-object", "-t", "tag", "-w", "--literally", "--stdin", input=obj.encode())
        repo.git("update-ref", f"refs/tags/{name}", tag.decode().strip())
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)
        tags = _nodes(eng, "tag")
        assert set(tags) == {"tag:huge", "tag:negative"}
        for t in tags.values():
            md = t["metadata"]
            assert md["date_unknown"] == ["time"] and md["time"] == repo.t and "tag_time" not in md
        assert {i["item"] for i in s["skipped_items"] if "date unknown" in i["reason"]} == set(tags)


# ---- 3. the repository's config runs nothing --------------------------------------------------------------


def _hostile(tmp_path: Path) -> tuple[Repo, Path, str]:
    marks = tmp_path / "marks"
    marks.mkdir()
    repo = Repo(tmp_path / "r")
    (repo.path / ".gitattributes").write_text("* diff=evil\n")
    first = repo.commit("One", {"a.txt": "one\n", "b.bin": "b\n"})
    repo.commit("Two", {"a.txt": "one\ntwo\n"})
    # a signed-looking commit, so that log.showSignature has a signature to check
    tree = repo.git("rev-parse", "HEAD^{tree}")
    sig = b"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEz\n -----END PGP SIGNATURE-----\n"
    obj = (
        (
            f"tree {tree}\nparent {repo.git('rev-parse', 'HEAD')}\n"
            "author A <a@example.org> 1700000000 +0000\ncommitter A <a@example.org> 1700000000 +0000\n"
        ).encode()
        + sig
        + b"\nSigned\n"
    )
    signed = _git(repo.path, "hash-object", "-t", "commit", "-w", "--stdin", input=obj).decode().strip()
    repo.git("update-ref", "refs/heads/main", signed)
    repo.commit("Three", {"a.txt": "one\ntwo\nthree\n"})
    bin_ = tmp_path / "bin"
    bin_.mkdir()

    def t(name: str) -> str:
        """A program that leaves ``marks/name`` behind (and passes its first argument through, as textconv)."""
        script = bin_ / name
        script.write_text(f'#!/bin/sh\ntouch {marks / name}\ncat "$1" 2>/dev/null\nexit 0\n')
        script.chmod(0o755)
        return str(script)

    with open(repo.path / ".git" / "config", "a") as f:
        f.write(
            f'[diff "evil"]\n\ttextconv = {t("textconv")}\n\tcommand = {t("command")}\n'
            f"[diff]\n\texternal = {t('external')}\n[log]\n\tshowSignature = true\n"
            f"[gpg]\n\tprogram = {t('gpg')}\n[core]\n\tfsmonitor = {t('fsmonitor')}\n\tpager = {t('pager')}\n"
            f"\tsshCommand = {t('ssh')}\n\talternateRefsCommand = {t('alternate')}\n"
        )
    for hook in ("post-checkout", "pre-commit", "reference-transaction", "post-index-change"):
        (repo.path / ".git" / "hooks" / hook).write_text(f"#!/bin/sh\n{t('hook-' + hook)}\n")
        (repo.path / ".git" / "hooks" / hook).chmod(0o755)
    return repo, marks, first


def test_the_repositorys_config_and_environment_run_no_program(tmp_path):
    repo, marks, first = _hostile(tmp_path)
    env = {
        **os.environ,
        "GIT_EXTERNAL_DIFF": f"touch {marks / 'env-external'}",
        "GIT_CONFIG_PARAMETERS": f"'core.pager'='touch {marks / 'env-params'}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "diff.external",
        "GIT_CONFIG_VALUE_0": f"touch {marks / 'env-count'}",
        "GIT_DIR": str(tmp_path / "nowhere"),
    }
    db = tmp_path / "h.db"
    run = subprocess.run(
        [*NGR, "--db", str(db), "--embedder", "hashing", "ingest", "git", str(repo.path), "--json"],
        capture_output=True,
        text=True,
        env=env,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert sorted(os.listdir(marks)) == []
    with ngr.open(db, embedder="hashing") as eng:
        md = eng.get_node("commit:" + first)["metadata"]
        assert {f["path"]: f["added"] for f in md["files"]} == {"a.txt": 1, "b.bin": 1}
    # exact provenance reads git blame of the same repository: directly, and as the engine finds it
    head = repo.git("rev-parse", "HEAD")
    assert blame_with_git(GitRepo(repo.path), head, "a.txt", [1, 3]) == {1: first, 3: head}
    with ngr.open(db, embedder="hashing") as eng:
        assert SourceBlame(eng.store)("r", head, "a.txt", [1, 3]) == {1: first, 3: head}
    assert sorted(os.listdir(marks)) == []
    # the fixture is armed: plain git runs the textconv and the signature check
    subprocess.run(["git", "-C", str(repo.path), "log", "-p"], capture_output=True)
    assert {"textconv", "gpg"} <= set(os.listdir(marks))


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="needs root to give the repository away")
def test_the_users_own_safe_directory_still_counts(tmp_path):
    """The user's global config is not read, but its ``safe.directory`` entries are passed on: a repository
    owned by someone else that the user trusted is still read (git ignores the setting in a repository)."""
    repo = Repo(tmp_path / "r")
    sha = repo.commit("One", {"a.c": "int a;\n"})
    subprocess.run(["chown", "-R", "nobody", str(repo.path)], check=True)
    glob = tmp_path / "gitconfig"
    cmd = [*NGR, "--db", str(tmp_path / "h.db"), "--embedder", "hashing", "ingest", "git", str(repo.path), "--json"]
    glob.write_text("")
    refused = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "GIT_CONFIG_GLOBAL": str(glob)})
    assert refused.returncode != 0 and "dubious ownership" in refused.stdout + refused.stderr
    assert "Traceback" not in refused.stderr
    glob.write_text(f"[safe]\n\tdirectory = {repo.path}\n")
    run = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, "GIT_CONFIG_GLOBAL": str(glob)})
    assert run.returncode == 0, run.stderr[-2000:]
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        assert eng.get_node("commit:" + sha) is not None


# ---- 4. lost data -----------------------------------------------------------------------------------------


def test_a_missing_blob_never_replaces_stored_hunks(tmp_path):
    repo = Repo(tmp_path / "r")
    repo.git("config", "gc.auto", "0")
    repo.commit("Add", {"a.c": "int a;\n", "b.c": "int b;\n"})
    hit = repo.commit("Grow a", {"a.c": "int a;\nint alpha_two;\nint alpha_three;\n"})
    repo.commit("Grow b", {"b.c": "int b;\nint b2;\n"})
    db = tmp_path / "h.db"
    with ngr.open(db, embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        before = eng.get_node("commit:" + hit)
        touches = _edges(eng, "touches")
    assert before["metadata"]["hunks"] == {"a.c": [[1, 0, 2, 2]]} and before["metadata"]["code"]
    blob = repo.git("rev-parse", f"{hit}:a.c")
    (repo.path / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    with ngr.open(db, embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path, full=True)
        after = eng.get_node("commit:" + hit)
        assert after["metadata"] == before["metadata"] and after["title"] == before["title"]
        assert _edges(eng, "touches") == touches
        assert s["kept_stored"] >= 1
        named = [i for i in s["skipped_items"] if i["item"] == "commit:" + hit]
        assert any("unable to read object" in i["reason"] for i in named)
        assert any("stored node" in i["reason"] for i in named)


def test_a_big_text_file_is_named_and_costs_bounded_memory(tmp_path):
    repo = Repo(tmp_path / "r")
    repo.commit("Base", {"small.c": "int s;\n"})
    with open(repo.path / "big.txt", "w") as f:
        for i in range(0, 2_000_000, 1000):
            f.write("".join(f"line {j} identifier_{j} value\n" for j in range(i, i + 1000)))
    assert (repo.path / "big.txt").stat().st_size > 50_000_000
    (repo.path / "small.c").write_text("int s;\nint t;\n")
    repo.git("add", "big.txt", "small.c")
    sha = repo.commit("Import the big table")
    db = tmp_path / "h.db"
    probe = (
        "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:], capture_output=True, text=True); "
        "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss); print(r.returncode); print(r.stdout)"
    )
    cmd = [*NGR, "--db", str(db), "--embedder", "hashing", "ingest", "git", str(repo.path), "--json"]
    out = subprocess.run([sys.executable, "-c", probe, *cmd], capture_output=True, text=True, check=True).stdout
    peak_kb, rc, summary = out.split("\n", 2)
    assert rc == "0", out
    assert int(peak_kb) <= 300 * 1024, f"peak RSS {int(peak_kb) // 1024} MB"
    s = json.loads(summary)
    assert any(i["item"] == "commit:" + sha and "big.txt" in i["reason"] for i in s["skipped_items"])
    with ngr.open(db, embedder="hashing") as eng:
        md = eng.get_node("commit:" + sha)["metadata"]
        files = {f["path"]: (f["added"], f["deleted"]) for f in md["files"]}
        assert files == {"big.txt": (None, None), "small.c": (1, 0)}
        assert md["too_large"] == ["big.txt"] and md["hunks"] == {"small.c": [[1, 0, 2, 1]]}


# ---- 5. any bytes: the stored graph is what git says ------------------------------------------------------

_ANY = st.binary(max_size=60).map(lambda b: b.replace(b"\0", b""))
_SPICE = st.sampled_from([b"\x1e", b"\x1d", b"\x1f", OLD_MARK, b"\n", b"\ndiff --git a/x b/x\n", b"\n@@ -1 +1 @@\n"])
_TEXT = st.lists(st.one_of(_ANY, _SPICE), max_size=6).map(b"".join)
_LINE = _TEXT.map(lambda b: b.replace(b"\n", b" "))
_COMMIT = st.tuples(_LINE, _LINE, _TEXT, _LINE, _TEXT)  # author name, email, message, path, content


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(commits=st.lists(_COMMIT, min_size=1, max_size=3))
def test_any_bytes_in_messages_authors_and_files_store_what_git_says(tmp_path_factory, commits):
    tmp = tmp_path_factory.mktemp("prop")
    path = tmp / "r"
    _git(tmp, "init", "-q", "-b", "main", str(path))
    parents: list[str] = []
    entries = b""
    for i, (name, email, message, fname, content) in enumerate(commits):
        blob = _git(path, "hash-object", "-w", "--stdin", input=content).decode().strip()
        entries += b"100644 blob " + blob.encode() + b"\t" + f"c{i}_".encode() + fname.replace(b"/", b"_") + b"\0"
        tree = _git(path, "mktree", "-z", input=entries).decode().strip()
        author = name.replace(b"<", b"").replace(b">", b"") + b" <" + email.replace(b"<", b"").replace(b">", b"") + b">"
        parents = [_raw_commit(path, tree, parents, author, message, b"1700000000")]
    _git(path, "update-ref", "refs/heads/main", parents[0])
    shas = _git(path, "rev-list", "HEAD").decode().split()
    with ngr.open(tmp / "h.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", path)
        nodes = _nodes(eng)
        assert set(nodes) == {"commit:" + x for x in shas}, s["skipped_items"]
        for sha in shas:
            n = nodes["commit:" + sha]
            md = n["metadata"]
            message = _show(path, "%B", sha).strip("\n")
            subject, _, body = message.partition("\n")
            assert md["sha"] == sha and md["parents"] == _show(path, "%P", sha).split()
            assert md["author"] == _show(path, "%an", sha) and md["author_email"] == _show(path, "%ae", sha)
            assert n["title"] == subject.strip() and n["text"] == body.strip("\n")
            raw = _git(path, "show", "--name-only", "-z", "--format=", sha).strip(b"\n\0").split(b"\0")
            assert sorted(f["path"] for f in md["files"]) == sorted(path_text(p) for p in raw if p.strip(b"\n"))
