"""`ngr ingest git`: a real repository made in the test (and the project's own history), synced
incrementally into a real SQLite store; every typed edge with its evidence."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.errors import InvalidArgument
from neurongraph.ingest import sync_source
from neurongraph.ingest.git import READER_VERSION, read_git


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "widget")
    r.c1 = r.commit("Add the packet parser", {"src/parser.c": "int parse(void);\n" * 20})
    r.c2 = r.commit("Add vlan support (#12)", {"src/vlan.c": "int vlan(void);\n"})
    r.c3 = r.commit(
        f"Fix vlan crash on empty frames\n\nThe tag was read before the length check.\n\n"
        f'Fixes: {r.c2[:12]} ("Add vlan support (#12)")\nSigned-off-by: Ada Dev <ada@example.org>',
        {"src/vlan.c": "int vlan(int n);\n"},
    )
    r.c4 = r.commit(
        f'Revert "Fix vlan crash on empty frames"\n\nThis reverts commit {r.c3}.', {"src/vlan.c": "int vlan(void);\n"}
    )
    r.c5 = r.commit("Tidy the vlan table\n\nThis is a follow-up to #12.", {"src/vlan.c": "int vlan(void); /* t */\n"})
    r.c6 = r.commit(
        'Parser: reject short headers\n\nFixes: deadbeef1234 ("Add the packet parser")',
        {"src/parser.c": "int parse(int);\n" * 20},
    )
    r.git("mv", "src/parser.c", "src/parse.c")
    r.c7 = r.commit("Rename the parser source")
    r.git("checkout", "-q", "-b", "feature")
    r.c8 = r.commit("Better error messages", {"src/errors.c": "const char *err;\n"})
    r.git("checkout", "-q", "main")
    r.t += 3600
    r.git(
        "merge",
        "-q",
        "--no-ff",
        "feature",
        "-m",
        "Merge pull request #20 from ada/feature\n\nBetter error messages for users",
    )
    r.merge = r.git("rev-parse", "HEAD")
    return r


def _edges(eng, rel):
    rows = eng.store.conn.execute(
        "SELECT s.id, d.id, e.meta FROM edges e JOIN nodes s ON s.idx=e.src JOIN nodes d ON d.idx=e.dst "
        "JOIN relations r ON r.id=e.rel_id WHERE r.name=?",
        (rel,),
    ).fetchall()
    return {(s, d): json.loads(m) for s, d, m in rows}


def test_commits_files_and_typed_edges(repo, tmp_path):
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)
        assert s["new_nodes"] == s["nodes"] and s["embedded"] > 0
        c = lambda sha: "commit:" + sha  # noqa: E731
        n = eng.get_node(c(repo.c3))
        assert n["type"] == "commit" and n["title"] == "Fix vlan crash on empty frames"
        assert "Fixes:" in n["text"] and "Signed-off-by" in n["text"]  # trailers kept
        md = n["metadata"]
        assert md["source"] == "widget" and md["ingest"] == "git" and md["repo"] == "widget"
        assert md["author"] == "Ada Dev" and md["parents"] == [repo.c2]
        assert md["files"] == [{"path": "src/vlan.c", "added": 1, "deleted": 1}]
        assert isinstance(md["time"], int) and md["commit_date"].endswith("Z")
        fixes = _edges(eng, "fixes")
        assert fixes[(c(repo.c3), c(repo.c2))]["resolved_by"] == "sha"
        assert "Fixes: " + repo.c2[:12] in fixes[(c(repo.c3), c(repo.c2))]["evidence"]
        assert fixes[(c(repo.c6), c(repo.c1))]["resolved_by"] == "subject"  # wrong sha, quoted subject
        assert (c(repo.c4), c(repo.c3)) in _edges(eng, "reverts")
        fu = _edges(eng, "follows_up")
        assert fu[(c(repo.c5), "pr:12")]["evidence"].startswith("follow-up to #12")
        merged = _edges(eng, "merged_in")
        assert (c(repo.c2), "pr:12") in merged and (c(repo.merge), "pr:20") in merged
        assert eng.get_node("pr:12")["type"] == "pull_request"
        m = eng.get_node(c(repo.merge))
        assert m["title"] == "Better error messages for users"  # a PR merge is indexed by the PR title
        assert m["metadata"]["subject"].startswith("Merge pull request #20") and m["metadata"]["pr"] == 20
        assert m["metadata"]["files"] == [
            {"path": "src/errors.c", "added": 1, "deleted": 0, "status": "A"}
        ]  # first-parent diff
        touches = _edges(eng, "touches")
        assert (c(repo.c1), "file:src/parser.c") in touches and (c(repo.c7), "file:src/parse.c") in touches
        assert touches[(c(repo.c1), "file:src/parser.c")]["added"] == 20
        ren = _edges(eng, "renamed_to")
        assert ren[("file:src/parser.c", "file:src/parse.c")]["owner"] == c(repo.c7)
        assert eng.get_node("file:src/parse.c")["type"] == "file"
        # every derived edge says who derived it and from which node
        assert all(
            m["by"] == "git" and m["owner"]
            for rel in ("fixes", "touches", "merged_in")
            for m in _edges(eng, rel).values()
        )
        hits = eng.search("vlan crash on empty frames", limit=3)
        assert c(repo.c3) in [h.id for h in hits.hits[:2]]  # the fix and its revert (which quotes it)


def test_incremental_sync_keeps_feedback_and_handles_force_push(repo, tmp_path):
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        n0 = eng.stats()["nodes"]
        again = sync_source(eng, "git", repo.path)
        assert again["adapter"]["up_to_date"] and again["embedded"] == 0 and eng.stats()["nodes"] == n0
        # feedback on an old node, then new commits arrive
        res = eng.search("vlan crash empty frames", limit=5)
        target = "commit:" + repo.c3
        assert target in [h.id for h in res]
        eng.record_source_use(res.trace_id, [(target, st) for st in ("selected", "validated", "used")])
        before = eng.store.conn.execute("SELECT count(*) FROM weight_changes").fetchone()[0]
        stats_before = eng.node_stats([target])
        c9 = repo.commit("Handle jumbo frames in vlan (#31)", {"src/vlan.c": "int vlan(long);\n"})
        s = sync_source(eng, "git", repo.path)
        assert s["new_nodes"] == 2 and s["written_node_types"] == {"commit": 1, "pull_request": 1}
        assert s["embedded"] == 1 and s["unchanged_nodes"] == 1  # the commit; pr:31 takes the cached label "PR #"
        assert eng.get_node("commit:" + c9)
        assert eng.store.conn.execute("SELECT count(*) FROM weight_changes").fetchone()[0] == before
        after = eng.node_stats([target])[target]
        assert after["used_count"] == stats_before[target]["used_count"] == 1
        assert after["activation_at"] == stats_before[target]["activation_at"] and after["activation"] > 0.4
        # force-push: drop c9, commit something else; only the rewritten commit is read
        repo.git("reset", "-q", "--hard", "HEAD~1")
        c10 = repo.commit("Handle jumbo frames differently", {"src/vlan.c": "int vlan(short);\n"})
        s = sync_source(eng, "git", repo.path)
        assert s["adapter"]["commits"] == 1 and s["adapter"]["force_pushed"] == ["HEAD"]
        assert eng.get_node("commit:" + c10)


def test_refs_and_pending_edges_resolve_later(repo, tmp_path):
    """A #N that names no known PR is an ``issue:N`` placeholder at once (its ``pr:N`` edge waits); an
    export's real issue later replaces the placeholder and keeps the edge."""
    repo.commit("Crash when the table is empty\n\nSee #77 for the report.")
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        s = sync_source(eng, "git", repo.path)
        assert s["edges_pending"] >= 1  # pr:77: git cannot tell an issue from a PR nobody merged
        placeholder = eng.get_node("issue:77")
        assert placeholder is not None and placeholder["metadata"]["placeholder"] is True
        assert any(d == "issue:77" for (_, d) in _edges(eng, "refs"))
        from neurongraph.ingest import IngestBatch, apply_batch

        b = IngestBatch(
            kind="github", source="ada/widget", nodes=[ngr.Node("issue:77", "issue", "Empty table crash", "boom")]
        )
        apply_batch(eng, b)
        assert eng.get_node("issue:77")["title"] == "Empty table crash"
        assert any(d == "issue:77" for (_, d) in _edges(eng, "refs"))
        sync_source(eng, "git", repo.path, full=True)  # a later git sync never puts the placeholder back
        assert eng.get_node("issue:77")["title"] == "Empty table crash"


