"""Issue 46's blame and code-credit rules, on a git repository made in the test: recency among the blamed
commits (the newer of two blamed commits wins when recency is on), and code credit only for identifiers
(a plain English word of the question is not code unless the diff names it; a token many commits changed
gives its adders little)."""

from __future__ import annotations

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source
from neurongraph.retrieval import code_evidence as ce
from neurongraph.retrieval.changes import WorkingSet

DAY = 86400


def _two_writers(tmp_path):
    """lib/a.c: two lines from an import 200 days before the fix, one from a change 3 days before it."""
    r = Repo(tmp_path / "rec")
    r.commit("Start", {"README": "start\n"})  # a root commit of its own (blame at a root is weighed down)
    r.old = r.commit("Import the table code", {"lib/a.c": "int a;\nint b;\nint c;\n"})
    r.t += 197 * DAY
    r.new = r.commit("table: widen the last slot", {"lib/a.c": "int a;\nint b;\nlong c;\n"})
    r.t += 3 * DAY
    r.commit("docs: mention the table", {"README": "table\n"})
    r.parent = r.git("rev-parse", "HEAD")
    r.parent_t = r.t
    r.diff = (
        "--- a/lib/a.c\n+++ b/lib/a.c\n@@ -1,3 +1,3 @@\n-int a;\n-int b;\n-long c;\n+long a;\n+long b;\n+long long c;\n"
    )
    return r


def test_recency_among_blamed_commits_lets_the_newer_one_win(tmp_path):
    r = _two_writers(tmp_path)
    ws = WorkingSet.from_diff(r.diff).with_base(r.parent)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        kw = dict(changes=ws, as_of=r.parent_t, record=False, result_types=("commit",))
        off = eng.search("slots overflow", blame_recency=0.0, **kw)
        on = eng.search("slots overflow", blame_recency=1.0, blame_recency_days=30, **kw)
        default = eng.search("slots overflow", **kw)  # the defaults: recency on (r = 1, d = 30 days)
    blame_off = {h.id: h.scores["blame"] for h in off.hits}
    blame_on = {h.id: h.scores["blame"] for h in on.hits}
    old, new = "commit:" + r.old, "commit:" + r.new
    # without recency: the import wrote two of the three lines and comes first
    assert blame_off[old] > blame_off[new] and off.hits[0].id == old
    # with it: the import is 200 days older than the newest blamed commit: (30 + 3) / (30 + 200) of its share
    assert blame_on[new] == blame_off[new]
    assert abs(blame_on[old] - blame_off[old] * (30 + 3) / (30 + 200)) < 0.01
    assert on.hits[0].id == new and default.hits[0].id == new
    ev = next(h.evidence for h in on.hits if h.id == old)
    assert any("200 days before the lines' commit" in e for e in ev), ev


def test_a_plain_word_is_code_only_when_the_diff_names_it(tmp_path, monkeypatch):
    r = Repo(tmp_path / "words")
    r.commit("Import", {"lib/a.c": "int a;\n"})
    tmpl = r.commit("Add the report template", {"doc/report.txt": "The neighbour table report.\n"})
    r.commit("table: count entries", {"lib/a.c": "int a;\nint entries;\n"})
    parent = r.git("rev-parse", "HEAD")
    diff = "--- a/lib/a.c\n+++ b/lib/a.c\n@@ -2 +2 @@\n-int entries;\n+long entries;\n"
    ws = WorkingSet.from_diff(diff).with_base(parent)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        hist = eng.code_history
        monkeypatch.setattr(ce, "PLAIN_WORDS_FROM_DIFF", False)
        assert "neighbour" in ce._query_terms(hist, "neighbour overflow", ws)
        monkeypatch.setattr(ce, "PLAIN_WORDS_FROM_DIFF", True)
        assert "neighbour" not in ce._query_terms(hist, "neighbour overflow", ws)  # the diff never names it
        assert "entries" in ce._query_terms(hist, "entries overflow", ws)  # the diff's own identifier
        assert "neighbour" in ce._query_terms(hist, "which commit introduced neighbour", None)  # no diff: as asked
        res = eng.search("neighbour overflow", changes=ws, record=False)
        assert all(h.id != "commit:" + tmpl or h.scores.get("code", 0) == 0 for h in res.hits)


