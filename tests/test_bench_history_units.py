"""`ngr bench history`: a change is one unit (a PR, its merge and its branch commits; a branch commit's landing
merge), scored as found and said which; and the "B-SZZ newest first" row beside B-SZZ (issue 46)."""

from __future__ import annotations

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.bench.history import _canonical, _History, _Units, run_history_bench
from neurongraph.ingest import sync_source


def _merged_pr(tmp_path):
    r = Repo(tmp_path / "units")
    r.commit("Initial import", {"src/core.py": "def run():\n    return 1\n", "README": "units\n"})
    r.git("checkout", "-q", "-b", "opts")
    r.branch = r.commit("Parse the new option", {"src/core.py": "def run(opt):\n    return opt\n"})
    r.git("checkout", "-q", "main")
    r.main_side = r.commit("docs: describe run", {"README": "units, run\n"})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "opts", "-m", "Merge pull request #7 from dev/opts\n\nAn option for run")
    r.merge = r.git("rev-parse", "HEAD")
    r.git("checkout", "-q", "-b", "plain", r.main_side)
    r.plain = r.commit("Tidy README", {"README": "units: run\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "plain", "-m", "Merge branch 'plain'")
    r.plain_merge = r.git("rev-parse", "HEAD")
    return r


def test_a_pr_its_merge_and_its_branch_commits_are_one_unit(tmp_path):
    r = _merged_pr(tmp_path)
    c = lambda s: "commit:" + s  # noqa: E731
    with ngr.open(tmp_path / "u.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        hist = _History.read(eng)
    units = _Units(hist)
    assert units.unit(c(r.branch)) == units.unit("pr:7") == units.unit(c(r.merge)) == c(r.merge)
    assert units.unit(c(r.main_side)) == c(r.main_side)
    assert hist.landed[c(r.branch)] == c(r.merge) and hist.landed[c(r.plain)] == c(r.plain_merge)
    # the origin is the PR's merge: its branch commit or the PR counts, and says so
    assert units.gold([c(r.merge)]) == [[c(r.merge)]]
    assert units.how(c(r.branch), [c(r.merge)]) == "branch" and units.how("pr:7", [c(r.merge)]) == "pr"
    # the origin is a plain branch commit: the merge that landed it counts for it
    assert units.gold([c(r.plain)]) == [[c(r.plain), c(r.plain_merge)]]
    assert units.how(c(r.plain_merge), [c(r.plain)]) == "merge" and units.how(c(r.plain), [c(r.plain)]) == "commit"
    # one slot per unit in a ranking, the first hit standing for it
    raw: dict[str, str] = {}
    assert _canonical([c(r.branch), "pr:7", c(r.merge), c(r.main_side)], units, "commit:x", raw) == [
        c(r.merge),
        c(r.main_side),
    ]
    assert raw[c(r.merge)] == c(r.branch)


def test_szz_newest_first_row(tmp_path):
    """Two commits wrote the fix's lines: B-SZZ puts the one that wrote more first, the newest-first rule the
    newer one (here the origin)."""
    r = Repo(tmp_path / "newest")
    r.commit("Initial import", {"lib/a.c": "int a;\nint b;\nint c;\n"})
    r.commit("lib: filler", {"README": "x\n"})
    origin = r.commit("lib: make c wider", {"lib/a.c": "int a;\nint b;\nlong c;\n"})
    r.commit(f"lib: all three overflow\n\nFixes: {origin[:12]}", {"lib/a.c": "long a;\nlong b;\nlong long c;\n"})
    with ngr.open(tmp_path / "n.db", embedder="hashing") as eng:
        res = run_history_bench(r.path, eng, input="diff", exactness=0, systems={"szz": {}, "szz-newest": {}})
    (pp,) = res["per_pair"]
    assert pp["rank"] == {"szz": 2, "szz-newest": 1}
    assert res["systems"]["szz-newest"]["hit@1"] == 1.0 and res["systems"]["szz"]["hit@1"] == 0.0