def test_derived_edges_follow_the_text(tmp_path):
    """When an owner node's text changes, edges it derived and no longer produces are retracted;
    learned weight on an edge that survives is kept."""
    from neurongraph.ingest import IngestBatch, apply_batch, derived_edge

    def batch(text, targets):
        return IngestBatch(
            kind="markdown",
            source="wiki",
            nodes=[
                ngr.Node("md:a.md", "page", "A", text),
                *[ngr.Node(f"md:{t}.md", "page", t.upper(), "x") for t in "bcd"],
            ],
            edges=[derived_edge("md:a.md", "links_to", f"md:{t}.md", by="markdown") for t in targets],
        )

    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        apply_batch(eng, batch("links to b and c", "bc"))
        eng.store.conn.execute("UPDATE edges SET plastic = 0.25 WHERE dst = (SELECT idx FROM nodes WHERE id='md:b.md')")
        same = apply_batch(eng, batch("links to b and c", "bc"))
        assert same["embedded"] == 0 and same["edges_written"] == 0 and same["updated_nodes"] == 0
        r = apply_batch(eng, batch("links to b and d", "bd"))
        assert r["edges_retracted"] == 1 and r["updated_nodes"] == 1
        assert set(_edges(eng, "links_to")) == {("md:a.md", "md:b.md"), ("md:a.md", "md:d.md")}
        assert eng.store.get_edge("md:a.md", "links_to", "md:b.md")["plastic"] == 0.25
        # pruning a complete listing deletes what the source no longer has
        b = batch("links to b", "b")
        b.nodes = [n for n in b.nodes if n.id != "md:d.md"]
        r = apply_batch(eng, b, prune=True)
        assert r["nodes_pruned"] == 1 and eng.store.get_node("md:d.md") is None


