"""Issue 17, defect 4: non-finite numbers (NaN, Infinity) are rejected on every interface, edge weights
are bounded (0..MAX_WEIGHT), and no output path (CLI --json, stored traces, MCP) writes NaN/Infinity."""

from __future__ import annotations

import json
import math
import sqlite3

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from neurongraph.cli.main import _print_json, app
from neurongraph.errors import InvalidArgument
from neurongraph.model import MAX_WEIGHT, Edge, Node, strict_dumps

runner = CliRunner()


def strict_loads(text: str):
    """json.loads that fails on NaN/Infinity, as any strict JSON parser would."""

    def no(c):
        raise AssertionError(f"non-JSON constant {c} in output")

    return json.loads(text, parse_constant=no)


def cli(db, *args):
    return runner.invoke(app, ["--db", str(db), "--embedder", "hashing", *args], catch_exceptions=False)


def node_count(db):
    if not db.exists():
        return 0
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT count(*) FROM nodes").fetchone()[0]
    finally:
        con.close()


# ---------------------------------------------------------------- Python API
@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_python_rejects_non_finite_metadata_and_meta(bad):
    with pytest.raises(InvalidArgument, match="non-finite"):
        Node("a", metadata={"x": bad})
    with pytest.raises(InvalidArgument, match="non-finite"):
        Node("a", metadata={"deep": [1, {"y": bad}]})
    with pytest.raises(InvalidArgument, match="non-finite"):
        Edge("a", "r", "b", meta={"x": bad})
    with pytest.raises(InvalidArgument):
        Edge("a", "r", "b", weight=bad)
    with pytest.raises(InvalidArgument):
        Node("a", confidence=bad)


@pytest.mark.parametrize("w", [1e308, MAX_WEIGHT * 1.0001, 10**400, -1.0])
def test_weights_outside_the_documented_range_are_rejected(w):
    with pytest.raises(InvalidArgument, match="weight"):
        Edge("a", "r", "b", weight=w)


def test_weights_inside_the_range_are_kept():
    assert Edge("a", "r", "b", weight=MAX_WEIGHT).weight == MAX_WEIGHT
    assert Edge("a", "r", "b", weight=0.0).weight == 0.0
    assert Edge("a", "r", "b", weight=2).weight == 2.0


def test_engine_rejects_nan_metadata_and_writes_nothing(tmp_path):
    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    try:
        with pytest.raises(InvalidArgument, match="non-finite"):
            eng.add_nodes([{"id": "a", "title": "x", "metadata": {"x": math.nan}}])
        assert eng.store.stats()["nodes"] == 0
    finally:
        eng.close()


def test_deeply_nested_metadata_is_an_error_not_a_traceback():
    deep: dict = {}
    cur = deep
    for _ in range(5000):
        cur["x"] = {}
        cur = cur["x"]
    with pytest.raises(InvalidArgument):
        Node("a", metadata=deep)


# ---------------------------------------------------------------- CLI JSONL
@pytest.mark.parametrize(
    "line",
    [
        '{"id": "a", "title": "x", "metadata": {"x": NaN}}',
        '{"id": "a", "title": "x", "metadata": {"x": Infinity}}',
        '{"id": "a", "title": "x", "confidence": -Infinity}',
        '{"id": "a", "title": "x"}\n{"id": "b", "title": "y"}\n{"src": "a", "rel": "r", "dst": "b", "weight": 1e308}',
        '{"id": "a", "title": "x"}\n{"id": "b", "title": "y"}\n{"src": "a", "rel": "r", "dst": "b", "weight": '
        + "9" * 400
        + "}",
    ],
)
def test_cli_jsonl_rejects_non_finite_and_huge_numbers(tmp_path, line):
    f = tmp_path / "in.jsonl"
    f.write_text(line + "\n", encoding="utf-8")
    db = tmp_path / "s.db"
    r = cli(db, "ingest", str(f), "--json")
    assert r.exit_code == 2, r.output
    assert node_count(db) == 0  # validated before the first write
    assert strict_loads(r.output)["error"]["code"] == "invalid_input"


