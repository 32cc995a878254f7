"""The web page (issue 16) in a real headless Chromium (Debian's ``chromium``, driven by Playwright).

A real ``ngr serve`` over the built-in demo corpus; the browser types a query, sees hits with
scores and a drawn path graph, walks a hit selected → validated → used and sees the edge weight
change on the graph, records an outcome, opens the node with its neighbours and the trace with
its history, and checks that CJK text is drawn with real glyphs (not boxes).  Screenshots go
to ``.ngr/screenshots/`` (``NGR_DOC_SCREENSHOTS=1`` also refreshes the two in ``docs/img/``).

Chromium missing is a FAILURE, not a skip: ``scripts/bootstrap.sh`` installs it.
"""

from __future__ import annotations

import os
import shutil
from importlib import resources
from pathlib import Path

import pytest

from http_fixtures import run_ngr, served

ROOT = Path(__file__).resolve().parents[1]
SHOTS = ROOT / ".ngr" / "screenshots"
CHROMIUM = os.environ.get("NGR_CHROMIUM", "/usr/bin/chromium")
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
DOC_SHOTS = {"walk-to-used", "trace"}  # the ones docs/http.md and the README show
QUERY = "was the Redis page cache decision ever reversed?"
CJK_QUERY = "ログインが遅い原因は?"


def _chromium() -> str:
    path = shutil.which(CHROMIUM) or (CHROMIUM if Path(CHROMIUM).exists() else None)
    if path is None:
        pytest.fail(
            f"Chromium not found at {CHROMIUM}: the browser tests need Debian's chromium "
            "(run ./scripts/bootstrap.sh, or apt-get install chromium fonts-noto-cjk; NGR_CHROMIUM=PATH overrides)",
            pytrace=False,
        )
    return path


@pytest.fixture(scope="module")
def site_db(tmp_path_factory):
    db = tmp_path_factory.mktemp("web") / "demo.db"
    corpus = resources.files("neurongraph.cli").joinpath("demo_corpus.jsonl")
    with resources.as_file(corpus) as path:
        r = run_ngr(db, "ingest", str(path), "--json")
    assert r.returncode == 0, r.stderr
    return db


@pytest.fixture(scope="module")
def site(site_db):
    with served(site_db) as (url, _proc):
        yield url


@pytest.fixture(scope="module")
def browser():
    exe = _chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=exe, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@pytest.fixture
def page(browser):
    ctx = browser.new_context(viewport={"width": 1360, "height": 900}, device_scale_factor=1)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    pg.set_default_timeout(20_000)
    try:
        yield pg
        assert not errors, f"the page logged errors: {errors}"
    finally:
        ctx.close()


def _shot(pg, name: str, **kw) -> Path:
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    pg.screenshot(path=str(path), **kw)
    assert path.stat().st_size > 10_000
    if os.environ.get("NGR_DOC_SCREENSHOTS") == "1" and name in DOC_SHOTS:
        (ROOT / "docs" / "img").mkdir(parents=True, exist_ok=True)
        shutil.copy(path, ROOT / "docs" / "img" / path.name)
    return path


def _search(pg, site: str, query: str) -> None:
    pg.goto(site + "/")
    pg.get_by_test_id("query").fill(query)
    pg.get_by_test_id("search-button").click()
    pg.get_by_test_id("hit").first.wait_for()


def test_search_walk_to_used_and_see_the_weight_change(page, site):
    page.goto(site + "/")
    assert page.title() == "Neuron Graph RAG"
    page.get_by_test_id("store-stats").get_by_text("nodes").wait_for()
    page.get_by_test_id("query").fill(QUERY)
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("hit").first.wait_for()
    assert page.get_by_test_id("progress").is_hidden()  # the loading state went away
    hits = page.get_by_test_id("hit")
    assert hits.count() == 10
    first = hits.first
    assert first.get_by_test_id("hit-title").inner_text()
    assert first.get_by_test_id("hit-type").inner_text()
    assert first.get_by_test_id("snippet").inner_text()
    scores = first.get_by_test_id("scores").inner_text()
    for name in ("final", "entry", "lexical", "dense", "graph"):
        assert name in scores
    # a hit reached through the graph: its path is drawn seed -> typed weighted edge(s) -> hit
    via = page.locator("[data-testid=hit]:has([data-testid=edge-label])").first
    via.wait_for()
    label = via.get_by_test_id("edge-label").first.text_content()  # SVG text
    assert " · w " in label
    graph = via.get_by_test_id("path-graph")
    assert graph.locator("circle").count() >= 2 and graph.locator("line").count() >= 1
    assert via.get_by_test_id("hit-stage").inner_text() == "retrieved"
    _shot(page, "search-results")

    # walk it: selected, then validated and used in one click
    via.get_by_test_id("mark-selected").click()
    via = page.locator(f"[data-testid=hit][data-id='{via.get_attribute('data-id')}']")
    via.get_by_test_id("hit-stage").filter(has_text="selected").wait_for()
    via.get_by_test_id("mark-used").click()
    via.get_by_test_id("hit-stage").filter(has_text="used").wait_for()
    change = via.get_by_test_id("weight-change").first
    text = change.inner_text()
    old, new = (float(x) for x in text.split(": ")[-1].split(" (")[0].split(" → "))
    assert new > old
    changed_label = via.locator(".edge-label.changed").first
    assert "→" in changed_label.text_content()  # the drawn edge shows old → new weight
    via.scroll_into_view_if_needed()
    _shot(page, "walk-to-used")

    # a delayed outcome on the used hit
    via.get_by_test_id("outcome-summary").fill("merged, CI green")
    via.get_by_test_id("outcome-button").click()
    via.get_by_test_id("outcome-done").filter(has_text="confirmed").wait_for()

    # the trace: the hit's stage and the weight change, in the side panel
    page.get_by_test_id("result-trace").click()
    panel = page.get_by_test_id("trace-panel")
    panel.get_by_test_id("trace-query").filter(has_text=QUERY).wait_for()
    assert "used" in panel.get_by_test_id("trace-stage").all_inner_texts()
    assert panel.get_by_test_id("trace-weight-changes").locator("li").count() >= 1
    _shot(page, "trace")
    # the history lists this search
    page.get_by_test_id("tab-history").click()
    page.get_by_test_id("history-item").filter(has_text=QUERY).first.wait_for()


