"""Issue 17: the JSONL reader never raises on hostile input (random bytes, random JSON, lone surrogates,
NaN, deep nesting, huge integers): every bad line is a reported error, and a bad file writes nothing."""

from __future__ import annotations

import json
import sqlite3

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from neurongraph.cli.main import _read_jsonl, app
from neurongraph.errors import InvalidArgument
from neurongraph.model import Edge, Node

runner = CliRunner()
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

json_leaf = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=12)
)
json_value = st.recursive(
    json_leaf,
    lambda c: st.one_of(st.lists(c, max_size=3), st.dictionaries(st.text(max_size=6), c, max_size=3)),
    max_leaves=8,
)
FIELDS = [
    "kind",
    "id",
    "type",
    "title",
    "text",
    "metadata",
    "confidence",
    "src",
    "rel",
    "dst",
    "weight",
    "polarity",
    "factuality",
    "meta",
    "extra",
]
record = st.dictionaries(
    st.sampled_from(FIELDS), st.one_of(json_value, st.sampled_from(["a", "b", "node", "edge"])), max_size=6
)


def _check(path):
    parsed = _read_jsonl(path, lambda ids: set())
    for e in parsed.errors:
        assert isinstance(e["line"], int) and isinstance(e["message"], str) and e["message"]
        e["message"].encode("utf-8")  # printable


@SETTINGS
@given(st.lists(st.binary(max_size=80), max_size=6))
def test_random_bytes_never_raise(tmp_path, lines):
    p = tmp_path / "f.jsonl"
    p.write_bytes(b"\n".join(lines))
    _check(p)


@SETTINGS
@given(st.lists(record, min_size=1, max_size=6))
def test_random_json_records_never_raise(tmp_path, recs):
    p = tmp_path / "f.jsonl"
    # json.dumps writes NaN/Infinity for non-finite floats and \ud800 escapes for surrogates: both must be handled
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    _check(p)


@pytest.mark.parametrize(
    "line,needle",
    [
        ('{"id": "a\\ud800", "title": "x"}', "lone surrogate"),
        ('{"id": "a", "title": "t\\udc00"}', "lone surrogate"),
        ('{"id": "a", "title": "x", "metadata": {"k\\ud800": 1}}', "lone surrogate"),
        ('{"kind": "edge", "src": "a", "rel": "r\\ud800", "dst": "b"}', "lone surrogate"),
        ('{"id": "a", "metadata": ' + "[" * 200_000 + "]" * 200_000 + "}", "nested too deeply"),
        ('{"id": "a", "title": "x", "metadata": {"x": NaN}}', "non-finite"),
        ('{"kind": "edge", "src": "a", "rel": "r", "dst": "b", "weight": ' + "9" * 5000 + "}", "bad JSON"),
    ],
)
def test_hostile_lines_are_reported_errors(tmp_path, line, needle):
    p = tmp_path / "f.jsonl"
    p.write_text('{"id": "b", "title": "y"}\n' + line + "\n", encoding="utf-8")
    parsed = _read_jsonl(p, lambda ids: set())
    assert any(needle in e["message"] and e["line"] == 2 for e in parsed.errors), parsed.errors


def test_lone_surrogates_rejected_through_python():
    for make in (
        lambda: Node("a\ud800"),
        lambda: Node("a", title="\udc00"),
        lambda: Node("a", text="x\ud800"),
        lambda: Node("a", type="t\ud800"),
        lambda: Node("a", metadata={"k": "v\ud800"}),
        lambda: Edge("a", "r\ud800", "b"),
        lambda: Edge("a", "r", "b", meta={"\ud800": 1}),
    ):
        with pytest.raises(InvalidArgument, match="lone surrogate"):
            make()
    assert Node("a", title="naïve café ✓").title == "naïve café ✓"


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(record, min_size=1, max_size=4))
def test_cli_ingest_of_random_json_is_a_clean_ingest_or_an_error_code(tmp_path_factory, recs):
    d = tmp_path_factory.mktemp("fz")
    p, db = d / "f.jsonl", d / "s.db"
    p.write_text("\n".join(json.dumps(r) for r in recs) + "\n", encoding="utf-8")
    r = runner.invoke(app, ["--db", str(db), "--embedder", "hashing:16", "ingest", str(p), "--json"])
    assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
    assert r.exit_code in (0, 2), r.output
    if r.exit_code == 2:
        assert "code" in json.loads(r.output)["error"]
        if db.exists():
            con = sqlite3.connect(db)
            try:
                assert con.execute("SELECT count(*) FROM nodes").fetchone()[0] == 0  # nothing was written
            finally:
                con.close()


def test_duplicate_ids_and_edges_in_one_file_are_errors_with_line_numbers(tmp_path):
    p = tmp_path / "f.jsonl"
    p.write_text(
        "\n".join(
            [
                '{"id": "a", "title": "first"}',
                '{"id": "b", "title": "b"}',
                '{"id": "a", "title": "second"}',
                '{"src": "a", "rel": "r", "dst": "b"}',
                '{"src": "a", "rel": "r", "dst": "b", "weight": 0.5}',
                '{"src": "b", "rel": "r", "dst": "a"}',
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    parsed = _read_jsonl(p, lambda ids: set())
    assert [(e["line"], e["message"].split(" (")[0]) for e in parsed.errors] == [
        (3, "duplicate node id 'a'"),
        (5, "duplicate edge"),
    ]
    assert "first on line 1" in parsed.errors[0]["message"] and "first on line 4" in parsed.errors[1]["message"]
    r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ingest", str(p)])
    assert r.exit_code == 2 and "line 3" in r.output and "nothing was written" in r.output


def test_an_overlong_line_is_a_clear_error_and_the_limit_is_configurable(tmp_path, monkeypatch):
    p = tmp_path / "f.jsonl"
    big = json.dumps({"id": "big", "title": "x", "text": "y" * 5000})
    big2 = big.replace('"big"', '"bih"')  # same size, another id
    p.write_text('{"id": "a", "title": "a"}\n' + big + '\n{"id": "b", "title": "b"}\n' + big2, encoding="utf-8")
    monkeypatch.setenv("NGR_MAX_LINE_BYTES", "1000")
    parsed = _read_jsonl(p, lambda ids: set())
    assert [e["line"] for e in parsed.errors] == [2, 4] and "over the limit of 1,000" in parsed.errors[0]["message"]
    assert list(parsed.node_ids) == ["a", "b"] and parsed.lines == 4
    r = runner.invoke(app, ["--db", str(tmp_path / "s.db"), "--embedder", "hashing", "ingest", str(p), "--json"])
    assert r.exit_code == 2 and "NGR_MAX_LINE_BYTES" in r.output
    monkeypatch.setenv("NGR_MAX_LINE_BYTES", "100000")
    assert _read_jsonl(p, lambda ids: set()).errors == []
    monkeypatch.setenv("NGR_MAX_LINE_BYTES", "lots")
    with pytest.raises(InvalidArgument):
        _read_jsonl(p, lambda ids: set())
    monkeypatch.setenv("NGR_MAX_LINE_BYTES", str(len(big)))  # exactly at the limit: accepted, with or without "\n"
    assert _read_jsonl(p, lambda ids: set()).errors == []
    monkeypatch.setenv("NGR_MAX_LINE_BYTES", str(len(big) - 1))
    assert [e["line"] for e in _read_jsonl(p, lambda ids: set()).errors] == [2, 4]
