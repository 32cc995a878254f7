"""Entities (revisions, optimistic concurrency, aliases), entry revision chains, events."""

from __future__ import annotations

import pytest

from neurongraph.errors import InvalidArgument, UnknownNode
from neurongraph.model import Node
from neurongraph.schema import AliasConflict, EntityExists, NotAnEntity, StaleRevision, SupersededEntry
from schema_fixtures import SEED003_TOML, make_engine


@pytest.fixture
def eng(tmp_path):
    e = make_engine(tmp_path / "e.db")
    yield e
    e.close()


def test_entity_revisions_and_stale_updates(eng):
    e = eng.create_entity("task:1", "task", "Ship login", state={"status": "open", "owner": "kim"})
    assert (e["revision"], e["state"]) == (1, {"status": "open", "owner": "kim"})
    e = eng.update_entity("task:1", expected_revision=1, patch={"status": "blocked", "owner": None})
    assert (e["revision"], e["state"]) == (2, {"status": "blocked"})
    with pytest.raises(StaleRevision) as ei:  # a writer that read revision 1 loses
        eng.update_entity("task:1", expected_revision=1, state={"status": "done"})
    assert ei.value.code == "stale_revision" and ei.value.details["current_revision"] == 2
    assert eng.get_entity("task:1")["state"] == {"status": "blocked"}
    e = eng.update_entity("task:1", expected_revision=2, state={"status": "done"})
    assert (e["revision"], e["state"]) == (3, {"status": "done"})


def test_entity_errors(eng):
    eng.create_entity("task:1", "task")
    with pytest.raises(EntityExists):
        eng.create_entity("task:1", "task")
    eng.add_nodes([Node("plain", "doc")])
    with pytest.raises(NotAnEntity):
        eng.get_entity("plain")
    with pytest.raises(UnknownNode):
        eng.update_entity("nope", expected_revision=1, patch={})
    with pytest.raises(InvalidArgument):
        eng.update_entity("task:1", expected_revision=1, state={}, patch={})
    with pytest.raises(InvalidArgument):
        eng.create_entity("task:2", "task", state=["not", "an", "object"])
    assert eng.store.get_node("task:2") is None  # rejected before anything was written


def test_existing_node_can_become_an_entity_and_is_searchable(eng):
    eng.add_nodes([Node("svc:pay", "service", "payment service")])
    eng.create_entity("svc:pay", "service", state={"health": "ok"})
    assert eng.get_entity("svc:pay")["revision"] == 1
    e = eng.create_entity("task:9", "task", "Rotate payment keys", state={"status": "open"})
    assert any(h.id == "task:9" for h in eng.search("rotate payment keys", channel="none", record=False))
    assert e["aliases"] == []


def test_alias_resolution(eng):
    eng.create_entity("task:1", "task", "Ship login", aliases=["Login Work", "ログイン"])
    eng.add_aliases("task:1", "LW-1")
    assert eng.resolve("task:1") == "task:1"
    assert eng.resolve("login work") == eng.resolve("ＬＯＧＩＮ　ＷＯＲＫ") == "task:1"  # case + NFKC
    assert eng.resolve("ログイン") == "task:1" and eng.resolve("lw-1") == "task:1"
    assert eng.get_entity("Login Work")["id"] == "task:1"
    assert eng.get_entity("task:1")["aliases"] == ["login work", "lw-1", "ログイン"]
    eng.create_entity("task:2", "task")
    with pytest.raises(AliasConflict):
        eng.add_aliases("task:2", "LOGIN WORK")
    with pytest.raises(AliasConflict):
        eng.add_aliases("task:2", "task:1")  # another node's id
    with pytest.raises(UnknownNode):
        eng.resolve("no such thing")
    eng.delete_nodes(["task:1"])
    with pytest.raises(UnknownNode):  # aliases go with their node
        eng.resolve("login work")


def test_revision_chain_supersedes_and_history(eng):
    eng.add_nodes([Node("note:1", "note", "Cache decision", "Use Redis for the page cache")])
    r2 = eng.revise_entry("note:1", text="Use Redis, 10 minute TTL")
    r3 = eng.revise_entry(r2["id"], text="Use Redis, invalidate on price events")
    assert (r2["id"], r3["id"], r3["revision"]) == ("note:1@r2", "note:1@r3", 3)
    assert eng.store.get_node("note:1").text == "Use Redis for the page cache"  # the old one stays
    hist = eng.entry_history("note:1@r2")
    assert [h["id"] for h in hist] == ["note:1", "note:1@r2", "note:1@r3"]
    assert [h["superseded_by"] for h in hist] == ["note:1@r2", "note:1@r3", None]
    assert eng.neighbors("note:1@r3", "supersedes", "out")[0]["node"] == "note:1@r2"
    assert eng.neighbors("note:1", "superseded_by", "out")[0]["node"] == "note:1@r2"  # inverse name
    with pytest.raises(SupersededEntry) as ei:
        eng.revise_entry("note:1", text="fork")
    assert ei.value.details["latest"] == "note:1@r3"
    mask = eng.superseded_mask()
    idx = eng.store.lookup_idx(["note:1", "note:1@r2", "note:1@r3"])
    assert mask[idx["note:1"]] and mask[idx["note:1@r2"]] and not mask[idx["note:1@r3"]]
    assert mask.sum() == 2
    eng.delete_nodes(["note:1@r3"])  # deleting the newest revision makes r2 current again
    assert not eng.superseded_mask()[idx["note:1@r2"]]


def test_supersedes_edges_from_plain_ingest_mark_entries(eng):
    eng.add_nodes([Node("a", "note", "old"), Node("b", "note", "new")])
    eng.add_edges([("b", "supersedes", "a")])
    assert eng.superseded_mask()[eng.store.lookup_idx(["a"])["a"]]
    assert eng.entry_history("a")[-1]["id"] == "b"
    eng.unrelate("b", "supersedes", "a")
    assert not eng.superseded_mask().any()


def test_revise_entry_under_strict_schema(eng, tmp_path):
    (tmp_path / "s.toml").write_text(SEED003_TOML)
    eng.load_schema(tmp_path / "s.toml")
    eng.add_nodes([Node("n1", "note", "login notes")])
    out = eng.revise_entry("n1", title="login notes v2", new_id="n1-v2")
    assert out == {"id": "n1-v2", "supersedes": "n1", "revision": 2}


def test_events_link_what_they_produced(eng):
    eng.add_nodes([Node("n1", "note", "a"), Node("n2", "note", "b")])
    eng.record_event("ingest:2024-06-01", "ingest_run", "nightly ingest", produced=["n1", "n2"])
    assert {r["node"] for r in eng.neighbors("ingest:2024-06-01", "source_of", "out")} == {"n1", "n2"}
    assert [r["node"] for r in eng.neighbors("n1", "produced_by", "out")] == ["ingest:2024-06-01"]
    with pytest.raises(UnknownNode):
        eng.record_event("session:1", "session", produced=["missing"])
    assert eng.store.get_node("session:1") is None  # atomic: no event without its links
