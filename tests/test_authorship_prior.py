"""The authorship prior: with working files, a change that wrote more of their lines (numeric ``added`` on
its edges to them, what the git ingest records on ``touches``) outranks an otherwise equal one; a change
that touched other files, edges without the number, or the prior switched off leave the ranking as it was."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument

DAY = 86400.0
FILES = ("ip/route.c",)  # paths, as an agent names them: they find the `file:<path>` nodes


@pytest.fixture
def eng(tmp_path):
    e = ngr.open(tmp_path / "a.db", embedder="hashing")
    e.add_nodes(
        [
            ngr.Node("wrote", "commit", "route nexthop weights", "", {"time": 1000 * DAY}),
            ngr.Node("tweaked", "commit", "route nexthop weights", "", {"time": 1000 * DAY}),
            ngr.Node("elsewhere", "commit", "route nexthop weights", "", {"time": 1000 * DAY}),
            ngr.Node("later", "commit", "route nexthop weights", "", {"time": 2000 * DAY}),
            ngr.Node("file:ip/route.c", "file", "ip/route.c", ""),
            ngr.Node("file:ip/link.c", "file", "ip/link.c", ""),
        ]
    )
    e.add_edges(
        [
            ngr.Edge("wrote", "touches", "file:ip/route.c", meta={"added": 300, "deleted": 0}),
            ngr.Edge("tweaked", "touches", "file:ip/route.c", meta={"added": 2, "deleted": 1}),
            ngr.Edge("elsewhere", "touches", "file:ip/link.c", meta={"added": 900, "deleted": 0}),
            ngr.Edge("later", "touches", "file:ip/route.c", meta={"added": 5000, "deleted": 0}),
        ]
    )
    yield e
    e.close()


def _scores(eng, **kw):
    kw.setdefault("files", FILES)
    res = eng.search("route nexthop weights", limit=5, record=False, result_types=("commit",), **kw)
    return {h.id: h.scores for h in res.hits}, [h.id for h in res.hits]


def test_the_change_that_wrote_the_working_files_lines_ranks_first(eng):
    s, order = _scores(eng, as_of=1500 * DAY)
    assert order[0] == "wrote" and order.index("wrote") < order.index("tweaked")
    assert s["wrote"]["lines_written"] == 300 and s["tweaked"]["lines_written"] == 2
    assert s["elsewhere"]["lines_written"] == 0  # its lines went to a file the agent is not working on
    off, _ = _scores(eng, as_of=1500 * DAY, authorship_weight=0.0)
    for cid in ("wrote", "tweaked", "elsewhere"):
        assert s[cid]["final"] == pytest.approx(off[cid]["final"] * (1 + 0.3 * np.log1p(s[cid]["lines_written"])))


def test_a_change_after_as_of_neither_appears_nor_counts(eng):
    s, order = _scores(eng, as_of=1500 * DAY)
    assert "later" not in order
    s, order = _scores(eng, as_of=2500 * DAY)
    assert order[0] == "later" and s["later"]["lines_written"] == 5000


def test_without_working_files_or_numbers_nothing_changes(eng, tmp_path):
    s, _ = _scores(eng, files=())
    assert all("lines_written" not in v for v in s.values())
    # the same store without line counts on its edges: the prior has nothing to read, so no factor
    e2 = ngr.open(tmp_path / "b.db", embedder="hashing")
    try:
        e2.add_nodes(
            [ngr.Node("c", "commit", "route nexthop weights", ""), ngr.Node("file:" + FILES[0], "file", "r", "")]
        )
        e2.add_edges([("c", "touches", "file:" + FILES[0])])
        on, _ = _scores(e2)
        off, _ = _scores(e2, authorship_weight=0.0)
        assert on["c"]["final"] == off["c"]["final"] and "lines_written" not in on["c"]
    finally:
        e2.close()


def test_new_line_counts_are_seen_after_a_write(eng):
    eng.add_edges([ngr.Edge("tweaked", "touches", "file:ip/route.c", meta={"added": 10_000})])  # upsert: new meta
    s, order = _scores(eng, as_of=1500 * DAY)
    assert s["tweaked"]["lines_written"] == 10_000 and order[0] == "tweaked"


def test_validation(eng):
    for bad in (dict(authorship_weight=-1.0), dict(authorship_weight=float("nan")), dict(authorship_weight="x")):
        with pytest.raises(InvalidArgument):
            eng.search("x", **bad)