def test_cli_jsonl_nan_message_names_the_problem(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text('{"id": "a", "title": "x", "metadata": {"x": NaN}}\n', encoding="utf-8")
    r = cli(tmp_path / "s.db", "ingest", str(f))
    assert r.exit_code == 2 and "line 1: non-finite number NaN" in r.output


# ---------------------------------------------------------------- outputs
def test_strict_dumps_never_writes_nan():
    text = strict_dumps({"a": math.inf, "b": [math.nan, 1.5], "c": -math.inf, "d": "NaN"})
    assert strict_loads(text) == {"a": None, "b": [None, 1.5], "c": None, "d": "NaN"}


def test_print_json_is_strict(capsys):
    _print_json({"score": math.inf, "x": [math.nan]})
    assert strict_loads(capsys.readouterr().out) == {"score": None, "x": [None]}


def test_max_weight_chain_search_outputs_strict_json_everywhere(tmp_path):
    db = tmp_path / "s.db"
    lines = [
        json.dumps({"id": f"n{i}", "title": f"overflow probe node {i}", "text": "spread weight chain"})
        for i in range(8)
    ]
    lines += [
        json.dumps({"src": f"n{i}", "rel": "r", "dst": f"n{(i + 1) % 8}", "weight": MAX_WEIGHT}) for i in range(8)
    ]
    f = tmp_path / "in.jsonl"
    f.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert cli(db, "ingest", str(f), "--json").exit_code == 0
    for channel in ("spread", "beam", "ppr"):
        r = cli(db, "search", "overflow probe spread", "--channel", channel, "--json")
        assert r.exit_code == 0, r.output
        res = strict_loads(r.output)
        assert res["hits"]
    con = sqlite3.connect(db)
    try:
        for params, hits in con.execute("SELECT params, hits FROM traces"):
            strict_loads(params), strict_loads(hits)
    finally:
        con.close()


def test_save_trace_writes_strict_json(tmp_path):
    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    try:
        eng.store.save_trace(
            {
                "id": "t1",
                "created_at": 1.0,
                "query": "q",
                "params": {"alpha": math.nan},
                "fingerprint": "f",
                "hits": [{"id": "a", "scores": {"graph": math.inf}}],
            }
        )
        row = eng.store.conn.execute("SELECT params, hits FROM traces WHERE id = 't1'").fetchone()
        assert strict_loads(row[0]) == {"alpha": None}
        assert strict_loads(row[1])[0]["scores"]["graph"] is None
    finally:
        eng.close()


# ---------------------------------------------------------------- MCP
mcp_server = pytest.importorskip("neurongraph.mcp.server", reason="the optional mcp extra is not installed")


def test_mcp_result_text_and_structured_content_agree_and_are_strict():
    res = mcp_server._result({"hits": [{"score": math.inf}, {"score": math.nan}]})
    assert strict_loads(res.content[0].text) == res.structured_content == {"hits": [{"score": None}, {"score": None}]}


@pytest.mark.parametrize(
    "args",
    [
        {"query": "x", "where": {"a": math.nan}},
        {"query": "x", "where": {"a": math.inf}},
        {"query": "x", "as_of": -math.inf},
        {"query": "x", "since": math.nan},
    ],
)
def test_mcp_rejects_non_finite_arguments(args):
    from pydantic import ValidationError

    from neurongraph.mcp.tools import ARG_MODELS

    with pytest.raises(ValidationError):
        ARG_MODELS["search"].model_validate(args)


def test_mcp_server_returns_invalid_argument_for_nan(tmp_path):
    import anyio

    eng = ngr.open(tmp_path / "s.db", embedder="hashing")
    eng.add_nodes([{"id": "a", "title": "alpha"}])
    server = mcp_server.build_server(eng)

    async def go():
        tool = server._tool_manager.get_tool("search") if hasattr(server, "_tool_manager") else None
        if tool is None:
            pytest.skip("SDK internals changed")
        r = await tool.run({"query": "alpha", "where": {"x": math.nan}}, None)
        assert r.is_error and r.content[0].text.startswith("error[invalid_argument]")
        assert strict_loads(json.dumps(r.structured_content))

    try:
        anyio.run(go)
    finally:
        eng.close()
