"""The JSONL reader as a library (ingest/jsonl.py, moved out of the CLI by issue 28): validate a whole file,
then write it in one transaction, reporting the embedding and writing stages; a real SQLite store and the
hashing embedder."""

from __future__ import annotations

import json

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.ingest.jsonl import IngestError, validate_file, write_jsonl


def lines(path, records):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_valid_file_is_written_whole_with_its_stages(tmp_path):
    f = lines(
        tmp_path / "h.jsonl",
        [
            {"id": "issue:1", "type": "issue", "title": "Cache is stale", "text": "old prices"},
            {"id": "pr:2", "type": "pull_request", "title": "Expire the cache", "text": "ttl"},
            {"src": "pr:2", "rel": "fixes", "dst": "issue:1"},
        ],
    )
    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    try:
        parsed = validate_file(f, lambda ids: set())
        assert (len(parsed.node_ids), len(parsed.edge_keys), parsed.lines) == (2, 1, 3)
        stages: list[tuple[str, int, int]] = []
        out = write_jsonl(eng, parsed, f, lambda *a: stages.append(a))
        assert (out["new_nodes"], out["new_edges"], out["embedded"]) == (2, 1, 2)
        assert stages[-1] == ("writing", 3, 3) and ("embedding", 2, 2) in stages
        assert eng.stats()["nodes"] == 2 and eng.stats()["edges"] == 1
        again = write_jsonl(eng, validate_file(f, eng.store.lookup_idx), f)  # nothing new the second time
        assert (again["new_nodes"], again["new_edges"]) == (0, 0)
    finally:
        eng.close()


def test_bad_lines_are_all_reported_and_nothing_is_read_further(tmp_path):
    f = tmp_path / "bad.jsonl"
    f.write_text('{"id": "a", "type": "note"}\nnot json\n{"src": "a", "rel": "r", "dst": "ghost"}\n')
    with pytest.raises(IngestError) as e:
        validate_file(f, lambda ids: set())
    assert e.value.code == "invalid_input"
    assert [x["line"] for x in e.value.details["errors"]] == [2, 3]
    assert "ghost" in e.value.details["errors"][1]["message"]
    with pytest.raises(IngestError, match="no nodes or edges"):
        validate_file(lines(tmp_path / "empty.jsonl", []), lambda ids: set())
    with pytest.raises(InvalidArgument, match="is a directory"):
        validate_file(tmp_path, lambda ids: set())
