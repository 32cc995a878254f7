"""The request model's typed view of the engine (service/engine_api.py) names real things: every search
option a request may set is a field of ``SearchConfig``, and the engine has the public methods the
protocols name (mypy checks their signatures; this catches a renamed field, which mypy cannot see through
``Engine.search(**overrides)``)."""

from __future__ import annotations

import dataclasses

from neurongraph.config import SearchConfig
from neurongraph.engine import Engine
from neurongraph.service.engine_api import AskEngine, CypherEngine, FeedbackEngine, SearchEngine, SearchOptions
from neurongraph.service.search import SearchRequest


def test_search_options_are_search_config_fields():
    fields = {f.name for f in dataclasses.fields(SearchConfig)}
    assert set(SearchOptions.__annotations__) <= fields


def test_a_full_request_sets_only_known_options():
    req = SearchRequest(
        "q",
        channel="beam",
        as_of=1.0,
        since=0.5,
        types=["commit"],
        rels=["fixes"],
        sources=["s"],
        where=[("state", "open")],
        files=["a.c", "b.c:3-4"],
        diff=None,
    )
    opts = req.engine_options()
    assert set(opts) <= set(SearchOptions.__annotations__)
    assert set(opts) == {"channel", "as_of", "since", "result_types", "query_types", "sources", "where"} | {
        "files",
        "changes",
    }


def test_engine_has_every_protocol_member():
    for proto in (SearchEngine, AskEngine, FeedbackEngine, CypherEngine):
        for name in proto.__dict__:
            if not name.startswith("_"):
                assert hasattr(Engine, name) or name == "store", (proto.__name__, name)
