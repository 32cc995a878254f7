"""Ingest-time linkers: exact edges on small hand-made corpora, ambiguity, normalisation, caps, speed."""

from __future__ import annotations

import hashlib
import random
import time

import numpy as np
import pytest

from neurongraph.link import Linker, LinkerConfig, LinkInput, normalize

LINKERS = {"mention", "entity", "similarity", "ref"}


def edge_set(result, linker=None):
    assert all(e.meta["linker"] in LINKERS for e in result.edges)
    return {(e.src, e.rel, e.dst) for e in result.edges if linker is None or e.meta["linker"] == linker}


def by_key(result):
    return {(e.src, e.rel, e.dst): e for e in result.edges}


# ---------------------------------------------------------------- issue / PR corpus (not Wikipedia)
ISSUES = [
    LinkInput(
        "issue:12",
        "Crash when config file is missing",
        "The app crashes on startup when config.yaml is absent. The trace ends in load_config().",
    ),
    LinkInput("pr:15", "Handle missing config file", "Fixes #12. load_config() now falls back to defaults."),
    LinkInput(
        "issue:20",
        "Slow search on large corpora",
        "Search takes 900 ms at 10k nodes because every query scans the table.",
    ),
    LinkInput(
        "pr:21",
        "Use an inverted index for search",
        "Closes #20. Also touches load_config() for the new index path; see issue 12 for the crash.",
    ),
    LinkInput("issue:7", "Typo in README", "The README says 'serach'."),
    LinkInput("pr:7", "Release notes for 0.7", "Release notes."),
    LinkInput("pr:30", "Follow-up", "Refs #7 and #999, which does not exist. Search takes 900 ms again."),
]


def test_issue_refs_exact():
    res = Linker(LinkerConfig(similarity=False)).fit(ISSUES)
    refs = by_key(res)
    assert edge_set(res, "ref") == {
        ("pr:15", "references", "issue:12"),
        ("pr:21", "references", "issue:20"),
        ("pr:21", "references", "issue:12"),  # "issue 12" in prose
        ("pr:30", "references", "issue:7"),  # "#7" is ambiguous between issue:7 and pr:7
        ("pr:30", "references", "pr:7"),
    }
    assert refs[("pr:15", "references", "issue:12")].meta["keyword"] == "fixes"
    assert refs[("pr:21", "references", "issue:20")].meta["keyword"] == "closes"
    assert "keyword" not in refs[("pr:21", "references", "issue:12")].meta
    assert refs[("pr:15", "references", "issue:12")].weight == 1.0
    assert refs[("pr:30", "references", "issue:7")].weight == pytest.approx(0.5)


def test_issue_entities_exact():
    res = Linker(LinkerConfig(similarity=False, entity_inverse=False)).fit(ISSUES)
    ents = {e.id: e for e in res.entities}
    # load_config() is a code identifier in three items; "900 ms" a quantity in two; "#999" matches no node
    # and occurs once, so it is no entity; "#12" names a node, so it is a ref, never an entity.
    assert set(ents) == {"entity:load_config", "entity:900 ms"}
    assert ents["entity:load_config"].metadata["kind"] == "code"
    assert edge_set(res, "entity") == {
        ("issue:12", "has_entity", "entity:load_config"),
        ("pr:15", "has_entity", "entity:load_config"),
        ("pr:21", "has_entity", "entity:load_config"),
        ("issue:20", "has_entity", "entity:900 ms"),
        ("pr:30", "has_entity", "entity:900 ms"),
    }


def test_inverse_entity_edges():
    res = Linker(LinkerConfig(similarity=False)).fit(ISSUES)
    fwd = {(s, d) for s, r, d in edge_set(res, "entity") if r == "has_entity"}
    inv = {(d, s) for s, r, d in edge_set(res, "entity") if r == "entity_in"}
    assert fwd == inv and fwd


