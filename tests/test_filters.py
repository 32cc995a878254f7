"""Search filters and scopes (issue 12, section 1): ``as_of``, ``since`` / ``until``, ``sources``,
``where``, node types and the agent's working ``files``, through the Python API, the real ``ngr``
command line and the real MCP server.  Real SQLite files and the hashing embedder throughout.

The rule under test: a filtered node is not in the graph for that search — never a hit, an entry
candidate or a seed, and no graph channel walks through it (nor along its edges).  A filter judges
only nodes that carry its field, so timeless nodes (files, wiki pages) are always visible to ``as_of``.
"""

from __future__ import annotations

import json
import sqlite3
import sys
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import neurongraph as ngr
from neurongraph.cli.main import app
from neurongraph.errors import InvalidArgument
from neurongraph.retrieval.pipeline import RankInputs, rank

N = ngr.Node
DAY = 86400.0
T0 = 1_600_000_000.0
CHANNELS = ["spread", "beam", "ppr", "eager", "mmr", "scored", "none"]
GRAPH_CHANNELS = CHANNELS[:-1]


def corpus():
    """A small history.  The chain commit:a (old) -> commit:b (new) -> commit:c (old): c is reachable
    from a only through b.  issue:1 carries an ISO-8601 time; files and the wiki page have none."""
    nodes = [
        N(
            "commit:a",
            "commit",
            "Add page cache for product listing",
            "Cache rendered product pages in redis.",
            {"time": T0, "source": "shop", "author": "ann"},
        ),
        N(
            "commit:b",
            "commit",
            "Tune eviction",
            "Lower the ttl to five minutes.",
            {"time": T0 + 30 * DAY, "source": "shop", "author": "bob"},
        ),
        N(
            "commit:c",
            "commit",
            "Warm startup buffers",
            "Preallocate arenas during boot.",
            {"time": T0 + 10 * DAY, "source": "shop", "author": "cy"},
        ),
        N(
            "issue:1",
            "issue",
            "Stale prices in page cache",
            "Customers see old prices after a price change.",
            {
                "time": "2020-09-20T12:00:00Z",
                "source": "shop",
                "state": "open",
                "number": 1,
                "labels": ["bug", "cache"],
            },
        ),
        N(
            "issue:2",
            "issue",
            "Page cache too large",
            "The redis page cache grows without bound.",
            {"time": T0 + 40 * DAY, "source": "shop", "state": "closed", "number": 2},
        ),
        N(
            "issue:3",
            "issue",
            "Cache misses on login page",
            "The login page is never cached.",
            {"time": T0 + 5 * DAY, "source": "blog", "state": "open", "number": 3, "draft": False},
        ),
        N(
            "pr:9",
            "pull_request",
            "Invalidate cached pages on price events",
            "Drop cached copies when prices change.",
            {"time": T0 + 20 * DAY, "source": "shop", "state": "merged"},
        ),
        N("file:src/cache.py", "file", "src/cache.py", "page cache module", {"source": "shop"}),
        N("file:src/boot.py", "file", "src/boot.py", "startup module", {}),
        N("wiki:cache", "wiki", "Caching guide", "How the page cache and redis work together.", {}),
    ]
    edges = [
        ("commit:a", "followed_by", "commit:b"),
        ("commit:b", "touches_same", "commit:c"),
        ("issue:1", "caused_by", "commit:a"),
        ("pr:9", "fixes", "issue:1"),
        ("issue:2", "caused_by", "commit:a"),
        ("commit:a", "touches", "file:src/cache.py"),
        ("commit:b", "touches", "file:src/cache.py"),
        ("commit:c", "touches", "file:src/boot.py"),
        ("wiki:cache", "mentions", "issue:3"),
    ]
    return nodes, edges


TIMES = {
    "commit:a": T0,
    "commit:b": T0 + 30 * DAY,
    "commit:c": T0 + 10 * DAY,
    "issue:1": 1600603200.0,
    "issue:2": T0 + 40 * DAY,
    "issue:3": T0 + 5 * DAY,
    "pr:9": T0 + 20 * DAY,
}
GOLDEN_QUERIES = ["page cache redis", "stale prices", "startup arenas boot", "login cache misses"]
CHAIN_QUERY = "Add page cache for product listing"  # matches commit:a; commit:c only through commit:b
BETWEEN = T0 + 15 * DAY  # after a and c, before b


