"""The search query is read once (retrieval/query.py): ``Engine.search`` builds one ``Query`` and every step
takes its fields — the BM25 terms, the CJK reading, the node keys and quoted titles, the identifiers and
the intent, whether it asks when something began — instead of reading the text again.  A real git history
ingested into a real SQLite store; the readers are counted where ``Query`` calls them."""

from __future__ import annotations

import pytest

import neurongraph as ngr
import neurongraph.retrieval.query as query_mod
from git_fixtures import Repo
from neurongraph.errors import InvalidArgument
from neurongraph.index import multilingual
from neurongraph.index.code_terms import query_identifiers
from neurongraph.index.tokenize import query_terms
from neurongraph.ingest import sync_source
from neurongraph.retrieval.code_evidence import query_intent
from neurongraph.retrieval.query import Query

QUESTIONS = [
    "which commit introduced route_flush_cache",  # identifiers and the intent: the code history answers
    "when did Geneve support begin?",  # asks when something began (origin)
    "what changed in 'src/route.c' and net/route.c",  # node keys and a quoted title
    "ルートのキャッシュを消す",  # CJK: the entry weights and the language gate read Query.cjk
    "flush",  # one word: names code
]


@pytest.fixture(scope="module")
def eng(tmp_path_factory):
    r = Repo(tmp_path_factory.mktemp("q") / "sw")
    r.commit("route: add the cache", {"net/route.c": "int route_cache;\n"})
    r.commit("route: add route_flush_cache()", {"net/route.c": "int route_cache;\nvoid route_flush_cache(void);\n"})
    r.commit("datapath: Add support for Geneve tunneling.", {"src/geneve.c": "a\n"})
    r.commit("geneve: Fix Geneve support for options.", {"src/geneve.c": "b\n"})
    for k in range(8):
        r.commit(f"misc: tidy module {k}", {f"src/m{k}.c": f"{k}\n"})
    e = ngr.open(tmp_path_factory.mktemp("db") / "q.db", embedder="hashing")
    sync_source(e, "git", str(r.path))
    yield e
    e.close()


def test_read_checks_the_text_and_of_passes_a_query_through():
    for bad in ("", "   ", "x" * 4001, "\udc80 lone surrogate", None):
        with pytest.raises(InvalidArgument):
            Query.read(bad)
    q = Query.read("fix `route_flush_cache()` in 'net/route.c'")
    assert Query.of(q) is q and Query.of("flush").text == "flush"


@pytest.mark.parametrize("text", QUESTIONS + ["Remove the xt action", "which change removed the ATM qdisc"])
def test_the_fields_are_the_readings_the_steps_used_to_make(text):
    q = Query(text)
    assert q.terms == tuple(query_terms(text))
    assert q.cjk == multilingual.is_cjk(text)
    assert q.identifiers == tuple(query_identifiers(text))
    assert q.intent == query_intent(text)
    assert q.words == tuple(text.split())
    assert q.names_code == (bool(q.identifiers) or bool(q.intent) or len(text.split()) <= 2)


def test_fields_are_read_on_first_use_and_kept():
    q = Query("which commit introduced route_flush_cache")
    assert "intent" not in vars(q) and "identifiers" not in vars(q)
    assert q.intent == "introduced"
    assert "identifiers" in vars(q)  # the intent of one word reads the identifiers, and keeps them
    assert q.keys == ("commit", "introduced", "route_flush_cache", "which")
    assert Query("see 'src/route.c' and `x.y`").quoted == ("src/route.c", "x.y")


@pytest.mark.parametrize("text", QUESTIONS)
def test_one_search_builds_one_query_and_reads_each_part_once(eng, monkeypatch, text):
    made: list[str] = []
    init = Query.__init__

    def counting_init(self: Query, *args: object, **kw: object) -> None:
        made.append(str(args[0] if args else kw["text"]))
        init(self, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(Query, "__init__", counting_init)
    reads: dict[str, int] = {}
    for name in ("query_terms", "is_cjk", "query_identifiers", "asks_origin"):
        real = getattr(query_mod, name)

        def counted(*args: object, _real=real, _name=name) -> object:
            reads[_name] = reads.get(_name, 0) + 1
            return _real(*args)

        monkeypatch.setattr(query_mod, name, counted)

    def no_second_read(*_: object) -> bool:
        raise AssertionError("a step read the text again instead of Query.cjk")

    monkeypatch.setattr(multilingual, "is_cjk", no_second_read)
    res = eng.search(text, 5, record=False)
    assert made == [text]  # one Query for the whole search
    assert all(n == 1 for n in reads.values()), reads
    assert reads.get("query_terms") == 1  # the lexical step always reads the terms
    assert reads.get("is_cjk") == 1  # the entry weights, the cross-lingual switch and the language gate share it
    assert res.query == text


def test_the_lexical_step_searches_the_querys_terms(eng, monkeypatch):
    seen: list[list[str]] = []
    real = eng._known_lexical

    def spy(terms, k, max_postings=None):
        seen.append(list(terms))
        return real(terms, k, max_postings)

    monkeypatch.setattr(eng, "_known_lexical", spy)
    eng.search("Geneve tunneling support", 5, record=False)
    assert seen and seen[0] == list(Query("Geneve tunneling support").terms)


def test_the_steps_answer_as_their_fields_say(eng):
    intro = eng.search("which commit introduced route_flush_cache", 5, record=False)
    assert intro.hits[0].title == "route: add route_flush_cache()" and intro.hits[0].scores["code"] > 0
    origin = eng.search("when did Geneve support begin?", 5, record=False)
    assert origin.hits[0].title.startswith("datapath: Add support for Geneve") and origin.hits[0].scores["origin"]
    named = eng.search("what changed in net/route.c", 10, record=False)
    assert "file:net/route.c" in [h.id for h in named.hits]  # a structural node the query names may be a hit


def test_an_invalid_query_is_refused_before_any_step(eng):
    with pytest.raises(InvalidArgument, match="non-empty"):
        eng.search("   ", 5, record=False)


def test_the_steps_keep_no_reader_of_their_own():
    """The readers live in retrieval/query.py only: a step that imported one again would read the text twice."""
    import neurongraph.engine as engine_mod
    import neurongraph.retrieval.code_evidence as code_mod
    import neurongraph.retrieval.filters as filters_mod
    import neurongraph.retrieval.pipeline as pipeline_mod

    assert not hasattr(pipeline_mod, "query_terms")
    assert not hasattr(engine_mod, "check_query")
    assert not hasattr(code_mod, "query_identifiers") and not hasattr(code_mod, "_INTRODUCED")
    assert not hasattr(filters_mod, "_QUOTED") and not hasattr(filters_mod, "_WORD_EDGES")
