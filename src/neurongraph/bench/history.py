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
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import Engine
from ..errors import InvalidArgument
from ..ingest import sync_source
from ..ingest.git import GitRepo
from ..ingest.refs import strip_refs
from .szz import FixDiff, SzzCache, read_diffs

__all__ = [
    "Pair",
    "Prepared",
    "prepare",
    "extract_pairs",
    "run_history_bench",
    "SYSTEMS",
    "DIFF_SYSTEMS",
    "markdown_table",
]

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
    "ngr-as-user": dict(result_types=()),  # exactly `ngr search` with no flags (issue 25): no type restriction
}
INPUTS = ("text", "diff")
# the diff protocol (--input diff): the question is the subject plus the fix's own diff as `changes`;
# "szz" is computed from git blame (bench/szz.py), "szz-then-ngr-text" composed, "ngr-text" is the text protocol
DIFF_SYSTEMS: dict[str, dict] = {
    "szz": {},
    # the same blamed commits, newest first (R-SZZ: "the most recent blamed commit"), the stronger plain-blame rule
    "szz-newest": {},
    # szz's candidates a search as of the question's time can see: the protocol hides the parent's own second
    # (git am series, mirror sync batches), git blame at the parent does not
    "szz-visible": {},
    "ngr": {},
    "ngr-text": dict(changes=None),
    "szz-then-ngr-text": {},
    "ngr-no-blame": dict(blame_weight=0.0),
    "ngr-no-code": dict(code_weight=0.0),
    "ngr-git-blame": dict(blame_source="git"),  # line provenance from the repository's git blame (exact, slower)
    "ngr-as-user": dict(result_types=()),
    "ngr-as-user-text": dict(result_types=(), changes=None),
}


@dataclass
class Pair:
    """One benchmark question: a fix and the earlier commit(s) it names, the gold the ranking is scored on."""

    fix: str  # commit id of F
    origins: list[str]  # commit ids of O (gold)
    kind: str  # "fixes" | "follow_up" | "revert"
    time: float  # F's commit time
    as_of: float  # F's parent's commit time, and at least one second before F's
    subject: str
    files: list[str]
    query: str = ""
    gold: list[list[str]] = field(default_factory=list)  # per origin, the unit ids that count as it (_Units.gold)

    def accepted(self) -> list[list[str]]:
        """Per origin, the ids a ranking may name for it (the origin itself when no units were read)."""
        return self.gold or [[o] for o in self.origins]


@dataclass
class _History:
    """What the benchmark reads from an ingested store, once: every commit (metadata it needs), the
    typed repair/merge edges by relation as node-id pairs, each PR's commit (the oldest one that
    merged it, the same mapping for the gold origins and for scoring PR hits), and the change units:
    a PR's branch commits (``part_of``) and every branch commit's landing merge (``landed``)."""

    commits: dict[str, dict]
    edges: dict[str, list[tuple[str, str]]]
    pr_commit: dict[str, str]
    pr_of: dict[str, str] = field(default_factory=dict)  # commit -> the PR it merged or belongs to
    landed: dict[str, str] = field(default_factory=dict)  # branch commit -> the mainline merge that landed it

    RELS = ("fixes", "follows_up", "reverts", "merged_in", "part_of")

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
        pr_of: dict[str, str] = {}
        for c, pr in edges["merged_in"] + edges["part_of"]:  # the merge itself first: it names its own PR
            if c in commits and pr in pr_commit:
                pr_of.setdefault(c, pr)
        return cls(commits, edges, pr_commit, pr_of, _landing_merges(commits))


