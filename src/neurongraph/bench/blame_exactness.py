"""How exact the engine's stored-hunk blame is (issue 24, §3): ``eng.blame`` against ``git blame``.

The engine answers "which commit last touched this line as of T" from the -U0 hunks the git ingest
stored, with no repository at hand; git answers it from the objects.  The cases are real: old-side lines
the benchmark's fixes delete or modify (non-blank), sampled with a seed, each asked of the engine as of the
parent commit (``base``: the stored hunks walked along its first-parent ancestry, what a search with the
fix's working set does), and of git at the parent.  Also reported: the engine asked by time only, as of
the parent's commit time and as of the question's time.  Time is not topology: where the fix (a patch of
a ``git am`` series, a mirror's sync batch) shares its parent's commit second, "as of that second"
already includes the fix and one second earlier excludes the parent.  Agreement is reported against
``git blame -w`` (the issue's reference: whitespace-only rewrites do not count as touching a line) and
plain ``git blame`` (what hunks can see), with the cost of both per file asked.
"""

from __future__ import annotations

import random
import time
from collections import defaultdict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..engine import Engine
from .szz import blame_lines

if TYPE_CHECKING:
    from .history_common import Prepared

__all__ = ["blame_exactness"]


def blame_exactness(
    prep: Prepared,
    eng: Engine,
    *,
    n: int = 500,
    seed: int = 0,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Sample ``n`` (fix, file, line) cases and compare the engine's blame with git's."""
    commits = prep.hist.commits
    cases = []
    for p in prep.groups.get("main", []):
        for path, lines in prep.diffs[id(p)].lines.items():
            cases += [(p, path, ln) for ln in lines]
    rng = random.Random(seed)
    picked = rng.sample(cases, min(n, len(cases)))
    by_file: dict[tuple[int, str], list[int]] = defaultdict(list)
    pair_of = {}
    for p, path, ln in picked:
        by_file[(id(p), path)].append(ln)
        pair_of[id(p)] = p
    agree_w = agree = unknown = failed = agree_q = agree_t = 0
    distinct = [0, 0]  # cases whose fix is at least a second after its parent, and their agreement
    t_eng = t_git = 0.0
    mismatches: list[dict[str, Any]] = []
    for k, ((pid, path), lines) in enumerate(sorted(by_file.items(), key=lambda kv: (kv[0][1], kv[1]))):
        p = pair_of[pid]
        parent = commits[p.fix]["parents"][0]
        parent_time = commits.get("commit:" + parent, {}).get("time", p.as_of)
        lines = sorted(set(lines))
        t = time.perf_counter()
        got = eng.blame(path, lines, base=parent)
        t_eng += time.perf_counter() - t
        got_t = eng.blame(path, lines, as_of=parent_time)
        got_q = eng.blame(path, lines, as_of=p.as_of) if p.as_of != parent_time else got_t
        t = time.perf_counter()
        ref_w = blame_lines(prep.repo, parent, path, lines, ignore_ws=True)
        t_git += time.perf_counter() - t
        ref = blame_lines(prep.repo, parent, path, lines)
        if ref_w is None or ref is None:
            failed += len(lines)
            continue
        for ln, g, gt, gq in zip(lines, got, got_t, got_q):
            want_w, want = "commit:" + ref_w.get(ln, ""), "commit:" + ref.get(ln, "")
            agree_q += gq == want_w
            agree_t += gt == want_w
            agree_w += g == want_w
            agree += g == want
            unknown += g is None
            if p.time > parent_time:
                distinct[0] += 1
                distinct[1] += g == want_w
            if g != want_w and len(mismatches) < 20:
                mismatches.append({"fix": p.fix, "path": path, "line": ln, "engine": g, "git_blame_w": want_w})
        if progress:
            progress("blame exactness", k + 1, len(by_file))
    asked = sum(len(v) for v in by_file.values()) - failed
    files = max(1, len(by_file))
    return {
        "cases": asked,
        "files_asked": len(by_file),
        "git_failed": failed,
        "seed": seed,
        "agree_git_blame_w": agree_w / max(1, asked),
        "agree_git_blame": agree / max(1, asked),
        "agree_git_blame_w_parent_time": agree_t / max(1, asked),
        "agree_git_blame_w_question_time": agree_q / max(1, asked),
        "engine_unknown": unknown / max(1, asked),
        "distinct_second_cases": distinct[0],
        "agree_distinct_second": distinct[1] / max(1, distinct[0]),
        "engine_ms_per_file": t_eng * 1000 / files,
        "git_ms_per_file": t_git * 1000 / files,
        "mismatch_examples": mismatches,
    }
