"""Retrieval on real history: "which earlier change is this fix about?" (docs/benchmarks.md, "Real history").

Ground truth is what developers wrote: a fix F names the earlier commit(s) O it repairs
(``Fixes: <sha>`` resolving to an ancestor of F) or continues (a follow-up phrase with
``#N``/sha resolving to an older commit or PR).  The question is F's subject with every
explicit reference removed, plus the paths F touches; each question searches the store
``as_of`` the time of F's parent — and strictly before F's own time: a patch series applied with
``git am`` gives F and its parent the same commit second, and F would then be visible (its own
``fixes`` edge leading the graph straight to the answer). F is also dropped from the ranking.
Every system runs through the same engine, store and encoder; only the configuration differs.  Reverts are scored
separately (their message quotes the origin: trivial by text).

The learning split replays the product's promise: the earlier 70% of questions (by F's
time) are past work whose gold origins found in the top 20 are reported as ``used``; the
later 30% are scored before and after that feedback, and once more after the same past
searches *without* feedback (drift: must be identical).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import Engine
from ..errors import InvalidArgument
from ..ingest import sync_source
from ..ingest.git import GitRepo
from ..ingest.refs import strip_refs

__all__ = ["Pair", "extract_pairs", "run_history_bench", "SYSTEMS", "markdown_table"]

K = 20  # hits every system returns (the simulated agent reads at most these)
MAX_QUERY_FILES = 50  # paths of F given with the question (all of them in practice; a cap for vendor imports)
RESULT_TYPES = ("commit", "pull_request")
LEARN_SPLIT = 0.7

_NO_PRIORS = dict(recency_weight=0.0, repair_weight=0.0, authorship_weight=0.0, aggregate_weight=1.0)  # all off
# systems: the same engine and store, different configurations ("paths" is computed, not searched)
SYSTEMS: dict[str, dict] = {
    "paths": {},
    "bm25": dict(channel="none", lexical_weight=1.0, dense_weight=0.0, **_NO_PRIORS),
    "dense": dict(channel="none", lexical_weight=0.0, dense_weight=1.0, **_NO_PRIORS),
    "hybrid": dict(channel="none", **_NO_PRIORS),
    "hybrid+recency": dict(channel="none", authorship_weight=0.0, aggregate_weight=1.0),
    "ngr": {},
    "ngr-no-recency": dict(recency_weight=0.0),
    "ngr-no-repairs": dict(repair_weight=0.0),
    "ngr-no-authorship": dict(authorship_weight=0.0),
    "ngr-no-aggregate": dict(aggregate_weight=1.0),
    "ngr-no-files": dict(files=None),
    "ngr-beam": dict(channel="beam"),
    "ngr-ppr": dict(channel="ppr"),
    "ngr-eager": dict(channel="eager"),
    "ngr-mmr": dict(channel="mmr"),
    "ngr-scored": dict(channel="scored"),
}


@dataclass
class Pair:
    fix: str  # commit id of F
    origins: list[str]  # commit ids of O (gold)
    kind: str  # "fixes" | "follow_up" | "revert"
    time: float  # F's commit time
    as_of: float  # F's parent's commit time, and at least one second before F's
    subject: str
    files: list[str]
    query: str = ""


@dataclass
class _History:
    """What the benchmark reads from an ingested store, once: every commit (metadata it needs), the
    typed repair/merge edges by relation as node-id pairs, and each PR's commit (the oldest one that
    merged it, the same mapping for the gold origins and for scoring PR hits)."""

    commits: dict[str, dict]
    edges: dict[str, list[tuple[str, str]]]
    pr_commit: dict[str, str]

    RELS = ("fixes", "follows_up", "reverts", "merged_in")

    @classmethod
    def read(cls, eng: Engine) -> _History:
        commits = {}
        for row in eng.store.iter_nodes():
            if row.type == "commit":
                md = row.metadata
                commits[row.id] = {
                    "title": row.title,
                    "time": float(md.get("time", 0)),
                    "parents": md.get("parents", []),
                    "files": [f["path"] for f in md.get("files", [])],
                    "sha": md.get("sha", row.id.split(":", 1)[-1]),
                    "tokens": len((row.title + " " + row.text).split()),
                }
        e = eng.graph.all_edges()
        rel_id = {name: i for i, name in eng.store.relation_names().items()}
        idx_pairs = {}
        for r in cls.RELS:
            m = e.rtype == rel_id.get(r, -1)
            idx_pairs[r] = list(zip(e.src[m].tolist(), e.dst[m].tolist()))
        rows = eng.store.nodes_by_idx({i for pairs in idx_pairs.values() for pair in pairs for i in pair})
        edges = {
            r: [(rows[a].id, rows[b].id) for a, b in pairs if a in rows and b in rows] for r, pairs in idx_pairs.items()
        }
        pr_commit: dict[str, str] = {}
        for c, pr in sorted(edges["merged_in"], key=lambda cp: commits.get(cp[0], {}).get("time", 0)):
            pr_commit.setdefault(pr, c)
        return cls(commits, edges, pr_commit)


def extract_pairs(eng: Engine, repo: GitRepo, hist: _History | None = None) -> tuple[list[Pair], dict]:
    """Fix → origin pairs from the ingested typed edges (fixes, follows_up through PRs, reverts)."""
    hist = hist or _History.read(eng)
    commits, edges, pr_commit = hist.commits, hist.edges, hist.pr_commit
    found: dict[tuple[str, str], dict[str, None]] = defaultdict(dict)
    stats: dict[str, Any] = {
        "fixes_edges": len(edges["fixes"]),
        "follows_up_edges": len(edges["follows_up"]),
        "reverts_edges": len(edges["reverts"]),
        "not_ancestor": 0,
        "not_older": 0,
        "unresolved_pr": 0,
    }
    for rel, kind in (("fixes", "fixes"), ("follows_up", "follow_up"), ("reverts", "revert")):
        for f, o in edges[rel]:
            if f not in commits:
                continue
            if o.startswith("pr:"):
                if o not in pr_commit:
                    stats["unresolved_pr"] += 1
                    continue
                o = pr_commit[o]
            if o not in commits or o == f:
                continue
            if commits[o]["time"] > commits[f]["time"]:
                stats["not_older"] += 1
                continue
            found[(f, kind)][o] = None
    # Fixes: must resolve to an ancestor of F (git decides; one cheap process per pair)
    pairs: list[Pair] = []
    for (f, kind), origins in sorted(found.items(), key=lambda kv: commits[kv[0][0]]["time"]):
        c = commits[f]
        if kind == "fixes":
            keep = [
                o
                for o in origins
                if repo._git("merge-base", "--is-ancestor", commits[o]["sha"], c["sha"], check=False).returncode == 0
            ]
            stats["not_ancestor"] += len(origins) - len(keep)
        else:
            keep = list(origins)
        if not keep or not c["parents"]:
            continue
        parent = "commit:" + c["parents"][0]
        # never F's own second: same-second commits (git am) would leave F and its edges visible
        as_of = min(commits[parent]["time"], c["time"] - 1) if parent in commits else c["time"] - 1
        files = c["files"][:MAX_QUERY_FILES]
        subject = strip_refs(c["title"]) or c["title"]
        pairs.append(Pair(f, keep, kind, c["time"], as_of, c["title"], files, query=subject))
    # a fix and a follow-up naming the same F: one question, the union of origins, kind "fixes" first
    merged: dict[str, Pair] = {}
    for p in pairs:
        if p.kind == "revert":
            continue
        if p.fix in merged:
            merged[p.fix].origins = list(dict.fromkeys(merged[p.fix].origins + p.origins))
        else:
            merged[p.fix] = p
    reverts = [p for p in pairs if p.kind == "revert"]
    stats.update(
        {
            "pairs": len(merged),
            "reverts": len(reverts),
            "by_kind": {k: sum(1 for p in merged.values() if p.kind == k) for k in ("fixes", "follow_up")},
        }
    )
    return sorted(merged.values(), key=lambda p: p.time) + reverts, stats


class _PathsFloor:
    """Older commits touching any of F's files, newest first: the text-free floor."""

    def __init__(self, commits: dict[str, dict]):
        self.by_file: dict[str, list[tuple[float, str]]] = defaultdict(list)
        for cid, c in commits.items():
            for f in c["files"]:
                self.by_file[f].append((c["time"], cid))
        for v in self.by_file.values():
            v.sort(reverse=True)

    def rank(self, p: Pair) -> list[str]:
        cands: dict[str, float] = {}
        for f in p.files:
            for t, cid in self.by_file.get(f, []):
                if t <= p.as_of and cid != p.fix:
                    cands[cid] = max(cands.get(cid, 0), t)
        return [c for c, _ in sorted(cands.items(), key=lambda kv: -kv[1])][:K]


