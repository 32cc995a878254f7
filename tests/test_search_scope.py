"""The search scope (retrieval/scope.py, filters.py, priors.py): the node table grows and follows the change
feed as one, the filters compose into one visibility mask, the result types hide structural nodes unless a
query names one, one search's masks come from them, and the priors weigh candidates in order, each only when
it applies.  Real SQLite files; the engine is the one that owns them."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.config import SearchConfig
from neurongraph.model import Node
from neurongraph.retrieval.filters import Filters, ResultTypes, Sources, TimeWindow, Where
from neurongraph.retrieval.pipeline import RankInputs
from neurongraph.retrieval.priors import PRIORS, Aggregate, Authorship, Recency
from neurongraph.retrieval.scope import NodeTable, SearchScope
from neurongraph.store.sqlite import SQLiteStore

DAY = 86400.0
F1 = "file:src/vlan.c"
NODES = [
    Node("c1", "commit", "vlan parser", "fix vlan tag parsing", {"time": 10 * DAY, "source": "net"}),
    Node("c2", "commit", "tunnel", "add tunnel keys", {"time": 20 * DAY, "source": "tools", "aggregate": True}),
    Node(F1, "file", "src/vlan.c", "", {}),
    Node("i1", "issue", "vlan crash", "crash on short frames", {"time": 30 * DAY, "state": "open"}),
]


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(str(tmp_path / "scope.db"))
    s.upsert_nodes(NODES)
    yield s
    s.close()


def _table(store) -> NodeTable:
    t = NodeTable(store)
    t.apply(store.changes_since(0))
    return t


def _idx(store, *ids):
    got = store.lookup_idx(list(ids))
    return [got[i] for i in ids]


def test_the_table_applies_the_change_feed_to_every_column_at_once(store):
    t = _table(store)
    c1, c2, f1, i1 = _idx(store, "c1", "c2", F1, "i1")
    assert t.n == t.type_of.shape[0] == t.event_time.shape[0] == t.source_of.shape[0]
    assert t.alive[[c1, c2, f1, i1]].all() and t.epoch == 1
    assert t.type_names()[t.type_of[c1]] == "commit" and t.type_names()[t.type_of[f1]] == "file"
    assert t.event_time[c2] == 20 * DAY and np.isnan(t.event_time[f1])
    assert t.source_names()[t.source_of[c1]] == "net" and t.source_of[f1] == -1
    # the marks are read on first use, then follow the feed: an update that drops the key drops the mark
    assert t.aggregate.mask(np.array([c1, c2, f1]), t.n).tolist() == [False, True, False]
    seq = store.current_seq()
    store.upsert_nodes([Node("c2", "commit", "tunnel", "add tunnel keys", {"time": 20 * DAY})])
    store.delete_nodes(["i1"])
    change = t.apply(store.changes_since(seq))
    assert change.changed is not None and change.changed.tolist() == [c2]
    assert change.deleted is not None and change.deleted.tolist() == [i1]
    assert not t.alive[i1] and t.epoch == 2 and not t.aggregate.mask(np.array([c2]), t.n).any()
    assert t.type_mask(("commit",)).tolist() == [
        t.alive[k] and t.type_of[k] == t.type_ids["commit"] for k in range(t.n)
    ]
    assert t.known(np.array([c1, i1, -1, t.n + 3])).tolist() == [True, False, False, False]


def test_filters_compose_and_leave_nodes_without_the_field(store):
    t = _table(store)
    c1, c2, f1, i1 = _idx(store, "c1", "c2", F1, "i1")
    f = Filters(store)
    assert f.visible(t, SearchConfig()) is None  # nothing hidden: exactly an unfiltered search
    vis = f.visible(t, SearchConfig(as_of=25 * DAY))
    assert vis is not None and vis[[c1, c2, f1]].all() and not vis[i1]  # the file has no time: it stays
    assert TimeWindow().keep(t, SearchConfig(since=15 * DAY))[[c1, c2]].tolist() == [False, True]
    assert Sources().keep(t, SearchConfig(sources=("net",)))[[c1, c2, f1]].tolist() == [True, False, True]
    both = f.visible(t, SearchConfig(as_of=25 * DAY, sources=("tools",)))
    assert both is not None and both[[c1, c2, f1, i1]].tolist() == [False, True, True, False]
    w = Where(store)
    assert w.excluded(t, (("state", "open"),))[[c1, i1]].tolist() == [False, False]  # no state: not judged
    assert w.excluded(t, (("state", "closed"),))[i1] and len(w.cache) == 2
    store.upsert_nodes([Node("i2", "issue", "later", "", {"state": "open"})])
    t.apply(store.changes_since(0))
    w.excluded(t, (("state", "closed"),))
    assert len(w.cache) == 1  # nodes changed: the stale masks went


def test_result_types_hide_structural_nodes_unless_the_query_names_one(store):
    t = _table(store)
    c1, f1 = _idx(store, "c1", F1)
    rt = ResultTypes(store)
    cfg = SearchConfig()
    assert rt.mask(t, "vlan parsing", cfg)[[c1, f1]].tolist() == [True, False]
    assert rt.mask(t, "what changed src/vlan.c?", cfg)[f1]  # its path names it
    assert rt.mask(t, "vlan", SearchConfig(result_types=("file",)))[[c1, f1]].tolist() == [False, True]
    with pytest.raises(ngr.InvalidArgument, match="its types: "):
        rt.check(t, ("pull_request",))


def test_one_search_scope_from_the_table(store):
    t = _table(store)
    c1, c2, f1, i1 = _idx(store, "c1", "c2", F1, "i1")
    f, rt = Filters(store), ResultTypes(store)
    none = lambda n: np.zeros(n, bool)  # noqa: E731  (no superseded revisions)
    cfg = SearchConfig(as_of=25 * DAY, files=("./src/vlan.c", "gone.c"))
    sc = SearchScope.build(t, store, f, rt, none, "vlan", cfg)
    assert sc.file_idx is not None and sc.file_idx.tolist() == [f1] and sc.unknown_files == ["gone.c"]
    assert sc.visible is not None and not sc.visible[i1]
    assert sc.allowed[[c1, c2, f1, i1]].tolist() == [True, True, False, False]
    sc.admit(np.array([i1]), t)  # e.g. blamed commits: hits although the time filter hides them
    assert sc.allowed[i1]
    old = lambda n: np.arange(n) == c1  # noqa: E731  (c1 superseded by a newer revision)
    sc = SearchScope.build(t, store, f, rt, old, "vlan", SearchConfig(entry_types=("commit",)))
    assert not sc.allowed[c1] and sc.entry_allowed is not None and sc.entry_allowed[[c1, c2]].tolist() == [False, True]


def _inputs(**kw) -> RankInputs:
    return RankInputs(
        lexical_search=lambda *a: (np.zeros(0, np.int64), np.zeros(0)), vectors=None, graph=None, rel_ids={}, **kw
    )  # type: ignore[arg-type]


def test_priors_apply_in_order_and_only_when_they_have_inputs():
    assert [p.name for p in PRIORS] == ["recency", "authorship", "aggregate"]
    cfg, nodes = SearchConfig(), np.array([0, 1, 2], np.int64)
    bare = _inputs()
    assert all(p.weigh(cfg, bare, nodes, None) is None for p in PRIORS)
    factor, lines = Authorship().weigh(cfg, bare, nodes, (np.array([1]), np.array([9.0])))
    assert lines.tolist() == [0, 9, 0] and factor.tolist() == pytest.approx([1, 1 + 0.3 * np.log(10), 1])
    agg = _inputs(aggregate=lambda n: n == 2)
    factor, marked = Aggregate().weigh(cfg, agg, nodes, None)
    assert factor.tolist() == [1, 1, 0.5] and Aggregate().columns(cfg, agg, marked, nodes)["aggregate"].tolist() == [
        1,
        1,
        0.5,
    ]
    assert Aggregate().weigh(cfg.replace(aggregate_weight=1.0), agg, nodes, None) is None  # 1 = off
    timeless = _inputs(event_time=np.full(3, np.nan), recency=object())
    assert Recency().weigh(cfg, timeless, nodes, None) is None  # no candidate has a time


def test_the_engine_searches_through_its_scope(tmp_path):
    with ngr.open(tmp_path / "e.db", embedder="hashing") as eng:
        eng.add_nodes(NODES)
        hits = eng.search("vlan tunnel", as_of=25 * DAY, record=False)
        assert {h.id for h in hits} == {"c1", "c2"}  # the issue is after as_of, the file is structural
        c2 = {h.id: h for h in hits}["c2"]
        assert c2.scores["aggregate"] == 0.5
        text, value = c2.formula()  # each prior explains its own factor, in the order it was applied
        assert text.index("× recency") < text.index("× aggregate 0.50") and value == pytest.approx(c2.score)
        assert eng.table.n >= 4 and eng.table.epoch >= 1