def _landing_merges(commits: dict[str, dict]) -> dict[str, str]:
    """Each branch commit's landing merge: the first-parent chain of the newest commit no other commit has
    as a parent is the mainline; a merge on it lands what its second parents reach that is not landed yet."""
    by_sha = {c["sha"]: cid for cid, c in commits.items()}
    is_parent = {p for c in commits.values() for p in c["parents"]}
    tips = [cid for cid, c in commits.items() if c["sha"] not in is_parent]
    if not tips:
        return {}
    cur: str | None = max(tips, key=lambda cid: commits[cid]["time"])
    chain: list[str] = []
    seen: set[str] = set()
    while cur is not None and cur not in seen:
        seen.add(cur)
        chain.append(cur)
        ps = commits[cur]["parents"]
        cur = by_sha.get(ps[0]) if ps else None
    landed: dict[str, str] = {}
    on_main = set(chain)
    for m in reversed(chain):  # oldest first: a commit is landed by the first merge that reaches it
        stack = [by_sha[p] for p in commits[m]["parents"][1:] if p in by_sha]
        while stack:
            x = stack.pop()
            if x in landed or x in on_main:
                continue
            landed[x] = m
            stack.extend(by_sha[p] for p in commits[x]["parents"] if p in by_sha)
    return landed


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


class _Units:
    """A change is one unit: a PR, the commit that merged it (or its squash commit) and the commits on its
    branch are one answer, scored as the PR's commit (``pr_commit``); a branch commit's landing merge counts
    for it too.  ``how`` says which of them a hit was."""

    def __init__(self, hist: _History):
        self.pr_commit, self.pr_of, self.landed = hist.pr_commit, hist.pr_of, hist.landed

    def unit(self, hid: str) -> str:
        pr = hid if hid.startswith("pr:") else self.pr_of.get(hid)
        return self.pr_commit.get(pr, hid) if pr else hid

    def gold(self, origins: list[str]) -> list[list[str]]:
        """Per origin, the unit ids a ranking may name for it: its unit and its landing merge's."""
        return [
            list(dict.fromkeys([self.unit(o)] + ([self.unit(self.landed[o])] if o in self.landed else [])))
            for o in origins
        ]

    def how(self, hid: str, origins: list[str]) -> str:
        """What a hit of the gold's unit was: the gold ``commit`` itself, its ``pr``, the ``merge`` that
        landed it, or a ``branch`` commit of the gold's PR."""
        if hid in origins:
            return "commit"
        if hid.startswith("pr:"):
            return "pr"
        if any(hid == self.landed.get(o) or hid == self.pr_commit.get(self.pr_of.get(o, ""), "") for o in origins):
            return "merge"
        return "branch"


def _canonical(
    ids: list[str], units: _Units | dict[str, str], fix: str, raw: dict[str, str] | None = None
) -> list[str]:
    """Each hit as its change unit (a PR, its merge and its branch commits take one slot, the first one
    seen; a plain ``{pr: commit}`` dict maps PR hits only); F never counts.  ``raw`` collects unit -> the
    hit id that stood for it."""
    out: dict[str, None] = {}
    for i in ids:
        c = units.get(i, i) if isinstance(units, dict) else units.unit(i)
        if c != fix and i != fix and c not in out:
            out[c] = None
            if raw is not None:
                raw[c] = i
    return list(out)


def _metrics(ranked: list[list[str]], pairs: list[Pair], tokens: dict[str, int]) -> dict:
    hit1, r5, r10, rr, toks, found = [], [], [], [], [], 0
    for r, p in zip(ranked, pairs):
        acc = p.accepted()
        g = {u for a in acc for u in a}
        hit1.append(1.0 if r[:1] and r[0] in g else 0.0)
        r5.append(sum(1 for a in acc if set(a) & set(r[:5])) / len(acc))
        r10.append(sum(1 for a in acc if set(a) & set(r[:10])) / len(acc))
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


def _config(eng: Engine, p: Pair, overrides: dict, changes=None):
    """The search of one question: the engine's defaults, the protocol's fields, then ``overrides``
    (``result_types=()`` is the unrestricted search a user gets; ``changes=None`` the text protocol)."""
    o = dict(overrides)
    files = o.pop("files", tuple(p.files))
    rt = o.pop("result_types", RESULT_TYPES)
    ws = o.pop("changes", changes)
    extra = {"changes": ws} if ws is not None else {}
    return eng.config.replace(limit=K, result_types=rt, as_of=p.as_of, files=tuple(files or ()), **extra, **o)