@pytest.fixture
def db(tmp_path):
    path = tmp_path / "f.db"
    eng = ngr.open(path, embedder="hashing")
    nodes, edges = corpus()
    eng.add_nodes(nodes)
    eng.add_edges(edges)
    eng.close()
    return path


@pytest.fixture
def eng(db):
    e = ngr.open(db, embedder="hashing")
    yield e
    e.close()


def ids(res):
    return [h.id for h in res.hits]


def hit(res, node):
    return next((h for h in res.hits if h.id == node), None)


def visited(res) -> set[str]:
    """Every node a result touches: hits, seeds and every node on an explanation path."""
    out = set(ids(res)) | set(res.seeds)
    for h in res.hits:
        for p in h.paths:
            out.update(p["nodes"])
    return out


def snapshot_results(eng):
    out = {}
    for q in GOLDEN_QUERIES:
        for ch in CHANNELS:
            res = eng.search(
                q,
                limit=8,
                channel=ch,
                record=False,
                recency_weight=0.0,
                repair_weight=0.0,
                structural_types=(),
                lexical_seed=False,
                fan_ref=0.0,
            )
            out[f"{q}|{ch}"] = [
                [h.id, {k: float(v) for k, v in h.scores.items()}, h.ranks, [p["nodes"] for p in h.paths], h.seed]
                for h in res.hits
            ] + [res.seeds]
    return out


# ------------------------------------------------------------------------------- no filter: unchanged
def test_unfiltered_results_are_bit_for_bit_those_of_the_engine_before_filters(eng):
    """tests/filters_golden.json was written by the engine before filters existed (same corpus, same
    queries, every channel); without a filter every id, rank, path and score is exactly equal.  (The
    recency and repair priors, the structural-types rule, the lexical seed and the spread's fan-out damping,
    added after, are switched off here; test_recency, test_repair_prior, test_search_as_user,
    test_lexical_seed and test_spread_fan cover them.)"""
    golden = json.loads((Path(__file__).parent / "filters_golden.json").read_text())
    assert json.loads(json.dumps(snapshot_results(eng))) == golden


def test_a_mask_that_hides_nothing_changes_nothing(eng):
    """The masked code paths themselves (entry fetch, dense top-k, every channel) with an all-true mask
    rank exactly like the unmasked ones; and a filter that hides no node is no filter at all."""
    eng.refresh()
    for q in GOLDEN_QUERIES:
        for ch in CHANNELS:
            cfg = eng.config.replace(channel=ch, limit=8)
            qv = eng.embed_query(q)
            kw = dict(
                lexical_search=eng.store.lexical_search,
                vectors=eng.vectors,
                graph=eng.graph,
                rel_ids=eng._rel_ids,
                allowed=eng.table.type_mask(()),
            )
            a = rank(q, qv, cfg, RankInputs(**kw))
            b = rank(q, qv, cfg, RankInputs(**kw, visible=np.ones(eng.table.alive.shape[0], bool)))
            assert a.nodes.tolist() == b.nodes.tolist(), (q, ch)
            for k in a.scores:
                assert np.array_equal(a.scores[k], b.scores[k]), (q, ch, k)
        # (recency off: a far as_of moves the "now" the recency prior measures age from)
        base = eng.search(q, limit=8, record=False, recency_weight=0.0, repair_weight=0.0)
        wide = eng.search(
            q,
            limit=8,
            record=False,
            as_of=T0 + 999 * DAY,
            since=0,
            sources=["shop", "blog"],
            recency_weight=0.0,
            repair_weight=0.0,
        )
        assert [(h.id, h.scores) for h in base] == [(h.id, h.scores) for h in wide]


