"""Issue 17: field sizes are bounded in the Python API (and so in every interface built on it) — a title,
text or metadata over its limit is a clear invalid_argument before any write; the limits are configurable."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.model import MAX_METADATA_BYTES, MAX_TEXT_CHARS, MAX_TITLE_CHARS, Edge, Node


def test_each_field_has_a_bound_with_a_clear_message():
    Node("ok", title="t" * MAX_TITLE_CHARS, text="x" * 1000, metadata={"k": "v" * 1000})
    with pytest.raises(InvalidArgument, match="title is 10,001 characters.*NGR_MAX_TITLE_CHARS"):
        Node("a", title="t" * (MAX_TITLE_CHARS + 1))
    with pytest.raises(InvalidArgument, match="text is .* over the limit .*NGR_MAX_TEXT_CHARS"):
        Node("a", text="x" * (MAX_TEXT_CHARS + 1))
    with pytest.raises(InvalidArgument, match="metadata is .* bytes as JSON.*NGR_MAX_METADATA_BYTES"):
        Node("a", metadata={"k": "v" * MAX_METADATA_BYTES})
    with pytest.raises(InvalidArgument, match="NGR_MAX_METADATA_BYTES"):
        Edge("a", "rel", "b", meta={"k": "v" * MAX_METADATA_BYTES})


def test_an_oversized_node_writes_nothing(tmp_path):
    with ngr.open(tmp_path / "s.db", embedder="hashing") as eng:
        with pytest.raises(InvalidArgument):
            eng.add_nodes([{"id": "fine", "title": "fine"}, {"id": "big", "text": "x" * (MAX_TEXT_CHARS + 1)}])
        assert eng.stats()["nodes"] == 0


def test_the_limits_are_configurable(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "a", "title": "t" * 50}) + "\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "NGR_MAX_TITLE_CHARS": "20"}
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(tmp_path / "c.db"), "--embedder", "hashing"]
    r = subprocess.run([*cmd, "ingest", str(f), "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 2 and "NGR_MAX_TITLE_CHARS" in r.stdout
    env["NGR_MAX_TITLE_CHARS"] = "100"
    r = subprocess.run([*cmd, "ingest", str(f), "--json"], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
