"""The aggregate prior: a merge commit that merged no pull request repeats the commits it merges (each a node
of its own), so the git ingest marks it ``aggregate: true`` and a search weighs it by ``aggregate_weight``; a
PR's merge commit (the PR's own commit) is not marked; without marks, or with the weight at 1, nothing changes;
the engine keeps the marks in step with ingests."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.errors import InvalidArgument
from neurongraph.ingest import sync_source

FILES = ("src/vlan.c",)


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "net")
    r.base = r.commit("Add vlan tables", {"src/vlan.c": "int vlan(void);\n" * 5})
    r.git("checkout", "-q", "-b", "next")
    r.fix = r.commit("vlan: fix tag parsing on short frames", {"src/vlan.c": "int vlan(int n);\n" * 5})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "next", "-m", "Merge branch 'next' vlan tag parsing on short frames")
    r.branch_merge = r.git("rev-parse", "HEAD")
    r.git("checkout", "-q", "-b", "feature")
    r.feat = r.commit("vlan: tag statistics", {"src/vlan.c": "int vlan(int n); int stats;\n" * 5})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge pull request #7 from ada/feature\n\nvlan tag statistics")
    r.pr_merge = r.git("rev-parse", "HEAD")
    return r


def _search(eng, **kw):
    res = eng.search("vlan tag parsing on short frames", files=FILES, limit=10, record=False, **kw)
    return [h.id for h in res.hits], {h.id: h.scores for h in res.hits}


def test_a_branch_merge_is_marked_and_weighed_down_a_pr_merge_is_not(repo, tmp_path):
    c = lambda sha: "commit:" + sha  # noqa: E731
    with ngr.open(tmp_path / "g.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        assert eng.get_node(c(repo.branch_merge))["metadata"]["aggregate"] is True
        assert "aggregate" not in eng.get_node(c(repo.pr_merge))["metadata"]  # the PR's own commit
        assert "aggregate" not in eng.get_node(c(repo.fix))["metadata"]
        order, s = _search(eng)
        off_order, off = _search(eng, aggregate_weight=1.0)
        m = c(repo.branch_merge)
        assert s[m]["aggregate"] == 0.5 and s[c(repo.fix)]["aggregate"] == 1.0
        assert s[m]["final"] == pytest.approx(0.5 * off[m]["final"])
        for other in (c(repo.fix), c(repo.pr_merge), c(repo.base)):
            assert s[other]["final"] == pytest.approx(off[other]["final"])  # nobody else moves
        assert "aggregate" not in off[m]  # the prior off: no factor shown
        assert order.index(c(repo.fix)) < order.index(m)


def test_without_marks_nothing_changes(tmp_path):
    with ngr.open(tmp_path / "q.db", embedder="hashing") as eng:
        eng.add_nodes([ngr.Node(f"n{i}", "note", f"vlan tag parsing note {i}", "short frames") for i in range(6)])
        a = eng.search("vlan tag parsing", limit=6, record=False)
        b = eng.search("vlan tag parsing", limit=6, record=False, aggregate_weight=1.0)
        assert [(h.id, h.scores) for h in a.hits] == [(h.id, h.scores) for h in b.hits]
        assert all("aggregate" not in h.scores for h in a.hits)


def test_marks_follow_the_change_feed(tmp_path):
    """Marks read once, then kept in step: a node marked (or unmarked) after the first search is seen."""
    with ngr.open(tmp_path / "f.db", embedder="hashing") as eng:
        eng.add_nodes([ngr.Node(f"n{i}", "note", "vlan tag parsing", f"frame {i}") for i in range(3)])
        assert all("aggregate" not in h.scores for h in eng.search("vlan tag parsing", record=False).hits)
        eng.add_nodes([ngr.Node("n1", "note", "vlan tag parsing", "frame 1", {"aggregate": True})])
        s = {h.id: h.scores for h in eng.search("vlan tag parsing", record=False).hits}
        assert s["n1"]["aggregate"] == 0.5 and s["n0"]["aggregate"] == 1.0
        with ngr.open(tmp_path / "f.db", embedder="hashing") as other:  # another engine reads them on first use
            s2 = {h.id: h.scores for h in other.search("vlan tag parsing", record=False).hits}
            assert s2["n1"]["aggregate"] == 0.5
        eng.add_nodes([ngr.Node("n1", "note", "vlan tag parsing", "frame 1", {"aggregate": False})])
        assert all("aggregate" not in h.scores for h in eng.search("vlan tag parsing", record=False).hits)


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "half"])
def test_the_weight_is_a_factor_in_0_1(tmp_path, bad):
    with ngr.open(tmp_path / "w.db", embedder="hashing") as eng, pytest.raises(InvalidArgument):
        eng.search("anything", aggregate_weight=bad)