# ------------------------------------------------------------------------------- as_of
@pytest.mark.parametrize("channel", GRAPH_CHANNELS)
def test_as_of_a_later_node_never_appears_and_never_bridges(eng, channel):
    full = eng.search(CHAIN_QUERY, limit=10, channel=channel, record=False)
    assert "commit:b" in visited(full)
    past = eng.search(CHAIN_QUERY, limit=10, channel=channel, as_of=BETWEEN, record=False)
    seen = visited(past)
    assert "commit:a" in ids(past)
    assert not seen & {"commit:b", "issue:2", "pr:9"}, seen  # all later than BETWEEN
    c = hit(past, "commit:c")
    # commit:c is older than BETWEEN but reachable from the seed only through commit:b
    assert c is None or (c.scores["graph"] == 0 and not c.paths), c


def test_as_of_a_later_node_is_no_seed_even_when_it_matches_best(eng):
    full = eng.search("Tune eviction ttl five minutes", limit=10, record=False)
    assert full.hits[0].id == "commit:b" and "commit:b" in full.seeds
    past = eng.search("Tune eviction ttl five minutes", limit=10, as_of=BETWEEN, record=False)
    assert "commit:b" not in visited(past)


def test_nodes_without_a_time_are_always_visible(eng):
    before_all = eng.search(  # files as hits too (structural_types=()): they are the timeless nodes here
        "page cache redis caching guide", limit=10, as_of=T0 - 1, record=False, structural_types=()
    )
    assert set(ids(before_all)) <= {"wiki:cache", "file:src/cache.py", "file:src/boot.py"}
    assert {"wiki:cache", "file:src/cache.py"} <= set(ids(before_all))


def test_as_of_accepts_iso_8601_and_metadata_times_may_be_iso(eng):
    # issue:1's time is "2020-09-20T12:00:00Z" = 1600603200
    assert "issue:1" in ids(eng.search("stale prices", as_of=1600603200, record=False))
    assert "issue:1" not in visited(eng.search("stale prices", as_of=1600603199.5, record=False))
    iso = eng.search("stale prices", as_of="2020-09-20T11:59:59Z", record=False)
    assert "issue:1" not in visited(iso) and iso.config.as_of == 1600603199.0
    assert eng.search("stale prices", as_of="2020-09-20T14:00:00+02:00", record=False).config.as_of == 1600603200.0
    assert eng.table.event_time[eng.store.lookup_idx(["issue:1"])["issue:1"]] == 1600603200.0


def test_event_times_follow_the_change_feed_also_from_another_engine(db, eng):
    assert "commit:c" in ids(eng.search("Warm startup buffers", as_of=BETWEEN, record=False))
    other = ngr.open(db, embedder="hashing")
    try:  # another process moves commit:c after BETWEEN; this engine learns it from the change feed
        other.add_nodes(
            [
                N(
                    "commit:c",
                    "commit",
                    "Warm startup buffers",
                    "Preallocate arenas during boot.",
                    {"time": T0 + 60 * DAY, "source": "shop"},
                )
            ]
        )
    finally:
        other.close()
    assert "commit:c" not in visited(eng.search("Warm startup buffers", as_of=BETWEEN, record=False))
    eng.add_nodes([N("commit:c", "commit", "Warm startup buffers", "Preallocate arenas during boot.", {})])
    assert "commit:c" in ids(eng.search("Warm startup buffers", as_of=BETWEEN, record=False))  # timeless now


def test_a_filter_leaving_few_rows_scores_them_exactly_instead_of_through_the_ivf(eng):
    # ann_min_nodes=8 sends this 10-node store to the IVF path; as_of leaves fewer rows than that
    for as_of in (T0 - 1, BETWEEN):
        approx = eng.search("page cache redis stale", limit=10, as_of=as_of, ann_min_nodes=8, record=False)
        exact = eng.search("page cache redis stale", limit=10, as_of=as_of, ann_min_nodes=0, record=False)
        assert ids(approx) == ids(exact)
        for a, b in zip(approx.hits, exact.hits):
            assert a.scores == pytest.approx(b.scores, abs=1e-6)