def test_a_token_many_commits_changed_gives_its_adders_little(tmp_path):
    r = Repo(tmp_path / "common")
    r.commit("Import", {"lib/a.c": "int a;\n"})
    for k in range(12):
        r.commit(f"lib: step {k}", {f"lib/s{k}.c": f"int err; int step{k};\n"})
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        hist = eng.code_history
        _, full, _ = hist.term_matches(["err"], None, side_weights=(1.0, 0.0))
        _, rare, _ = hist.term_matches(["err"], None, side_weights=(1.0, 0.0), rare_df=2)
        _, own, _ = hist.term_matches(["step3"], None, side_weights=(1.0, 0.0), rare_df=2)
    assert full.max() == 1.0  # alone, a common token's adders all get full credit
    assert rare.max() < 0.3  # measured against a term two commits changed, it is worth little
    assert own.max() == 1.0  # a term one commit changed keeps its full credit


def test_the_recent_changers_of_a_name_the_fix_touches_get_code_credit(tmp_path):
    """def/use: the fix edits a line of lib/a.c that uses `slot_len`; the commit that last added a use of it,
    in another file, is credited (code) and says why.  (The store keeps per-commit count changes of each
    name: a commit that rewrites a line and keeps the name's count, a type change in place, is not seen.)"""
    r = Repo(tmp_path / "defuse")
    r.commit("Import", {"lib/a.c": "int n = slot_len;\n", "lib/a.h": "int slot_len;\n", "README": "x\n"})
    decl = r.commit("b.c: a second slot", {"lib/b.c": "int m = slot_len * 2;\n"})
    r.commit("docs", {"README": "y\n"})
    parent = r.git("rev-parse", "HEAD")
    diff = "--- a/lib/a.c\n+++ b/lib/a.c\n@@ -1 +1 @@\n-int n = slot_len;\n+long n = slot_len;\n"
    ws = WorkingSet.from_diff(diff).with_base(parent)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        res = eng.search("slot overflow", changes=ws, record=False, result_types=("commit",))
    hit = next(h for h in res.hits if h.id == "commit:" + decl)
    assert hit.scores["code"] > 0 and hit.scores.get("blame", 0) == 0  # it wrote none of the fix's lines
    assert any("recently changed `slot_len`" in e for e in hit.evidence), hit.evidence


def test_blame_on_a_pull_requests_branch_commit_counts_for_its_merge(tmp_path):
    r = Repo(tmp_path / "prs")
    r.commit("Import", {"src/core.py": "def run():\n    return 1\n"})
    r.git("checkout", "-q", "-b", "opts")
    branch = r.commit("Parse the new option", {"src/core.py": "def run(opt):\n    return opt\n"})
    r.git("checkout", "-q", "main")
    r.commit("docs", {"README": "x\n"})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "opts", "-m", "Merge pull request #7 from dev/opts\n\nAn option for run")
    merge = r.git("rev-parse", "HEAD")
    diff = "--- a/src/core.py\n+++ b/src/core.py\n@@ -2 +2 @@\n-    return opt\n+    return opt or 0\n"
    ws = WorkingSet.from_diff(diff).with_base(merge)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        res = eng.search("option is None", changes=ws, record=False, result_types=("commit",), limit=20)
    blame = {h.id: h.scores.get("blame", 0.0) for h in res.hits}
    assert blame["commit:" + branch] == 1.0
    assert blame["commit:" + merge] == ce.PR_CREDIT  # the PR's merge: PR_CREDIT of its branch commits' share
    ev = next(h.evidence for h in res.hits if h.id == "commit:" + merge)
    assert any("merged PR #7" in e for e in ev), ev
