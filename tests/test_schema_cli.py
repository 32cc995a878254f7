"""``ngr schema load/show/blockers/evidence`` and ``ngr neighbors`` (mounted here on a test app)."""

from __future__ import annotations

import json

import typer
from typer.testing import CliRunner

from neurongraph.cli import main
from neurongraph.cli.neighbors_cmd import neighbors_command
from neurongraph.cli.schema_cmd import schema_app
from schema_fixtures import SEED003_TOML

app = typer.Typer()
app.callback()(main._root)
app.add_typer(schema_app, name="schema")
app.command("neighbors")(neighbors_command)
app.command("ingest")(main.ingest)
runner = CliRunner()


def ngr(db, *args):
    return runner.invoke(app, ["--db", str(db), "--embedder", "hashing", *args], catch_exceptions=False)


def _corpus(tmp_path):
    lines = [
        {"id": "t1", "type": "task", "metadata": {"status": "blocked"}},
        {"id": "t2", "type": "task"},
        {"id": "c1", "type": "condition"},
        {"id": "n1", "type": "note"},
        {"id": "n2", "type": "note"},
        {"src": "t1", "rel": "blocked_by", "dst": "c1"},
        {"src": "c1", "rel": "resolves_to", "dst": "t2"},
        {"src": "n1", "rel": "evidence_of", "dst": "t1"},
        {"src": "n2", "rel": "evidence_of", "dst": "t1"},
    ]
    f = tmp_path / "c.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in lines))
    return f


def test_load_show_and_strict_ingest(tmp_path):
    db = tmp_path / "x.db"
    assert ngr(db, "ingest", str(_corpus(tmp_path))).exit_code == 0
    (tmp_path / "s.toml").write_text(SEED003_TOML)
    r = ngr(db, "schema", "load", str(tmp_path / "s.toml"), "--json")
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)["mode"] == "strict"
    r = ngr(db, "schema", "show", "--json")
    assert json.loads(r.stdout)["relations"]["blocked_by"]["inverse"] == "blocks"
    r = ngr(db, "schema", "show")
    assert "blocked_by" in r.stdout and "invariant" in r.stdout
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"src": "c1", "rel": "blocked_by", "dst": "t1"}))
    r = ngr(db, "ingest", str(bad))
    assert r.exit_code == 2 and "error[schema_violation]" in r.stderr and "allowed for blocked_by" in r.stderr


def test_load_rejects_a_bad_file(tmp_path):
    (tmp_path / "s.toml").write_text("mode = 'sometimes'")
    r = ngr(tmp_path / "x.db", "schema", "load", str(tmp_path / "s.toml"), "--json")
    assert r.exit_code == 2 and json.loads(r.stdout)["error"]["code"] == "invalid_schema"


def test_neighbors_blockers_evidence(tmp_path):
    db = tmp_path / "x.db"
    ngr(db, "ingest", str(_corpus(tmp_path)))
    r = ngr(db, "neighbors", "t1", "--json")
    got = json.loads(r.stdout)["neighbors"]
    assert {(x["direction"], x["node"]) for x in got} == {("out", "c1"), ("in", "n1"), ("in", "n2")}
    r = ngr(db, "neighbors", "t1", "--rel", "evidence_of", "--in", "--json")
    assert {x["node"] for x in json.loads(r.stdout)["neighbors"]} == {"n1", "n2"}
    r = ngr(db, "neighbors", "t1", "--out")
    assert "-[blocked_by]-> c1" in r.stdout
    r = ngr(db, "neighbors", "t1", "--in", "--out")
    assert r.exit_code == 2 and "error[invalid_argument]" in r.stderr
    r = ngr(db, "neighbors", "zz")
    assert r.exit_code == 2 and "error[unknown_node]" in r.stderr
    r = ngr(db, "schema", "blockers", "t1", "--json")
    assert [(b["id"], b["via"]) for b in json.loads(r.stdout)] == [("t2", ["t1", "c1", "t2"])]
    r = ngr(db, "schema", "evidence", "n1", "--json")
    assert json.loads(r.stdout) == [{"entity": "t1", "entry": "n2"}]
