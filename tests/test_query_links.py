"""Query-side linking end to end: names in the question seed the graph, ambiguity is resolved by
the query itself, and the question's own capitals count as evidence of a name."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.link import Linker, LinkerConfig, LinkInput

PEOPLE = [
    ngr.Node(
        "sh:f", "passage", "Scott Howell (footballer)", "Scott Howell is an English footballer who plays as a striker."
    ),
    ngr.Node(
        "sh:c",
        "passage",
        "Scott Howell (political consultant)",
        "Scott Howell is an American political consultant. He worked with Rudy Giuliani on campaigns.",
    ),
    ngr.Node("rg", "passage", "Rudy Giuliani", "Rudy Giuliani was mayor of New York City."),
    ngr.Node("x", "passage", "Lawn care", "Mowing schedules for the office lawn."),
]


@pytest.fixture
def people(engine):
    engine.add_nodes(PEOPLE)
    engine.link()
    return engine


def test_named_nodes_seed_the_graph(people):
    res = people.search("Rudy Giuliani", limit=4, record=False)
    assert "rg" in res.seeds


def test_ambiguous_name_keeps_full_activation_only_for_the_reading_the_query_matches(people):
    res = people.search(
        "Scott Howell is a consultant who has worked with the mayor of what city?", limit=4, record=False
    )
    by_id = {h.id: h for h in res}
    consultant, footballer = by_id["sh:c"], by_id["sh:f"]
    assert {"sh:c", "sh:f"} <= set(res.seeds)
    assert consultant.scores["seed_score"] > footballer.scores["seed_score"]
    # the better-matching reading seeds at full strength, the other at its fraction of it
    assert consultant.scores["graph"] == pytest.approx(1.0)
    # (it may hold more through a graph path from the consultant, never the full seed strength)
    share = footballer.scores["seed_score"] / consultant.scores["seed_score"]
    assert share - 1e-9 <= footballer.scores["graph"] < 1.0
    assert [h.id for h in res][:2] == ["sh:c", "rg"]  # the consultant's link outranks the other reading


def test_unambiguous_name_seeds_at_full_strength(people):
    res = people.search("Who did the political consultant Scott Howell (footballer) meet?", limit=4, record=False)
    assert "sh:f" in res.seeds


CASE = [
    LinkInput("cot", "Cotula", "Cotula is a genus of small plants."),
    LinkInput("lawn", "Lawns", "A cotula lawn needs little water; the cotula spreads fast and cotula mats stay low."),
    LinkInput("fern", "Fern", "A fern is a plant."),
]


def test_query_capitals_name_a_title_the_corpus_writes_lower_case():
    linker = Linker(LinkerConfig(entities=False))
    linker.fit(CASE)
    # the corpus mostly writes "cotula" lower-case, so a lower-case "cotula" is the common noun ...
    assert linker.link_query("which plant is larger, the cotula or the rose?") == []
    # ... but a question that capitalises it mid-sentence names the node
    assert linker.link_query("Which plant is larger, the Cotula or the rose?") == [("cot", "cotula")]
    # a capital that only starts a sentence is no evidence
    assert linker.link_query("Cotula grows where? Nobody knows.") == []


def _fitted(items):
    linker = Linker(LinkerConfig())
    linker.fit(items)
    return linker


def test_query_tables_answer_exactly_like_the_fitted_linker():
    from neurongraph.link.query import QueryTables

    items = (
        [LinkInput(n.id, n.title, n.text) for n in PEOPLE]
        + CASE
        + [
            LinkInput("issue:12", "Crash on start", "Fixed by #13. Mentions Rudy Giuliani and the Cotula."),
            LinkInput("pr:13", "Fix crash", "Closes #12; Rudy Giuliani reviewed it."),
        ]
    )
    linker = _fitted(items)
    tables = QueryTables.from_arrays(linker.query_tables().to_arrays())  # through plain arrays and back
    queries = [
        "Scott Howell is a consultant who has worked with the mayor of what city?",
        "Which plant is larger, the Cotula or the rose?",
        "which plant is larger, the cotula?",
        "why does #12 crash after pr 13?",
        "Rudy Giuliani and Scott Howell (footballer)",
        "nothing here",
    ]
    for q in queries:
        assert tables.link_query(q) == linker.link_query(q), q
    assert any(tables.link_query(q) for q in queries)


@settings(max_examples=40, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["Alpha Beta", "Gamma", "gamma", "Delta (band)", "Delta", "#3", "Epsilon Ray"]),
            st.sampled_from(
                [
                    "Alpha Beta met Gamma.",
                    "the gamma ray and Delta",
                    "see #3 and Epsilon Ray",
                    "Delta played with Alpha Beta",
                    "a gamma b gamma c",
                ]
            ),
        ),
        min_size=1,
        max_size=12,
    ),
    st.lists(
        st.sampled_from(["Alpha Beta", "gamma", "Gamma", "Delta", "#3", "issue 3", "Epsilon Ray", "ray"]),
        min_size=1,
        max_size=4,
    ),
)
def test_query_tables_equal_the_linker_on_any_corpus(docs, words):
    from neurongraph.link.query import QueryTables

    items = [LinkInput(f"issue:{i}", t, x) for i, (t, x) in enumerate(docs)]
    linker = _fitted(items)
    tables = QueryTables.from_arrays(linker.query_tables().to_arrays())
    q = "What about " + " and ".join(words) + "?"
    assert tables.link_query(q) == linker.link_query(q)