def test_linker_retracts_links_when_text_changes(tmp_path):
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        eng.add_nodes(
            [
                ngr.Node("a", "page", "Quantum Widget", "The widget."),
                ngr.Node("b", "page", "Usage notes", "See Quantum Widget for details."),
            ]
        )
        eng.link()
        assert ("b", "a") in _edges(eng, "mentions")
        eng.add_nodes([ngr.Node("b", "page", "Usage notes", "Nothing to see here any more.")])
        info = eng.link()
        assert ("b", "a") not in _edges(eng, "mentions") and info["edges_retracted"] >= 1


def test_project_own_history(tmp_path):
    root = Path(__file__).resolve().parents[1]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    count = int(
        subprocess.run(
            ["git", "-C", str(root), "rev-list", "--count", "HEAD"], capture_output=True, text=True, check=True
        ).stdout
    )
    b = read_git(root)
    assert b.stats["commits"] == count
    assert sum(1 for n in b.nodes if n.type == "commit") == count
    assert any(e.rel == "touches" and e.dst == "file:README.md" for e in b.edges)


def test_cli_ingest_git(repo, tmp_path):
    from typer.testing import CliRunner

    from neurongraph.cli.main import app

    db = str(tmp_path / "cli.db")
    run = lambda *a: CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *a])  # noqa: E731
    r = run("ingest", "git", str(repo.path), "--json")
    assert r.exit_code == 0, r.output
    s = json.loads(r.stdout)
    assert s["written_node_types"]["commit"] == 9 and s["written_edge_relations"]["fixes"] == 2
    r = run("ingest", "git", str(repo.path), "--json")
    assert json.loads(r.stdout)["adapter"]["up_to_date"] is True
    r = run("ingest", "git", str(repo.path))
    assert "already up to date" in r.stdout
    # user mistakes: clear codes, exit 2, nothing written
    for args, code in (
        (["ingest", "git", str(tmp_path / "nope")], "file_not_found"),
        (["ingest", "git", str(tmp_path)], "git_error"),
        (["ingest", "git", str(repo.path), "--ref", "no-such-branch"], "git_error"),
        (["ingest", "git", str(repo.path), "--prune"], "invalid_argument"),
        (["ingest", "git"], "invalid_argument"),
    ):
        r = run(*args, "--json")
        assert r.exit_code == 2, (args, r.output)
        assert json.loads(r.stdout)["error"]["code"] == code


