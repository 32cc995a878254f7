"""Code-aware search (issue 24): the working set's line provenance from stored hunks, checked against
`git blame` on a real repository, and the blame / identifier evidence in a real search."""

from __future__ import annotations

import random
import subprocess

import pytest
from tests.git_fixtures import Repo

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.ingest import sync_source
from neurongraph.retrieval.changes import WorkingSet


def _git_blame(repo: Repo, rev: str, path: str) -> list[str]:
    out = repo.git("blame", "--porcelain", rev, "--", path)
    shas = []
    for line in out.splitlines():
        parts = line.split()
        if parts and len(parts[0]) == 40 and len(parts) >= 3 and parts[2].isdigit():
            shas.append(parts[0])
    return shas


def _random_history(tmp_path, seed: int = 7, steps: int = 30) -> tuple[Repo, list[tuple[str, str, float]]]:
    """A linear history of random insertions, deletions and edits in two files, with a rename inside an edit
    and one in a commit of its own; returns
    the repo and (sha, path of the edited file after the commit, commit time) per commit."""
    rng = random.Random(seed)
    repo = Repo(tmp_path / "r")
    files = {"a.c": [f"int a_{i} = {i};" for i in range(12)], "b.c": [f"void b_{i}(void);" for i in range(8)]}
    log = []
    sha = repo.commit("start", {k: "\n".join(v) + "\n" for k, v in files.items()})
    log.append((sha, "a.c", repo.t))
    for step in range(steps):
        name = rng.choice(sorted(files))
        lines = files[name]
        op = rng.choice(["insert", "delete", "edit", "edit"])
        at = rng.randrange(len(lines) + (op == "insert"))
        if op == "insert" or len(lines) < 4:
            lines[at:at] = [f"int new_{step}_{k} = {k};" for k in range(rng.randint(1, 3))]
        elif op == "delete":
            del lines[at : at + rng.randint(1, 2)]
        else:
            lines[at] = f"int edited_{step} = {step};"
        if step == 12:  # rename a.c -> src/a.c within the same commit as an edit
            repo.git("mv", "a.c", "src_a.c")
            files["src_a.c"] = files.pop("a.c")
            name = "src_a.c" if name == "a.c" else name
        sha = repo.commit(f"step {step}", {k: "\n".join(v) + "\n" for k, v in files.items()})
        log.append((sha, name, repo.t))
        if step == 20:  # a commit of pure renames only: it stores no hunk, yet the lines move with the file
            repo.git("mv", "b.c", "lib_b.c")
            files["lib_b.c"] = files.pop("b.c")
            log.append((repo.commit("move b.c"), "lib_b.c", repo.t))
    return repo, log


def test_stored_hunk_blame_equals_git_blame_on_every_line(tmp_path):
    repo, log = _random_history(tmp_path)
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    checked = 0
    for sha, _, t in log[5::5]:  # several points in history, every file, every line
        for path in repo.git("ls-tree", "--name-only", sha).split():
            truth = ["commit:" + s for s in _git_blame(repo, sha, path)]
            got = eng.blame(path, list(range(1, len(truth) + 1)), as_of=t)
            assert got == truth, (sha, path)
            checked += len(truth)
    assert checked > 100
    eng.close()


@pytest.fixture()
def fixed_repo(tmp_path):
    """origin writes a buggy line, later commits move it around, the fix rewrites it."""
    repo = Repo(tmp_path / "fix")
    body = [f"static int helper_{i}(void) {{ return {i}; }}" for i in range(20)]
    repo.commit("Initial import", {"net/route.c": "\n".join(body) + "\n", "README": "docs\n"})
    body[9] = "static int route_flush_cache(struct table *t) { return t->len - 1; }"
    origin = repo.commit("route: flush the cache on table change", {"net/route.c": "\n".join(body) + "\n"})
    body[0:0] = ["#include <stdio.h>", "#include <stdlib.h>"]
    repo.commit("route: add includes", {"net/route.c": "\n".join(body) + "\n"})
    repo.commit("README: wording", {"README": "documentation\n"})
    parent_t = repo.t
    body[11] = "static int route_flush_cache(struct table *t) { return t->len; }"
    fix = repo.commit("route: off-by-one when flushing", {"net/route.c": "\n".join(body) + "\n"})
    diff = repo.git("show", "--format=", fix)
    return repo, origin, fix, diff, parent_t


