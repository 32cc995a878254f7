"""`ngr ingest FILE.jsonl` is one unit (issue 17, defect 1): an edge a strict schema rejects after the
file's nodes were staged, or a kill -9 at any point of a run, leaves the store as it was."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time

from typer.testing import CliRunner

from neurongraph.cli.main import app
from schema_fixtures import SEED003_TOML


def ngr(db, *args):
    return CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", *args], catch_exceptions=False)


def _counts(db) -> tuple[int, int]:
    if not os.path.exists(db):
        return 0, 0
    con = sqlite3.connect(db)
    try:
        if not con.execute("SELECT count(*) FROM sqlite_master WHERE name='nodes'").fetchone()[0]:
            return 0, 0
        return (
            con.execute("SELECT count(*) FROM nodes").fetchone()[0],
            con.execute("SELECT count(*) FROM edges").fetchone()[0],
        )
    finally:
        con.close()


def test_a_schema_violation_in_an_edge_writes_none_of_the_file(tmp_path):
    db = tmp_path / "s.db"
    base = tmp_path / "base.jsonl"
    base.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"id": "t1", "type": "task", "title": "Ship it"},
                {"id": "c1", "type": "condition", "title": "Waiting"},
            ]
        )
    )
    assert ngr(db, "ingest", str(base)).exit_code == 0
    (tmp_path / "s.toml").write_text(SEED003_TOML)
    assert ngr(db, "schema", "load", str(tmp_path / "s.toml")).exit_code == 0
    before = _counts(db)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(
        "\n".join(
            json.dumps(x)
            for x in [
                {"id": "t2", "type": "task", "title": "New task"},
                {"id": "t3", "type": "task", "title": "Other task"},
                {"src": "c1", "rel": "blocked_by", "dst": "t1"},
            ]
        )
    )  # condition -> task: not allowed
    r = ngr(db, "ingest", str(bad))
    assert r.exit_code == 2 and "error[schema_violation]" in r.stderr
    assert _counts(db) == before  # t2, t3 were not committed


def test_kill_9_during_a_jsonl_ingest_leaves_all_or_nothing(tmp_path):
    n_nodes, n_edges = 6000, 12000
    f = tmp_path / "big.jsonl"
    with f.open("w") as fh:
        for i in range(n_nodes):
            fh.write(json.dumps({"id": f"n{i}", "type": "page", "title": f"page {i}", "text": f"body {i % 97}"}) + "\n")
        for i in range(n_edges):
            fh.write(
                json.dumps(
                    {"src": f"n{i % n_nodes}", "rel": "links_to", "dst": f"n{(i * 7 + 1 + i // n_nodes) % n_nodes}"}
                )
                + "\n"
            )
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}

    def cmd(db):
        return [
            sys.executable,
            "-m",
            "neurongraph.cli.main",
            "--db",
            str(db),
            "--embedder",
            "hashing",  # noqa: E731
            "ingest",
            str(f),
        ]

    t = time.perf_counter()
    subprocess.run(cmd(tmp_path / "full.db"), check=True, capture_output=True, env=env)
    full_s = time.perf_counter() - t
    full = _counts(tmp_path / "full.db")
    assert full[0] == n_nodes
    for k, frac in enumerate((0.5, 0.7, 0.85, 0.95)):
        db = tmp_path / f"k{k}.db"
        p = subprocess.Popen(cmd(db), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
        try:
            time.sleep(full_s * frac)
            p.kill()
        finally:
            p.wait(timeout=60)
        assert _counts(db) in ((0, 0), full), (frac, _counts(db))
