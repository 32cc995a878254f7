"""Engine snapshots: a large store reopens from saved arrays, then catches up through the change feed.

Every test compares against a full replay of the same store (the source of truth)."""

from __future__ import annotations

import shutil

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import neurongraph as ngr
from neurongraph.index.embedder import HashingEmbedder
from neurongraph.snapshot import snapshot_path

NODES = [
    ngr.Node(
        f"n{i}",
        "issue" if i % 3 else "pr",
        f"title {i}",
        f"text about topic {i % 7} and word{i}",
        {"time": 1e9 + i * 60, "source": f"repo{i % 2}"} if i % 4 else {},
    )  # search filters' fields
    for i in range(60)
]
EDGES = [(f"n{i}", "mentions" if i % 2 else "fixes", f"n{(i * 7 + 3) % 60}") for i in range(60)]
QUERIES = ["topic 3 word12", "title 40", "topic 5", "word59 topic 1"]


def _open(path, **kw):
    eng = ngr.open(path, embedder="hashing", **kw)
    eng.snapshot_min_rows = 0  # the store is tiny: snapshot anyway
    return eng


def _state(eng):
    e, tab = eng.graph.all_edges(), eng.table
    order = np.argsort(e.eid)
    vec = np.flatnonzero(eng.vectors.present)
    return {
        "alive": np.flatnonzero(tab.alive).tolist(),
        # type *names* per live node: type ids are internal, and a running engine (like a snapshot) keeps
        # ids of types whose last node was deleted, which a replay never assigns
        "type_of": [sorted(tab.type_ids, key=tab.type_ids.get)[t] for t in tab.type_of[tab.alive]],
        "vec_idx": vec.tolist(),
        "vec": eng.vectors.matrix[vec].round(6).tolist(),
        "edges": list(
            zip(
                e.eid[order].tolist(),
                e.src[order].tolist(),
                e.dst[order].tolist(),
                e.weight[order].round(6).tolist(),
                e.rtype[order].tolist(),
            )
        ),  # learned weights decay
        "rels": eng._rel_ids,
        "seq": eng._seq,
        "event_time": [None if t != t else t for t in tab.event_time[tab.alive].tolist()],
        "source": [
            None if s < 0 else sorted(tab.source_ids, key=tab.source_ids.get)[s] for s in tab.source_of[tab.alive]
        ],
    }


def _ranking(eng):
    # 6 decimals: learned activation decays with the clock, and two engines read it microseconds apart
    return [
        [(h.id, round(h.scores["final"], 6)) for h in eng.search(q, limit=8, record=False, **kw)]
        for q in QUERIES
        for kw in ({}, {"as_of": 1e9 + 1800, "sources": ["repo1"]})
    ]


def _replay(path, tmp_path):
    """The same store opened without any snapshot: a full replay."""
    copy = tmp_path / "replay.db"
    for suffix in ("", "-wal", "-shm"):
        src = path.with_name(path.name + suffix)
        if src.exists():
            shutil.copy(src, copy.with_name(copy.name + suffix))
    eng = ngr.open(copy, embedder="hashing")
    assert not eng.opened_from_snapshot
    return eng


@pytest.fixture
def built(tmp_path):
    path = tmp_path / "ngr.db"
    eng = _open(path)
    eng.add_nodes(NODES)
    eng.add_edges(EDGES)
    eng.close()  # writes the snapshot
    assert snapshot_path(str(path)).is_file()
    return path


def _reopen_and_compare(path, tmp_path):
    """Open from the snapshot, check it equals a full replay (state and rankings); return the engine."""
    eng = _open(path)
    assert eng.opened_from_snapshot
    ref = _replay(path, tmp_path)
    assert _ranking(eng) == _ranking(ref)
    assert _state(eng) == _state(ref)
    ref.close()
    return eng


def test_reopen_from_snapshot_equals_a_full_replay(built, tmp_path):
    _reopen_and_compare(built, tmp_path).close()


def test_changes_after_the_snapshot_are_caught_up(built, tmp_path):
    other = ngr.open(built, embedder="hashing")  # default threshold: this small store never saves
    other.add_nodes(
        [
            ngr.Node(
                "late",
                "wiki",
                "late page",
                "a page about topic 3 added after the snapshot",
                {"time": 1e9, "source": "repo1"},
            ),
            ngr.Node("n5", "issue", "title 5", "rewritten text about topic 3", {"source": "repo0"}),
        ]
    )
    other.add_edges([("late", "mentions", "n1"), ("n2", "fixes", "late")])
    other.delete_nodes(["n9"])
    other.close()
    eng = _reopen_and_compare(built, tmp_path)
    assert eng._changes_unsnapshotted > 0
    assert "late" in {h.id for h in eng.search("page about topic 3 added after", limit=5, record=False)}
    eng.close()