def test_a_diff_finds_the_commit_that_wrote_its_lines(fixed_repo, tmp_path):
    repo, origin, fix, diff, parent_t = fixed_repo
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    ws = WorkingSet.from_diff(diff)
    assert ws.paths == ("net/route.c",) and ws.files[0].old_ranges == ((12, 12),)
    res = eng.search("off-by-one", changes=ws, as_of=parent_t, record=False)
    top = res.hits[0]
    assert top.id == "commit:" + origin
    assert top.scores["blame"] == 1.0
    assert any("line 12 of net/route.c" in e for e in top.evidence), top.evidence
    for h in res.hits:  # the explained formula adds up to final, code evidence included
        assert h.formula(res.config)[1] == pytest.approx(h.score, rel=1e-6)
    # the same search as a diff string (what the CLI and MCP pass) and with blame off
    again = eng.search("off-by-one", changes=diff, as_of=parent_t, record=False)
    assert [h.id for h in again.hits] == [h.id for h in res.hits]
    off = eng.search("off-by-one", changes=ws, as_of=parent_t, blame_weight=0, blame_seed_weight=0, record=False)
    assert all(h.scores.get("blame", 0.0) == 0.0 for h in off.hits)
    assert off.hits[0].scores["final"] < top.scores["final"]  # the blame part is what lifted the origin
    # a line range instead of a diff: same provenance
    spec = eng.search("flush", changes=["net/route.c:12"], as_of=parent_t, record=False)
    assert spec.hits[0].id == "commit:" + origin
    eng.close()


def test_which_commit_introduced_an_identifier(fixed_repo, tmp_path):
    repo, origin, *_ = fixed_repo
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    res = eng.search("which commit introduced route_flush_cache", record=False)
    assert res.hits[0].id == "commit:" + origin
    assert any("added `route_flush_cache`" in e for e in res.hits[0].evidence)
    assert res.hits[0].scores["code"] > 0
    eng.close()


def test_pure_addition_blames_the_anchor_lines(tmp_path):
    repo = Repo(tmp_path / "add")
    first = repo.commit("one", {"f.py": "a = 1\nb = 2\nc = 3\n"})
    repo.commit("two", {"f.py": "a = 1\nb = 2\nc = 3\nd = 4\n"})
    ws = WorkingSet.from_diff("--- a/f.py\n+++ b/f.py\n@@ -1,0 +2 @@\n+x = 0\n")
    assert ws.pure_addition and ws.files[0].anchors == (1, 2)
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    res = eng.search("insert x", changes=ws, record=False)
    hit = next(h for h in res.hits if h.id == "commit:" + first)
    assert any("around the insertion" in e for e in hit.evidence)
    eng.close()


@pytest.mark.parametrize(
    "bad",
    ["", "just some text\nwithout a diff", "@@ not a hunk"],
)
def test_a_bad_diff_is_a_clear_error(bad):
    with pytest.raises(InvalidArgument):
        WorkingSet.from_diff(bad)


@pytest.mark.parametrize("bad", ["f.c:0", "f.c:9-3", "", ":3"])
def test_a_bad_line_spec_is_a_clear_error(bad):
    with pytest.raises(InvalidArgument):
        WorkingSet.from_specs([bad])


def test_working_set_round_trips_through_json():
    ws = WorkingSet.from_specs(["a.c:3-5", "a.c:10", "b.c"])
    assert ws.files[0].old_ranges == ((3, 5), (10, 10)) and ws.paths == ("a.c", "b.c")
    assert WorkingSet.from_dict(ws.to_dict()) == ws


