"""The Markdown/ADR folder reader (tests/fixtures/markdown) and, end to end, both readers through apply_batch."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import neurongraph as ngr
from neurongraph.errors import InvalidArgument
from neurongraph.ingest.markdown import SPLIT_CHARS, parse_front_matter, read_markdown, slugify

FIX = Path(__file__).parent / "fixtures"
MD = FIX / "markdown"
AUTH = "md:design/auth.md"
ADR1, ADR2, ADR3, ADR4 = (
    "md:adr/0001-use-cookie-sessions.md",
    "md:adr/0002-log-format.md",
    "md:adr/0003-use-jwt.md",
    "md:adr/0004-structured-logs.md",
)


def _nodes(b):
    return {n.id: n for n in b.nodes}


def _edges(b):
    return {(e.src, e.rel, e.dst): e for e in b.edges}


@pytest.fixture(scope="module")
def md():
    return read_markdown(MD)


# ------------------------------------------------------------------------------------------- reader
def test_pages_ids_types_titles(md):
    nodes = _nodes(md)
    assert md.kind == "markdown" and md.source == "markdown" and md.complete and not md.skipped
    pages = {i: n for i, n in nodes.items() if n.type != "section"}
    assert set(pages) == {"md:README.md", "md:onboarding.md", AUTH, ADR1, ADR2, ADR3, ADR4, "md:decisions/rfc-cache.md"}
    assert nodes["md:README.md"].type == "page" and nodes["md:README.md"].title == "Project handbook"
    assert nodes["md:onboarding.md"].title == "Onboarding"  # front matter title
    assert {nodes[i].type for i in (ADR1, ADR2, ADR3, ADR4)} == {"decision"}  # adr/ folder
    rfc = nodes["md:decisions/rfc-cache.md"]
    assert rfc.type == "rfc" and rfc.title == "Cache write-back outside the lock"  # front matter wins over decisions/
    assert nodes[ADR1].title == "1. Use cookie sessions" and not nodes[ADR1].text.startswith("# ")
    for n in md.nodes:
        assert n.metadata["source"] == "markdown" and n.metadata["ingest"] == "markdown"
    json.dumps([n.metadata for n in md.nodes])


def test_metadata_times_status_front_matter(md):
    nodes = _nodes(md)
    on = nodes["md:onboarding.md"].metadata
    assert on["date"] == "2026-01-10" and on["time"] == 1768003200
    assert on["front_matter"]["tags"] == ["handbook", "people"] and on["front_matter"]["owners"] == ["maria", "tom"]
    a1 = nodes[ADR1].metadata
    assert a1["date"] == "2025-11-02" and a1["time"] == 1762041600  # adr-tools "Date:" line
    assert a1["status"] == "Superseded by ADR 3" and a1["number"] == 1
    assert nodes[ADR4].metadata["status"] == "accepted" and nodes[ADR4].metadata["time"] == 1771113600
    assert "time" not in nodes["md:README.md"].metadata  # no date: file times are not history
    assert "time" not in nodes["md:decisions/rfc-cache.md"].metadata


def test_long_page_split_into_sections(md):
    nodes, edges = _nodes(md), _edges(md)
    secs = [n for n in md.nodes if n.type == "section"]
    assert [n.id for n in secs] == [f"{AUTH}#context", f"{AUTH}#tokens", f"{AUTH}#rejected-options", f"{AUTH}#tokens-1"]
    tokens = nodes[f"{AUTH}#tokens"]
    assert tokens.title == "Authentication design › Tokens"
    assert "90 seconds of clock skew" in tokens.text and "### Expiry" in tokens.text  # a short subsection joins
    assert (
        tokens.metadata["page"] == AUTH and tokens.metadata["owner"] == AUTH and tokens.metadata["anchor"] == "tokens"
    )
    for s in secs:
        assert (s.id, "part_of", AUTH) in edges and len(s.text) < 2 * SPLIT_CHARS
    page = nodes[AUTH]
    assert page.text.startswith("How a request proves who sent it") and "Contents:\n- Context\n- Tokens" in page.text
    assert page.metadata["sections"] == 4 and len(page.text) < 400
    assert not any(n.type == "section" and n.id.startswith("md:README.md") for n in md.nodes)  # short page: whole


def test_links_wiki_links_and_missing_targets(md):
    edges = _edges(md)
    e = edges[("md:README.md", "links_to", AUTH)]
    assert e.meta == {
        "by": "markdown",
        "owner": "md:README.md",
        "evidence": "[auth design](design/auth.md#tokens)",
        "anchor": "tokens",
    }
    assert edges[("md:README.md", "links_to", "md:onboarding.md")].meta["evidence"] == "[[Onboarding]]"
    assert ("md:onboarding.md", "links_to", "md:README.md") in edges
    assert ("md:decisions/rfc-cache.md", "links_to", AUTH) in edges  # [[authentication design]]: by title
    tok = edges[(f"{AUTH}#tokens", "links_to", ADR3)]  # a link in a section: owned by it
    assert tok.meta["owner"] == f"{AUTH}#tokens" and tok.meta["evidence"] == "[ADR 3](../adr/0003-use-jwt.md)"
    assert md.stats["links_missing"] == 1 and md.stats["wiki_links_missing"] == 1
    assert "README.md: ops/runbook.md" in md.stats["missing_examples"]
    # the fenced code block in README.md holds "[not a link](design/auth.md)" and "#333": neither is read
    assert not any(d.endswith(":333") for _, _, d in edges)
    assert len([k for k in edges if k[0] == "md:README.md" and k[1] == "links_to"]) == 2


def test_refs_and_file_mentions(md):
    edges = _edges(md)
    for kind in ("issue", "pr"):  # "#4" does not say which; the sync keeps the one that exists
        assert edges[("md:README.md", "refs", f"{kind}:4")].meta["evidence"] == "#4"
    sha = "89e6c98d92887913cadf06b2adb97f26cde4849b"
    assert edges[("md:README.md", "refs", f"commit:{sha}")].meta["evidence"] == sha
    assert edges[("md:README.md", "mentions", "file:src/auth/token.py")].meta["evidence"] == "src/auth/token.py"
    assert (f"{AUTH}#tokens", "refs", "issue:1") in edges
    assert (f"{AUTH}#tokens", "mentions", "file:src/auth/token.py") in edges
    assert not any(d.startswith("file:") and ".." in d for _, _, d in edges)
    assert not any(d == "file:design/auth.md" or d == "file:adr/0003-use-jwt.md" for _, _, d in edges)  # link targets


def test_adr_supersedes_and_amends(md):
    edges = _edges(md)
    sup = edges[(ADR3, "supersedes", ADR1)]  # newer -> older, from "Superseded by [ADR 3](…)" in ADR 1
    assert sup.meta["owner"] == ADR1 and sup.meta["evidence"] == "Superseded by [ADR 3](0003-use-jwt.md)"
    assert edges[(ADR4, "amends", ADR2)].meta["owner"] == ADR2  # "Amended by ADR-0004" (number prefix)
    assert [k for k in edges if k[1] == "supersedes"] == [(ADR3, "supersedes", ADR1)]
    assert md.stats["adr_refs_unresolved"] == 1  # superseded_by: ADR-9 (no such file)


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(content if isinstance(content, bytes) else content.encode())
    return root


def _long(words: str, n: int) -> str:
    return " ".join(f"{words} {i}." for i in range(n))


def test_superseded_long_adr_masks_its_sections_too(tmp_path):
    body = (
        f"# 7. Old cache\n\nStatus: Superseded by ADR-0008\n\n## Context\n\n{_long('context line', 80)}\n\n"
        f"## Decision\n\n{_long('decision line', 80)}\n"
    )
    _write(
        tmp_path,
        {
            "decisions/0007-old-cache.md": body,
            "decisions/0008-new-cache.md": "---\nsupersedes: [7]\n---\n# 8. New cache\n\nUse LRU.\n",
        },
    )
    b = read_markdown(tmp_path)
    edges = _edges(b)
    old, new = "md:decisions/0007-old-cache.md", "md:decisions/0008-new-cache.md"
    assert (new, "supersedes", old) in edges
    for sec in ("context", "decision"):
        e = edges[(new, "supersedes", f"{old}#{sec}")]
        assert e.meta["via"] == old


def test_long_section_cut_into_parts_and_repo_relative_file_links(tmp_path):
    (tmp_path / ".git").mkdir()
    paras = "\n\n".join(_long(f"paragraph {k} sentence", 12) for k in range(40))
    _write(
        tmp_path,
        {
            "docs/big.md": f"# Big\n\nIntro.\n\n## Only\n\n{paras}\n\nSee [the code](../src/x.py).\n",
            "src/x.py": "print(1)\n",
            ".hidden/secret.md": "# no",
            "node_modules/pkg/readme.md": "# no",
        },
    )
    b = read_markdown(tmp_path / "docs")
    ids = [n.id for n in b.nodes]
    assert ids[0] == "md:big.md" and ids[1] == "md:big.md#only" and ids[2] == "md:big.md#only-part-2"
    assert all(len(n.text) <= 4200 for n in b.nodes)
    assert any(d == "file:src/x.py" and r == "mentions" for _, r, d in _edges(b))  # the repository's path
    assert b.nodes[2].title == "Big › Only (part 2)"
    b2 = read_markdown(tmp_path)
    assert not any(".hidden" in n.id or "node_modules" in n.id for n in b2.nodes)


def test_bad_files_are_skipped_with_reasons(tmp_path):
    _write(
        tmp_path,
        {
            "ok.md": "# Fine\n\ntext",
            "latin.md": "caf\u00e9 cr\u00e8me".encode("latin-1"),
            "big.md": "x" * 5000,
            "open.md": "---\ntitle: never closed\n\n# Heading\nbody",
        },
    )
    b = read_markdown(tmp_path, max_file_bytes=4000)
    reasons = {s["item"]: s["reason"] for s in b.skipped}
    assert "not UTF-8" in reasons["latin.md"] and "limit" in reasons["big.md"]
    assert "not closed" in reasons["open.md (front matter)"]
    assert {n.id for n in b.nodes} == {"md:ok.md", "md:open.md"}
    assert b.stats["front_matter_errors"] == 1
    with pytest.raises(InvalidArgument, match="no such folder"):
        read_markdown(tmp_path / "missing")
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(InvalidArgument, match="not a Markdown file"):
        read_markdown(tmp_path / "notes.txt")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidArgument, match="no Markdown files"):
        read_markdown(empty)
    single = read_markdown(tmp_path / "ok.md")
    assert not single.complete and [n.id for n in single.nodes] == ["md:ok.md"]


def test_front_matter_subset_and_toml():
    fm, body, err = parse_front_matter(
        "---\ntitle: \"Quoted: yes\"\ntags: [a, 'b']\nlist:\n  - x\n  - 2\nnested:\n  k: v\nflag: true\n"
        "desc: |\n  line one\n  line two\n# comment\n---\nBody"
    )
    assert err is None and body == "Body"
    assert fm == {
        "title": "Quoted: yes",
        "tags": ["a", "b"],
        "list": ["x", 2],
        "nested": "",
        "flag": True,
        "desc": "line one\nline two",
    }
    fm, body, err = parse_front_matter('+++\ntitle = "T"\ndate = 2024-05-01\n+++\nB')
    assert fm == {"title": "T", "date": "2024-05-01"} and body == "B" and err is None
    assert parse_front_matter("no front matter") == ({}, "no front matter", None)
    assert slugify("Why `JWT`? (2024) — notes") == "why-jwt-2024--notes"


# ------------------------------------------------------------------------------------------- end to end
@pytest.fixture
def store(tmp_path):
    eng = ngr.open(tmp_path / "x.db", embedder="hashing")
    yield eng
    eng.close()


def _apply(eng, batch, **kw):
    from neurongraph.ingest.sync import apply_batch

    return apply_batch(eng, batch, **kw)


def _out(eng, node_id):
    return {(r, d) for s, r, d in eng.store.edges_from([node_id])}


def test_markdown_sync_end_to_end(store, tmp_path):
    root = tmp_path / "wiki"
    shutil.copytree(MD, root)
    first = _apply(store, read_markdown(root))
    assert first["new_nodes"] == 12 and first["embedded"] == 12 and first["edges_written"] > 0
    hits = [h.id for h in store.search("signed bearer tokens validated on every request", limit=3)]
    assert ADR3 in hits
    # the same folder again: nothing written, nothing embedded
    again = _apply(store, read_markdown(root))
    assert again["embedded"] == 0 and again["new_nodes"] == again["updated_nodes"] == 0
    assert again["edges_written"] == again["edges_retracted"] == 0
    # a superseded ADR is out of normal retrieval, still there on request
    q = "keep sessions in redis keyed by an opaque cookie"
    assert ADR1 not in [h.id for h in store.search(q, limit=10)]
    assert ADR1 in [h.id for h in store.search(q, limit=10, include_superseded=True)]
    # editing a link retracts the edge the old text produced
    assert ("links_to", "md:README.md") in _out(store, "md:onboarding.md")
    p = root / "onboarding.md"
    p.write_text(p.read_text().replace("[handbook](README.md)", "[auth design](design/auth.md)"))
    edit = _apply(store, read_markdown(root))
    assert edit["updated_nodes"] == 1 and edit["embedded"] == 1 and edit["edges_retracted"] == 1
    assert _out(store, "md:onboarding.md") == {("links_to", AUTH)}
    # deleting a page (and so its sections) with prune
    (root / "design" / "auth.md").unlink()
    gone = _apply(store, read_markdown(root), prune=True)
    assert gone["nodes_pruned"] == 5
    ids = {n.id for n in read_markdown(root).nodes}
    assert all(store.store.lookup_idx([i]) for i in ids)
    assert not store.store.lookup_idx([AUTH, f"{AUTH}#tokens"])


def test_renamed_heading_drops_the_old_section_without_prune(store, tmp_path):
    root = tmp_path / "w"
    _write(root, {"p.md": f"# P\n\nIntro.\n\n## Alpha\n\n{_long('alpha', 120)}\n\n## Beta\n\n{_long('beta', 120)}\n"})
    _apply(store, read_markdown(root))
    assert store.store.lookup_idx(["md:p.md#alpha"])
    (root / "p.md").write_text((root / "p.md").read_text().replace("## Alpha", "## Gamma"))
    s = _apply(store, read_markdown(root))
    assert not store.store.lookup_idx(["md:p.md#alpha"]) and store.store.lookup_idx(["md:p.md#gamma"])
    assert s["nodes_pruned"] == 1


def test_github_sync_end_to_end_and_markdown_refs_join(store, tmp_path):
    from neurongraph.ingest.github import read_github

    exp = tmp_path / "export"
    shutil.copytree(FIX / "github" / "gh", exp)
    first = _apply(store, read_github(exp))
    assert first["new_nodes"] == 7
    assert "issue:1" in [h.id for h in store.search("token expiry check rejects tokens clock drifts", limit=3)]
    assert ("duplicate_of", "issue:1") in _out(store, "issue:3")
    again = _apply(store, read_github(exp))
    assert again["embedded"] == 0 and again["new_nodes"] == again["updated_nodes"] == again["edges_written"] == 0
    # the "Duplicate of #1" comment is deleted on GitHub: the next export retracts the edge
    data = json.loads((exp / "issues.json").read_text())
    data[1]["comments"] = []
    (exp / "issues.json").write_text(json.dumps(data))
    s = _apply(store, read_github(exp))
    assert s["updated_nodes"] == 1 and s["edges_retracted"] == 1
    assert ("duplicate_of", "issue:1") not in _out(store, "issue:3")
    # Markdown pages that cite #4 and #1 join the GitHub threads (the pr:/issue: id that exists)
    _apply(store, read_markdown(MD))
    assert ("refs", "pr:4") in _out(store, "md:README.md")
    assert ("refs", "issue:4") not in _out(store, "md:README.md")
    # prune: PR #5 left the export
    data = json.loads((exp / "prs.json").read_text())
    (exp / "prs.json").write_text(json.dumps([d for d in data if d["number"] != 5]))
    s = _apply(store, read_github(exp), prune=True)
    assert s["nodes_pruned"] == 1 and not store.store.lookup_idx(["pr:5"])


def test_pathological_text_stays_linear(tmp_path):
    """Brackets, wiki-link openers, heading marks and long path-like runs: no regex goes quadratic."""
    import time

    _write(
        tmp_path,
        {
            "a.md": "# T\n\n" + "[" * 300_000,
            "b.md": "[[" * 150_000 + "\n" + "[x" * 150_000,
            "c.md": "# " + " #" * 100_000 + "\n",
            "d.md": "a/" * 300_000 + "\n",
            "e.md": ("Superseded by " + "x.md " * 500 + "\n") * 50,
        },
    )
    t0 = time.perf_counter()
    b = read_markdown(tmp_path)
    assert time.perf_counter() - t0 < 5 and len([n for n in b.nodes if n.type != "section"]) == 5