@dataclass
class Prepared:
    """One history made ready to search many configurations (the benchmark, the leave-one-out grid):
    the question groups, their query vectors, and for the diff protocol each fix's working set (its own
    first-parent diff) and its B-SZZ ranking.  Rankings are memoised per configuration."""

    repo: GitRepo
    input: str
    hist: _History
    groups: dict[str, list[Pair]]
    qv: dict[int, np.ndarray]
    changes: dict[int, Any] = field(default_factory=dict)
    szz: dict[int, list[str]] = field(default_factory=dict)
    diffs: dict[int, FixDiff] = field(default_factory=dict)
    stats: dict[str, Any] = field(default_factory=dict)
    _memo: dict[str, tuple[dict[str, list[list[str]]], list[float]]] = field(default_factory=dict)
    found_as: dict[str, dict[str, list[dict[str, str]]]] = field(default_factory=dict)  # key -> unit -> hit id

    @property
    def pairs(self) -> list[Pair]:
        return [p for g in self.groups.values() for p in g]

    def rank(
        self, eng: Engine, name: str, overrides: dict, progress: Callable[[str, int, int], None] | None = None
    ) -> tuple[dict[str, list[list[str]]], list[float]]:
        """Per group, each question's canonical ranking (top K) under one system, and the search latencies;
        ``found_as[key]`` keeps which hit stood for each unit (:meth:`how_found`)."""
        key = _key(name, overrides)
        if key in self._memo:
            return self._memo[key]
        units = _Units(self.hist)
        out: dict[str, list[list[str]]] = {}
        raws: dict[str, list[dict[str, str]]] = {}
        lat: list[float] = []
        if name == "szz-then-ngr-text":
            base, _ = self.rank(eng, "ngr-text", DIFF_SYSTEMS["ngr-text"])
            base_raw = self.found_as[_key("ngr-text", DIFF_SYSTEMS["ngr-text"])]
            for g, plist in self.groups.items():
                out[g], raws[g] = [], []
                for p, b, braw in zip(plist, base[g], base_raw[g]):
                    raw: dict[str, str] = {}
                    out[g].append(_canonical(self.szz.get(id(p), []), units, p.fix, raw))
                    out[g][-1] = list(dict.fromkeys(out[g][-1] + b))[:K]
                    raws[g].append(braw | raw)
            self._memo[key], self.found_as[key] = (out, lat), raws
            return out, lat
        floor = _PathsFloor(self.hist.commits) if name == "paths" else None
        total, done = len(self.pairs), 0
        for g, plist in self.groups.items():
            out[g], raws[g] = [], []
            for p in plist:
                r = floor.rank(p) if floor is not None else self._ranked(eng, name, overrides, p, lat)
                raw = {}
                out[g].append(_canonical(r, units, p.fix, raw)[:K])
                raws[g].append(raw)
                done += 1
                if progress:
                    progress(f"searching ({name})", done, total)
        self._memo[key], self.found_as[key] = (out, lat), raws
        return out, lat

    def _ranked(self, eng: Engine, name: str, overrides: dict, p: Pair, lat: list[float]) -> list[str]:
        """One question's hit ids under one system (B-SZZ's from git blame, the others searched)."""
        szz = self.szz.get(id(p), [])
        if name == "szz":
            return szz
        if name == "szz-newest":  # the blamed commits newest first, whatever their line counts
            return sorted(szz, key=lambda c: -self.hist.commits.get(c, {}).get("time", 0.0))
        if name == "szz-visible":  # only what a search as of p.as_of can see (same corpus as ngr)
            return [c for c in szz if self.hist.commits.get(c, {}).get("time", 0) <= p.as_of]
        t = time.perf_counter()
        cfg = _config(eng, p, overrides, self.changes.get(id(p)))
        res = eng.search(p.query, config=cfg, qvec=self.qv[id(p)], record=False)
        lat.append((time.perf_counter() - t) * 1000)
        return [h.id for h in res.hits]

    def how_found(self, name: str, overrides: dict, group: str) -> list[str | None]:
        """Per question of ``group``, what the first hit of the gold's unit was under a ranked system:
        ``commit`` / ``merge`` / ``pr`` / ``branch`` (:class:`_Units`), None when no hit was."""
        ranked, _ = self._memo[_key(name, overrides)]
        raws = self.found_as[_key(name, overrides)][group]
        units = _Units(self.hist)
        out: list[str | None] = []
        for r, raw, p in zip(ranked[group], raws, self.groups[group]):
            g = {u for a in p.accepted() for u in a}
            first = next((u for u in r if u in g), None)
            out.append(None if first is None else units.how(raw.get(first, first), p.origins))
        return out


