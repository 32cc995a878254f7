"""Issue 17: a snapshot the store vouches for (valid token) but whose content is damaged or forged means a
replay, never a crash or a huge allocation; a temporary file left by a writer that died is cleaned up."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import neurongraph as ngr

QUERIES = ["topic 3 word", "more words 5", "note 17"]


def _open(path):
    eng = ngr.open(path, embedder="hashing")
    eng.snapshot_min_rows = 0  # tiny store: snapshot anyway
    return eng


@pytest.fixture()
def built(tmp_path):
    """A closed store with a trusted snapshot beside it, and the rankings a full replay gives."""
    path = tmp_path / "s.db"
    eng = _open(path)
    eng.add_nodes(
        [ngr.Node(f"v{i}", "note", f"note {i}", f"topic {i % 9} word{i} more words {i % 13}") for i in range(60)]
    )
    eng.add_edges([(f"v{i}", "next", f"v{i + 1}") for i in range(59)])
    eng.close()
    snap = path.with_name(path.name + ".snapshot.npz")
    assert snap.is_file()
    hidden = snap.with_name("hidden.npz")  # a full replay: open with the snapshot out of the way
    os.replace(snap, hidden)
    eng = ngr.open(path, embedder="hashing")
    expected = [[h.id for h in eng.search(q, record=False)] for q in QUERIES]
    eng.store.close()  # not eng.close(): that would write a new snapshot
    os.replace(hidden, snap)
    return path, snap, expected


def _rewrite(snap, change):
    """Rewrite the snapshot with ``change(arrays, header)`` applied, keeping its token (so the store trusts it)."""
    with np.load(snap) as z:
        arrays = {k: z[k] for k in z.files}
    header = json.loads(bytes(arrays["header"]).decode())
    change(arrays, header)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    with open(snap, "wb") as f:
        np.savez(f, **arrays)


def _set(key, fn):
    def change(arrays, header):
        arrays[key] = fn(arrays[key])

    return change


def _header(key, value):
    def change(arrays, header):
        header[key] = value

    return change


CORRUPTIONS = {
    "graph size in the billions": _header("n_nodes", 12_000_000_000),
    "graph size negative": _header("n_nodes", -1),
    "edge endpoint past the graph": _set("edge_src", lambda a: np.where(np.arange(a.size) == 0, 10**9, a)),
    "edge endpoint negative": _set("edge_dst", lambda a: np.where(np.arange(a.size) == 0, -7, a)),
    "edge columns of different lengths": _set("edge_weight", lambda a: a[:-1]),
    "non-finite edge weight": _set("edge_weight", lambda a: np.where(np.arange(a.size) == 0, np.inf, a)),
    "NaN in a vector": _set("vec_mat", lambda a: np.where(np.arange(a.size).reshape(a.shape) == 3, np.nan, a)),
    "vector row of another node index": _set("vec_idx", lambda a: a + 10**6),
    "vector rows repeated": _set("vec_idx", lambda a: np.zeros_like(a)),
    "type id past the type table": _set("type_of", lambda a: a + 50),
    "source id past the source table": _set("source_of", lambda a: a + 50),
    "node tables of different lengths": _set("type_of", lambda a: a[:-1]),
    "two-dimensional node table": _set("alive", lambda a: np.stack([a, a])),
}


@pytest.mark.parametrize("corruption", list(CORRUPTIONS), ids=list(CORRUPTIONS))
def test_damaged_content_with_a_valid_token_means_a_replay(built, corruption):
    path, snap, expected = built
    _rewrite(snap, CORRUPTIONS[corruption])
    eng = _open(path)
    try:
        assert not eng.opened_from_snapshot
        assert [[h.id for h in eng.search(q, record=False)] for q in QUERIES] == expected
    finally:
        eng.close()


def test_an_untouched_snapshot_is_still_used(built):
    path, _snap, expected = built
    eng = _open(path)
    try:
        assert eng.opened_from_snapshot
        assert [[h.id for h in eng.search(q, record=False)] for q in QUERIES] == expected
    finally:
        eng.close()


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_a_temporary_file_of_a_dead_writer_is_removed_and_a_live_ones_kept(built):
    path, snap, _ = built
    dead = snap.with_name(f"{snap.name}.{_dead_pid()}.deadbeef.tmp")
    live = snap.with_name(f"{snap.name}.{os.getpid()}.cafef00d.tmp")  # a writer that is still running
    other = snap.with_name(f"{snap.name}.notes.tmp")  # not a name the engine writes: not its to delete
    for f in (dead, live, other):
        f.write_bytes(b"half a snapshot")
    eng = _open(path)
    eng.close()
    assert not dead.exists()
    assert live.exists() and other.exists()