def test_issue_link_query():
    linker = Linker(LinkerConfig(similarity=False))
    linker.fit(ISSUES)
    assert linker.link_query("Why does #12 still crash in load_config()?") == [
        ("issue:12", "#12"),
        ("entity:load_config", "load_config"),
    ]
    assert linker.link_query("what about #7") == [("issue:7", "#7"), ("pr:7", "#7")]
    assert linker.link_query("nothing relevant here") == []


# ---------------------------------------------------------------- Wikipedia-style mentions
WIKI = [
    LinkInput("a", "Houston", "Houston is the most populous city in Texas."),
    LinkInput(
        "b", "Houston Baptist University", "Houston Baptist University is a private university in Houston, Texas."
    ),
    LinkInput(
        "c", "The Collegian (Houston Baptist University)", "The Collegian is the student newspaper of the university."
    ),
    LinkInput("d", "Texas", "Texas is a state in the South Central United States."),
]


def test_mentions_exact_longest_match_and_title_scan():
    res = Linker(LinkerConfig(entities=False)).fit(WIKI)
    assert edge_set(res) == {
        ("a", "mentions", "d"),
        ("b", "mentions", "a"),  # "in Houston," - the leading "Houston Baptist University" is b's own title
        ("b", "mentions", "d"),
        ("c", "mentions", "b"),  # found in c's *title*; "Houston" inside it is not a separate mention
    }
    e = by_key(res)[("c", "mentions", "b")]
    assert e.meta == {"linker": "mention", "phrase": "houston baptist university", "targets": 1, "in_title": True}


def test_link_query_parenthetical_title():
    linker = Linker(LinkerConfig(entities=False))
    linker.fit(WIKI)
    assert linker.link_query("When was the institute that owned The Collegian founded?") == [("c", "the collegian")]


def test_ambiguous_title_splits_weight():
    items = [
        LinkInput("p", "Mercury (planet)", "Mercury is the smallest planet."),
        LinkInput("e", "Mercury (element)", "Mercury is a chemical element."),
        LinkInput("x", "Thermometers", "Old thermometers contained Mercury. Mercury (planet) is unrelated."),
    ]
    res = Linker(LinkerConfig(entities=False)).fit(items)
    edges = by_key(res)
    # "Mercury" alone names two nodes: link both at weight 1/2; the full title names one node: weight 1.
    assert edges[("x", "mentions", "e")].weight == pytest.approx(0.5)
    assert edges[("x", "mentions", "p")].weight == 1.0
    # p and e mention "Mercury" - their own title key - so they do not link to each other by default
    assert ("p", "mentions", "e") not in edges and ("e", "mentions", "p") not in edges
    res2 = Linker(LinkerConfig(entities=False, same_title_links=True)).fit(items)
    assert ("p", "mentions", "e") in edge_set(res2)


def test_too_ambiguous_title_is_skipped():
    items = [LinkInput(f"s{i}", "Springfield", f"Springfield number {i}.") for i in range(4)]
    items.append(LinkInput("q", "Simpsons", "They live in Springfield."))
    res = Linker(LinkerConfig(entities=False, max_title_targets=3)).fit(items)
    assert edge_set(res) == set()
    res = Linker(LinkerConfig(entities=False, max_title_targets=4)).fit(items)
    assert {d for s, _, d in edge_set(res) if s == "q"} == {"s0", "s1", "s2", "s3"}
    assert all(e.weight == pytest.approx(0.25) for e in res.edges if e.src == "q")


def test_case_punctuation_accents_and_word_boundaries():
    items = [
        LinkInput("pk", "Pokémon", "A media franchise."),
        LinkInput("ion", "Ion Television", "A network."),
        LinkInput("t1", "Fans", "Many fans love POKEMON's games; ION-TELEVISION aired it."),
        LinkInput("t2", "Unions", "Union television unions: pokemonology is not a word."),
    ]
    res = Linker(LinkerConfig(entities=False)).fit(items)
    assert edge_set(res) == {("t1", "mentions", "pk"), ("t1", "mentions", "ion")}  # not "Union television"
    assert normalize("  Pokémon's  ION-Television!! ") == "pokemon ion television"


