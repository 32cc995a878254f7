"""Default search as a new user runs it on a real git history (issue 25): changes are the hits, files carry
activation but are hits only when asked for or named; a timeless node is not favoured by the recency prior;
each hit shows its short sha, date and author; ``--explain``'s formula adds up to the final score; an
unknown result type is an error listing the store's types."""

from __future__ import annotations

import numpy as np
import pytest

import neurongraph as ngr
from git_fixtures import Repo
from neurongraph.engine import Hit
from neurongraph.errors import InvalidArgument
from neurongraph.ingest import sync_source
from neurongraph.retrieval.recency import RecencyPrior

QUESTION = "why was the json provider changed"


@pytest.fixture
def repo(tmp_path):
    r = Repo(tmp_path / "flaskish")
    r.base = r.commit(
        "Add app and json provider", {"src/app/app.py": "app = 1\n", "src/app/json.py": "def dumps(): ...\n"}
    )
    for k in range(4):
        r.commit(f"app: tidy module {k}", {"src/app/app.py": f"app = {k}\n"})
    r.change = r.commit(
        "json provider: changed to sort keys by default",
        {"src/app/json.py": "def dumps(sort_keys=True): ...\n"},
    )
    r.commit("docs: readme", {"README.md": "flaskish\n"})
    return r


@pytest.fixture
def eng(repo, tmp_path):
    with ngr.open(tmp_path / "g.db", embedder="hashing") as e:
        sync_source(e, "git", repo.path)
        yield e


def test_a_question_about_a_change_returns_the_commit_not_the_file(eng, repo):
    res = eng.search(QUESTION, limit=10, record=False)
    types = {h.type for h in res.hits}
    assert types and "file" not in types  # files are structural: not hits by default
    assert res.hits[0].id == "commit:" + repo.change
    # asked for: files are hits again, and they still got activation from the commits
    files = eng.search(QUESTION, limit=10, record=False, result_types=("file",))
    assert files.hits and {h.type for h in files.hits} == {"file"}
    assert files.hits[0].id == "file:src/app/json.py"
    # structural_types=() restores the old behaviour (every type may be a hit)
    everything = eng.search(QUESTION, limit=20, record=False, structural_types=())
    assert "file" in {h.type for h in everything.hits}


def test_a_file_the_question_names_is_a_hit(eng):
    res = eng.search("what changed in src/app/json.py?", limit=10, record=False)
    ids = [h.id for h in res.hits]
    assert "file:src/app/json.py" in ids
    assert "file:src/app/app.py" not in ids  # only the named one


def test_a_timeless_node_gets_the_median_recency_factor_not_one():
    prior = RecencyPrior(ref=100 * 86400.0, weight=0.6, half_life_days=10.0)
    t = np.array([100 * 86400.0, 90 * 86400.0, 50 * 86400.0, np.nan])
    f = prior.factor(t)
    assert f[3] == pytest.approx(np.median(f[:3]))
    assert f[3] < 1.0 and f[0] > f[3]  # the newest change still outranks a timeless node
    assert prior.factor(np.array([np.nan, np.nan])).tolist() == [1.0, 1.0]  # nothing timed: no effect


def test_hits_show_short_sha_date_and_author(eng, repo):
    res = eng.search(QUESTION, limit=3, record=False)
    h = res.hits[0]
    assert h.meta == {"sha": repo.change[:12], "date": "2023-11-15", "author": "Ada Dev"}
    assert res.to_dict()["hits"][0]["meta"] == h.meta


def test_the_explained_formula_adds_up(eng, repo):
    cases = ({}, {"channel": "none"}, {"files": ("src/app/json.py",)}, {"changes": ["src/app/json.py:1-1"]})
    for kw in cases:
        res = eng.search(QUESTION, limit=5, record=False, **kw)
        cfg = res.config
        for h in res.hits:
            text, value = h.formula(cfg)
            assert value == pytest.approx(h.score, rel=1e-9, abs=1e-12), (kw, text)
            assert "recency" in text  # the history prior is shown, not only folded in
            assert text in h.explain(cfg)


