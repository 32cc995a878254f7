"""One hit per change (issue 43): a PR, the commit that landed it and its branch commits are one search result,
shown by a node with text and carrying ``change`` (the PR, its landing commit, its commits, the ranked nodes
folded in); a placeholder ``issue:N`` folds into the change that names it; a PR that merges other PRs
("Merge stable into main") keeps its branch commits apart; ``result_types`` of one type turns grouping off;
``limit`` changes are returned when there are that many.  A real git repository and SQLite store each."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ingest import sync_source


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("change") / "net")
    r.base = r.commit("Add vlan tables", {"src/vlan.c": "int vlan(void);\n"})
    r.git("checkout", "-q", "-b", "feature")
    r.b1 = r.commit("vlan: count tagged frames per port", {"src/vlan.c": "int vlan(int n);\n"})
    r.b2 = r.commit("vlan: expose tagged frame counters", {"src/stats.c": "int stats;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git(
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #7 from ada/feature\n\nvlan tagged frame counters",
    )
    r.merge = r.git("rev-parse", "HEAD")
    r.squash = r.commit("vlan: drop untagged frames early (#9)", {"src/vlan.c": "int vlan(int n, int m);\n"})
    r.fix = r.commit("qdisc: fix overflow in rate table\n\nFixes #12", {"src/q.c": "int q;\n"})
    for k in range(4):
        r.commit(f"vlan: tidy frame helper {k}", {f"src/h{k}.c": f"int h{k};\n"})
    return r


@pytest.fixture(scope="module")
def store(repo, tmp_path_factory):
    """The store of ``repo``, synced once (the tests only search it, without recording)."""
    path = tmp_path_factory.mktemp("store") / "g.db"
    with ngr.open(path, embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
    return path


def _db(repo, path):
    return ngr.open(path, embedder="hashing")


def _change_of(res):
    """Every node id a search's hits stand for, hit by hit."""
    out = []
    for h in res.hits:
        ids = {h.id}
        if h.change:
            ids |= set(h.change["folded"]) | set(h.change["commits"]) | {h.change["pr"]} - {None}
        out.append(ids)
    return out


def test_a_pr_its_merge_and_its_branch_commits_are_one_hit(repo, store):
    with _db(repo, store) as eng:
        res = eng.search("vlan tagged frame counters", limit=5, record=False)
        c = lambda sha: "commit:" + sha  # noqa: E731
        ids = [h.id for h in res.hits]
        assert "pr:7" not in ids  # the placeholder never stands above (or beside) its commits
        mine = [h for h in res.hits if h.change and h.change["pr"] == "pr:7"]
        assert len(mine) == 1  # one hit for the change
        ch = mine[0].change
        assert mine[0].id in {c(repo.merge), c(repo.b1), c(repo.b2)}
        assert ch["landed_by"] == [c(repo.merge)]
        assert set(ch["commits"]) == {c(repo.merge), c(repo.b1), c(repo.b2)} and ch["commits_total"] == 3
        assert sum(1 for i in ids if i in {c(repo.merge), c(repo.b1), c(repo.b2)}) == 1
        units = _change_of(res)
        assert all(not (a & b) for k, a in enumerate(units) for b in units[k + 1 :])  # no change twice
        assert [h.ranks["final"] for h in res.hits] == list(range(1, len(res.hits) + 1))
        d = res.to_dict()["hits"]
        assert d[ids.index(mine[0].id)]["change"]["pr"] == "pr:7" and "change" in d[0]


def test_a_squash_commit_and_its_pr_are_one_hit(repo, store):
    with _db(repo, store) as eng:
        res = eng.search("PR #9 drop untagged frames early", limit=5, record=False)
        ids = [h.id for h in res.hits]
        assert ids[0] == "commit:" + repo.squash and "pr:9" not in ids
        assert res.hits[0].change["pr"] == "pr:9" and res.hits[0].change["landed_by"] == ids[:1]


def test_a_placeholder_issue_folds_into_the_commit_that_names_it(repo, store):
    with _db(repo, store) as eng:
        assert eng.get_node("issue:12")["metadata"]["placeholder"] is True
        whole = eng.search("Issue #12", limit=20, record=False, result_types=("issue",))
        assert [h.id for h in whole.hits][:1] == ["issue:12"]  # it ranks first on its own
        res = eng.search("Issue #12", limit=5, record=False)
        ids = [h.id for h in res.hits]
        assert "issue:12" not in ids
        fix = res.hits[ids.index("commit:" + repo.fix)]
        assert "issue:12" in fix.change["folded"] and fix.change["pr"] is None