# ------------------------------------------------------------------------------- other filters
def test_since_until_range(eng):
    res = eng.search("page cache prices commit", limit=10, since=T0 + 4 * DAY, until=T0 + 25 * DAY, record=False)
    timed = [i for i in visited(res) if i in TIMES]
    assert timed and all(T0 + 4 * DAY <= TIMES[i] <= T0 + 25 * DAY for i in timed), timed
    assert "commit:a" not in visited(res)  # before the range: not even a bridge
    with pytest.raises(InvalidArgument, match="since"):
        eng.search("x", since=T0 + DAY, until=T0)


def test_sources_filter(eng):
    res = eng.search("page cache login", limit=10, sources=["blog"], record=False)
    assert "issue:3" in ids(res)
    # shop nodes (file:src/cache.py included) are gone; nodes without a source are not judged
    assert visited(res) <= {"issue:3", "wiki:cache", "file:src/boot.py"}
    both = eng.search("page cache login", limit=10, sources=["blog", "shop"], record=False)
    assert {"issue:3", "commit:a"} <= set(ids(both))
    assert visited(eng.search("page cache", sources=["nowhere"], record=False)) <= {"wiki:cache", "file:src/boot.py"}


def test_where_metadata_equality(eng):
    res = eng.search("page cache prices", limit=10, where={"state": "open"}, record=False)
    assert "issue:1" in ids(res)
    assert not visited(res) & {"issue:2", "pr:9"}  # closed / merged: neither hits nor bridges
    assert "commit:a" in ids(res)  # no state: not judged by it
    # a list value matches by element; numbers are not strings; booleans are not numbers
    lab = eng.search("page cache login stale", limit=10, where={"labels": "regression"}, record=False)
    assert "issue:1" not in visited(lab)
    assert "issue:1" in ids(eng.search("stale prices", where={"labels": "bug"}, record=False))
    num = eng.search("page cache login stale", limit=10, where={"number": 1}, record=False)
    assert "issue:1" in ids(num) and not visited(num) & {"issue:2", "issue:3"}
    assert "issue:1" not in visited(eng.search("stale prices", where={"number": "1"}, record=False))
    assert "issue:3" in ids(eng.search("login cache misses", where={"draft": False}, record=False))
    assert "issue:3" not in visited(eng.search("login cache misses", where={"draft": True}, record=False))
    assert "issue:3" not in visited(eng.search("login cache misses", where={"draft": 0}, record=False))


def test_types_still_restrict_hits_only(eng):
    res = eng.search(CHAIN_QUERY, limit=10, result_types=("issue",), record=False)
    assert set(ids(res)) <= {"issue:1", "issue:2", "issue:3"}
    assert any(h.paths and h.paths[0]["nodes"][0] == "commit:a" for h in res.hits)  # commits still link


def test_filters_are_stored_in_the_trace(eng):
    res = eng.search(
        "stale prices", as_of="2020-10-01", sources=["shop"], where={"state": "open"}, files=["src/cache.py"], since=0
    )
    p = eng.get_trace(res.trace_id)["params"]
    assert p["as_of"] == 1601510400.0 and p["since"] == 0.0 and p["until"] is None
    assert p["sources"] == ["shop"] and p["where"] == {"state": "open"} and p["files"] == ["src/cache.py"]
    assert p["file_seed_weight"] == 2.0 and p["file_overlap_weight"] == 0.4


@pytest.mark.parametrize(
    "kw, msg",
    [
        ({"as_of": "yesterday"}, "as_of"),
        ({"as_of": True}, "as_of"),
        ({"until": float("nan")}, "until"),
        ({"since": [1]}, "since"),
        ({"sources": [""]}, "sources"),
        ({"sources": [3]}, "sources"),
        ({"sources": 3}, "sources"),
        ({"where": {"state": ["open"]}}, "where"),
        ({"where": {"state": None}}, "where"),
        ({"where": {'a"b': 1}}, "where"),
        ({"where": {"": 1}}, "where"),
        ({"where": "state=open"}, "where"),
        ({"where": (("a", 1), ("a", 2))}, "twice"),
        ({"files": [None]}, "files"),
        ({"file_seed_weight": -1}, "file_seed"),
    ],
)
def test_bad_filter_values_are_invalid_arguments(eng, kw, msg):
    with pytest.raises(InvalidArgument, match=msg):
        eng.search("page cache", **kw)


