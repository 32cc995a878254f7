"""Issue 17, "also found": no lenient type coercion (weight "1.0"/true, confidence true, polarity 1.0;
MCP limit "10"/true), and `--limit ten` is error[invalid_argument] rather than a usage box."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from typer.testing import CliRunner

from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.model import Edge, Node

runner = CliRunner()


@pytest.mark.parametrize("w", ["1.0", True, False, None, [1], "nan"])
def test_edge_weight_must_be_a_real_number(w):
    with pytest.raises(InvalidArgument, match="weight must be a number"):
        Edge("a", "r", "b", weight=w)


@pytest.mark.parametrize("p", [1.0, -1.0, True, "1", np.float64(1.0), 0, 2])
def test_polarity_must_be_the_integer_1_or_minus_1(p):
    with pytest.raises(InvalidArgument, match="polarity"):
        Edge("a", "r", "b", polarity=p)


@pytest.mark.parametrize("v", [True, False, "0.5", None])
def test_confidence_and_factuality_must_be_numbers(v):
    with pytest.raises(InvalidArgument, match="confidence must be a number"):
        Node("a", confidence=v)
    with pytest.raises(InvalidArgument, match="factuality must be a number"):
        Edge("a", "r", "b", factuality=v)


def test_valid_numbers_are_still_accepted_unchanged():
    e = Edge("a", "r", "b", weight=2, polarity=-1, factuality=1)
    assert (e.weight, e.polarity, e.factuality) == (2.0, -1, 1.0)
    e = Edge("a", "r", "b", weight=np.float32(0.5), polarity=np.int64(1), factuality=np.float64(0.25))
    assert (e.weight, e.polarity, e.factuality) == (0.5, 1, 0.25) and type(e.polarity) is int
    assert Node("a", confidence=0).confidence == 0.0 and Node("a", confidence=0.7).confidence == 0.7


@pytest.mark.parametrize("field,value", [("weight", "1.0"), ("weight", True), ("polarity", 1.0), ("factuality", True)])
def test_cli_jsonl_rejects_coerced_edge_fields(tmp_path, field, value):
    f = tmp_path / "in.jsonl"
    f.write_text(
        "\n".join(
            [
                json.dumps({"id": "a", "title": "x"}),
                json.dumps({"id": "b", "title": "y"}),
                json.dumps({"src": "a", "rel": "r", "dst": "b", field: value}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ingest", str(f), "--json"])
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "invalid_input", r.output
    assert field in r.output


def test_cli_jsonl_rejects_boolean_confidence(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "a", "title": "x", "confidence": True}) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ingest", str(f)])
    assert r.exit_code == 2 and "confidence must be a number" in r.output, r.output


@pytest.fixture
def db(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text(json.dumps({"id": "a", "title": "alpha"}) + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    assert runner.invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", str(f)]).exit_code == 0
    return db


@pytest.mark.parametrize("value", ["ten", "1.5", "", "10abc"])
@pytest.mark.parametrize("as_json", [False, True])
def test_cli_limit_that_is_not_a_number_is_invalid_argument(db, value, as_json):
    r = runner.invoke(
        app,
        [
            "--db",
            str(db),
            "--embedder",
            "hashing",
            "search",
            "alpha",
            "--limit",
            value,
            *(["--json"] if as_json else []),
        ],
    )
    assert r.exit_code == 2, r.output
    if as_json:
        assert json.loads(r.output)["error"]["code"] == "invalid_argument"
    else:
        assert "error[invalid_argument]" in r.output and "Usage" not in r.output


def test_cli_limit_still_takes_numbers(db):
    for flag in ("--limit", "-n"):
        r = runner.invoke(app, ["--db", str(db), "--embedder", "hashing", "search", "alpha", flag, "3", "--json"])
        assert r.exit_code == 0 and json.loads(r.output)["hits"][0]["id"] == "a", r.output
    r = runner.invoke(app, ["--db", str(db), "--embedder", "hashing", "search", "alpha", "--limit", "0", "--json"])
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "invalid_argument"


mcp_tools = pytest.importorskip("neurongraph.mcp.tools", reason="the optional mcp extra is not installed")


@pytest.mark.parametrize("tool", ["search", "ask"])
@pytest.mark.parametrize("limit", ["10", True, 10.0])
def test_mcp_limit_must_be_an_integer(tool, limit):
    from pydantic import ValidationError

    args = {"query": "x"} if tool == "search" else {"question": "x"}
    with pytest.raises(ValidationError):
        mcp_tools.ARG_MODELS[tool].model_validate({**args, "limit": limit})
    assert mcp_tools.ARG_MODELS[tool].model_validate({**args, "limit": 3}).limit == 3


def test_mcp_server_answers_invalid_argument_for_string_limit(tmp_path):
    import anyio

    import neurongraph as ngr
    from neurongraph.mcp.server import build_server

    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    eng.add_nodes([{"id": "a", "title": "alpha"}])
    server = build_server(eng)

    async def go():
        tool = server._tool_manager.get_tool("search")
        for limit in ("10", True):
            r = await tool.run({"query": "alpha", "limit": limit}, None)
            assert r.is_error and r.content[0].text.startswith("error[invalid_argument]"), r.content[0].text

    try:
        anyio.run(go)
    finally:
        eng.close()


def test_bench_history_limit_that_is_not_a_number_is_invalid_argument(tmp_path):
    r = runner.invoke(app, ["bench", "history", "--repo", str(tmp_path), "--limit", "ten", "--json"])
    assert r.exit_code == 2 and json.loads(r.output)["error"]["code"] == "invalid_argument", r.output


def test_search_options_are_bounded_and_finite(tmp_path):
    """Issue 17: a beam of depth 1e5 used 5.9 GB; NaN/inf options and beam_width=0 were accepted."""
    import math

    import pytest

    import neurongraph as ngr
    from neurongraph.config import MAXIMA, SearchConfig
    from neurongraph.errors import InvalidArgument

    for name, top in MAXIMA.items():  # flat option names (from_options: the compatibility path)
        SearchConfig.from_options(**{name: top})
        with pytest.raises(InvalidArgument):
            SearchConfig.from_options(**{name: top + 1})
    for bad in (
        dict(beam_width=0),
        dict(depth_decay=math.nan),
        dict(alpha=math.inf),
        dict(graph_weight=math.nan),
        dict(lexical_weight=-math.inf),
        dict(beam_min_sim=math.nan),
        dict(file_overlap_weight=math.inf),
    ):
        with pytest.raises(InvalidArgument):
            SearchConfig.from_options(**bad)
    with ngr.open(tmp_path / "b.db", embedder="hashing") as eng:
        eng.add_nodes([ngr.Node("a", "page", "alpha")])
        with pytest.raises(InvalidArgument):
            eng.search("alpha", channel="beam", max_depth=100_000)


def test_a_query_that_is_not_valid_unicode_is_invalid_argument(tmp_path):
    """Invalid UTF-8 on the command line (Python hands it over as lone surrogates) was a traceback."""
    import json
    import os
    import subprocess
    import sys

    import pytest

    import neurongraph as ngr
    from neurongraph.errors import InvalidArgument

    db = tmp_path / "u.db"
    with ngr.open(db, embedder="hashing") as eng:
        eng.add_nodes([ngr.Node("a", "page", "café prices")])
        with pytest.raises(InvalidArgument):
            eng.search("caf\udce9")
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "neurongraph.cli.main",
            "--db",
            str(db),
            "--embedder",
            "hashing",
            "search",
            b"caf\xe9",
            "--json",
        ],
        capture_output=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    assert r.returncode == 2, r.stderr.decode(errors="replace")
    assert json.loads(r.stdout)["error"]["code"] == "invalid_argument"


@pytest.mark.parametrize(
    "args",
    [
        ["ask", "what changed?", "--limit", "ten"],
        ["neighbors", "a", "--limit", "ten"],
        ["serve", "--port", "eighty"],
        ["bench", "perf", "--nodes", "1e4"],
        ["bench", "perf", "--edges-per-node", "three"],
    ],
    ids=["ask-limit", "neighbors-limit", "serve-port", "perf-nodes", "perf-float"],
)
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_every_number_option_that_is_not_a_number_is_invalid_argument(db, args, as_json):
    """Through a real process (main() turns click's conversion error into error[invalid_argument], exit 2)."""
    cmd = [sys.executable, "-m", "neurongraph.cli.main", "--db", str(db), "--embedder", "hashing", *args]
    r = subprocess.run([*cmd, *(["--json"] if as_json else [])], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    if as_json:
        assert json.loads(r.stdout)["error"]["code"] == "invalid_argument"
    else:
        assert "error[invalid_argument]" in r.stderr and "Usage" not in r.stderr


@pytest.mark.parametrize("args", [["neighbors", b"\xff"], ["trace", b"tr_\xff"], ["ask", b"caf\xe9?"]])
def test_invalid_utf8_in_any_argument_is_invalid_argument(db, args):
    """Bytes that are not UTF-8 reach Python as lone surrogates; wherever they are encoded (the store, JSON),
    the command reports error[invalid_argument] instead of a UnicodeEncodeError traceback."""
    cmd = [sys.executable.encode(), b"-m", b"neurongraph.cli.main", b"--db", str(db).encode(), b"--embedder"]
    cmd += [b"hashing", *(a if isinstance(a, bytes) else a.encode() for a in args), b"--json"]
    r = subprocess.run(cmd, capture_output=True, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert json.loads(r.stdout)["error"]["code"] == "invalid_argument"
