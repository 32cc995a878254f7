"""The trace a search records (issue 18, target 0 made its writing cheaper, not its content): what is stored,
and that feedback on it works at once, in this engine and in another one opening the same store."""

from __future__ import annotations

import json

import neurongraph as ngr
from neurongraph.model import Node


def _corpus(eng):
    eng.add_nodes(
        [
            Node(id="issue:1", type="issue", title="login is slow", text="the login page takes ten seconds"),
            Node(id="pr:2", type="pr", title="cache the session lookup", text="fixes the slow login"),
            Node(id="wiki:3", type="wiki", title="sessions", text="how sessions are stored and looked up"),
        ]
    )
    eng.add_edges([("pr:2", "fixes", "issue:1"), ("wiki:3", "mentions", "pr:2")])


def test_trace_hits_are_the_hits_without_their_text(engine):
    _corpus(engine)
    r = engine.search("why is login slow", limit=3)
    t = engine.store.get_trace(r.trace_id)
    want = [{"rank": k + 1, **{key: v for key, v in h.to_dict().items() if key != "text"}} for k, h in enumerate(r)]
    assert t["hits"] == want and [list(h) for h in t["hits"]] == [list(h) for h in want]  # same keys, same order
    assert t["query"] == "why is login slow" and t["params"] == json.loads(json.dumps(r.config.to_dict()))
    assert t["fingerprint"] == r.config.fingerprint(engine.embedder.model_id)
    # the params' JSON is kept per configuration: another configuration gets its own
    for limit in (2, 3):
        r = engine.search("why is login slow", limit=limit)
        assert engine.store.get_trace(r.trace_id)["params"]["limit"] == limit


def test_feedback_on_a_just_returned_trace_from_another_engine(db_path):
    a = ngr.open(db_path, embedder="hashing")
    b = None
    try:
        _corpus(a)
        r = a.search("why is login slow", limit=3)
        top = r.hits[0].id
        b = ngr.open(db_path, embedder="hashing")  # another engine on the same file, right after the return
        rec = b.record_source_use(r.trace_id, [{"node_id": top, "stage": s} for s in ("selected", "validated", "used")])
        assert top in rec["newly_used"]
        rec = a.record_source_use(r.trace_id, [{"node_id": top, "stage": "used"}])  # and in the searching engine
        assert rec["newly_used"] == []
    finally:
        a.close()
        if b is not None:
            b.close()
