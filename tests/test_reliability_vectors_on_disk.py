"""Issue 17: vectors are stored compactly — a 384-d float32 vector is 1,536 bytes, and the vector cache
takes well under twice that on disk (it was ~3x: each row spilled into an overflow page of a WITHOUT ROWID
table); an existing store is migrated with its vectors intact."""

from __future__ import annotations

import sqlite3

import numpy as np

import neurongraph as ngr

N, DIM = 3000, 384


def _vector_bytes(db) -> int:
    """Bytes of the embeddings table and its index (SQLite's dbstat view)."""
    con = sqlite3.connect(db)
    try:
        names = [r[0] for r in con.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'embeddings'")]
        marks = ",".join("?" * len(names))
        return con.execute(f"SELECT sum(pgsize) FROM dbstat WHERE name IN ({marks})", names).fetchone()[0]
    finally:
        con.close()


def _store(path):
    eng = ngr.open(path, embedder=f"hashing:{DIM}")
    eng.add_nodes([ngr.Node(f"n{i}", "note", f"note {i}", f"text number {i} with words") for i in range(N)])
    return eng


def test_the_vector_cache_is_at_most_one_and_a_half_times_the_raw_floats(tmp_path):
    db = tmp_path / "v.db"
    _store(db).close()
    raw = N * DIM * 4
    assert _vector_bytes(db) < 1.5 * raw, _vector_bytes(db) / raw


def test_an_old_store_is_migrated_with_its_vectors(tmp_path):
    db = tmp_path / "old.db"
    eng = _store(db)
    before = [h.id for h in eng.search("note 17 text", limit=10, record=False)]
    vec = eng.vectors.matrix[: eng.vectors.n].copy()
    eng.store.close()  # keep no snapshot: the reopened engine loads vectors from the migrated table
    con = sqlite3.connect(db)  # turn it into a store written before 0006_compact_vectors
    con.executescript(
        "CREATE TABLE e_old (content_hash TEXT NOT NULL, model TEXT NOT NULL, dim INTEGER NOT NULL,"
        " vector BLOB NOT NULL, PRIMARY KEY (content_hash, model)) WITHOUT ROWID;"
        "INSERT INTO e_old SELECT content_hash, model, dim, vector FROM embeddings; DROP TABLE embeddings;"
        "ALTER TABLE e_old RENAME TO embeddings; DELETE FROM migrations WHERE name = '0006_compact_vectors';"
    )
    con.close()
    eng = ngr.open(db, embedder=f"hashing:{DIM}")
    try:
        assert eng.stats()["cached_vectors"] == N
        assert np.array_equal(eng.vectors.matrix[: eng.vectors.n], vec)
        assert [h.id for h in eng.search("note 17 text", limit=10, record=False)] == before
        con = sqlite3.connect(db)
        sql = con.execute("SELECT sql FROM sqlite_master WHERE name = 'embeddings'").fetchone()[0]
        con.close()
        assert "WITHOUT ROWID" not in sql
    finally:
        eng.close()