def test_learned_weights_after_reopen_match_a_replay(built, tmp_path):
    eng = _open(built)
    res = eng.search("topic 3 word12", limit=8)
    hit = next(h for h in res if h.paths)
    eng.record_source_use(res.trace_id, [(hit.id, s) for s in ("selected", "validated", "used")])
    eng.snapshot_min_rows = 10**9  # keep the old snapshot: the learned weights arrive by the change feed
    eng.close()
    _reopen_and_compare(built, tmp_path).close()


def test_foreign_corrupt_or_other_embedder_snapshots_are_ignored(built, tmp_path):
    snap = snapshot_path(str(built))
    # another store's snapshot placed next to this one
    other = tmp_path / "other.db"
    o = _open(other)
    o.add_nodes(NODES[:10])
    o.close()
    shutil.copy(snapshot_path(str(other)), snap)
    eng = ngr.open(built, embedder="hashing")
    assert not eng.opened_from_snapshot
    assert len(eng.search("topic 3", limit=50, record=False)) > 10
    eng.close()
    # a truncated file
    snap.write_bytes(b"PK\x03\x04 not really a zip")
    eng = ngr.open(built, embedder="hashing")
    assert not eng.opened_from_snapshot and eng.table.alive.sum() == len(NODES)
    eng.close()
    # a valid snapshot made with another embedder
    e2 = ngr.open(built, embedder=HashingEmbedder(64))
    e2.snapshot_min_rows = 0
    e2.save_snapshot()
    e2.close()
    eng = ngr.open(built, embedder="hashing")
    assert not eng.opened_from_snapshot
    eng.close()


def test_small_or_unchanged_stores_write_nothing_and_memory_stores_have_none(tmp_path):
    path = tmp_path / "small.db"
    eng = ngr.open(path, embedder="hashing")  # default threshold: 50,000 rows
    eng.add_nodes(NODES)
    eng.close()
    assert not snapshot_path(str(path)).exists()
    mem = ngr.open(":memory:", embedder="hashing")
    assert mem.save_snapshot() is None
    mem.close()


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(st.sampled_from(["node", "edge", "delete", "save"]), st.integers(0, 30)), min_size=1, max_size=25
    )
)
def test_any_history_of_writes_and_snapshots_reopens_to_the_replayed_state(tmp_path_factory, ops):
    """Invariant: snapshot (at any point) + change-feed catch-up == full replay of the store."""
    folder = tmp_path_factory.mktemp("hist")
    path = folder / "h.db"
    eng = _open(path)
    eng.add_nodes(NODES[:5])
    for op, k in ops:
        if op == "node":
            eng.add_nodes([ngr.Node(f"x{k}", "note", f"note {k}", f"words {k} topic {k % 4}")])
        elif op == "edge":
            ids = [n for n in (f"x{k}", f"n{k % 5}", f"x{(k * 3) % 31}") if eng.store.lookup_idx([n])]
            if len(ids) >= 2:
                eng.add_edges([(ids[0], "mentions", ids[-1])])
        elif op == "delete":
            eng.delete_nodes([f"x{k}"])
        else:
            eng.save_snapshot()
    eng.snapshot_min_rows = 10**9  # whatever was saved last is what the next open starts from
    eng.close()
    again = _open(path)
    ref = _replay(path, folder)
    assert _state(again) == _state(ref)
    again.close(), ref.close()


def test_a_failing_snapshot_write_warns_and_still_closes(tmp_path, monkeypatch):
    path = tmp_path / "w.db"
    eng = _open(path)
    eng.add_nodes(NODES[:10])

    def boom(*a, **k):
        raise OSError("No space left on device")

    monkeypatch.setattr("neurongraph.engine.save_snapshot", boom)
    with pytest.warns(RuntimeWarning, match="snapshot"):
        eng.close()
    assert not snapshot_path(str(path)).exists()
    again = ngr.open(path, embedder="hashing")  # the store itself is intact
    assert again.table.alive.sum() == 10 and not again.opened_from_snapshot
    again.close()


LINKED = [
    ngr.Node("a", "passage", "Saaremaa", "Saaremaa is an island of Estonia in the Baltic Sea."),
    ngr.Node("b", "passage", "Kuressaare", "Kuressaare is the only town on Saaremaa."),
    ngr.Node("c", "passage", "Baltic Sea", "The Baltic Sea borders Estonia and Finland."),
    ngr.Node("d", "passage", "Scott Howell (footballer)", "Scott Howell plays football in Estonia."),
    ngr.Node("e", "passage", "Scott Howell (consultant)", "Scott Howell advised the mayor of Tallinn."),
]
LINK_QUERIES = ["Which town is on Saaremaa?", "Who did Scott Howell advise in Estonia?", "the Baltic Sea borders what?"]


