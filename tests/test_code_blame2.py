"""Depth-2 blame through commits that only moved or renamed the lines (issue 46, retrieval/blame2.py): a line
whose last toucher moved it (a same-size block deleted in one file and inserted in another) or renamed an
identifier in it is blamed once more at that commit's parent, on the commit that wrote it, with an evidence
line; a toucher that really rewrote the line keeps its blame.  A git repository made in the test."""

from __future__ import annotations

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source
from neurongraph.retrieval import code_evidence as ce
from neurongraph.retrieval.blame2 import blame_through_moves
from neurongraph.retrieval.changes import WorkingSet

FN = "int check(int n)\n{\n\treturn n > limit;\n}\n"


def _moved(tmp_path):
    """lib/a.c's check() written by one commit, then moved unchanged to lib/b.c by another."""
    r = Repo(tmp_path / "moved")
    r.commit("Import", {"lib/a.c": "int a;\n", "lib/b.c": "int b;\n"})
    r.writer = r.commit("a.c: check the limit", {"lib/a.c": "int a;\n" + FN})
    r.mover = r.commit("move check() to b.c", {"lib/a.c": "int a;\n", "lib/b.c": "int b;\n" + FN})
    r.parent = r.commit("docs", {"README": "y\n"})
    r.diff = "--- a/lib/b.c\n+++ b/lib/b.c\n@@ -4 +4 @@\n-\treturn n > limit;\n+\treturn n >= limit;\n"
    return r


def test_a_moved_line_is_blamed_on_the_commit_that_wrote_it(tmp_path, monkeypatch):
    r = _moved(tmp_path)
    ws = WorkingSet.from_diff(r.diff).with_base(r.parent)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        hist = eng.code_history
        got = blame_through_moves(hist, [("lib/b.c", [4])], None, r.parent, max_terms=2)
        ids = eng.store.ids_by_idx({i for pair in got.moved for i in pair})
        assert [(ids[x], ids[y], n) for (x, y), n in got.moved.items()] == [
            ("commit:" + r.mover, "commit:" + r.writer, 1)
        ]
        kw = dict(changes=ws, record=False, result_types=("commit",), blame_recency=0.0)
        monkeypatch.setattr(ce, "BLAME2_WEIGHT", 0.0)
        off = {h.id: h for h in eng.search("limit check off by one", **kw).hits}
        monkeypatch.setattr(ce, "BLAME2_WEIGHT", 1.0)
        res = eng.search("limit check off by one", **kw)
    on = {h.id: h for h in res.hits}
    mover, writer = "commit:" + r.mover, "commit:" + r.writer
    assert off[mover].scores["blame"] == 1.0
    assert writer not in off or off[writer].scores.get("blame", 0.0) == 0.0
    assert on[writer].scores["blame"] == 1.0 and on[mover].scores["blame"] == 0.0
    assert any("only moved or renamed" in e and "line 4 of lib/b.c" in e for e in on[writer].evidence)
    assert res.hits[0].id == writer


def test_a_real_rewrite_keeps_its_blame(tmp_path):
    r = Repo(tmp_path / "rewrite")
    r.commit("Import", {"lib/a.c": "int a;\n" + FN})
    rewriter = r.commit("a.c: compare with the hard limit", {"lib/a.c": "int a;\n" + FN.replace("limit", "hard_max")})
    parent = r.commit("docs", {"README": "y\n"})
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        hist = eng.code_history
        # a same-size rewrite whose identifier changes are a rename counts as one when in-place rewrites count
        assert blame_through_moves(hist, [("lib/a.c", [4])], None, parent, max_terms=2).moved
        # with no identifier change allowed, or in-place rewrites not counted, the rewriter keeps the line
        assert not blame_through_moves(hist, [("lib/a.c", [4])], None, parent, max_terms=0).moved
        assert not blame_through_moves(hist, [("lib/a.c", [4])], None, parent, max_terms=2, in_place=False).moved
    assert rewriter


def test_blame_that_ends_at_the_first_commit_is_weighed_down(tmp_path, monkeypatch):
    """The repository's first commit imported the line: blame can go no further, so with a diff it says where
    the history starts, not what changed the line (``ROOT_BLAME``); lines given alone keep it."""
    r = Repo(tmp_path / "root")
    root = r.commit("Import the tree", {"lib/a.c": "int a;\n" + FN})
    later = r.commit("a.c: a second counter", {"lib/a.c": "int a;\nint b;\n" + FN})
    parent = r.commit("docs", {"README": "y\n"})
    diff = "--- a/lib/a.c\n+++ b/lib/a.c\n@@ -2,2 +2,2 @@\n-int b;\n-int check(int n)\n+long b;\n+int check(long n)\n"
    ws = WorkingSet.from_diff(diff).with_base(parent)
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        kw = dict(changes=ws, record=False, result_types=("commit",), blame_recency=0.0)
        monkeypatch.setattr(ce, "ROOT_BLAME", 1.0)
        off = {h.id: h for h in eng.search("counter width", **kw).hits}
        monkeypatch.setattr(ce, "ROOT_BLAME", 0.25)
        on = {h.id: h for h in eng.search("counter width", **kw).hits}
        # lines alone (no diff) ask who wrote them: there the first commit keeps its blame
        kw["changes"] = WorkingSet.from_specs(["lib/a.c:2-3"]).with_base(parent)
        spec = {h.id: h for h in eng.search("counter width", **kw).hits}
    assert off["commit:" + root].scores["blame"] == 0.5 and off["commit:" + later].scores["blame"] == 0.5
    assert on["commit:" + root].scores["blame"] == 0.125 and on["commit:" + later].scores["blame"] == 0.5
    assert any("first commit of the history" in e for e in on["commit:" + root].evidence)
    assert not any("first commit" in e for e in on["commit:" + later].evidence)
    assert spec["commit:" + root].scores["blame"] == 0.5