def test_node_view_and_cjk_text(page, site):
    _search(page, site, CJK_QUERY)
    first = page.get_by_test_id("hit").first
    title = first.get_by_test_id("hit-title").inner_text()
    assert any("\u3040" <= ch <= "\u9fff" for ch in title), title
    first.get_by_test_id("hit-title").click()
    node = page.get_by_test_id("node-panel")
    node.get_by_test_id("node-title").filter(has_text=title).wait_for()
    assert node.get_by_test_id("neighbour").count() >= 1
    # CJK glyphs are real: with no CJK font every character is drawn as the same "missing glyph" box
    drawn = page.evaluate(
        """(text) => {
            const c = document.createElement('canvas'); c.width = 64; c.height = 64;
            const g = c.getContext('2d');
            const font = getComputedStyle(document.body).fontFamily;
            const pixels = (ch) => { g.clearRect(0, 0, 64, 64); g.font = '40px ' + font; g.fillText(ch, 4, 48);
                                     return Array.from(g.getImageData(0, 0, 64, 64).data).join(','); };
            const cjk = [...new Set(Array.from(text).filter((ch) => ch > '\\u3000'))];
            const missing = pixels('\\u{10FFFD}');  // a private-use code point no font draws
            return { chars: cjk.length, distinct: new Set(cjk.map(pixels)).size,
                     boxes: cjk.filter((ch) => pixels(ch) === missing) };
        }""",
        title,
    )
    assert drawn["chars"] >= 2 and drawn["distinct"] == drawn["chars"] and drawn["boxes"] == [], (
        f"CJK text is not drawn with real glyphs ({drawn}): install a CJK font (fonts-noto-cjk; scripts/bootstrap.sh)"
    )
    # a neighbour opens in place
    nb = node.get_by_test_id("neighbour").first.locator("button")
    other = nb.inner_text()
    nb.click()
    node.get_by_test_id("node-text").wait_for()
    page.wait_for_function(
        "(id) => document.querySelector('[data-testid=node-panel] .hit-id')?.textContent === id", arg=other
    )
    _shot(page, "node-cjk")


def test_progress_and_errors_are_shown(page, site):
    page.goto(site + "/")
    # a bad option comes back as error[code] on the page, not a frozen or blank page
    page.get_by_text("Options").click()
    page.get_by_test_id("opt-as-of").fill("not a time")
    page.get_by_test_id("query").fill(QUERY)
    page.get_by_test_id("search-button").click()
    err = page.get_by_test_id("error")
    err.wait_for()
    assert "error[invalid_argument]" in err.inner_text() and "as_of" in err.inner_text()
    assert page.get_by_test_id("progress").is_hidden()
    # the loading state is visible while a search runs (the request is held until the page showed it)
    page.get_by_test_id("opt-as-of").fill("")
    seen = []

    def hold(route):
        seen.append(page.get_by_test_id("progress").is_visible())
        route.continue_()

    page.route("**/api/search/jobs", hold)
    page.get_by_test_id("search-button").click()
    page.get_by_test_id("hit").first.wait_for()
    assert seen == [True] and page.get_by_test_id("progress").is_hidden()
    assert err.is_hidden()


def test_a_server_with_a_token_asks_for_it(browser, site_db):
    """The page of a server with a token shows the token field; without it a search is error[unauthorized],
    with it the search runs (the token stays in this tab's sessionStorage)."""
    token = "page-token-0123456789abcdef"
    with served(site_db, "--token", token) as (url, _proc):
        ctx = browser.new_context(viewport={"width": 1360, "height": 900})
        try:
            pg = ctx.new_page()
            pg.goto(url + "/")
            pg.locator("#token").wait_for()  # shown because /api/health says token_required
            pg.get_by_test_id("query").fill(QUERY)
            pg.get_by_test_id("search-button").click()
            err = pg.get_by_test_id("error")
            err.filter(has_text="error[unauthorized]").wait_for()
            pg.locator("#token").fill(token)
            pg.get_by_test_id("search-button").click()
            pg.get_by_test_id("hit").first.wait_for()
            assert err.is_hidden()
            assert pg.evaluate("sessionStorage.getItem('ngr-token')") == token
        finally:
            ctx.close()