def test_code_history_follows_the_change_feed(fixed_repo, tmp_path):
    """A commit ingested after the index was built is blamed without rebuilding by hand."""
    repo, origin, fix, diff, parent_t = fixed_repo
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    subprocess.run(["git", "-C", str(repo.path), "checkout", "-q", "-b", "old", fix + "~1"], check=True)
    sync_source(eng, "git", repo.path)  # HEAD is the old branch
    assert eng.blame("net/route.c", [12]) == ["commit:" + origin]
    subprocess.run(["git", "-C", str(repo.path), "checkout", "-q", "main"], check=True)
    sync_source(eng, "git", repo.path)
    assert eng.blame("net/route.c", [12]) == ["commit:" + fix]
    eng.close()


def test_ask_answers_line_and_identifier_questions_from_the_code_history(fixed_repo, tmp_path):
    repo, origin, fix, diff, parent_t = fixed_repo
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    out = eng.ask("which commit last changed lines 12-12 of net/route.c?")
    assert out["result"]["shape"] == "lines_last_changed" and out["refs"] == ["commit:" + fix]
    before = eng.ask(f"who last changed line 12 of net/route.c as of {int(parent_t)}")
    assert before["result"]["items"] == ["Ada Dev"] and before["refs"] == ["commit:" + origin]
    intro = eng.ask("which commit introduced route_flush_cache?")
    assert intro["result"]["value"] == "commit:" + origin and "[refs: commit:" + origin in intro["answer"]
    missing = eng.ask("which commit introduced no_such_identifier_anywhere?")
    assert missing["refs"] == [] and missing["answer"].startswith("Not found")
    eng.close()
    # the CLI's table output of a code-history answer (it runs no Cypher query: nothing to print there)
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    r = CliRunner().invoke(
        app,
        ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ask", "which commit introduced route_flush_cache?"],
    )
    assert r.exit_code == 0 and "Traceback" not in r.output, r.output
    assert "code history" in r.output and origin[:10] in r.output


def test_git_blame_source_reads_the_repository_and_falls_back_to_hunks(fixed_repo, tmp_path):
    repo, origin, fix, diff, parent_t = fixed_repo
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    assert eng.blame("net/route.c", [12], exact=True) == ["commit:" + fix]
    assert eng.blame("net/route.c", [10], base=origin[:10], exact=True) == ["commit:" + origin]  # before the includes
    ws = WorkingSet.from_diff(diff)
    git = eng.search("off-by-one", changes=ws, as_of=parent_t, blame_source="git", record=False)
    assert git.hits[0].id == "commit:" + origin and git.hits[0].scores["blame"] == 1.0
    eng.close()
    # the repository gone: the same search answers from the stored hunks
    moved = tmp_path / "moved"
    repo.path.rename(moved)
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    again = eng.search("off-by-one", changes=ws, as_of=parent_t, blame_source="git", record=False)
    assert again.hits[0].id == "commit:" + origin
    eng.close()


def test_stored_hunk_blame_follows_merged_branches_like_git_blame(tmp_path):
    """Branches edited beside the mainline and merged back (no fast-forward, nested): every line of every
    file at every commit is blamed on the commit git blame names (the merge's second-parent hunks)."""
    rng = random.Random(3)
    repo = Repo(tmp_path / "m")
    lines = [f"int v_{i} = {i};" for i in range(30)]

    def write(tag: str) -> None:
        k = rng.randrange(len(lines))
        if rng.random() < 0.4:
            lines[k:k] = [f"int {tag}_{j} = {j};" for j in range(rng.randint(1, 3))]
        else:
            lines[k] = f"int {tag} = {k};"
        repo.commit(tag, {"m.c": "\n".join(lines) + "\n"})

    repo.commit("base", {"m.c": "\n".join(lines) + "\n"})
    for round_ in range(3):
        repo.git("checkout", "-q", "-b", f"topic{round_}")
        base_lines = list(lines)
        for j in range(3):
            write(f"topic{round_}_{j}")
        topic_lines = list(lines)
        repo.git("checkout", "-q", "main")
        lines[:] = base_lines
        # mainline edits far from the topic's (at the end), so the merge has no conflict
        lines.extend(f"int main{round_}_{j} = {j};" for j in range(2))
        repo.commit(f"main {round_}", {"m.c": "\n".join(lines) + "\n"})
        repo.t += 3600
        repo.git("merge", "-q", "--no-ff", "-m", f"Merge topic{round_}", f"topic{round_}")
        lines[:] = repo.path.joinpath("m.c").read_text().splitlines()
        assert len(lines) == len(topic_lines) + 2  # the topic's lines and the mainline's two
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    revs = repo.git("rev-list", "--all").split()
    assert len(revs) == 1 + 3 * 5 and len(repo.git("rev-list", "--merges", "--all").split()) == 3
    for rev in revs:
        truth = ["commit:" + s for s in _git_blame(repo, rev, "m.c")]
        assert eng.blame("m.c", list(range(1, len(truth) + 1)), base=rev) == truth, rev
    eng.close()


