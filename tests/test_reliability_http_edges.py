"""HTTP edges (issue 42 item 5), against a real ``ngr serve`` process on loopback (always stopped):

* one client holding ~300 half-sent connections took the whole connection cap, so 19 of 20 other
  clients' requests were answered 503: now one client address holds at most ``MAX_PER_CLIENT``;
* ``?limit=5&limit=6`` was accepted silently (one of them won): a repeated parameter that takes one
  value is ``400 invalid_argument``;
* the page ran a search for ``/?q=...`` on load, so any site's link wrote a trace with its text: now it
  fills the box and waits for the user (a real headless Chromium, as in tests/test_web_page.py).
"""

from __future__ import annotations

import os
import shutil
import socket
import time
from pathlib import Path

import httpx
import pytest

from http_fixtures import QUERY, build_store, served

pytest.importorskip("fastapi")

from neurongraph.http.server import MAX_CONNECTIONS, MAX_PER_CLIENT, client_key  # noqa: E402

CHROMIUM = os.environ.get("NGR_CHROMIUM", "/usr/bin/chromium")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    db = build_store(tmp_path_factory.mktemp("httpedges") / "s.db")
    with served(db) as (url, _proc):
        yield url


def _half_sent(port: int, source: str) -> socket.socket:
    s = socket.socket()
    s.settimeout(10)
    s.bind((source, 0))
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")  # never finished
    return s


def _answer(s: socket.socket, wait: float) -> bytes | None:
    """What the server sent and closed with within ``wait`` seconds; None while it keeps the connection."""
    s.settimeout(wait)
    got = b""
    try:
        while chunk := s.recv(4096):
            got += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return got


def test_one_client_with_many_half_sent_connections_does_not_starve_others(site):
    port = int(site.rsplit(":", 1)[1])
    hog = [_half_sent(port, "127.0.0.2") for _ in range(300)]  # another loopback address: another client
    try:
        time.sleep(0.5)
        refused = [got for s in hog if (got := _answer(s, 0.02)) is not None]
        assert len(refused) == 300 - MAX_PER_CLIENT
        assert all(b" 503 " in g and b"from your address" in g for g in refused)
        # 20 requests of another client, each on its own connection, while the hog holds its share
        codes = []
        for _ in range(20):
            with httpx.Client(base_url=site, timeout=10) as c:
                codes.append(c.post("/api/search", json={"query": QUERY, "limit": 3}).status_code)
        assert codes == [200] * 20
        held = [s for s in hog if _answer(s, 0.01) is None]
        assert len(held) == MAX_PER_CLIENT
    finally:
        for s in hog:
            s.close()


def test_client_key_groups_ipv6_by_64_and_reads_mapped_ipv4():
    assert client_key(("127.0.0.2", 5555)) == "127.0.0.2"
    assert client_key(("::ffff:10.0.0.7", 1, 0, 0)) == "10.0.0.7"
    assert client_key(("2001:db8:1:2::5", 1, 0, 0)) == client_key(("2001:db8:1:2:ffff::9", 2, 0, 0))
    assert client_key(("2001:db8:1:3::5", 1, 0, 0)) != client_key(("2001:db8:1:2::5", 1, 0, 0))
    assert client_key(None) == "None" and MAX_PER_CLIENT < MAX_CONNECTIONS


def test_a_repeated_query_parameter_that_takes_one_value_is_refused(site):
    with httpx.Client(base_url=site, timeout=30) as c:
        r = c.get("/api/traces?limit=5&limit=6")
        e = r.json()["error"]
        assert r.status_code == 400 and e["code"] == "invalid_argument"
        assert "'limit' is given 2 times" in e["message"]
        r = c.get("/api/node?id=pr:40&id=issue:77")
        assert r.status_code == 400 and "'id' is given 2 times" in r.json()["error"]["message"]
        r = c.get("/api/neighbours?id=pr:40&direction=out&direction=in")
        assert r.status_code == 400 and "'direction'" in r.json()["error"]["message"]
        # a list parameter repeats by design
        r = c.get("/api/neighbours?id=pr:40&rel=touches&rel=implemented_by")
        assert r.status_code == 200, r.text
        assert {n["rel"] for n in r.json()["neighbours"]} <= {"touches", "implemented_by"}
        assert c.get("/api/traces?limit=5").status_code == 200


def _chromium() -> str:
    path = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if path is None:
        pytest.fail(f"Chromium not found at {CHROMIUM}: run ./scripts/bootstrap.sh", pytrace=False)
    return path


def test_a_link_with_q_fills_the_box_but_stores_no_trace(tmp_path):
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    db = build_store(tmp_path / "s.db")
    with served(db) as (url, _proc), httpx.Client(base_url=url, timeout=30) as api:
        assert api.get("/api/traces").json() == []
        with sync_playwright() as p:
            b = p.chromium.launch(executable_path=exe, args=["--headless", "--no-sandbox", "--disable-gpu"])
            try:
                pg = b.new_page()
                errors: list[str] = []
                pg.on("pageerror", lambda e: errors.append(str(e)))
                pg.set_default_timeout(20_000)
                pg.goto(url + "/?q=" + httpx.QueryParams({"x": "attacker text: leak me"})["x"].replace(" ", "+"))
                pg.get_by_test_id("store-stats").get_by_text("nodes").wait_for()
                assert pg.get_by_test_id("query").input_value() == "attacker text: leak me"
                time.sleep(1.5)  # the old page had posted its search job by now
                assert pg.get_by_test_id("hit").count() == 0
                assert api.get("/api/traces").json() == []  # nothing stored
                pg.get_by_test_id("query").fill(QUERY)
                pg.get_by_test_id("search-button").click()  # the user acts: now it searches
                pg.get_by_test_id("hit").first.wait_for()
                assert [t["query"] for t in api.get("/api/traces").json()] == [QUERY]
                assert not errors, errors
            finally:
                b.close()
