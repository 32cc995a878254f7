"""Issue 46, "blame names only a wrong commit": when a commit newer than every blamed one changed a name the
fix's lines use (def/use code evidence), the old writer's blame share is weighed down by the age gap
(``NEWER_CODE_POWER``), and the hit says so; a newer change with weak code evidence, or none newer than the
blamed commit, leaves blame alone.  A git repository made in the test."""

from __future__ import annotations

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source
from neurongraph.retrieval import code_evidence as ce
from neurongraph.retrieval.changes import WorkingSet

DAY = 86400


def _old_line_new_decl(tmp_path):
    """lib/a.c's line was written by an import 300 days before the fix; 5 days before it a change in another
    file changed the name the line uses (`slot_len`, in lib/a.h)."""
    r = Repo(tmp_path / "newer")
    r.commit("Start", {"README": "start\n"})  # a root commit of its own (blame at a root is weighed down)
    r.old = r.commit("Import", {"lib/a.c": "int n = slot_len;\n", "lib/a.h": "int slot_len;\n", "README": "x\n"})
    r.t += 295 * DAY
    r.new = r.commit("a.h: make the slot length unsigned", {"lib/a.h": "unsigned slot_len_u;\n"})
    r.t += 5 * DAY
    r.commit("docs", {"README": "y\n"})
    r.parent = r.git("rev-parse", "HEAD")
    r.diff = "--- a/lib/a.c\n+++ b/lib/a.c\n@@ -1 +1 @@\n-int n = slot_len;\n+int n = slot_len_u;\n"
    return r


def _search(eng, r, **kw):
    ws = WorkingSet.from_diff(r.diff).with_base(r.parent)
    return eng.search("slot overflow", changes=ws, record=False, result_types=("commit",), **kw)


def test_a_newer_change_to_a_name_the_lines_use_weighs_old_blame_down(tmp_path, monkeypatch):
    r = _old_line_new_decl(tmp_path)
    old, new = "commit:" + r.old, "commit:" + r.new
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        monkeypatch.setattr(ce, "NEWER_CODE_MIN", 0.1)
        monkeypatch.setattr(ce, "NEWER_CODE_POWER", 0.0)
        off = {h.id: h for h in _search(eng, r).hits}
        monkeypatch.setattr(ce, "NEWER_CODE_POWER", 1.0)
        monkeypatch.setattr(ce, "NEWER_CODE_DAYS", 30.0)
        on_res = _search(eng, r)
    on = {h.id: h for h in on_res.hits}
    assert off[old].scores["blame"] == 1.0 and off[new].scores["code"] >= 0.1  # it wrote the line; the other
    # changed the name it uses, 295 days later: the import keeps (30 + 5) / (30 + 300) of its share
    assert abs(on[old].scores["blame"] - (30 + 5) / (30 + 300)) < 0.01
    assert on[new].scores.get("blame", 0.0) == 0.0 and on[new].scores["code"] == off[new].scores["code"]
    assert any("weighed ×0.11" in e and "5 days before" in e for e in on[old].evidence), on[old].evidence
    assert on_res.hits[0].id == new


def test_weak_or_older_code_evidence_leaves_blame_alone(tmp_path, monkeypatch):
    r = _old_line_new_decl(tmp_path)
    old = "commit:" + r.old
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        monkeypatch.setattr(ce, "NEWER_CODE_POWER", 1.0)
        monkeypatch.setattr(ce, "NEWER_CODE_MIN", 2.5)  # above any code score (def/use weighs at most 2)
        strict = {h.id: h for h in _search(eng, r).hits}
    assert strict[old].scores["blame"] == 1.0
    assert not any("weighed" in e for e in strict[old].evidence)
    # the name changed first, the line was written 300 days later: the writer is the newest, blame stays
    q = Repo(tmp_path / "older")
    q.commit("Start", {"README": "start\n"})
    q.commit("Import", {"lib/a.h": "int slot_len;\n", "README": "x\n"})
    q.commit("a.h: make the slot length unsigned", {"lib/a.h": "unsigned slot_len_u;\n"})
    q.t += 300 * DAY
    writer = q.commit("a.c: use the slot length", {"lib/a.c": "int n = slot_len;\n"})
    q.parent = q.commit("docs", {"README": "y\n"})
    q.diff = r.diff
    with ngr.open(tmp_path / "q.db", embedder="hashing") as eng:
        sync_source(eng, "git", q.path)
        monkeypatch.setattr(ce, "NEWER_CODE_MIN", 0.1)
        hits = {h.id: h for h in _search(eng, q).hits}
    assert hits["commit:" + writer].scores["blame"] == 1.0