def test_an_identifier_inside_a_longer_one_counts_like_git_log_S(tmp_path):
    """`git log -S CGROUP_DEVICE` counts substrings: the change that added BPF_PROG_TYPE_CGROUP_DEVICE first
    introduced it, not the later one that wrote CGROUP_DEVICE on its own."""
    repo = Repo(tmp_path / "sub")
    repo.commit("initial", {"bpf.h": "enum { BPF_PROG_TYPE_UNSPEC };\n"})
    first = repo.commit(
        "bpf: add device programs", {"bpf.h": "enum { BPF_PROG_TYPE_UNSPEC, BPF_PROG_TYPE_CGROUP_DEVICE };\n"}
    )
    repo.commit(
        "bpf: short name for devices",
        {"bpf.h": "enum { BPF_PROG_TYPE_UNSPEC, BPF_PROG_TYPE_CGROUP_DEVICE };\n#define CGROUP_DEVICE 1\n"},
    )
    assert repo.git("log", "-S", "CGROUP_DEVICE", "--reverse", "--format=%H").split()[0] == first
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    for q in ("which commit introduced CGROUP_DEVICE", "CGROUP_DEVICE"):
        res = eng.search(q, record=False)
        assert res.hits[0].id == "commit:" + first, q
        assert any("inside a longer identifier" in e for e in res.hits[0].evidence)
    # a prose question naming it reads whole identifiers only (no intent: the diff-free text search)
    plain = eng.search("why does CGROUP_DEVICE exist at all here", record=False)
    assert not any("inside a longer identifier" in e for h in plain.hits for e in h.evidence)
    eng.close()


def test_an_identifier_first_written_in_a_generated_file_over_the_cap(tmp_path, monkeypatch):
    """A generated header (libbpf's vmlinux.h: 80k-230k changed lines) gets no per-file code terms, but its
    tokens are kept apart (`code.bulk_added`), so "which commit introduced X" finds the check-in that first
    wrote X, as `git log -S` does, and a later ordinary change that uses X does not take its place."""
    from neurongraph.ingest import git_log

    monkeypatch.setattr(git_log, "MAX_CODE_LINES", 50)
    repo = Repo(tmp_path / "gen")
    repo.commit("initial", {"src/main.c": "int main(void) { return 0; }\n"})
    header = "".join(f"enum {{ GEN_ENTRY_{i} }};\n" for i in range(80)) + "enum { PERF_RECORD_SWITCH };\n"
    checkin = repo.commit("ci: check in vmlinux.h", {"ci/vmlinux.h": header})
    repo.commit("use the switch record", {"src/main.c": "int main(void) { return PERF_RECORD_SWITCH; }\n"})
    assert repo.git("log", "-S", "PERF_RECORD_SWITCH", "--reverse", "--format=%H").split()[0] == checkin
    eng = ngr.open(str(tmp_path / "s.db"), embedder="hashing")
    sync_source(eng, "git", repo.path)
    md = eng.store.get_node("commit:" + checkin).metadata
    assert md["code_skipped"] == 1 and "PERF_RECORD_SWITCH" in md["code"]["bulk_added"]
    res = eng.search("which commit introduced PERF_RECORD_SWITCH", record=False)
    assert res.hits[0].id == "commit:" + checkin
    assert any("PERF_RECORD_SWITCH" in e for e in res.hits[0].evidence)
    eng.close()