def _key(name: str, overrides: dict) -> str:
    return name + repr(sorted(overrides.items(), key=lambda kv: kv[0]))


def prepare(
    repo_dir: str | Path,
    eng: Engine,
    *,
    input: str = "text",
    limit: int | None = None,
    szz_cache: str | Path | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Prepared:
    """Ingest (incrementally) ``repo_dir`` into ``eng``'s store, extract the questions, embed them, and for
    ``input="diff"`` read every fix's diff (one git process) and blame it (B-SZZ, cached per fix)."""
    if input not in INPUTS:
        raise InvalidArgument(f"--input must be one of {INPUTS}, got {input!r}")
    repo = GitRepo(repo_dir)
    t0 = time.perf_counter()
    ingest = sync_source(eng, "git", repo.path, progress=progress)
    stats: dict[str, Any] = {
        "ingest": {k: ingest[k] for k in ("new_nodes", "embedded", "edges_written", "seconds") if k in ingest},
        "ingest_seconds": round(time.perf_counter() - t0, 2),
    }
    hist = _History.read(eng)
    pairs, stats["pair_stats"] = extract_pairs(eng, repo, hist)
    units = _Units(hist)
    for p in pairs:  # a change is one unit: the origin's PR, its merge or a branch commit of it count as found
        p.gold = units.gold(p.origins)
    stats["pair_stats"]["origins_in_a_larger_unit"] = sum(1 for p in pairs if p.gold != [[o] for o in p.origins])
    main = [p for p in pairs if p.kind != "revert"]
    reverts = [p for p in pairs if p.kind == "revert"]
    if limit:
        main, reverts = main[:limit], reverts[:limit]
    if not main:
        raise InvalidArgument(f"{repo_dir}: no fix → origin pairs found (no `Fixes:` trailers or follow-up references)")
    qvecs = eng.embedder.embed([p.query for p in main + reverts])
    qv = dict(zip([id(p) for p in main + reverts], qvecs))
    # origins in the fix's own second (a sync batch): no search as of p.as_of can find them
    stats["origin_invisible_at_as_of"] = sum(
        1 for p in main if all(hist.commits[o]["time"] > p.as_of for o in p.origins)
    )
    if input == "text":
        return Prepared(repo, input, hist, {"main": main, "reverts": reverts}, qv, stats=stats)
    prep = Prepared(repo, input, hist, {}, qv, stats=stats)
    _read_changes(prep, eng, main + reverts, szz_cache, progress)
    with_old = [p for p in main if prep.diffs[id(p)].old_lines]
    prep.groups = {
        "main": with_old,
        "pure_additions": [p for p in main if not prep.diffs[id(p)].old_lines],
        "reverts": reverts,
    }
    if not with_old:
        raise InvalidArgument(f"{repo_dir}: every fix is a pure addition (nothing for blame to read)")
    return prep


def _read_changes(prep: Prepared, eng: Engine, plist: list[Pair], szz_cache, progress) -> None:
    """Each fix's own diff as its working set, and its B-SZZ ranking at its first parent."""
    from ..retrieval.changes import WorkingSet  # the diff protocol only

    commits = prep.hist.commits
    t0 = time.perf_counter()
    diffs = read_diffs(prep.repo, [commits[p.fix]["sha"] for p in plist])
    read_s = time.perf_counter() - t0
    times = {c["sha"]: c["time"] for c in commits.values()}
    cache = SzzCache(szz_cache)
    refused: list[str] = []
    t0 = time.perf_counter()
    for k, p in enumerate(plist):
        c = commits[p.fix]
        fd = diffs.get(c["sha"]) or FixDiff(c["sha"], "")
        prep.diffs[id(p)] = fd
        try:
            # the agent's working tree is the fix's parent: its lines are read as of that commit (WorkingSet.base)
            prep.changes[id(p)] = WorkingSet.from_diff(fd.text).with_base(c["parents"][0]) if fd.text.strip() else None
        except InvalidArgument as exc:  # e.g. a vendor import over the working set's file cap
            prep.changes[id(p)] = None
            refused.append(f"{c['sha'][:12]}: {exc}")
        prep.szz[id(p)] = ["commit:" + s for s, _ in cache.rank(prep.repo, fd, c["parents"][0], times)]
        if progress:
            progress("blaming (szz)", k + 1, len(plist))
    cache.save()
    sizes = [
        sum(1 for ln in d.text.split("\n") if ln[:1] in "+-" and ln[:3] not in ("+++", "---")) for d in diffs.values()
    ]
    prep.stats["diff_protocol"] = {
        "diffs_read_seconds": round(read_s, 3),
        "szz_seconds": round(time.perf_counter() - t0, 2),
        "szz_blamed_now": cache.computed,
        "szz_blame_seconds": round(cache.seconds, 2),
        "changed_lines_p50": float(np.median(sizes)) if sizes else 0.0,
        "changed_lines_p90": float(np.percentile(sizes, 90)) if sizes else 0.0,
        "working_set_refused": refused,
    }


def run_history_bench(
    repo_dir: str | Path,
    eng: Engine,
    *,
    systems: dict[str, dict] | None = None,
    learning: bool = True,
    limit: int | None = None,
    input: str = "text",
    szz_cache: str | Path | None = None,
    exactness: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict:
    """Ingest (incrementally) ``repo_dir`` into ``eng``'s store, extract pairs, run every system of the
    protocol (``input``: "text" = subject + paths, "diff" = subject + the fix's own diff)."""
    prep = prepare(repo_dir, eng, input=input, limit=limit, szz_cache=szz_cache, progress=progress)
    systems = systems or (SYSTEMS if input == "text" else DIFF_SYSTEMS)
    commits = prep.hist.commits
    tokens = {cid: c["tokens"] for cid, c in commits.items()}
    out_systems: dict[str, dict[str, dict]] = {}
    per_pair: dict[str, dict[str, int | None]] = defaultdict(dict)
    found_as: dict[str, dict[str, str]] = defaultdict(dict)  # fix -> system -> how, when not the commit itself
    for name, overrides in systems.items():
        ranked, lat = prep.rank(eng, name, overrides, progress)
        for group, plist in prep.groups.items():
            m = _metrics(ranked[group], plist, tokens)
            how = prep.how_found(name, overrides, group)
            # what the hit at rank 1 was, when it was the origin's unit: the commit, its merge, its PR, a branch commit
            m["hit@1_as"] = {
                k: sum(
                    1
                    for r, h, p in zip(ranked[group], how, plist)
                    if h == k and r[:1] and any(r[0] in a for a in p.accepted())
                )
                for k in ("commit", "merge", "pr", "branch")
            }
            if lat:
                m["latency_ms_p50"] = float(np.median(lat))
                m["latency_ms_p95"] = float(np.percentile(lat, 95))
            out_systems.setdefault(name, {})[group] = m
            if group != "reverts":
                for r, p, h in zip(ranked[group], plist, how):
                    g = {u for a in p.accepted() for u in a}
                    per_pair[p.fix][name] = next((i + 1 for i, x in enumerate(r) if x in g), None)
                    if h not in (None, "commit"):
                        found_as[p.fix][name] = h
    main = prep.groups["main"]
    asked = [p for g, pl in prep.groups.items() if g != "reverts" for p in pl]
    result = {
        "repo": prep.repo.name,
        "input": input,
        "commits": len(commits),
        "embedder": eng.embedder.model_id,
        "pairs": len(main),
        "revert_pairs": len(prep.groups["reverts"]),
        "asked_by_kind": {k: sum(1 for p in asked if p.kind == k) for k in ("fixes", "follow_up")},
        **prep.stats,
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
            | ({"found_as": found_as[p.fix]} if found_as.get(p.fix) else {})
            | ({"pure_addition": not prep.diffs[id(p)].old_lines} if input == "diff" else {})
            for p in asked
        ],
    }
    if input == "diff":
        result["pure_addition_pairs"] = len(prep.groups["pure_additions"])
        result["pure_additions"] = {n: v["pure_additions"] for n, v in out_systems.items()}
        if exactness:
            from .blame_exactness import blame_exactness

            result["blame_exactness"] = blame_exactness(prep, eng, n=exactness, progress=progress)
    if learning and input == "text" and "ngr" in systems:
        from .history_learning import _learning  # after this module is loaded: it imports its helpers

        qv, pr_commit = prep.qv, prep.hist.pr_commit
        result["learning"] = _learning(eng, main, qv, pr_commit, tokens, progress)
    return result


def _rows(table: dict[str, dict], cols: list[str]) -> list[str]:
    lines = ["| system | " + " | ".join(cols) + " |", "|---" * (len(cols) + 1) + "|"]
    for name, m in table.items():
        cells = []
        for c in cols:
            v = m.get(c)
            cells.append(
                "–"
                if v is None
                else (f"{v:.3f}" if c in cols[:5] else f"{v:.0f}" if c.startswith("tokens") else f"{v:.1f}")
            )
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def markdown_table(result: dict) -> str:
    cols = ["hit@1", "recall@5", "recall@10", "mrr", f"found@{K}", "tokens_to_origin_mean", "latency_ms_p50"]
    diff = result.get("input") == "diff"
    kinds = result.get("asked_by_kind", result["pair_stats"]["by_kind"])
    lines = [
        f"**{result['repo']}** ({'subject + the fix' + chr(39) + 's diff' if diff else 'subject + paths'}) — "
        f"{result['pairs']} fix → origin questions"
        + (f" with deleted/modified lines ({result['pure_addition_pairs']} pure additions apart)" if diff else "")
        + f" ({', '.join(f'{k} {v}' for k, v in kinds.items())}), "
        f"{result['commits']} commits, encoder `{result['embedder']}`",
        "",
        *_rows(result["systems"], cols),
    ]
    found_as = {
        n: m["hit@1_as"]
        for n, m in result["systems"].items()
        if any(v for k, v in m.get("hit@1_as", {}).items() if k != "commit")
    }
    if found_as:  # a change is one unit: say what the hits at rank 1 were when not the gold commit itself
        lines += ["", "rank-1 hits of the origin's change, as found:"]
        lines += [f"- {n}: " + ", ".join(f"{k} {v}" for k, v in m.items()) for n, m in found_as.items()]
    if diff and result.get("pure_addition_pairs"):
        lines += ["", f"pure additions ({result['pure_addition_pairs']} questions):", ""]
        lines += _rows(result["pure_additions"], cols[:5])
    ex = result.get("blame_exactness")
    if ex and ex.get("cases"):
        lines += [
            "",
            f"stored-hunk blame at the fix's parent vs git blame -w there: {ex['cases']} lines, agreement "
            f"{ex['agree_git_blame_w']:.3f} (plain git blame {ex['agree_git_blame']:.3f}; by time only, as of the "
            f"parent's {ex['agree_git_blame_w_parent_time']:.3f}, the question's "
            f"{ex['agree_git_blame_w_question_time']:.3f}; fixes a second or more after their parent: "
            f"{ex['agree_distinct_second']:.3f} of {ex['distinct_second_cases']}; unknown "
            f"{ex['engine_unknown']:.3f}); cost per file: engine {ex['engine_ms_per_file']:.2f} ms, "
            f"git blame -w {ex['git_ms_per_file']:.1f} ms",
        ]
    return "\n".join(lines)
