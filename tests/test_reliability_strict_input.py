"""Strict readers (issue 27, finding 6): a JSON object that repeats a key is an error naming the key and
the line wherever we read user JSON (it was accepted, the last value winning); the GitHub reader refuses
wrong types (``"number": "12"``, a title that is an object, a time it cannot read) instead of coercing
them; git paths that are not UTF-8 keep their bytes, so two names never become one node."""

from __future__ import annotations

import json
import os
import subprocess

import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph import strict_json
from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.ingest.git import GitRepo, read_git
from neurongraph.ingest.git_blame import blame_with_git
from neurongraph.ingest.git_log import path_bytes, path_text
from neurongraph.ingest.github import read_github


def test_strict_json_names_the_repeated_key_and_its_line():
    with pytest.raises(strict_json.StrictJSONError, match=r"duplicate key 'b' .*line 3, column 3") as exc:
        strict_json.loads('{"a": 1,\n "x": {"b": 2,\n  "b": 3}}')
    assert exc.value.key == "b" and exc.value.code == "invalid_argument"
    with pytest.raises(strict_json.StrictJSONError, match="non-finite number NaN"):
        strict_json.loads('{"w": NaN}')
    assert strict_json.loads(' {"a": [1, {"a": 2}]} ') == {"a": [1, {"a": 2}]}  # same key in two objects is fine


def test_jsonl_ingest_refuses_a_repeated_key_and_writes_nothing(tmp_path):
    f = tmp_path / "in.jsonl"
    f.write_text('{"id": "a", "title": "A"}\n{"id": "b", "title": "B", "id": "c"}\n')
    db = tmp_path / "s.db"
    r = CliRunner().invoke(app, ["--db", str(db), "--embedder", "hashing", "ingest", str(f)])
    assert r.exit_code == 2 and "Traceback" not in r.output
    assert "line 2" in r.output and "duplicate key 'id'" in r.output
    if db.exists():
        eng = ngr.open(db, embedder="hashing")
        assert eng.store.stats()["nodes"] == 0
        eng.close()


@pytest.mark.parametrize(
    "items, fragment",
    [
        (
            '[\n{"number": 1, "title": "ok"},\n{"number": 2, "title": "a", "title": "b"}\n]',
            "duplicate key 'title' in one JSON object (line 3",
        ),
        ('[{"number": 1}, {"number": "12", "title": "t"}]', "'number' must be a positive integer"),
        (
            '[\n{"number": 1},\n\n{"number": 3, "title": {"text": "x"}}]',
            "line 4: item 1: field 'title' must be a string",
        ),
        ('[{"number": 4, "createdAt": "yesterday"}]', "field 'createdAt' must be an ISO-8601 time"),
        ('[{"number": 5, "comments": [{"body": 7}]}]', "comments[0]: field 'body' must be a string"),
        ('[{"number": 6, "labels": "bug"}]', "field 'labels' must be an array"),
        ('[{"number": 7, "isDraft": "no"}]', "field 'isDraft' must be true or false"),
    ],
)
def test_github_reader_refuses_wrong_types_with_line_and_field(tmp_path, items, fragment):
    f = tmp_path / "issues.json"
    f.write_text(items)
    with pytest.raises(InvalidArgument) as exc:
        read_github(f)
    assert str(f) in str(exc.value) and fragment in str(exc.value), str(exc.value)


def test_github_duplicate_key_error_names_the_key(tmp_path):
    f = tmp_path / "issues.json"
    f.write_text('[{"number": 1, "title": "a",\n  "title": "b"}]')
    with pytest.raises(InvalidArgument, match=r"duplicate key 'title' .*line 2"):
        read_github(f)


def test_path_text_is_one_to_one():
    names = [b"caf\xe9.c", b"caf\xe8.c", "café.c".encode(), b"a\\xe9.c", b"a\\\\b", b"\xff\xfe", b"plain/x.c"]
    texts = [path_text(n) for n in names]
    assert len(set(texts)) == len(names)  # with U+FFFD the first two (and the sixth) collided
    assert all(path_bytes(t) == n for t, n in zip(texts, names))
    assert path_text(b"plain/x.c") == "plain/x.c" and path_text("café.c".encode()) == "café.c"
    for t in texts:
        t.encode("utf-8")  # valid text: the store and JSON take it


def test_git_paths_that_are_not_utf8_stay_two_nodes(tmp_path):
    repo = Repo(tmp_path / "r")
    for raw in (b"caf\xe9.c", b"caf\xe8.c"):
        with open(os.path.join(os.fsencode(repo.path), raw), "wb") as fh:
            fh.write(b"int x;\n")
    subprocess.run(["git", "-C", str(repo.path), "add", "-A"], check=True)
    repo.commit("Add two Latin-1 named files")
    b = read_git(repo.path)
    files = sorted(n.id for n in b.nodes if n.type == "file")
    assert files == ["file:caf\\xe8.c", "file:caf\\xe9.c"]
    touched = sorted(e.dst for e in b.edges if e.rel == "touches")
    assert touched == files
    assert {path_bytes(f[len("file:") :]) for f in files} == {b"caf\xe9.c", b"caf\xe8.c"}
    # git blame is handed the original bytes back
    sha = repo.git("rev-parse", "HEAD")
    assert blame_with_git(GitRepo(repo.path), "HEAD", "caf\\xe9.c", [1]) == {1: sha}
    db = tmp_path / "s.db"
    eng = ngr.open(db, embedder="hashing")
    try:
        summary = ngr.ingest.apply_batch(eng, b)
        assert summary["new_nodes"] == 3
        stored = json.dumps([eng.get_node(f) for f in files])
        assert "\\ufffd" not in stored
    finally:
        eng.close()


def test_ask_params_and_schema_files_refuse_a_repeated_key(tmp_path):
    from neurongraph.cli.ask_cmd import parse_params
    from neurongraph.cli.common import CliError
    from neurongraph.schema.errors import InvalidSchema
    from neurongraph.schema.registry import RelationSchema

    assert parse_params(['n={"a": 1}', "s=plain text"]) == {"n": {"a": 1}, "s": "plain text"}
    with pytest.raises(CliError, match="duplicate key 'a'"):
        parse_params(['n={"a": 1, "a": 2}'])
    f = tmp_path / "schema.json"
    f.write_text('{"relations": {}, "relations": {}}')
    with pytest.raises(InvalidSchema, match="duplicate key 'relations'"):
        RelationSchema.from_file(f)