def test_common_and_short_titles_skipped():
    items = [
        LinkInput("it", "It", "A novel."),  # stopword title
        LinkInput("go", "Go", "A language."),  # shorter than min_title_chars
        LinkInput("music", "Music", "Music is an art form."),  # mostly written lower-case in this corpus
        LinkInput("x", "Essay", "It is about music, and music again, and how to go home."),
    ]
    res = Linker(LinkerConfig(entities=False)).fit(items)
    assert edge_set(res) == set()


def test_title_df_cap():
    items = [LinkInput("paris", "Paris", "Paris is the capital of France.")]
    items += [LinkInput(f"t{i}", f"Trip {i}", f"We went to Paris in spring {i}.") for i in range(5)]
    res = Linker(LinkerConfig(entities=False, title_max_df=10)).fit(items)
    assert len(edge_set(res)) == 5
    res = Linker(LinkerConfig(entities=False, title_max_df=4)).fit(items)  # "paris" occurs in 6 passages
    assert edge_set(res) == set()
    assert res.stats["title_mentions_skipped_df"] == 5  # the Paris passage's own mention is no candidate


def test_entity_df_cap_and_min_df():
    items = [LinkInput(f"u{i}", f"Note {i}", f"Meeting with Acme Corp about item {i}.") for i in range(5)]
    items += [
        LinkInput("b1", "Lab note", "Samples went to Beta Labs on Monday."),
        LinkInput("b2", "Lab result", "Beta Labs confirmed the result."),
        LinkInput("z", "Solo", "Only Zeta Works is named here."),
    ]
    cfg = LinkerConfig(mentions=False, similarity=False, entity_max_df=3, entity_inverse=False)
    res = Linker(cfg).fit(items)
    assert [e.id for e in res.entities] == ["entity:beta labs"]
    assert edge_set(res) == {("b1", "has_entity", "entity:beta labs"), ("b2", "has_entity", "entity:beta labs")}
    assert res.stats["entities_over_cap"] == 1  # acme corp, in 5 passages
    assert res.entities[0].title == "Beta Labs" and res.entities[0].type == "entity"


def test_sentence_initial_words_and_lowercase_words_are_not_entities():
    items = [
        LinkInput("1", "One", "However the tool failed. May we retry? The team may retry Northwind Traders later."),
        LinkInput("2", "Two", "However, Northwind Traders may call. We may not."),
    ]
    res = Linker(LinkerConfig(mentions=False, similarity=False)).fit(items)
    assert [e.id for e in res.entities] == ["entity:northwind traders"]


def test_similarity_links_entity_synonyms():
    items = [
        LinkInput("1", "A", "We flew to NYC and then Boston."),
        LinkInput("2", "B", "NYC is expensive, unlike Boston."),
        LinkInput("3", "C", "New York City has five boroughs."),
        LinkInput("4", "D", "The mayor of New York City spoke."),
    ]

    def embed(texts):
        out = []
        for t in texts:
            if t in ("NYC", "New York City"):
                out.append([1.0, 0.0, 0.0, 0.0])
            else:
                rng = np.random.default_rng(int(hashlib.md5(t.encode()).hexdigest()[:8], 16))
                out.append(rng.normal(size=4) * [0, 1, 1, 1])
        return np.array(out)

    res = Linker(LinkerConfig(mentions=False, similarity=True), embed=embed).fit(items)
    assert {e.id for e in res.entities} == {"entity:nyc", "entity:new york city", "entity:boston"}
    assert edge_set(res, "similarity") == {
        ("entity:nyc", "similar_to", "entity:new york city"),
        ("entity:new york city", "similar_to", "entity:nyc"),
    }
    assert by_key(res)[("entity:nyc", "similar_to", "entity:new york city")].weight == pytest.approx(1.0)