def _canonical(ids: list[str], pr_commit: dict[str, str], fix: str) -> list[str]:
    """A PR hit counts as its commit; duplicates (a PR and its commit) take one slot; F never counts."""
    out: dict[str, None] = {}
    for i in ids:
        c = pr_commit.get(i, i)
        if c != fix:
            out.setdefault(c)
    return list(out)


def _metrics(ranked: list[list[str]], pairs: list[Pair], tokens: dict[str, int]) -> dict:
    hit1, r5, r10, rr, toks, found = [], [], [], [], [], 0
    for r, p in zip(ranked, pairs):
        g = set(p.origins)
        hit1.append(1.0 if r[:1] and r[0] in g else 0.0)
        r5.append(len(g & set(r[:5])) / len(g))
        r10.append(len(g & set(r[:10])) / len(g))
        first = next((i for i, x in enumerate(r) if x in g), None)
        rr.append(0.0 if first is None else 1.0 / (first + 1))
        if first is not None:
            found += 1
            toks.append(sum(tokens.get(x, 0) for x in r[: first + 1]))
    n = max(1, len(pairs))
    return {
        "hit@1": float(np.mean(hit1)) if hit1 else 0.0,
        "recall@5": float(np.mean(r5)) if r5 else 0.0,
        "recall@10": float(np.mean(r10)) if r10 else 0.0,
        "mrr": float(np.mean(rr)) if rr else 0.0,
        f"found@{K}": found / n,
        "tokens_to_origin_mean": float(np.mean(toks)) if toks else None,
    }