# ------------------------------------------------------------------------------- files
def test_files_become_extra_seeds_and_unknown_ones_are_reported(eng):
    plain = eng.search("startup arenas", limit=10, record=False)
    assert "file:src/boot.py" not in plain.seeds
    res = eng.search("page cache", limit=10, files=["./src/boot.py", "src/nope.py"], record=False)
    assert "file:src/boot.py" in res.seeds and res.unknown_files == ["src/nope.py"]
    assert "file:src/boot.py" not in ids(res)  # the agent's own file is a seed, not a hit
    c = hit(res, "commit:c")  # its history comes up through it
    assert c is not None and c.paths[0]["nodes"] == ["file:src/boot.py", "commit:c"]
    assert res.to_dict()["unknown_files"] == ["src/nope.py"] and "unknown_files" not in plain.to_dict()
    off = eng.search("page cache", limit=10, files=["src/boot.py"], file_seed_weight=0.0, record=False)
    assert "file:src/boot.py" not in off.seeds
    hidden = eng.search("page cache", limit=10, files=["src/cache.py"], sources=["blog"], record=False)
    assert "file:src/cache.py" not in visited(hidden) and hidden.unknown_files == []  # filtered, not unknown


# ------------------------------------------------------------------------------- store and snapshot
def test_migration_backfills_event_time_and_source(tmp_path):
    path = tmp_path / "old.db"
    e = ngr.open(path, embedder="hashing")
    e.add_nodes(corpus()[0])
    e.close()
    con = sqlite3.connect(path)  # turn it into a store written before 0004_event_time
    con.executescript(
        "ALTER TABLE nodes DROP COLUMN event_time; ALTER TABLE nodes DROP COLUMN source;"
        "DELETE FROM migrations WHERE name = '0004_event_time';"
    )
    con.close()
    e = ngr.open(path, embedder="hashing")
    try:
        got = dict(e.store.conn.execute("SELECT id, event_time FROM nodes WHERE event_time IS NOT NULL"))
        assert got == TIMES
        src = dict(e.store.conn.execute("SELECT id, source FROM nodes"))
        assert src["issue:3"] == "blog" and src["file:src/cache.py"] == "shop" and src["wiki:cache"] is None
        assert "commit:b" not in visited(e.search(CHAIN_QUERY, as_of=BETWEEN, record=False))
    finally:
        e.close()


def test_snapshot_carries_event_times_and_sources(db):
    e = ngr.open(db, embedder="hashing")
    e.snapshot_min_rows = 0
    before = e.search(CHAIN_QUERY, limit=10, as_of=BETWEEN, sources=["shop"], record=False)
    times, srcs = e.table.event_time.copy(), {s: e.table.source_of == i for s, i in e.table.source_ids.items()}
    assert e.save_snapshot() is not None
    e.close()
    e = ngr.open(db, embedder="hashing")
    try:
        assert e.opened_from_snapshot
        assert np.array_equal(e.table.event_time, times, equal_nan=True)
        assert all(np.array_equal(e.table.source_of == e.table.source_ids[s], m) for s, m in srcs.items())
        again = e.search(CHAIN_QUERY, limit=10, as_of=BETWEEN, sources=["shop"], record=False)
        assert [(h.id, h.scores) for h in again] == [(h.id, h.scores) for h in before]
    finally:
        e.close()


# ------------------------------------------------------------------------------- CLI
runner = CliRunner()


def ngr_cli(db, *args):
    return runner.invoke(app, ["--db", str(db), "--embedder", "hashing", *args], catch_exceptions=False)


def cli_json(db, *args) -> dict:
    r = ngr_cli(db, "search", *args, "--json")
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def cli_seen(d: dict) -> set[str]:
    out = {h["id"] for h in d["hits"]} | set(d["seeds"])
    for h in d["hits"]:
        for p in h["paths"]:
            out.update(p["nodes"])
    return out


