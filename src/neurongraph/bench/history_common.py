"""What ``ngr bench history`` and its companion reports share: the question, the history it is asked of,
change units, the metrics, and a history prepared to search many configurations.

history.py builds the questions and runs the systems; history_learning.py (the feedback splits) and
blame_exactness.py (stored-hunk blame against git blame) read the same questions and prepared history.
They all import this module, and none of them imports another, so each can be read and tested alone.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..engine import Engine
from ..ingest.git import GitRepo
from .szz import FixDiff

__all__ = ["K", "LEARN_SPLIT", "RESULT_TYPES", "TEXT_PROTOCOL", "Pair", "Prepared"]

K = 20  # hits every system returns (the simulated agent reads at most these)
RESULT_TYPES = ("commit", "pull_request")
LEARN_SPLIT = 0.7
TEXT_PROTOCOL: dict = {"changes": None}  # the text protocol inside the diff one: no working set


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
            base, _ = self.rank(eng, "ngr-text", TEXT_PROTOCOL)
            base_raw = self.found_as[_key("ngr-text", TEXT_PROTOCOL)]
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
