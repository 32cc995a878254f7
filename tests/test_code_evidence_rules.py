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
