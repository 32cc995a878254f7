"""The columnar edge path (Engine.add_edge_columns, Store.upsert_edge_columns; issue 18 target 3):
same results as the per-edge path, same errors, and a crash in the middle of a bulk load leaves
either the whole batch or none of it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pytest

from neurongraph.engine import Engine
from neurongraph.errors import InvalidArgument, UnknownNode
from neurongraph.index.embedder import make_embedder
from neurongraph.model import Edge, Node
from neurongraph.store.sqlite import SQLiteStore

N = 2500  # above the store's bulk threshold, so the in-memory id map is used


def _engine(path) -> Engine:
    return Engine(SQLiteStore(path), make_embedder("hashing"))


def _nodes(n: int = N) -> list[Node]:
    return [Node(f"n{i}", "doc", f"title {i}", f"text {i}") for i in range(n)]


def _graph_rows(eng: Engine) -> list[tuple]:
    a = eng.graph.all_edges()
    return sorted(
        zip(a.eid.tolist(), a.src.tolist(), a.dst.tolist(), a.weight.tolist(), a.rtype.tolist(), a.pol.tolist())
    )


def _store_rows(eng: Engine) -> list[tuple]:
    out = []
    for s, r, d in sorted(eng.store.edges_from([f"n{i}" for i in range(N)])):
        e = eng.store.get_edge(s, r, d)
        assert e is not None
        out.append((s, r, d, e["weight"], e["polarity"], e["factuality"]))
    return out


def _batch(seed: int, m: int = 4000) -> list[tuple]:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, N, m), rng.integers(0, N, m)
    rel = rng.integers(0, 3, m)
    w = np.round(rng.random(m), 3)
    return [(f"n{s}", f"r{r}", f"n{d}", float(x)) for s, r, d, x in zip(src.tolist(), rel.tolist(), dst.tolist(), w)]


def test_columnar_path_matches_per_edge_path(tmp_path):
    """Tuples (bulk path) and dicts (per-edge path) give the same store rows and the same graph,
    repeated keys inside a batch and updates of existing edges included; a replayed engine agrees."""
    a, b = _engine(tmp_path / "a.db"), _engine(tmp_path / "b.db")
    for eng in (a, b):
        eng.add_nodes(_nodes())
    for seed in range(3):  # seeds overlap: later batches update edges of earlier ones
        batch = _batch(seed) + _batch(seed)[:100]  # repeated (src, rel, dst) in one batch: the last one wins
        a.add_edges(batch)
        b.add_edges([{"src": s, "rel": r, "dst": d, "weight": w} for s, r, d, w in batch])
    assert _store_rows(a) == _store_rows(b)
    ga, gb = _graph_rows(a), _graph_rows(b)
    assert [r[1:] for r in sorted(ga, key=lambda r: r[1:])] == [r[1:] for r in sorted(gb, key=lambda r: r[1:])]
    assert a.graph.n_edges == a.store.edge_count()
    replay = _engine(tmp_path / "a.db")
    assert _graph_rows(replay) == ga  # what the engine applied directly equals the change feed
    for eng in (a, b, replay):
        eng.close()


def test_update_keeps_learned_weight_in_graph(tmp_path):
    """An upsert of an existing edge through the bulk path keeps its learned (plastic) part, and the
    graph holds the effective weight, exactly what the change feed reports."""
    eng = _engine(tmp_path / "s.db")
    eng.add_nodes(_nodes(10))
    eng.add_edges([("n1", "r", "n2", 1.0)])
    eid = eng.store.get_edge("n1", "r", "n2")["eid"]
    with eng.store.transaction():
        seq = eng.store.next_seq()
        eng.store.ledgers.set_plastic([(eid, 0.5, None)], seq)
    eng.refresh()
    eng.add_edge_columns(["n1"], ["r"], ["n2"], weight=[2.0])
    (w,), _ = eng.graph.edge_attrs([eid])
    replay = _engine(tmp_path / "s.db")
    (w2,), _ = replay.graph.edge_attrs([eid])
    assert w == pytest.approx(w2) and w == pytest.approx(2.5)
    eng.close()
    replay.close()


def test_columns_errors(tmp_path):
    eng = _engine(tmp_path / "e.db")
    eng.add_nodes(_nodes(10))
    with pytest.raises(UnknownNode, match="'zz'"):
        eng.add_edge_columns(["n1", "n2"], ["r", "r"], ["n3", "zz"])
    with pytest.raises(InvalidArgument, match="rel must be a non-empty string"):
        eng.add_edges([("n1", "", "n2")])
    with pytest.raises(InvalidArgument, match="weight must be a finite number"):
        eng.add_edge_columns(["n1"], ["r"], ["n2"], weight=np.array([np.nan]))
    for bad_polarity in ([0], [1.0], [True], np.array([1.0])):
        with pytest.raises(InvalidArgument, match="polarity must be 1 or -1"):
            eng.add_edge_columns(["n1"], ["r"], ["n2"], polarity=bad_polarity)
    with pytest.raises(InvalidArgument, match="factuality"):
        eng.add_edge_columns(["n1"], ["r"], ["n2"], factuality=[1.5])
    with pytest.raises(InvalidArgument, match="non-empty string"):
        eng.add_edge_columns([""], ["r"], ["n2"])
    with pytest.raises(InvalidArgument, match="one length"):
        eng.add_edge_columns(["n1", "n2"], ["r"], ["n2"])
    assert eng.store.edge_count() == 0  # nothing written by any failed batch
    eng.add_edges([Edge("n1", "r", "n2", weight=0.5), Edge("n2", "r", "n3", polarity=-1)])  # Edge objects, bulk
    assert eng.store.get_edge("n2", "r", "n3")["polarity"] == -1
    assert eng.graph.n_edges == 2
    eng.close()


def test_other_writer_between_batches(tmp_path):
    """Another process's write between two bulk batches: the engine falls back to the change feed
    and the id map catches up with nodes it did not add (and drops deleted ones)."""
    eng = _engine(tmp_path / "w.db")
    eng.add_nodes(_nodes())
    eng.add_edges(_batch(0))
    other = _engine(tmp_path / "w.db")
    other.add_nodes([Node("late", "doc", "late", "late node")])
    other.store.delete_nodes(["n5"])
    other.close()
    eng.add_edges([("late", "r", "n1")] + [t for t in _batch(1) if "n5" not in (t[0], t[2])])
    with pytest.raises(UnknownNode, match="'n5'"):
        eng.add_edges([("n5", "r", "n1")] * N)
    assert eng.graph.n_edges == eng.store.edge_count()
    assert _graph_rows(_engine(tmp_path / "w.db")) == _graph_rows(eng)
    eng.close()


_CHILD = textwrap.dedent(
    """
    import sys, time
    from neurongraph.engine import Engine
    from neurongraph.index.embedder import make_embedder
    from neurongraph.store.sqlite import SQLiteStore

    class Stop:  # the schema hook runs inside the write transaction, after every row is written
        def after_edges(self, seq):
            print("inside", flush=True)
            time.sleep(60)
        def after_nodes(self, seq, existing): pass
        def after_edge_removal(self, touched): pass

    path, n, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    eng = Engine(SQLiteStore(path), make_embedder("hashing"))
    src = [f"n{i % n}" for i in range(200_000)]
    dst = [f"n{(i * 7 + 1) % n}" for i in range(200_000)]
    rel = [f"r{i // n}" for i in range(200_000)]
    if mode == "hook":
        eng.store.validator = Stop()
        eng.add_edge_columns(src, rel, dst)
    else:
        print("loading", flush=True)
        for i in range(0, 200_000, 20_000):
            eng.add_edge_columns(src[i : i + 20_000], rel[i : i + 20_000], dst[i : i + 20_000])
            print("batch", i, flush=True)
    """
)


@pytest.mark.parametrize("mode", ["hook", "timer"])
def test_sigkill_mid_bulk_load_leaves_whole_batches(tmp_path, mode):
    """SIGKILL a process in the middle of a bulk load, then reopen: every batch is there whole or not at
    all.  "hook": killed inside the transaction after all 200k rows were written but before the
    commit; "timer": killed at an arbitrary moment of a
    load in 20k batches."""
    db = tmp_path / "k.db"
    eng = _engine(db)
    eng.add_nodes(_nodes())
    eng.close()
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(db), str(N), mode], stdout=subprocess.PIPE, text=True, env=env
    )
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().strip()
        assert first in ("inside", "loading"), first
        if mode == "timer":
            while True:  # kill during a later batch, not between two
                line = proc.stdout.readline()
                if line.startswith("batch 40000") or not line:
                    break
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    eng = _engine(db)
    n = eng.store.edge_count()
    if mode == "hook":
        assert n == 0
    else:
        assert n % 20_000 == 0 and 60_000 <= n < 200_000, n
    assert eng.graph.n_edges == n
    eng.add_edge_columns(["n1"], ["r0"], ["n2"])  # and takes writes again
    eng.close()


def test_generic_path_on_postgres():
    """A store without its own bulk method (PostgreSQL) takes Store.upsert_edge_columns' default: the
    same rows, the same errors; the engine reads the batch back through the change feed."""
    pytest.importorskip("psycopg")
    from neurongraph.store.postgres import PostgresStore
    from postgres_server import fresh_database  # skips without a server

    eng = Engine(PostgresStore(fresh_database()), make_embedder("hashing"))
    try:
        eng.add_nodes(_nodes(20))
        eng.add_edges([("n1", "r", "n2", 0.5), ("n2", "r", "n3", 1.0), ("n1", "r", "n2", 0.7)])
        eng.add_edge_columns(["n3"], ["s"], ["n4"], polarity=[-1])
        assert eng.store.get_edge("n1", "r", "n2")["weight"] == 0.7
        assert eng.store.get_edge("n3", "s", "n4")["polarity"] == -1
        assert eng.graph.n_edges == eng.store.edge_count() == 3
        with pytest.raises(UnknownNode):
            eng.add_edge_columns(["n1"], ["r"], ["zz"])
    finally:
        eng.close()