def test_a_linked_store_answers_its_first_query_from_the_snapshot_tables(tmp_path):
    from neurongraph.link import Linker
    from neurongraph.link.query import QueryTables

    path = tmp_path / "linked.db"
    eng = _open(path)
    eng.add_nodes(LINKED)
    eng.link()
    eng.close()
    eng = _open(path)
    assert eng.opened_from_snapshot and isinstance(eng.query_linker.linker, QueryTables)
    assert eng.query_linker.get() is eng.query_linker.linker  # no refit of the corpus
    ref = _replay(path, tmp_path)
    assert isinstance(ref.query_linker.get(), Linker)  # the replay fits
    for q in LINK_QUERIES:
        assert eng.query_linker.linker.link_query(q) == ref.query_linker.linker.link_query(q)
        assert [h.id for h in eng.search(q, record=False)] == [h.id for h in ref.search(q, record=False)]
    assert any(eng.query_linker.linker.link_query(q) for q in LINK_QUERIES)
    ref.close()
    # a node added after the snapshot: the tables give way, the next query fits the corpus again
    eng.snapshot_min_rows = 10**9
    eng.add_nodes([ngr.Node("f", "passage", "Tallinn", "Tallinn is the capital of Estonia.")])
    assert eng.query_linker.linker is None
    assert ("f", "tallinn") in eng.query_linker.get().link_query("Where is Tallinn?")
    eng.close()
    eng = _open(path)  # the old snapshot + the change feed
    assert eng.opened_from_snapshot and eng.query_linker.linker is None
    assert ("f", "tallinn") in eng.query_linker.get().link_query("Where is Tallinn?")
    eng.close()


def test_a_trained_ivf_index_comes_back_without_retraining(tmp_path, monkeypatch):
    from neurongraph.index.ivf import IvfIndex

    path = tmp_path / "ivf.db"
    eng = _open(path)
    eng.add_nodes(
        [ngr.Node(f"v{i}", "note", f"note {i}", f"topic {i % 9} word{i} and more words {i % 13}") for i in range(400)]
    )
    before = [[h.id for h in eng.search(q, ann_min_nodes=1, ann_nprobe=4, record=False)] for q in QUERIES]
    assert eng.vectors.ivf is not None
    eng.close()

    def no_training(*a, **k):
        raise AssertionError("the IVF index was retrained")

    monkeypatch.setattr(IvfIndex, "train", classmethod(no_training))
    eng = _open(path)
    assert eng.opened_from_snapshot and eng.vectors.ivf_state() is not None  # grouped on first use
    after = [[h.id for h in eng.search(q, ann_min_nodes=1, ann_nprobe=4, record=False)] for q in QUERIES]
    assert after == before
    eng.close()


def test_rows_added_before_the_first_search_join_the_restored_ivf_index(tmp_path):
    path = tmp_path / "ivf2.db"
    eng = _open(path)
    eng.add_nodes([ngr.Node(f"v{i}", "note", f"note {i}", f"topic {i % 9} word{i}") for i in range(300)])
    eng.search("topic 3", ann_min_nodes=1, record=False)  # trains
    eng.close()
    eng = _open(path)
    assert eng.vectors.ivf is None and eng.vectors.ivf_state() is not None  # restored lazily
    eng.add_nodes([ngr.Node("quokka", "note", "Quokka habitat", "quokkas live on Rottnest island")])
    assert eng.vectors.ivf_state() is None  # a row waits for the rebuild: nothing exact to save yet
    res = eng.search("quokka island habitat", ann_min_nodes=1, ann_nprobe=1, record=False)
    assert res.hits[0].id == "quokka" and eng.vectors.ivf is not None
    # the dense side on its own: the IVF index itself returns the new row
    row = eng.store.lookup_idx(["quokka"])["quokka"]
    top, _ = eng.vectors.ann_top_k(eng.vectors.matrix[row], 3, nprobe=1)
    assert row in top.tolist()
    eng.close()


def test_a_store_restored_from_an_older_backup_ignores_the_newer_snapshot(built, tmp_path):
    backup = tmp_path / "backup.db"
    eng = _open(built)
    eng.store.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    shutil.copy(built, backup)  # the backup predates the next snapshot
    eng.add_nodes([ngr.Node("gone", "note", "only after the backup", "this node is not in the backup")])
    eng.save_snapshot()  # a newer snapshot, with "gone"
    eng.close()
    for suffix in ("-wal", "-shm"):
        built.with_name(built.name + suffix).unlink(missing_ok=True)
    shutil.copy(backup, built)  # restore; the snapshot file stays behind
    eng = ngr.open(built, embedder="hashing")
    eng.add_nodes([ngr.Node(f"new{i}", "note", f"new {i}", "written after the restore") for i in range(5)])
    eng.close()  # the store's seq is now past the snapshot's
    eng = ngr.open(built, embedder="hashing")
    assert not eng.opened_from_snapshot
    assert eng.store.lookup_idx(["gone"]) == {} and "gone" not in {
        h.id for h in eng.search("only after the backup", record=False)
    }
    eng.close()
