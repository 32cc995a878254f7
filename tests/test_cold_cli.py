"""Issue 45, cold start: what a cold ``ngr search`` does not load or start (no timings, which a busy
machine makes noise of).

A real ``ngr`` process searches a real SQLite store made here (``--embedder hashing``): it never imports
pydantic (typer's coercion of the plain options, cli/plain_params.py) nor another command's module (they
are mounted when used, cli/main.py), and runs OpenBLAS on one thread (set before numpy loads,
cli/__init__.py, which needs ``import neurongraph`` to load no numpy).  The fast
coercion answers what typer's own adapter answers, values and errors alike.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from neurongraph.cli import ONE_SHOT_READS, _command
from neurongraph.cli.main import app

_THREAD_VARS = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")

# the argv, then: after the command, which modules are loaded and what OpenBLAS was told (atexit: ngr ends
# with os._exit after running the exit handlers)
_PROBE = """
import atexit, json, os, sys
out, sys.argv = sys.argv[1], ["ngr", *sys.argv[2:]]
def probe():
    with open(out, "w") as f:
        json.dump({"modules": sorted(sys.modules), "blas": os.environ.get("OPENBLAS_NUM_THREADS")}, f)
atexit.register(probe)
from neurongraph.cli.main import main
main()
"""


def _cold(tmp_path: Path, *argv: str) -> dict:
    out = tmp_path / "probe.json"
    env = {k: v for k, v in os.environ.items() if k not in _THREAD_VARS}
    r = subprocess.run([sys.executable, "-c", _PROBE, str(out), *argv], env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    probe = json.loads(out.read_text())
    probe["stdout"] = r.stdout
    return probe


@pytest.fixture()
def store(tmp_path: Path) -> Path:
    db = tmp_path / "s.db"
    data = tmp_path / "n.jsonl"
    rows = [
        {"id": "pr:1", "type": "pr", "title": "Add a page cache", "text": "Pages are cached in Redis."},
        {"id": "issue:2", "type": "issue", "title": "Stale prices", "text": "Old prices after a change."},
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    r = CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", str(data)])
    assert r.exit_code == 0, r.output
    return db


def test_a_cold_search_loads_no_pydantic_and_one_blas_thread(store, tmp_path):
    probe = _cold(tmp_path, "--db", str(store), "--embedder", "hashing", "search", "page cache", "--json")
    assert json.loads(probe["stdout"])["hits"][0]["id"] == "pr:1"
    loaded = set(probe["modules"])
    assert "numpy" in loaded and "neurongraph.engine" in loaded  # the probe saw a real search
    assert not {m for m in loaded if m.split(".")[0] == "pydantic"}
    assert "typer._adapters" not in loaded
    assert "neurongraph.cli.search_cmd" in loaded and "neurongraph.cli.ask_cmd" not in loaded  # one command built
    assert probe["blas"] == "1"


def test_other_commands_keep_their_blas_threads(store, tmp_path):
    assert _cold(tmp_path, "--db", str(store), "stats", "--json")["blas"] is None


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["--db", "search", "ingest", "x"], "ingest"),  # a root option's value is not the command
        (["--embedder", "hashing", "--reembed", "search", "q"], "search"),
        (["--db=x.db", "ask", "q"], "ask"),
        (["--help"], None),
    ],
)
def test_the_command_word_is_found_after_the_root_options(argv, command):
    assert _command(argv) == command
    assert "search" in ONE_SHOT_READS and "ingest" not in ONE_SHOT_READS


def test_the_package_loads_numpy_only_when_a_public_name_is_used():
    code = (
        "import sys, neurongraph as ngr; a = 'numpy' in sys.modules; ngr.Node; "
        "print(a, 'numpy' in sys.modules, ngr.open is ngr.open_engine, hasattr(ngr, 'no_such_name'))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.split() == ["False", "True", "True", "False"]


def _typer_coercion(cmd, name: str, value, plain: bool):
    """The value (or the error message) that ``cmd``'s parameter ``name`` coerces ``value`` to."""
    from typer import _coercion

    p = next(p for p in cmd.params if p.name == name)
    rp = p.get_runtime_param() if plain else _coercion.build_runtime_param(p.type_descriptor)
    try:
        return rp.coerce(value, param=p, ctx=None)
    except typer.BadParameter as exc:
        return f"error: {exc.message}"


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("query", "crash on reveal_type"),
        ("query", "caf\udce9"),  # an undecodable argv byte, as Python keeps it
        ("query", b"caf\xc3\xa9"),  # bytes: typer's own decoding
        ("limit", "10"),
        ("as_of", None),
        ("types", ("commit", "pr")),
        ("types", ["commit"]),
        ("types", None),
        ("types", "commit"),  # a lone string for a list: typer's error
        ("explain", "yes"),  # a flag's text (from an environment variable): typer's reading
        ("explain", True),
    ],
)
def test_plain_coercion_answers_as_typers_adapter(name, value):
    cmd = typer.main.get_command(app).commands["search"]  # type: ignore[attr-defined]
    assert _typer_coercion(cmd, name, value, plain=True) == _typer_coercion(cmd, name, value, plain=False)


@pytest.mark.parametrize(
    ("command", "name", "value"),
    [
        ("ask", "limit", 5),  # an unbounded int's default: as it is
        ("ask", "limit", "7"),  # typed as text: typer's reading
        ("ask", "limit", "seven"),  # typer's error
        ("ask", "limit", True),  # not an int for typer's adapter either
        ("ask", "llm", None),
        ("ask", "llm", "anthropic"),
        ("show", "limit", 50),  # a bounded int: typer checks the bounds, also for an int
        ("show", "limit", 0),
        ("mcp", "fresh_wait", 3.0),
        ("mcp", "fresh_wait", 3),  # an int for a float: typer's conversion
        ("mcp", "fresh_wait", "2.5"),
    ],
)
def test_numbers_and_optional_values_coerce_as_typers_adapter(command, name, value):
    cmd = typer.main.get_command(app).commands[command]  # type: ignore[attr-defined]
    assert _typer_coercion(cmd, name, value, plain=True) == _typer_coercion(cmd, name, value, plain=False)


def test_an_ask_parses_its_options_without_pydantic(store, tmp_path):
    argv = ["--db", str(store), "--embedder", "hashing", "ask", "page cache", "--mode", "vector", "--json"]
    probe = _cold(tmp_path, *argv)
    assert json.loads(probe["stdout"])["hits"]
    assert not {m for m in probe["modules"] if m.split(".")[0] == "pydantic"}
