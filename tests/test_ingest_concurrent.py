"""Issue 17: the counts an ingest reports are exact when another process ingests into the same store at the
same time — what is new is decided under the write lock, not before it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import neurongraph as ngr
from neurongraph.ingest.markdown import read_markdown
from neurongraph.ingest.sync import apply_batch

FIX = Path(__file__).parent / "fixtures" / "markdown"


def test_a_writer_between_diff_and_commit_does_not_inflate_the_counts(tmp_path):
    """Deterministic interleaving: while the first sync embeds (after its diff, before its transaction),
    a second handle syncs the same pages. Each node is counted new exactly once across the two."""
    db = tmp_path / "c.db"
    first, second = ngr.open(db, embedder="hashing"), ngr.open(db, embedder="hashing")
    batch = read_markdown(FIX)
    embed = first.vectors_for
    other: dict = {}

    def embed_then_let_the_other_write(texts, progress=None, **kw):
        out = embed(texts, progress, **kw)
        if not other:
            other.update(apply_batch(second, read_markdown(FIX)))
        return out

    first.vectors_for = embed_then_let_the_other_write  # type: ignore[method-assign]
    try:
        mine = apply_batch(first, batch)
    finally:
        first.close()
        second.close()
    total = len({n.id for n in batch.nodes})
    assert other["new_nodes"] == total
    assert mine["new_nodes"] == 0 and mine["updated_nodes"] == 0
    assert mine["unchanged_nodes"] == total
    eng = ngr.open(db, embedder="hashing")
    try:
        assert eng.stats()["nodes"] == total
    finally:
        eng.close()


def test_two_ingest_processes_at_once_count_each_node_new_once(tmp_path):
    db = tmp_path / "p.db"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing"]
    cmd += ["ingest", "markdown", str(FIX), "--json"]
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env) for _ in range(2)
    ]
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    summaries = [json.loads(out) for out, _ in outs]
    total = len({n.id for n in read_markdown(FIX).nodes})
    assert sum(s["new_nodes"] for s in summaries) == total
    assert all(s["new_nodes"] + s["updated_nodes"] + s["unchanged_nodes"] == total for s in summaries)


def test_two_jsonl_ingests_at_once_count_each_node_and_edge_new_once(tmp_path):
    """`ngr ingest FILE.jsonl` counts what is new under the write lock (it printed a before/after difference
    of store totals, which a concurrent ingest inflates)."""
    f = tmp_path / "g.jsonl"
    n = 400
    lines = [
        json.dumps({"kind": "node", "id": f"n{i}", "type": "note", "title": f"note {i}", "text": "x"}) for i in range(n)
    ]
    lines += [json.dumps({"kind": "edge", "src": f"n{i}", "rel": "next", "dst": f"n{i + 1}"}) for i in range(n - 1)]
    f.write_text("\n".join(lines) + "\n")
    db = tmp_path / "j.db"
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing", "ingest", str(f)]
    procs = [subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)]
    procs.append(subprocess.Popen([*cmd, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env))
    outs = [p.communicate(timeout=120) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, out + err
    summaries = [json.loads(out) for out, _ in outs]
    assert sum(s["new_nodes"] for s in summaries) == n
    assert sum(s["new_edges"] for s in summaries) == n - 1