def test_bad_repository_is_a_clear_error(tmp_path):
    with pytest.raises(InvalidArgument):
        read_git(tmp_path / "missing")
    (tmp_path / "file").write_text("x")
    with pytest.raises(InvalidArgument):
        read_git(tmp_path / "file")
    (tmp_path / "history.bundle").write_text("x")  # a bundle is cloned first: the message says how
    with pytest.raises(InvalidArgument, match="git clone .*history.bundle DIR"):
        read_git(tmp_path / "history.bundle")


def test_source_name_from_a_github_origin_and_full_resync(repo, tmp_path):
    from neurongraph.ingest.git import GitRepo

    assert GitRepo(repo.path).name == "widget"
    repo.git("remote", "add", "origin", "git@github.com:ada/widget.git")
    assert GitRepo(repo.path).name == "ada/widget"  # the name a GitHub export of it gets
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        first = sync_source(eng, "git", repo.path)
        assert eng.get_node("commit:" + repo.c1)["metadata"]["source"] == "ada/widget"
        full = sync_source(eng, "git", repo.path, full=True)  # reads everything, rewrites nothing
        assert full["adapter"]["commits"] == first["adapter"]["commits"]
        assert full["new_nodes"] == full["updated_nodes"] == full["embedded"] == full["edges_written"] == 0


def test_another_embedder_never_reembeds_a_large_store_silently(repo, tmp_path, monkeypatch):
    """A store built with one embedder, opened by the CLI with another: refused with a clear code above
    the limit (nothing embedded, nothing written); --reembed allows it."""
    from typer.testing import CliRunner

    import neurongraph.cli.main as m

    db = str(tmp_path / "e.db")
    run = lambda *a: CliRunner().invoke(m.app, ["--db", db, *a])  # noqa: E731
    assert run("--embedder", "hashing", "ingest", "git", str(repo.path), "--json").exit_code == 0
    monkeypatch.setattr(m, "REEMBED_LIMIT", 5)
    r = run("--embedder", "hashing:64", "search", "vlan", "--json")
    assert r.exit_code == 2, r.output
    e = json.loads(r.stdout)["error"]
    assert e["code"] == "reembed_required" and "hashing:256" in e["message"]
    import sqlite3

    con = sqlite3.connect(db)
    assert con.execute("SELECT count(*) FROM embeddings WHERE model = 'hashing:64'").fetchone()[0] == 0
    con.close()
    r = run("--embedder", "hashing:64", "--reembed", "search", "vlan", "--json")
    assert r.exit_code == 0, r.output and json.loads(r.stdout)["hits"]


def test_bare_repository_and_a_named_ref(repo, tmp_path):
    bare = tmp_path / "widget.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(repo.path), str(bare)], check=True)
    b = read_git(bare, refs=["main"])
    widget = f"{repo.path.parent.name}/widget"  # a local remote's last two parts: never a bare name
    assert b.source == widget and b.stats["commits"] == 9  # 8 on main + the merged branch commit
    roots = {k: v for k, v in b.state.items() if k.startswith("ingest.git-root.")}
    assert len(roots) == 1 and set(roots.values()) == {widget}  # the root commit names the source
    assert {k: v for k, v in b.state.items() if k not in roots} == {
        f"ingest.git-tips.{widget}": json.dumps({"HEAD": repo.merge, "main": repo.merge}, sort_keys=True),
        f"ingest.git-refs.{widget}": json.dumps({"refs": ["main"], "tags": True}),
        f"ingest.git-reader.{widget}": str(READER_VERSION),
        f"ingest.git-path.{widget}": str(bare.resolve()),
    }