def test_one_type_asked_for_is_not_grouped(repo, store):
    with _db(repo, store) as eng:
        res = eng.search("vlan tagged frame counters", limit=10, record=False, result_types=("commit",))
        ids = {h.id for h in res.hits}
        assert {"commit:" + repo.b1, "commit:" + repo.b2, "commit:" + repo.merge} <= ids
        assert all(h.change is None for h in res.hits)


def test_limit_changes_after_grouping(repo, store):
    with _db(repo, store) as eng:
        res = eng.search("vlan frames", limit=6, record=False)
        assert len(res.hits) == 6  # 8 changes match: grouping does not shorten the list
        units = _change_of(res)
        assert all(not (a & b) for k, a in enumerate(units) for b in units[k + 1 :])


def test_a_pr_that_merges_other_prs_keeps_their_commits_apart(tmp_path):
    r = Repo(tmp_path / "net")
    r.commit("Add vlan tables", {"src/vlan.c": "int vlan;\n"})
    r.git("checkout", "-q", "-b", "stable")
    r.git("checkout", "-q", "-b", "fix")
    a = r.commit("vlan: fix tag parsing on short frames", {"src/vlan.c": "int vlan2;\n"})
    r.git("checkout", "-q", "stable")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "fix", "-m", "Merge pull request #3 from ada/fix\n\nvlan tag parsing")
    m3 = r.git("rev-parse", "HEAD")
    b = r.commit("vlan: fix counter wrap on stable", {"src/c.c": "int c;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "stable", "-m", "Merge pull request #5 from ada/stable\n\nMerge stable into main")
    with ngr.open(tmp_path / "g.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        res = eng.search("vlan fix", limit=10, record=False)
        by_id = {h.id: h for h in res.hits}
        shown = set(by_id)
        assert "commit:" + b in shown  # a stable commit of its own, not folded into PR #5
        pr3 = [h for h in res.hits if h.change and h.change["pr"] == "pr:3"]
        assert len(pr3) == 1 and {"commit:" + a, "commit:" + m3} >= {pr3[0].id}
        pr5 = [h for h in res.hits if h.change and h.change["pr"] == "pr:5"]
        assert all(h.change["commits"] == h.change["landed_by"] for h in pr5)  # its branch is other changes


def test_a_branch_longer_than_max_branch_is_a_history_merged_in(repo, store, monkeypatch):
    """A merged branch of more than MAX_BRANCH commits (mypy's PR #7378: mypyc's 644) is no single change."""
    from neurongraph.retrieval import change_groups

    monkeypatch.setattr(change_groups, "MAX_BRANCH", 1)  # PR #7's branch has 2
    with _db(repo, store) as eng:
        res = eng.search("vlan tagged frame counters", limit=10, record=False)
        ids = [h.id for h in res.hits]
        assert {"commit:" + repo.b1, "commit:" + repo.b2} <= set(ids)  # each a hit of its own again
        pr7 = [h for h in res.hits if h.change and h.change["pr"] == "pr:7"]
        assert all(h.change["commits"] == ["commit:" + repo.merge] for h in pr7)


def test_a_node_folded_into_a_hit_can_be_reported_used_on_its_trace(repo, tmp_path):
    """The trace keeps the nodes a hit stands for (``folded_into``): reading a branch commit of the PR hit and
    reporting it used is feedback on that search, not ``node_not_in_trace``."""
    import shutil

    src = tmp_path / "g.db"
    with ngr.open(src, embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        res = eng.search("vlan tagged frame counters", limit=5)
        hit = next(h for h in res.hits if h.change and h.change["pr"] == "pr:7")
        member = next(c for c in hit.change["commits"] if c != hit.id)
        stored = {h["id"]: h for h in eng.get_trace(res.trace_id)["hits"]}
        assert stored[member]["folded_into"] == hit.id
        events = [(member, "selected"), (member, "validated"), (member, "used")]
        receipt = eng.record_source_use(res.trace_id, events, idempotency_key="k1")
        assert any(t["node_id"] == member for t in receipt["transitions"])
    shutil.rmtree(tmp_path, ignore_errors=True)
