"""Questions about what git does not hold are answered "not recorded in git" with nothing cited (no commits
that merely share the question's words); questions about what git does hold are not caught by that rule.

The wordings here are this test's own (not the real-use sets'): the rule is about what is asked."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.ask.unrecorded import not_recorded
from neurongraph.ingest import sync_source

UNRECORDED = [
    "Did the nightly build pass on arm64 for the last tag?",
    "were the CI jobs green before the 2.0 release?",
    "what is the pass rate of the integration test suite?",
    "how many times has the 3.1 wheel been downloaded?",
    "How popular is it — how many stars does the project have?",
    "what did the reviewers say about the first version of the scheduler series?",
    "who left the most review comments last year?",
    "What feedback did the memory pool patches get upstream?",
    "how many open bugs are there right now?",
    "which issues labeled 'regression' are still unfixed?",
    "Is the crash report in bugzilla still open?",
    "which patches were rejected on the mailing list in 2025?",
    "how many pull requests were never merged?",
    "how many open pull requests are waiting for review?",
    "how many people are subscribed to ovs-discuss?",
    "how many emails did the dev mailing list get last month?",
    "what was the mailing list traffic in 2023?",
    "how many replies did the scheduler series get?",
    "what was the average review turnaround in 2021?",
    "how long did the CI pipeline take for the 2.0 release?",
    "whats the median time a patch waited before being applied in 2019",
    "how many runner hours did our github workflows use last quarter?",
    "what did folks say on the dev mailing list about the allocator series?",
    "how long was pull request 88 open?",
    "how long did it take for #41 to get merged?",
    "how many thumbs-up reactions did PR #25 get?",
    "who on the dev mailing list objected to the allocator removal?",
    "who approved PR #30 on github and how long was it open before merge?",
    "which labels did the maintainers put on pull request 12?",
    "what share of our users enable the experimental scheduler?",
    "how many companies are running the daemon in production?",
    "which distributions package the 2.0 release?",
    "how many projects depend on the parser library?",
    "what is the CVSS score of the overflow fixed last spring?",
    "how long does a clean build of the tree take on a laptop?",
    "what was the vote tally on moving the docs to markdown?",
    "how many people approved PR #40 in the review UI?",
    "what review state did patchwork show for the scheduler series?",
    "which team do the maintainers report to, and who is their manager?",
]
RECORDED = [
    "which commit fixed the CI build?",
    "which commit sped up the CI workflow?",
    "which commits mention the mailing list address?",
    "how long was the bug in parse_args open before it was fixed?",
    "who changed the workflows under .github/ last?",
    "Which commits mention feedback?",
    "who acked the scheduler fix?",
    "who gives the most Reviewed-by tags?",
    "which commit added the download command?",
    "what changed in src/stars.c in 2024?",
    "how many commits did the release team make?",
    "which commit fixed issue #12?",
    "which commits were reverted in 2022?",
    "which patches were merged in 2025?",
    "how many commit messages mention the mailing list?",
    "which commit fixed CVE-2023-1234?",
    "which commit sped up the build?",
    "how many people contributed to the parser in 2023?",
    "which commit added labels to the log output?",
    "when was the daemon first run by the test suite?",
    "which commit added support for the package manager?",
    "who approved the most patches with an Acked-by?",
    "how long did it take from the first commit to the 1.0 tag?",
    "what commit closed issue #12?",
    "what is the average number of files per commit in 2020?",
]


class _Store:  # a store without a GitHub export (reached only for the kinds an export can hold)
    def ids_with_prefix(self, prefix, limit):
        return []


class _Engine:
    store = _Store()


@pytest.mark.parametrize("q", UNRECORDED)
def test_questions_git_cannot_answer_are_said_so(q):
    assert not_recorded(_Engine(), q) is not None


@pytest.mark.parametrize("q", RECORDED)
def test_questions_git_answers_are_not_caught(q):
    assert not_recorded(_Engine(), q) is None


def test_an_unrecorded_question_cites_nothing_and_an_export_reopens_the_tracker(tmp_path):
    r = Repo(tmp_path / "proj")
    r.commit("Fix the CI build on arm64", {"ci.yml": "x\n"})
    r.commit("Handle open bugs in the tracker sync (fixes #4)", {"a.py": "x\n"})
    with ngr.open(tmp_path / "h.db", embedder="hashing") as eng:
        sync_source(eng, "git", r.path)
        out = eng.ask("did the CI build pass on arm64?")
        assert out["refs"] == [] and out["rows"] == [] and out["answer"].startswith("Not recorded in git")
        assert out["result"]["kind"] == "not_recorded"
        assert eng.ask("how many open bugs are there right now?")["answer"].startswith("Not recorded in git")
        from neurongraph.ingest import IngestBatch, apply_batch

        issue = ngr.Node("issue:9", "issue", "Crash on start", "boom", {"state": "open"})
        apply_batch(eng, IngestBatch(kind="github", source="proj", nodes=[issue]))
        assert not eng.ask("how many open bugs are there right now?")["answer"].startswith("Not recorded in git")
