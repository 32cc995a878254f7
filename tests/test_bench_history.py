"""`ngr bench history`: pair extraction (each phrase form, sha prefix, squash and merge PRs, a revert)
and a small end-to-end run, on a real repository made in the test."""

from __future__ import annotations

import json

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.bench.history import DIFF_SYSTEMS, SYSTEMS, extract_pairs, run_history_bench
from neurongraph.ingest import sync_source
from neurongraph.ingest.git import GitRepo
from neurongraph.ingest.refs import strip_refs


@pytest.fixture
def hist(tmp_path):
    r = Repo(tmp_path / "netkit")
    r.base = r.commit(
        "Initial import of the route tool",
        {"ip/route.c": "int route;\n", "ip/link.c": "int link;\n", "README": "netkit\n"},
    )
    r.o1 = r.commit("route: add multipath nexthop weights", {"ip/route.c": "int route; int weight;\n"})
    r.o2 = r.commit("Add bridge vlan tunnel mapping (#40)", {"bridge/vlan.c": "int tunnel;\n"})
    r.git("checkout", "-q", "-b", "stats")
    r.commit("link: print 64-bit statistics", {"ip/link.c": "long stats;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git(
        "merge", "-q", "--no-ff", "stats", "-m", "Merge pull request #41 from dev/stats\n\nLink statistics in 64 bits"
    )
    r.o3 = r.git("rev-parse", "HEAD")
    r.noise = [r.commit(f"docs: typo fix {k}", {"README": f"netkit {k}\n"}) for k in range(3)]
    r.f1 = r.commit(
        f'route: weights overflow with many hops\n\nFixes: {r.o1[:12]} ("route: add multipath nexthop weights")',
        {"ip/route.c": "long route; int weight;\n"},
    )
    r.f2 = r.commit(
        "Tunnel ids lost on vlan delete (#45)\n\nThis is a regression from #40.", {"bridge/vlan.c": "long tunnel;\n"}
    )
    r.f3 = r.commit("Counters wrap on 32-bit hosts\n\nFollow-up to #41.", {"ip/link.c": "unsigned long stats;\n"})
    r.f4 = r.commit("Route weights: clamp at 255\n\nIntroduced in " + r.o1[:10] + ".", {"ip/route.c": "int w;\n"})
    r.rv = r.commit(f'Revert "docs: typo fix 2"\n\nThis reverts commit {r.noise[2]}.', {"README": "netkit 1\n"})
    return r


def test_pair_extraction(hist, tmp_path):
    with ngr.open(tmp_path / "b.db", embedder="hashing") as eng:
        sync_source(eng, "git", hist.path)
        pairs, stats = extract_pairs(eng, GitRepo(hist.path))
    by_fix = {p.fix.split(":")[1]: p for p in pairs}
    c = lambda s: "commit:" + s  # noqa: E731
    assert by_fix[hist.f1].kind == "fixes" and by_fix[hist.f1].origins == [c(hist.o1)]  # sha prefix
    assert by_fix[hist.f2].kind == "follow_up" and by_fix[hist.f2].origins == [c(hist.o2)]  # "#40" -> squash
    assert by_fix[hist.f3].origins == [c(hist.o3)]  # "#41" -> merge commit
    assert by_fix[hist.f4].origins == [c(hist.o1)]  # phrase + sha
    assert by_fix[hist.rv].kind == "revert" and by_fix[hist.rv].origins == [c(hist.noise[2])]
    assert stats["pairs"] == 4 and stats["reverts"] == 1
    # the question names no reference and carries F's paths; it is asked as of F's parent
    p = by_fix[hist.f2]
    assert "#" not in p.query and "(" not in p.query and p.files == ["bridge/vlan.c"]
    assert p.as_of < p.time
    assert "Fixes" not in by_fix[hist.f1].query and hist.o1[:12] not in by_fix[hist.f1].query


def test_strip_refs_removes_every_explicit_reference():
    s = strip_refs('Fix crash (#12) after abc1234def, see python/mypy#99\nFixes: 1234abcd5678 ("Add thing")')
    assert "#" not in s and "abc1234def" not in s and "Add thing" not in s and "Fix crash" in s


def test_small_end_to_end_run(hist, tmp_path):
    with ngr.open(tmp_path / "b.db", embedder="hashing") as eng:
        res = run_history_bench(hist.path, eng, learning=True)
    assert res["pairs"] == 4 and res["revert_pairs"] == 1
    assert set(res["systems"]) == set(SYSTEMS)
    for m in res["systems"].values():
        assert 0 <= m["hit@1"] <= m["recall@5"] <= m["recall@10"] <= 1
    # the origin shares a file with every fix here, so the text-free floor finds them all in its top 10
    assert res["systems"]["paths"]["recall@10"] == 1.0
    assert res["systems"]["ngr"]["recall@10"] >= 0.75
    # nothing from the fix or later leaks: a fix never appears in any ranking
    assert all(pp["rank"]["ngr"] is None or pp["rank"]["ngr"] >= 1 for pp in res["per_pair"])
    lr = res["learning"]
    assert lr["drift_changed_rankings"] == 0 and lr["past"] + lr["future"] == 4
    json.dumps(res, allow_nan=False)  # strict JSON


def test_cli_bench_history(hist, tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    out = tmp_path / "r.json"
    r = CliRunner().invoke(
        app,
        [
            "--embedder",
            "hashing",
            "bench",
            "history",
            "--repo",
            str(hist.path),
            "--db",
            str(tmp_path / "c.db"),
            "--system",
            "paths",
            "--system",
            "ngr",
            "--no-learning",
            "--out",
            str(out),
            "--json",
        ],
    )
    assert r.exit_code == 0, r.output
    res = json.loads(out.read_text())
    assert set(res["systems"]) == {"paths", "ngr"} and len(res["per_pair"]) == 4
    r = CliRunner().invoke(app, ["bench", "history", "--repo", str(tmp_path / "none"), "--json"])
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "file_not_found"


def test_a_fix_in_its_parents_second_is_invisible_to_its_own_question(tmp_path):
    """git am applies a series within one second: F and its parent share a commit time. F (and its own
    `fixes` edge, which would lead the graph straight to the answer) must still be invisible."""
    r = Repo(tmp_path / "series")
    r.commit("Initial import", {"ip/route.c": "int route;\n"})
    origin = r.commit("route: add nexthop weights", {"ip/route.c": "int route; int weight;\n"})
    r.commit("docs: describe weights", {"README": "weights\n"})
    r.t -= 3600  # the next commit lands in the same second as the previous one
    fix = r.commit(
        f'route: weights overflow\n\nFixes: {origin[:12]} ("route: add nexthop weights")', {"ip/route.c": "long w;\n"}
    )
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        pairs, _ = extract_pairs(eng, GitRepo(r.path))
        (p,) = [p for p in pairs if p.fix == "commit:" + fix]
        assert p.as_of < p.time
        res = eng.search(p.query, as_of=p.as_of, files=tuple(p.files), limit=20, record=False)
        ids = {h.id for h in res.hits} | {x for h in res.hits for path in h.paths for x in path.get("nodes", [])}
        assert "commit:" + fix not in ids


def test_diff_protocol(hist, tmp_path):
    """--input diff: szz from git blame, ngr with the fix's diff as changes, szz-then-ngr-text composed,
    pure additions apart, stored-hunk blame compared with git blame."""
    with ngr.open(tmp_path / "d.db", embedder="hashing") as eng:
        res = run_history_bench(hist.path, eng, input="diff", szz_cache=tmp_path / "szz.json", exactness=50)
    assert res["input"] == "diff" and set(res["systems"]) == set(DIFF_SYSTEMS)
    # every fix here rewrites a line: nothing is a pure addition.  B-SZZ blames f1's and f2's origins; f3's
    # line was written by the branch commit its origin (the merge of #41) merged: the same change, found as a
    # branch commit of the PR; f4's by f1 (B-SZZ's limits)
    assert res["pairs"] == 4 and res["pure_addition_pairs"] == 0
    szz = {pp["fix"][7:]: pp["rank"]["szz"] for pp in res["per_pair"]}
    assert szz == {hist.f1: 1, hist.f2: 1, hist.f3: 1, hist.f4: None}
    assert res["systems"]["szz"]["hit@1"] == 0.75
    assert res["systems"]["szz"]["hit@1_as"] == {"commit": 2, "merge": 0, "pr": 0, "branch": 1}
    assert {pp["fix"][7:]: pp.get("found_as", {}).get("szz") for pp in res["per_pair"]}[hist.f3] == "branch"
    both = {pp["fix"][7:]: pp["rank"]["szz-then-ngr-text"] for pp in res["per_pair"]}
    text = {pp["fix"][7:]: pp["rank"]["ngr-text"] for pp in res["per_pair"]}
    assert both[hist.f1] == both[hist.f2] == 1 and both[hist.f4] is not None and both[hist.f4] >= text[hist.f4]
    for m in res["systems"].values():
        assert 0 <= m["hit@1"] <= m["recall@5"] <= m["recall@10"] <= 1
    ex = res["blame_exactness"]
    assert ex["cases"] == 4 and ex["git_failed"] == 0 and 0 <= ex["agree_git_blame_w"] <= 1
    assert (tmp_path / "szz.json").exists()
    assert "learning" not in res
    json.dumps(res, allow_nan=False)


def test_diff_protocol_pure_additions_apart(tmp_path):
    r = Repo(tmp_path / "add")
    r.commit("Initial import", {"ip/route.c": "int route;\n"})
    origin = r.commit("route: add weights", {"ip/route.c": "int route;\nint weight;\n"})
    fix = r.commit(f"route: check weights\n\nFixes: {origin[:12]}", {"ip/route.c": "int route;\nint weight;\nint c;\n"})
    fix2 = r.commit(
        f"route: wider weights\n\nFixes: {origin[:12]}", {"ip/route.c": "int route;\nlong weight;\nint c;\n"}
    )
    with ngr.open(tmp_path / "a.db", embedder="hashing") as eng:
        res = run_history_bench(r.path, eng, input="diff", exactness=0)
    assert res["pairs"] == 1 and res["pure_addition_pairs"] == 1
    kinds = {pp["fix"]: pp["pure_addition"] for pp in res["per_pair"]}
    assert kinds == {"commit:" + fix: True, "commit:" + fix2: False}
    assert res["pure_additions"]["szz"]["hit@1"] == 0.0  # nothing to blame: a miss, as B-SZZ scores it
    assert res["systems"]["szz"]["hit@1"] == 1.0
    assert "blame_exactness" not in res


def test_diff_protocol_inputs_carry_no_reference_to_the_gold(hist, tmp_path):
    """The gold is what the fix's message names (``Fixes: <sha> ("subject")``, "follow-up to #41"): the
    question is the subject stripped of references, and the diff is read without the message, so neither
    input names the origin."""
    from neurongraph.bench.history import prepare

    with ngr.open(tmp_path / "d.db", embedder="hashing") as eng:
        prep = prepare(hist.path, eng, input="diff", szz_cache=tmp_path / "szz.json")
    assert prep.pairs
    for p in prep.pairs:
        diff = prep.diffs[id(p)].text
        assert diff.startswith("diff --git ") and "Fixes" not in diff and "Follow-up" not in diff
        assert "reverts commit" not in diff and "Introduced in" not in diff
        ws = json.dumps(prep.changes[id(p)].to_dict())
        for o in p.origins:
            sha = o.split(":", 1)[1]
            assert sha[:7] not in p.query and sha[:7] not in diff and sha[:7] not in ws
    f1 = next(p for p in prep.pairs if p.fix == "commit:" + hist.f1)
    assert "multipath" not in f1.query and "multipath" not in prep.diffs[id(f1)].text