def _config(eng: Engine, p: Pair, overrides: dict):
    o = dict(overrides)
    files = o.pop("files", tuple(p.files))
    return eng.config.replace(limit=K, result_types=RESULT_TYPES, as_of=p.as_of, files=tuple(files or ()), **o)


def run_history_bench(
    repo_dir: str | Path,
    eng: Engine,
    *,
    systems: dict[str, dict] | None = None,
    learning: bool = True,
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Ingest (incrementally) ``repo_dir`` into ``eng``'s store, extract pairs, run every system."""
    systems = systems or SYSTEMS
    repo = GitRepo(repo_dir)
    t0 = time.perf_counter()
    ingest = sync_source(eng, "git", repo.path, progress=progress)
    ingest_s = time.perf_counter() - t0
    hist = _History.read(eng)
    pairs, pstats = extract_pairs(eng, repo, hist)
    main = [p for p in pairs if p.kind != "revert"]
    reverts = [p for p in pairs if p.kind == "revert"]
    if limit:
        main, reverts = main[:limit], reverts[:limit]
    if not main:
        raise InvalidArgument(f"{repo_dir}: no fix → origin pairs found (no `Fixes:` trailers or follow-up references)")
    commits, pr_commit = hist.commits, hist.pr_commit
    tokens = {cid: c["tokens"] for cid, c in commits.items()}
    floor = _PathsFloor(commits)
    qvecs = eng.embedder.embed([p.query for p in main + reverts])
    qv = dict(zip([id(p) for p in main + reverts], qvecs))
    out_systems: dict[str, dict[str, dict]] = {}
    per_pair: dict[str, dict[str, int | None]] = defaultdict(dict)
    total, done = len(systems) * (len(main) + len(reverts)), 0
    for name, overrides in systems.items():
        for group, plist in (("main", main), ("reverts", reverts)):
            ranked, lat = [], []
            for p in plist:
                if name == "paths":
                    r = floor.rank(p)
                else:
                    t = time.perf_counter()
                    res = eng.search(p.query, config=_config(eng, p, overrides), qvec=qv[id(p)], record=False)
                    lat.append((time.perf_counter() - t) * 1000)
                    r = [h.id for h in res.hits]
                r = _canonical(r, pr_commit, p.fix)
                ranked.append(r)
                if group == "main":
                    g = set(p.origins)
                    per_pair[p.fix][name] = next((i + 1 for i, x in enumerate(r) if x in g), None)
                done += 1
                if progress:
                    progress(f"searching ({name})", done, total)
            m = _metrics(ranked, plist, tokens)
            if lat:
                m["latency_ms_p50"] = float(np.median(lat))
                m["latency_ms_p95"] = float(np.percentile(lat, 95))
            out_systems.setdefault(name, {})[group] = m
    result = {
        "repo": repo.name,
        "commits": sum(1 for c in commits),
        "embedder": eng.embedder.model_id,
        "pairs": len(main),
        "revert_pairs": len(reverts),
        "pair_stats": pstats,
        "ingest": {k: ingest[k] for k in ("new_nodes", "embedded", "edges_written", "seconds") if k in ingest},
        "ingest_seconds": round(ingest_s, 2),
        "systems": {n: v["main"] for n, v in out_systems.items()},
        "reverts": {n: v["reverts"] for n, v in out_systems.items()},
        "per_pair": [
            {
                "fix": p.fix,
                "kind": p.kind,
                "subject": p.subject,
                "query": p.query,
                "origins": p.origins,
                "as_of": p.as_of,
                "rank": per_pair[p.fix],
            }
            for p in main
        ],
    }
    if learning and "ngr" in systems:
        from .history_learning import _learning  # after this module is loaded: it imports its helpers

        result["learning"] = _learning(eng, main, qv, pr_commit, tokens, progress)
    return result


def markdown_table(result: dict) -> str:
    cols = ["hit@1", "recall@5", "recall@10", "mrr", f"found@{K}", "tokens_to_origin_mean", "latency_ms_p50"]
    lines = [
        f"**{result['repo']}** — {result['pairs']} fix → origin questions "
        f"({', '.join(f'{k} {v}' for k, v in result['pair_stats']['by_kind'].items())}), "
        f"{result['commits']} commits, encoder `{result['embedder']}`",
        "",
        "| system | " + " | ".join(cols) + " |",
        "|---" * (len(cols) + 1) + "|",
    ]
    for name, m in result["systems"].items():
        cells = []
        for c in cols:
            v = m.get(c)
            cells.append(
                "–"
                if v is None
                else (f"{v:.3f}" if c in cols[:5] else f"{v:.0f}" if c.startswith("tokens") else f"{v:.1f}")
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)
