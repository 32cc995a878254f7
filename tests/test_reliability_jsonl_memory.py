"""Issue 17: `ngr ingest FILE.jsonl` keeps memory bounded on large files — it validates the file streaming
(keeping ids, not records) and writes it streaming in chunks inside its one transaction, so memory grows with
the number of records, not with their text; a file rewritten between the passes is refused, not half-written."""

from __future__ import annotations

import json
import os
import tracemalloc

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from neurongraph.cli.common import IngestError
from neurongraph.cli.main import _read_jsonl, _stream, app

TEXT = 20_000  # characters per node
N = 1000  # 20 MB of text in all


def _big_file(path):
    with open(path, "w", encoding="utf-8") as f:
        for i in range(N):
            f.write(json.dumps({"id": f"n{i}", "type": "note", "title": f"note {i}", "text": f"{i} " + "x" * TEXT}))
            f.write("\n")
        for i in range(N - 1):
            f.write(json.dumps({"kind": "edge", "src": f"n{i}", "rel": "next", "dst": f"n{i + 1}"}) + "\n")


def test_validating_and_streaming_a_file_holds_one_chunk_not_the_file(tmp_path):
    """The two places an ingest reads records: validation keeps ids only, and every later pass (embedding,
    writing nodes, writing edges) gets them from `_stream` in chunks of about INGEST_CHUNK_CHARS."""
    f = tmp_path / "big.jsonl"
    _big_file(f)
    size = os.path.getsize(f)
    tracemalloc.start()
    try:
        parsed = _read_jsonl(f, lambda ids: set())
        validate_peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.reset_peak()
        nodes = sum(len(c) for c in _stream(parsed, f, 1, chunk_chars=256 * 1024))
        edges = sum(len(c) for c in _stream(parsed, f, 2, chunk_chars=256 * 1024))
        stream_peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert not parsed.errors and (nodes, edges) == (N, N - 1)
    assert validate_peak < 0.05 * size, f"validation peak {validate_peak / 1e6:.1f} MB for {size / 1e6:.0f} MB"
    assert stream_peak < 0.1 * size, f"streaming peak {stream_peak / 1e6:.1f} MB for {size / 1e6:.0f} MB"


def test_a_small_file_still_ingests_whole_through_the_streams(tmp_path):
    f, db = tmp_path / "s.jsonl", tmp_path / "s.db"
    lines = [json.dumps({"id": f"n{i}", "title": f"note {i}", "text": "short"}) for i in range(50)]
    lines.insert(10, json.dumps({"kind": "edge", "src": "n1", "rel": "next", "dst": "n40"}))  # before its node
    f.write_text("\n".join(lines) + "\n")
    r = CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", str(f), "--json"])
    assert r.exit_code == 0, r.output
    out = json.loads(r.stdout)
    assert (out["nodes"], out["edges"], out["new_nodes"], out["new_edges"]) == (50, 1, 50, 1)
    with ngr.open(db, embedder="hashing") as eng:
        assert eng.stats()["nodes"] == 50 and eng.stats()["edges"] == 1


def test_a_file_rewritten_after_validation_is_refused(tmp_path):
    f = tmp_path / "f.jsonl"
    f.write_text("\n".join(json.dumps({"id": f"n{i}", "title": f"t{i}"}) for i in range(5)) + "\n")
    parsed = _read_jsonl(f, lambda ids: set())
    assert not parsed.errors and len(parsed.node_ids) == 5
    assert [n.id for chunk in _stream(parsed, f, 1) for n in chunk] == [f"n{i}" for i in range(5)]
    f.write_text(f.read_text() + json.dumps({"id": "late"}) + "\n")  # appended after validation
    with pytest.raises(IngestError, match="changed while it was being ingested"):
        list(_stream(parsed, f, 1))