def test_cli_filters(db):
    full = cli_json(db, CHAIN_QUERY)
    assert "commit:b" in cli_seen(full)
    past = cli_json(db, CHAIN_QUERY, "--as-of", "2020-09-27T00:00:00Z")  # between a/c and b, like BETWEEN
    assert "commit:a" in {h["id"] for h in past["hits"]} and not cli_seen(past) & {"commit:b", "issue:2", "pr:9"}
    assert cli_json(db, CHAIN_QUERY, "--as-of", "1601164800") == {**past, "trace_id": ANY, "timings_ms": ANY}
    blog = cli_json(db, "page cache login", "--source", "blog")
    assert cli_seen(blog) <= {"issue:3", "wiki:cache", "file:src/boot.py"}
    op = cli_json(db, "page cache login stale", "--where", "state=open", "--where", "number=1", "--type", "issue")
    assert [h["id"] for h in op["hits"]] == ["issue:1"]
    rng = cli_json(db, "page cache prices commit", "--since", str(T0 + 4 * DAY), "--until", "2020-10-08")
    assert "commit:a" not in cli_seen(rng) and "pr:9" in cli_seen(rng)
    fs = cli_json(db, "page cache", "--file", "src/boot.py", "--file", "gone.c")
    assert "file:src/boot.py" in fs["seeds"] and fs["unknown_files"] == ["gone.c"]
    r = ngr_cli(db, "search", "page cache", "--file", "gone.c")
    assert r.exit_code == 0 and "gone.c" in r.output
    for bad in (
        ["--as-of", "last tuesday"],
        ["--where", "state"],
        ["--where", "=open"],
        ["--since", "2021-01-01", "--until", "2020-01-01"],
    ):
        r = ngr_cli(db, "search", "page cache", *bad)
        assert r.exit_code == 2 and "error[invalid_argument]" in r.output, (bad, r.output)


class _Any:
    def __eq__(self, other):
        return True


ANY = _Any()


# ------------------------------------------------------------------------------- MCP
def test_mcp_search_filters(db):
    pytest.importorskip("mcp.server", reason="the optional extra neurongraph[mcp] is not installed")
    import anyio
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(
        command=sys.executable,
        cwd=str(db.parent),
        args=["-m", "neurongraph.mcp", "--db", str(db), "--embedder", "hashing"],
    )

    async def call(c, **args):
        r = await c.call_tool("search", args)
        return r

    def seen(d):
        out = {h["id"] for h in d["hits"]}
        for h in d["hits"]:
            for p in h["paths"]:
                out.update(p["nodes"])
        return out

    async def main():
        async with Client(params, read_timeout_seconds=30) as c:
            props = {t.name: t for t in (await c.list_tools()).tools}["search"].input_schema["properties"]
            assert {"as_of", "since", "until", "types", "sources", "where", "files"} <= set(props)
            r = await call(c, query=CHAIN_QUERY, as_of="2020-09-27T00:00:00Z")
            assert not r.is_error, r.content[0].text
            d = r.structured_content
            assert "commit:a" in seen(d) and not seen(d) & {"commit:b", "issue:2", "pr:9"}
            d2 = (await call(c, query=CHAIN_QUERY, as_of=BETWEEN)).structured_content
            assert [h["id"] for h in d2["hits"]] == [h["id"] for h in d["hits"]]
            d = (
                await call(c, query="page cache login stale", where={"state": "open", "number": 1}, types=["issue"])
            ).structured_content
            assert [h["id"] for h in d["hits"]] == ["issue:1"]
            d = (
                await call(c, query="page cache login", sources=["blog"], since=0, until=T0 + 99 * DAY)
            ).structured_content
            assert seen(d) <= {"issue:3", "wiki:cache", "file:src/boot.py"}
            d = (await call(c, query="page cache", files=["src/boot.py", "gone.c"])).structured_content
            assert d["unknown_files"] == ["gone.c"] and "commit:c" in seen(d)
            assert "unknown_files" not in (await call(c, query="page cache")).structured_content
            for bad in (
                {"as_of": "soon"},
                {"as_of": True},
                {"where": {"state": ["open"]}},
                {"sources": []},
                {"since": "2021-01-01", "until": "2020-01-01"},
                {"filters": {}},
            ):
                r = await call(c, query="page cache", **bad)
                assert r.is_error and r.structured_content["error"]["code"] == "invalid_argument", bad

    anyio.run(main)