def test_a_store_synced_by_another_reader_version_is_read_again_once(repo, tmp_path):
    """Incremental syncs never revisit old commits, so a store made by an older reader would keep that
    reader's view of them for good: a changed READER_VERSION makes the next sync a full read (nothing
    unchanged rewritten or re-embedded), and the one after is incremental again."""
    from neurongraph.ingest.git import reader_key

    with ngr.open(tmp_path / "v.db", embedder="hashing") as eng:
        first = sync_source(eng, "git", repo.path)
        assert first["adapter"]["full_reread"] and eng.store.get_meta(reader_key("widget")) == str(READER_VERSION)
        assert sync_source(eng, "git", repo.path)["adapter"]["up_to_date"]
        # as an older reader left it: no version stamp, and a commit's node without what today's reader derives
        node = eng.get_node("commit:" + repo.c3)
        eng.store.set_meta(reader_key("widget"), "1")
        old = ngr.Node(node["id"], node["type"], node["title"], node["text"], {**node["metadata"], "files_total": -1})
        eng.add_nodes([old])
        s = sync_source(eng, "git", repo.path)
        assert s["adapter"]["full_reread"] and s["adapter"]["commits"] > 0 and not s["adapter"]["up_to_date"]
        assert s["updated_nodes"] == 1 and s["embedded"] == 0  # only the stale node is rewritten
        assert eng.get_node("commit:" + repo.c3)["metadata"]["files_total"] == 1
        assert eng.store.get_meta(reader_key("widget")) == str(READER_VERSION)
        assert sync_source(eng, "git", repo.path)["adapter"]["up_to_date"]  # incremental again


def test_a_revert_without_gits_line_links_by_its_subject(tmp_path):
    """Reverts written by hand: ``Revert "<subject>"`` with no "This reverts commit" line links to the newest
    earlier commit with that subject; ``Revert commit <sha> …`` to that commit (reader 8)."""
    r = Repo(tmp_path / "hand")
    first = r.commit("flow: Split flow_extract", {"flow.c": "a\n"})
    again = r.commit("flow: Split flow_extract", {"flow.c": "b\n"})  # the same patch applied twice
    by_subject = r.commit('Revert "flow: Split flow_extract"\n\nIt was planned to use this code.', {"flow.c": "a\n"})
    dot = r.commit("Fix dot2pic make dependencies", {"Makefile": "x\n"})
    by_sha = r.commit(f'Revert commit {dot[:9]} ("Fix dot2pic make dependencies")', {"Makefile": "y\n"})
    unknown = r.commit('Revert "a subject no commit has"', {"Makefile": "z\n"})
    eng = ngr.open(str(tmp_path / "h.db"), embedder="hashing")
    try:
        sync_source(eng, "git", str(r.path))
        reverts = set(_edges(eng, "reverts"))
        assert (f"commit:{by_subject}", f"commit:{again}") in reverts  # the newest earlier one, not {first}
        assert (f"commit:{by_sha}", f"commit:{dot}") in reverts
        assert not any(s == f"commit:{unknown}" for s, _ in reverts)
        assert (f"commit:{by_subject}", f"commit:{first}") not in reverts
    finally:
        eng.close()


def test_a_full_reread_drops_the_edges_the_new_reader_no_longer_derives(repo, tmp_path):
    """An unchanged commit keeps its node, but under a new reader version its edges must be the new reader's:
    an upgraded store holds the same edges as a fresh ingest (another reader's edges and user edges stay)."""
    from neurongraph.ingest.git import reader_key

    def edges(eng) -> set[tuple[str, str, str]]:
        return set(_edges(eng, "follows_up")) | set(_edges(eng, "reverts")) | set(_edges(eng, "fixes"))

    with ngr.open(tmp_path / "fresh.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        fresh = edges(eng)
    with ngr.open(tmp_path / "old.db", embedder="hashing") as eng:
        sync_source(eng, "git", repo.path)
        rv, target = "commit:" + repo.c4, "commit:" + repo.c2
        # as an older reader left it: an edge today's reader does not derive, owned by an unchanged commit
        eng.add_edges([ngr.Edge(rv, "follows_up", target, meta={"by": "git", "owner": rv})])
        eng.add_edges([ngr.Edge(rv, "refs", "commit:" + repo.c1, meta={"by": "github", "owner": rv})])
        eng.store.set_meta(reader_key("widget"), "7")
        s = sync_source(eng, "git", repo.path)
        assert s["adapter"]["full_reread"] and s["updated_nodes"] == 0 and s["edges_retracted"] == 1
        assert edges(eng) == fresh and (rv, target) not in set(_edges(eng, "follows_up"))
        assert (rv, "commit:" + repo.c1) in set(_edges(eng, "refs"))  # another reader's edge is not this one's
        assert sync_source(eng, "git", repo.path)["edges_retracted"] == 0  # incremental again: nothing more
