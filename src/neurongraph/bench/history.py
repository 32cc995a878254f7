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
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import Engine
from ..errors import InvalidArgument
from ..ingest import sync_source
from ..ingest.git import GitRepo
from ..ingest.refs import strip_refs
from .history_common import TEXT_PROTOCOL, K, Pair, Prepared, _History, _metrics, _Units
from .history_common import _canonical as _canonical  # re-exported: benchmarks/ and the tests read it from here
from .history_common import _config as _config  # re-exported, as _canonical
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

MAX_QUERY_FILES = 50  # paths of F given with the question (all of them in practice; a cap for vendor imports)

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
    "ngr-text": dict(TEXT_PROTOCOL),
    "szz-then-ngr-text": {},
    "ngr-no-blame": dict(blame_weight=0.0),
    "ngr-no-code": dict(code_weight=0.0),
    "ngr-git-blame": dict(blame_source="git"),  # line provenance from the repository's git blame (exact, slower)
    "ngr-as-user": dict(result_types=()),
    "ngr-as-user-text": dict(result_types=(), changes=None),
}


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
        from .history_learning import _learning

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
