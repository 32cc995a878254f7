"""A search reads one consistent state while another process writes (issue 17, defect 2): rows the
writer commits between a search's refresh and its BM25 query are left out of that search, never an
IndexError; the next search sees them."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import neurongraph as ngr


def test_rows_committed_after_refresh_are_left_out_not_a_crash(tmp_path):
    p = tmp_path / "r.db"
    a = ngr.open(p, embedder="hashing")
    b = ngr.open(p, embedder="hashing")
    try:
        a.add_nodes([ngr.Node(f"n{i}", "page", f"cache page {i}", "stale prices") for i in range(50)])
        b.search("stale prices cache", record=False)
        real_refresh = b.refresh
        b.refresh = lambda *x, **k: 0  # the write below lands after b's refresh, before its FTS query
        a.add_nodes([ngr.Node(f"m{i}", "page", f"stale prices {i}", "cache stale prices") for i in range(50)])
        a.delete_nodes(["n0"])
        res = b.search("stale prices cache", limit=10)
        assert all(h.id.startswith("n") for h in res.hits)  # only what b has loaded
        b.refresh = real_refresh
        res = b.search("stale prices cache", limit=10)
        ids = {h.id for h in res.hits}
        assert any(i.startswith("m") for i in ids) and "n0" not in ids
    finally:
        a.close()
        b.close()


WRITER = textwrap.dedent("""
    import sys, neurongraph as ngr
    eng = ngr.open(sys.argv[1], embedder="hashing")
    for k in range(40):
        eng.add_nodes([ngr.Node(f"w{k}-{i}", "page", f"stale prices {k} {i}", "cache stale prices") for i in range(25)])
        if k % 5 == 4:
            eng.delete_nodes([f"w{k - 3}-{i}" for i in range(5)])
    eng.close()
""")


def test_two_processes_search_while_writing(tmp_path):
    p = tmp_path / "two.db"
    with ngr.open(p, embedder="hashing") as eng:
        eng.add_nodes([ngr.Node(f"n{i}", "page", f"cache page {i}", "stale prices") for i in range(20)])
    reader = ngr.open(p, embedder="hashing")
    w = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(p)], env={**os.environ, "HF_HUB_OFFLINE": "1"}, stderr=subprocess.PIPE
    )
    try:
        searches = 0
        while w.poll() is None or searches < 20:
            reader.search("stale prices cache", limit=10, record=searches % 2 == 0)
            searches += 1
            if searches > 5000:
                break
        assert w.wait(timeout=60) == 0, w.stderr.read().decode()
        final = reader.search("stale prices cache", limit=5)
        assert final.hits
    finally:
        if w.poll() is None:
            w.kill()
            w.wait()
        reader.close()