def test_an_unknown_result_type_lists_the_store_types(eng):
    with pytest.raises(InvalidArgument) as exc:
        eng.search(QUESTION, record=False, result_types=("pr",))
    msg = str(exc.value)
    assert "'pr'" in msg and "commit (" in msg and "file (" in msg
    assert exc.value.details["store_types"] == ["commit", "file"]
    # one known type among them is fine (a history without pull requests still searches commits)
    assert eng.search(QUESTION, record=False, result_types=("commit", "pull_request")).hits


def test_the_formula_covers_priming_and_code_evidence():
    scores = {"entry": 0.5, "graph": 0.2, "priming": 0.1, "recency": 0.8, "repairs": 2.0, "lines_written": 3.0}
    scores |= {"aggregate": 0.5, "blame": 0.0, "code": 0.0, "lexical": 0.5, "dense": 0.5}
    cfg = ngr.SearchConfig()
    want = (0.3 * 0.5 + 0.7 * 0.2 + cfg.priming_weight * 0.1) * 0.8 * (1 + 0.3 * np.log1p(3.0)) * 0.5
    hit = Hit("commit:x", "commit", "t", "", {**scores, "final": want}, {})
    text, value = hit.formula(cfg)
    assert value == pytest.approx(want)  # no code evidence: the product alone is final
    assert "primed 0.100" in text and "2 earlier repair(s)" in text and "code evidence" not in text
    # code evidence: scale × (blame_weight·blame + code weight·code), the scale being the best score without it
    part = 0.6 * (cfg.blame_weight * 0.25 + 0.5 * 0.4)
    hit.scores |= {"blame": 0.25, "code": 0.4, "code_scale": 0.6, "code_weight": 0.5, "final": want + part}
    text, value = hit.formula(cfg)
    assert value == pytest.approx(want + part) and "blame 0.250" in text and "0.50·code 0.400" in text
    assert "code evidence" in text


def test_the_ingest_summary_counts_what_the_store_holds(tmp_path):
    """Two commits renaming a file the same way derive the same ``renamed_to`` edge twice: the store holds one,
    and the summary says so (it counted two, the store's count silently differed)."""
    r = Repo(tmp_path / "renames")
    r.commit("add a", {"a.py": "x = 1\n" * 20})
    for k, (old, new) in enumerate((("a.py", "b.py"), ("b.py", "a.py"), ("a.py", "b.py"))):
        r.git("mv", old, new)
        r.commit(f"rename {k}")
    with ngr.open(tmp_path / "r.db", embedder="hashing") as e:
        s = sync_source(e, "git", r.path)
        assert s["edges_merged"] >= 1
        assert s["edges_written"] == e.store.stats()["edges"]


def test_a_hit_explains_itself_with_its_search_config_and_traces_take_short_shas(eng, repo):
    res = eng.search(QUESTION, limit=3, channel="none")
    h = res.hits[0]
    assert h.formula()[1] == pytest.approx(h.score)  # the hit's own config (channel none: no graph weight)
    assert "1.00·entry" in h.explain()
    assert eng.explain(res.trace_id, repo.change[:8])["id"] == "commit:" + repo.change


def test_mcp_and_http_hits_carry_the_meta_too(repo, tmp_path):
    pytest.importorskip("mcp.server")
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from neurongraph.http import create_app
    from neurongraph.mcp import build_server

    db = tmp_path / "m.db"
    with ngr.open(db, embedder="hashing") as e:
        sync_source(e, "git", repo.path)
        out = build_server(e).ngr_tools.call("search", query=QUESTION, limit=3).structured_content
    want = {"sha": repo.change[:12], "date": "2023-11-15", "author": "Ada Dev"}
    assert out["hits"][0]["meta"] == want and "× recency" in out["hits"][0]["explanation"]
    with TestClient(create_app(ngr.open(db, embedder="hashing")), base_url="http://127.0.0.1") as client:
        got = client.post("/api/search", json={"query": QUESTION, "limit": 3}).json()
        assert got["hits"][0]["meta"] == want
        props = client.get("/openapi.json").json()["components"]["schemas"]["HitOut"]["properties"]
        assert "meta" in props
