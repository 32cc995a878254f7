"""Feedback and ask requests (service/feedback.py, service/ask.py): the CLI's ``feedback use|outcome|failure``
and ``ask``, the MCP tools and the HTTP routes make the same engine call through one request each.  A walk
up to a stage from where the hits are, retried with its key, is the same request (the stored receipt); the
outcome and failure rows; the ask request's answer.  Real SQLite store, hashing embedder."""

from __future__ import annotations

import json
from contextlib import closing

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.learning import Learning
from neurongraph.service import AskRequest, FailureRequest, OutcomeRequest, SourceUseRequest, check_upto
from neurongraph.store.sqlite import SQLiteStore

NODES = [
    ngr.Node("p1", "passage", "Vlan tags", "The parser reads vlan tags from short frames."),
    ngr.Node("p2", "passage", "Tunnels", "Tunnel keys are parsed after the vlan header."),
    ngr.Node("p3", "passage", "Routes", "Routes are added to the main table."),
]


@pytest.fixture
def db(tmp_path):
    path = str(tmp_path / "f.db")
    with ngr.open(path, embedder="hashing") as eng:
        eng.add_nodes(NODES)
    return path


def _trace(eng) -> tuple[str, list[str]]:
    res = eng.search("vlan tags parser", limit=3)
    return res.trace_id, [h.id for h in res.hits]


def test_a_walk_moves_hits_up_to_a_stage_and_its_retry_is_the_same_request(db):
    with ngr.open(db, embedder="hashing") as eng:
        trace, hits = _trace(eng)
        req = SourceUseRequest.walk(eng, trace, hits[:1], "used", "k1")
        assert list(req.events) == [(hits[0], "selected"), (hits[0], "validated"), (hits[0], "used")]
        first = req.run(eng)
        assert [(t["from"], t["to"]) for t in first["transitions"]] == [("retrieved", "used")]
        again = SourceUseRequest.walk(eng, trace, hits[:1], "used", "k1")  # derived from the stages before k1
        assert again == req and again.run(eng) == first
        fresh = SourceUseRequest.walk(eng, trace, hits[:1], "used", None)  # already there: a validated no-op
        assert list(fresh.events) == [(hits[0], "used")]
        row = OutcomeRequest(trace, hits[:1], "confirmed", "merged", "PR 7").run(eng)
        assert row["outcome"] == "confirmed" and row["node_ids"] == hits[:1]
    with pytest.raises(InvalidArgument, match="--upto must be one of"):
        check_upto("retrieved")


def test_a_failure_needs_no_engine_and_the_cli_reports_through_the_same_requests(db):
    with ngr.open(db, embedder="hashing") as eng:
        trace, hits = _trace(eng)
    with closing(SQLiteStore(db)) as store:
        row = FailureRequest(trace, "nothing about vlan stacking").run(Learning(store))
    assert row["failure_id"] >= 1
    run = CliRunner().invoke
    r = run(
        app, ["--db", db, "--embedder", "hashing", "feedback", "use", trace, hits[1], "--upto", "validated", "--json"]
    )
    assert r.exit_code == 0, r.output
    assert [(t["from"], t["to"]) for t in json.loads(r.stdout)["transitions"]] == [("retrieved", "validated")]
    bad = run(app, ["--db", db, "--embedder", "hashing", "feedback", "use", trace, hits[1], "--upto", "nope"])
    assert bad.exit_code == 2 and "--upto must be one of" in bad.output


def test_an_ask_request_is_the_engine_call(db):
    assert AskRequest("q").needs_graph and not AskRequest("q", mode="vector").needs_graph
    with ngr.open(db, embedder="hashing") as eng:
        res = AskRequest("which passage is about vlan tags?", mode="vector", limit=2).run(eng)
        assert res["route"]["mode"] == "vector" and res["hits"][0]["id"] == "p1"
        with pytest.raises(InvalidArgument, match="mode must be one of"):
            AskRequest("q", mode="sideways").run(eng)