def test_link_new_is_incremental_both_ways():
    cfg = LinkerConfig(similarity=False, entity_inverse=False)
    linker = Linker(cfg)
    linker.fit(ISSUES)
    new = [
        LinkInput("pr:40", "Fix the typo", "Fixes #7 in the README, see issue 20. load_config() untouched."),
        # old pr:30 mentions "#999": a node with that id arrives later and must receive the edge
        LinkInput("issue:999", "Phantom issue", "Created late. Search takes 900 ms here too."),
    ]
    res = linker.link_new(new)
    got = edge_set(res)
    assert ("pr:40", "references", "issue:20") in got
    assert ("pr:40", "references", "issue:7") in got and ("pr:40", "references", "pr:7") in got
    assert ("pr:30", "references", "issue:999") in got  # old text -> new node
    assert ("pr:40", "has_entity", "entity:load_config") in got  # new item -> existing entity
    # existing entity re-emitted with the updated df (weights are upserts)
    assert by_key(res)[("issue:12", "has_entity", "entity:load_config")].meta["df"] == 4
    assert ("issue:999", "has_entity", "entity:900 ms") in got
    assert linker.link_query("is #999 real?") == [("issue:999", "#999")]
    with pytest.raises(ValueError):
        linker.link_new([LinkInput("pr:40", "again", "dup")])


def test_link_new_creates_entity_from_phrase_seen_once_before():
    linker = Linker(LinkerConfig(mentions=False, similarity=False, entity_inverse=False))
    linker.fit([LinkInput("a", "A", "Deploys run on Gamma Service."), LinkInput("b", "B", "Nothing.")])
    assert linker.entities == []
    res = linker.link_new([LinkInput("c", "C", "Gamma Service went down.")])
    assert [e.id for e in res.entities] == ["entity:gamma service"]
    assert edge_set(res) == {("a", "has_entity", "entity:gamma service"), ("c", "has_entity", "entity:gamma service")}


def test_fit_equals_incremental_for_mentions():
    whole = edge_set(Linker(LinkerConfig(entities=False)).fit(WIKI))
    lk = Linker(LinkerConfig(entities=False))
    parts = edge_set(lk.fit(WIKI[:2])) | edge_set(lk.link_new(WIKI[2:]))
    assert parts == whole


def test_speed_3000_passages():
    rng = random.Random(0)
    words = [f"w{i}" for i in range(3000)]
    names = [
        f"{a} {b}" for a, b in zip(["Alpha", "Bravo", "Delta", "Echo", "Kilo"] * 200, [f"Site{i}" for i in range(1000)])
    ]
    items = []
    for i in range(3000):
        body = " ".join(rng.choice(words) for _ in range(80))
        refs = " ".join(rng.choice(names) for _ in range(3))
        items.append(
            LinkInput(
                f"issue:{i}",
                names[i % len(names)] + f" report {i}",
                f"{body}. Seen at {refs}. Fixes #{rng.randrange(3000)}.",
            )
        )
    linker = Linker(LinkerConfig(similarity=False, entity_max_df=30))
    t = time.perf_counter()
    res = linker.fit(items)
    dt = time.perf_counter() - t
    assert res.stats["edges_by_linker"]["ref"] >= 2900
    assert res.stats["entities_total"] > 100
    assert dt < 4.0, f"linking 3000 passages took {dt:.2f}s"
    t = time.perf_counter()
    for i in range(200):
        linker.link_query(f"what happened at {names[i]} and #{i}?")
    assert (time.perf_counter() - t) / 200 < 0.002


def test_similarity_never_pairs_different_numbers():
    items = [
        LinkInput(str(i), f"T{i}", f"We watched Super Bowl {n} twice.")
        for i, n in enumerate(["XXXIX", "XXXIX", "XXXVI", "XXXVI"])
    ]
    res = Linker(LinkerConfig(mentions=False), embed=lambda ts: np.ones((len(ts), 3))).fit(items)
    assert {e.id for e in res.entities} == {"entity:super bowl xxxix", "entity:super bowl xxxvi"}
    assert edge_set(res, "similarity") == set()
