"""A structural node that enters by its name (a file most changes touch) seeds at the idf of its degree,
so its many changes do not outrank the change the question's text matches (pipeline._structural_seed_scale).
A real git repository made in the test, a real SQLite store."""

from __future__ import annotations

import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.errors import InvalidArgument
from neurongraph.ingest import sync_source

Q = "doc/manual.xml: describe the frobnicator tunnel"


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("hub")
    repo = Repo(tmp / "proj")
    origin = repo.commit("userspace: Add frobnicator tunnel support.", {"src/frob.c": "int frob_tunnel;\n"})
    for i in range(40):  # the manual: every feature documents itself there
        repo.commit(f"feature {i}: add the {i}th knob", {"doc/manual.xml": f"<knob>{i}</knob>\n" * (i + 1)})
    for i in range(40):
        repo.commit(f"misc {i}: tidy helper {i}", {f"src/misc{i}.c": f"int misc_{i};\n"})
    path = str(tmp / "s.db")
    eng = ngr.open(path, embedder="hashing")
    sync_source(eng, "git", repo.path)
    eng.close()
    return path, "commit:" + origin


def _rank(path, origin, **cfg):
    eng = ngr.open(path, embedder="hashing")
    try:
        res = eng.search(Q, limit=50, record=False, **cfg)
        ids = [h.id for h in res.hits]
        seeded = res.seeds if hasattr(res, "seeds") else []
        return (ids.index(origin) + 1 if origin in ids else None), ids, seeded
    finally:
        eng.close()


def test_the_text_match_is_not_buried_under_the_named_files_changes(store):
    path, origin = store
    rank, ids, seeds = _rank(path, origin)
    assert seeds[0] == "file:doc/manual.xml"  # the file still seeds (the question names it) ...
    commits = [i for i in ids if i.startswith("commit:")]
    assert commits[0] == origin, ids[:5]  # ... at its specificity: the change the text describes comes first
    off, ids_off, _ = _rank(path, origin, structural_specificity=False)
    assert off is None or off > 10, ids_off[:5]  # without the rule the manual's 40 changes outrank it


def test_the_option_is_validated(store):
    path, _ = store
    with pytest.raises(InvalidArgument, match="structural_specificity"):
        _rank(path, "x", structural_specificity="yes")
