"""B-SZZ baseline (bench/szz.py) on a real repository made in the test: old-side parsing, blame of
deleted/modified non-blank lines at the fix's parent, ranking (count, ties newer first), pure additions."""

from __future__ import annotations

from git_fixtures import Repo
from neurongraph.bench.szz import SzzCache, blame_lines, old_side, read_diffs, szz_rank
from neurongraph.ingest.git import GitRepo


def _lines(*rows: str) -> str:
    return "".join(r + "\n" for r in rows)


def _repo(tmp_path):
    r = Repo(tmp_path / "tool")
    r.a = r.commit("add parser", {"p.c": _lines("int a;", "", "int b;", "int c;"), "q.c": _lines("q1", "q2")})
    r.b = r.commit("parser: more", {"p.c": _lines("int a;", "", "int b;", "int c;", "int d;", "int e;")})
    r.c = r.commit("q: change", {"q.c": _lines("q1", "Q2")})
    # the fix: modifies a (from A), deletes the blank line, rewrites d and e (from B), edits Q2 (from C)
    r.fix = r.commit("fix all", {"p.c": _lines("long a;", "int b;", "int c;", "long d;", "long e;"), "q.c": "q1\nq3\n"})
    r.add = r.commit("only adds", {"p.c": _lines("long a;", "int b;", "int c;", "long d;", "long e;", "int f;")})
    return r


def test_old_side_counts_deleted_and_modified_lines_and_skips_blank_ones():
    diff = (
        "diff --git a/x.c b/x.c\n--- a/x.c\n+++ b/x.c\n@@ -3,2 +3 @@ ctx\n-int a;\n-\n+int b;\n"
        "@@ -9,0 +9 @@\n+added\n"
        "diff --git a/old.c b/new.c\nrename from old.c\nrename to new.c\n--- a/old.c\n+++ b/new.c\n@@ -7 +7 @@\n"
        "--- a comment line starting with dashes\n+x\n"
        "diff --git a/n.c b/n.c\nnew file mode 100644\n--- /dev/null\n+++ b/n.c\n@@ -0,0 +1 @@\n+new\n"
    )
    lines, total = old_side(diff)
    assert lines == {"x.c": [3], "old.c": [7]}  # blank line 4 not blamed; the rename's old path; no /dev/null
    assert total == 3


def test_szz_blames_the_fix_lines_at_its_parent_and_ranks_by_count(tmp_path):
    r = _repo(tmp_path)
    g = GitRepo(r.path)
    diffs = read_diffs(g, [r.fix, r.add])  # one git process for both
    fix = diffs[r.fix]
    assert fix.lines == {"p.c": [1, 5, 6], "q.c": [2]} and fix.old_lines == 5
    times = {r.a: 1.0, r.b: 2.0, r.c: 3.0}
    ranked = szz_rank(g, fix, r.fix + "^", times)
    assert ranked == [(r.b, 2), (r.c, 1), (r.a, 1)]  # most lines first; the 1-line tie: newer (C) first
    assert blame_lines(g, r.fix + "^", "p.c", [1, 5, 6]) == {1: r.a, 5: r.b, 6: r.b}  # several -L, one call
    assert blame_lines(g, r.fix + "^", "gone.c", [1]) is None
    # a pure addition has nothing to blame: a miss
    add = diffs[r.add]
    assert add.old_lines == 0 and szz_rank(g, add, r.add + "^", times) == []


def test_szz_cache_reuses_rankings(tmp_path):
    r = _repo(tmp_path)
    g = GitRepo(r.path)
    fix = read_diffs(g, [r.fix])[r.fix]
    cache = SzzCache(tmp_path / "szz.json")
    first = cache.rank(g, fix, r.fix + "^", {})
    cache.save()
    again = SzzCache(tmp_path / "szz.json")
    assert again.rank(g, fix, r.fix + "^", {}) == first and again.computed == 0
