"""The GitHub export reader on gh-shaped JSON (tests/fixtures/github: `gh issue/pr list --json`, `gh api` pages)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from neurongraph.errors import InvalidArgument
from neurongraph.ingest.github import read_github

FIX = Path(__file__).parent / "fixtures" / "github"
SHA2 = "3f786850e387550fdab836ed7e6dc881de23001b"
SHA4 = "89e6c98d92887913cadf06b2adb97f26cde4849b"
SHA11 = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def _nodes(b):
    return {n.id: n for n in b.nodes}


def _edges(b):
    return {(e.src, e.rel, e.dst): e for e in b.edges}


@pytest.fixture(scope="module")
def gh():
    return read_github(FIX / "gh")


@pytest.fixture(scope="module")
def rest():
    return read_github(FIX / "rest")


def test_gh_cli_nodes_and_metadata(gh):
    assert gh.kind == "github" and gh.source == "acme/widgets" and gh.complete
    nodes = _nodes(gh)
    assert {i for i in nodes if not i.startswith("comment:")} == {"issue:1", "issue:3", "pr:2", "pr:4", "pr:5"}
    i1 = nodes["issue:1"]
    assert i1.type == "issue" and i1.title == "Login fails when the clock drifts"
    assert "clock drifts by more than five minutes" in i1.text and "\r" not in i1.text
    md = i1.metadata
    assert md["state"] == "closed" and md["labels"] == ["bug", "auth"] and md["author"] == "maria"
    assert md["created"] == "2026-03-01T08:30:00Z" and md["closed"] == "2026-03-04T10:00:00Z"
    assert md["time"] == 1772353800 and md["number"] == 1
    assert md["url"] == "https://github.com/acme/widgets/issues/1"
    assert md["source"] == "acme/widgets" and md["ingest"] == "github"
    p4 = nodes["pr:4"]
    assert p4.type == "pull_request" and p4.metadata["state"] == "merged"
    assert p4.metadata["merged"] == "2026-03-04T10:00:00Z" and p4.metadata["merge_commit"] == SHA4
    assert p4.metadata["head"] == "clock-leeway" and p4.metadata["base"] == "main"
    p5 = nodes["pr:5"]
    assert p5.metadata["state"] == "open" and p5.metadata["draft"] is True and "merge_commit" not in p5.metadata
    json.dumps([n.metadata for n in gh.nodes])  # JSON-serialisable


def test_comments_long_become_nodes_short_fold_into_the_thread(gh):
    nodes, edges = _nodes(gh), _edges(gh)
    c = nodes["comment:1:1"]
    assert c.type == "comment" and c.text.startswith("I bisected it")
    assert c.metadata["thread"] == "issue:1" and c.metadata["owner"] == "issue:1" and c.metadata["author"] == "tom"
    assert c.metadata["time"] == 1772442900 and "Login fails when the clock drifts" in c.title
    assert ("comment:1:1", "part_of", "issue:1") in edges
    # "+1" (comment 2) is too short to be a source: folded into the thread, no node
    assert "comment:1:2" not in nodes and "maria: +1" in nodes["issue:1"].text
    assert nodes["issue:1"].metadata["comments"] == 2


def test_gh_cli_edges_with_evidence(gh):
    edges = _edges(gh)
    closes = edges[("pr:4", "closes", "issue:1")]
    assert closes.meta["by"] == "github" and closes.meta["owner"] == "pr:4"
    assert "closingIssuesReferences" in closes.meta["evidence"]
    dup = edges[("issue:3", "duplicate_of", "issue:1")]
    assert dup.meta["evidence"] == "Duplicate of #1" and dup.meta["owner"] == "issue:3"
    assert edges[("pr:2", "merged_as", f"commit:{SHA2}")].meta["evidence"] == f"mergeCommit.oid {SHA2}"
    assert ("pr:4", "merged_as", f"commit:{SHA4}") in edges
    assert not any(r == "merged_as" and s == "pr:5" for s, r, _ in edges)  # open PR: no merge commit
    assert edges[("issue:1", "refs", "pr:2")].meta["evidence"] == "#2"  # "#2" resolved to a PR
    assert edges[("pr:5", "refs", "pr:4")].meta["owner"] == "pr:5"
    sha = edges[("issue:1", "refs", "commit:a94a8fe5ccb19ba61c4c0873d391e987982fbbd3")]
    assert sha.meta["in"] == "comment:1:1"  # found in a comment, owned by the thread
    assert sha.meta["owner"] == "issue:1"
    # a closing reference is not also a plain refs edge; "#99" (not in the export) and other/repo#5 are left out
    assert ("pr:4", "refs", "issue:1") not in edges
    assert not any(d.endswith(":99") for _, _, d in edges)
    assert not any(s == "pr:4" and d.endswith(":5") for s, _, d in edges)
    assert gh.stats["refs_unresolved"] == 1 and gh.stats["refs_other_repo"] == 1
    for e in gh.edges:
        assert e.meta["by"] == "github" and e.meta["owner"]


def test_rest_api_pages_pulls_and_comments(rest):
    nodes, edges = _nodes(rest), _edges(rest)
    assert rest.source == "acme/widgets"
    # the paginated issues file (two arrays back to back) is read whole; #11 is a PR in the issues API
    assert nodes["issue:10"].type == "issue" and nodes["issue:12"].type == "issue"
    assert nodes["pr:11"].type == "pull_request" and nodes["pr:11"].metadata["state"] == "merged"
    assert nodes["pr:11"].metadata["head"] == "writeback" and nodes["pr:11"].metadata["author"] == "kim"
    assert nodes["issue:10"].metadata["labels"] == ["perf"] and nodes["issue:10"].metadata["author"] == "sam"
    # merged_at + merge_commit_sha -> merged_as; a closed, unmerged PR's test-merge sha is not a merge
    assert edges[("pr:11", "merged_as", f"commit:{SHA11}")].meta["evidence"].startswith("merge_commit_sha")
    assert nodes["pr:13"].metadata["state"] == "closed"
    assert not any(s == "pr:13" and r == "merged_as" for s, r, _ in edges)
    # "Resolves #10." in a PR body closes it; comments from the comments endpoint join their thread
    assert edges[("pr:11", "closes", "issue:10")].meta["evidence"] == "Resolves #10"
    assert edges[("issue:12", "duplicate_of", "issue:10")].meta["evidence"] == "Duplicate of #10"
    c = nodes["comment:11:1"]
    assert c.metadata["url"].endswith("#issuecomment-502") and ("comment:11:1", "part_of", "pr:11") in edges
    assert rest.complete


def test_gh_and_rest_of_one_repo_read_together():
    b = read_github(FIX)
    ids = set(_nodes(b))
    assert {"issue:1", "pr:4", "issue:10", "pr:11"} <= ids
    assert b.stats["files"] == 5 and b.stats["repository"] == "acme/widgets"


def test_same_thread_in_two_files_is_one_node(tmp_path):
    (tmp_path / "issues.json").write_text(
        json.dumps(
            [
                {
                    "number": 11,
                    "title": "Write back",
                    "body": "",
                    "state": "closed",
                    "html_url": "https://github.com/acme/widgets/pull/11",
                    "pull_request": {"merged_at": "2026-04-05T08:00:00Z"},
                    "user": {"login": "kim"},
                    "created_at": "2026-04-02T08:00:00Z",
                }
            ]
        )
    )
    shutil.copy(FIX / "rest" / "pulls.json", tmp_path / "pulls.json")
    b = read_github(tmp_path)
    assert [n.id for n in b.nodes if n.id.endswith(":11")] == ["pr:11"]
    assert (("pr:11", "merged_as", f"commit:{SHA11}")) in _edges(b)


def test_single_file_is_not_complete_and_source_override():
    b = read_github(FIX / "gh" / "prs.json", source="widgets")
    assert not b.complete and b.source == "widgets"
    assert {n.metadata["source"] for n in b.nodes} == {"widgets"}
    # without urls in the export the file name tells a PR list from an issue list
    assert {n.type for n in b.nodes if n.id.startswith("pr:")} == {"pull_request"}


def test_kind_from_file_name_when_the_export_has_no_url(tmp_path):
    (tmp_path / "prs.json").write_text(json.dumps([{"number": 7, "title": "A change"}]))
    (tmp_path / "issues.json").write_text(json.dumps([{"number": 8, "title": "A bug"}]))
    b = read_github(tmp_path)
    assert {n.id for n in b.nodes} == {"pr:7", "issue:8"}
    assert b.source == tmp_path.name  # no url: the folder name


def test_paginate_slurp_and_single_object(tmp_path):
    (tmp_path / "slurp.json").write_text(json.dumps([[{"number": 1, "title": "a"}], [{"number": 2, "title": "b"}]]))
    (tmp_path / "view.json").write_text(json.dumps({"number": 3, "title": "c", "url": "https://github.com/o/r/pull/3"}))
    b = read_github(tmp_path)
    assert {n.id for n in b.nodes} == {"issue:1", "issue:2", "pr:3"}


@pytest.mark.parametrize(
    "content, message",
    [
        ('[{"number": 1, "title": "a"},\n {"title": "no number"}]', "item 1"),
        ('{"title": "an object"}', "without 'number'"),
        ('"just a string"', "JSON str"),
        ("[1, 2]", "item 0: is a JSON int"),
        ('[{"number": "x1"}]', "'number' must be a positive integer"),
        ('[{"number": 1,\n  "title": "broken"\n', "line 3, column 1"),
        ('[{"number": 1}] garbage', "line 1, column 17"),
        ("", "empty file"),
    ],
)
def test_bad_input_names_the_file_and_the_item(tmp_path, content, message):
    f = tmp_path / "export.json"
    f.write_text(content)
    with pytest.raises(InvalidArgument) as exc:
        read_github(f)
    assert str(f) in str(exc.value) and message in str(exc.value)


def test_not_utf8_missing_path_and_two_repositories(tmp_path):
    f = tmp_path / "latin1.json"
    f.write_bytes('[{"number": 1, "title": "caf\u00e9"}]'.encode("latin-1"))
    with pytest.raises(InvalidArgument, match="not UTF-8"):
        read_github(f)
    with pytest.raises(InvalidArgument, match="no such file"):
        read_github(tmp_path / "nope")
    d = tmp_path / "two"
    d.mkdir()
    (d / "a.json").write_text(json.dumps([{"number": 1, "url": "https://github.com/a/x/issues/1"}]))
    (d / "b.json").write_text(json.dumps([{"number": 2, "url": "https://github.com/b/y/issues/2"}]))
    with pytest.raises(InvalidArgument, match="several repositories"):
        read_github(d)


def test_large_file_skipped_with_a_reason(tmp_path):
    (tmp_path / "big.json").write_text(json.dumps([{"number": 1, "title": "x" * 5000}]))
    (tmp_path / "small.json").write_text(json.dumps([{"number": 2, "title": "ok"}]))
    b = read_github(tmp_path, max_file_bytes=1000)
    assert [n.id for n in b.nodes] == ["issue:2"]
    assert b.skipped[0]["item"].endswith("big.json") and "limit" in b.skipped[0]["reason"]


def test_unknown_fields_ignored_and_nulls_tolerated(tmp_path):
    (tmp_path / "x.json").write_text(
        json.dumps(
            [
                {
                    "number": 4,
                    "title": None,
                    "body": None,
                    "labels": None,
                    "author": None,
                    "comments": None,
                    "state": None,
                    "createdAt": None,
                    "reactionGroups": [{"content": "HEART"}],
                    "milestone": {"title": "v1"},
                }
            ]
        )
    )
    b = read_github(tmp_path)
    n = b.nodes[0]
    assert n.id == "issue:4" and n.title == "Issue #4" and n.text == "" and "time" not in n.metadata


def test_empty_folder_is_an_error_not_a_prune_of_everything(tmp_path):
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InvalidArgument, match="no \\*.json files"):
        read_github(tmp_path)


def test_repository_names_compare_case_insensitively(tmp_path):
    (tmp_path / "a.json").write_text(
        json.dumps(
            [
                {"number": 1, "url": "https://github.com/Acme/Widgets/issues/1"},
                {"number": 2, "url": "https://github.com/acme/widgets/pull/2"},
            ]
        )
    )
    b = read_github(tmp_path)
    assert b.source == "Acme/Widgets" and {n.id for n in b.nodes} == {"issue:1", "pr:2"}


def test_reviews_and_review_comments_join_their_pull_request(tmp_path):
    (tmp_path / "prs.json").write_text(
        json.dumps(
            [
                {
                    "number": 9,
                    "title": "Faster eviction",
                    "url": "https://github.com/acme/widgets/pull/9",
                    "closingIssuesReferences": 5,
                    "comments": [],
                    "reviews": [
                        {
                            "author": {"login": "ana"},
                            "body": "The write-back path still takes the lock twice; see #9.",
                            "state": "CHANGES_REQUESTED",
                            "submittedAt": "2026-04-02T10:00:00Z",
                        },
                        {
                            "author": {"login": "sam"},
                            "body": "",
                            "state": "APPROVED",
                            "submittedAt": "2026-04-03T10:00:00Z",
                        },
                    ],
                }
            ]
        )
    )
    (tmp_path / "review-comments.json").write_text(
        json.dumps(
            [
                {
                    "pull_request_url": "https://api.github.com/repos/acme/widgets/pulls/9",
                    "id": 77,
                    "path": "src/cache.c",
                    "body": "This loop can run while another thread holds the page; take the page lock first.",
                    "user": {"login": "kim"},
                    "created_at": "2026-04-02T09:00:00Z",
                    "html_url": "https://github.com/acme/widgets/pull/9#discussion_r77",
                }
            ]
        )
    )
    b = read_github(tmp_path)
    nodes = _nodes(b)
    assert nodes["comment:9:1"].metadata["author"] == "kim" and "page lock" in nodes["comment:9:1"].text
    assert nodes["comment:9:2"].metadata["author"] == "ana"  # the review with a body; the empty one is not
    assert "comment:9:3" not in nodes and nodes["pr:9"].metadata["comments"] == 2


def test_deeply_nested_json_is_an_error_not_a_crash(tmp_path):
    f = tmp_path / "deep.json"
    f.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InvalidArgument, match="nested too deeply"):
        read_github(f)
