"""``ngr bench code``: "which commit introduced X?" for identifiers sampled from the code (issue 24, §4).

What ``git log -S X`` answers in a second must be what a default search answers first.  The identifiers
are sampled from the files at HEAD, seeded: distinctive ones only (at least 6 characters, ``snake_case``
or ``camelCase``, in at most a few files), since a name in every file has no single origin worth asking
about.  Gold is git's own answer: the oldest commit in ``git log -S X`` (the first commit, in git log's
order, whose diff changes the number of occurrences of X in some file — pickaxe semantics).  One
``git log -p -U0 --reverse`` pass finds it for every sampled identifier at once, with the same counting;
a few are checked against ``git log -S`` itself, and the agreement is reported.  Each identifier is asked
twice — ``which commit introduced X`` and plain ``X`` — with exactly what ``ngr search`` runs with no flags.
"""

from __future__ import annotations

import random
import re
import subprocess
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from ..engine import Engine
from ..errors import InvalidArgument
from ..ingest import sync_source
from ..ingest.git import GitRepo
from ..ingest.git_cmd import git_argv, git_env

__all__ = ["head_identifiers", "sample_identifiers", "introducing_commits", "run_code_bench", "markdown_table"]

K = 20
WORDINGS = {"question": "which commit introduced {x}", "bare": "{x}"}
MIN_LEN = 6
MAX_FILES = 3
MAX_BLOB = 1_000_000  # bytes; bigger files (generated tables, vendored blobs) are not sampled from
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CAMEL = re.compile(r"[a-z0-9][A-Z]")
_SEP = "\x01"


def _tokens(text: str) -> set[str]:
    """Whole identifiers of a source text, as the engine's code tokenizer sees them when it exists."""
    try:
        from ..index.code_terms import identifiers  # the ingest's own tokenizer (issue 24, §1)
    except ImportError:  # pragma: no cover - before the code tokenizer lands
        return set(_IDENT.findall(text))
    return {t for t in identifiers(text) if _IDENT.fullmatch(t)}


def distinctive(x: str) -> bool:
    """Long enough and shaped like a program name (snake_case or camelCase), not a plain word."""
    return len(x) >= MIN_LEN and ("_" in x.strip("_") or _CAMEL.search(x) is not None) and not x[0].isdigit()


def head_identifiers(repo: GitRepo, rev: str = "HEAD", max_files: int = MAX_FILES) -> dict[str, int]:
    """Distinctive identifiers in the text files at ``rev`` and how many files hold each (≤ ``max_files``)."""
    listing = repo._git("ls-tree", "-r", "-z", "-l", rev).stdout.split(b"\0")
    blobs: list[str] = []
    for row in listing:
        meta, _, _path = row.partition(b"\t")
        parts = meta.split()
        if len(parts) == 4 and parts[1] == b"blob" and parts[3].isdigit() and int(parts[3]) <= MAX_BLOB:
            blobs.append(parts[2].decode())
    if not blobs:
        return {}
    raw = repo._git("cat-file", "--batch", input=("\n".join(blobs) + "\n").encode()).stdout
    files: dict[str, int] = {}
    pos = 0
    for _ in blobs:
        nl = raw.index(b"\n", pos)
        header = raw[pos:nl].split()
        if len(header) != 3:  # "<sha> missing": a partial clone
            pos = nl + 1
            continue
        size = int(header[2])
        body = raw[nl + 1 : nl + 1 + size]
        pos = nl + 1 + size + 1
        if b"\0" in body[:8000]:  # binary
            continue
        for t in _tokens(body.decode("utf-8", "replace")):
            if distinctive(t):
                files[t] = files.get(t, 0) + 1
    return {t: n for t, n in files.items() if n <= max_files}


def sample_identifiers(cands: Iterable[str], n: int, seed: int) -> list[str]:
    pool = sorted(cands)
    return sorted(random.Random(seed).sample(pool, min(n, len(pool))))


def introducing_commits(repo: GitRepo, idents: list[str], rev: str = "HEAD") -> dict[str, str | None]:
    """Per identifier, the oldest commit of ``git log -S X rev`` — for all of them in one streamed pass
    over ``git log --reverse -p -U0`` (same defaults as ``git log -S``: no merge diffs, the configured
    rename detection): the first commit where, in some file, X occurs a different number of times in
    the removed lines than in the added ones."""
    left = set(idents)
    found: dict[str, str | None] = dict.fromkeys(idents)
    if not left:
        return found
    pat = re.compile("|".join(re.escape(x) for x in sorted(left, key=len, reverse=True)))
    cmd = git_argv(repo.path, "log", "--reverse", "-p", "-U0", f"--format={_SEP}%H", rev, "--")  # config disarmed
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=git_env())
    assert proc.stdout is not None
    sha = ""
    delta: dict[str, int] = {}
    in_hunk = False

    def flush() -> None:
        for x, d in delta.items():
            if d and x in left:
                found[x] = sha
                left.discard(x)
        delta.clear()

    try:
        for raw in proc.stdout:
            line = raw.decode("utf-8", "replace")
            if line.startswith(_SEP):
                flush()
                sha, in_hunk = line[1:].strip(), False
                if not left:
                    break
            elif line.startswith("diff --git "):
                flush()
                in_hunk = False
            elif line.startswith("@@"):
                in_hunk = True
            elif in_hunk and line[:1] in "+-" and pat.search(line):
                sign = 1 if line[0] == "+" else -1
                body = line[1:]
                for x in left:
                    c = body.count(x)
                    if c:
                        delta[x] = delta.get(x, 0) + sign * c
        flush()
    finally:
        proc.stdout.close()
        proc.kill()
        proc.wait()
    return found


def pickaxe_oldest(repo: GitRepo, x: str, rev: str = "HEAD") -> str | None:
    """``git log -S X --reverse --format=%H | head -1``, literally (the check of the one-pass answer)."""
    out = repo._git("log", "-S", x, "--reverse", "--format=%H", rev, "--").stdout.decode().split()
    return out[0] if out else None


def _metrics(ranks: list[int | None]) -> dict[str, float]:
    n = max(1, len(ranks))
    return {
        "rank1": sum(1 for r in ranks if r == 1) / n,
        "recall@5": sum(1 for r in ranks if r is not None and r <= 5) / n,
        "mrr": float(np.mean([0.0 if r is None else 1.0 / r for r in ranks])) if ranks else 0.0,
        f"found@{K}": sum(1 for r in ranks if r is not None) / n,
    }


def _pr_commit(eng: Engine) -> dict[str, str]:
    """A PR hit counts as the commit that merged it (the history benchmark's rule)."""
    from .history import _History

    return _History.read(eng).pr_commit


def run_code_bench(
    repo_dir: str | Path,
    eng: Engine,
    *,
    n: int = 200,
    seed: int = 0,
    check: int = 10,
    progress: Callable[[str, int, int], None] | None = None,
) -> dict[str, Any]:
    """Ingest ``repo_dir`` (incrementally), sample ``n`` identifiers, find their introducing commits,
    ask every wording with the default search, and score rank 1, recall@5 and MRR."""
    if n < 1:
        raise InvalidArgument("--n must be at least 1")
    repo = GitRepo(repo_dir)
    t0 = time.perf_counter()
    sync_source(eng, "git", repo.path, progress=progress)
    ingest_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    cands = head_identifiers(repo)
    if not cands:
        raise InvalidArgument(f"{repo_dir}: no distinctive identifiers in the files at HEAD (no source code?)")
    # sample more than asked: an identifier whose history git cannot find (a file added in a merge) is dropped
    pool = sample_identifiers(cands, min(len(cands), n * 2), seed)
    gold_all = introducing_commits(repo, pool)
    gold_s = time.perf_counter() - t0
    known = {row.id for row in eng.store.iter_nodes() if row.type == "commit"}
    sample = [x for x in pool if gold_all[x] and "commit:" + str(gold_all[x]) in known][:n]
    checked = sample[:: max(1, len(sample) // check)][:check] if check else []
    t0 = time.perf_counter()
    agree = sum(1 for x in checked if pickaxe_oldest(repo, x) == gold_all[x])
    check_s = time.perf_counter() - t0
    pr_commit = _pr_commit(eng)
    per: list[dict[str, Any]] = []
    lat: dict[str, list[float]] = {w: [] for w in WORDINGS}
    queries = [(x, w, f.format(x=x)) for x in sample for w, f in WORDINGS.items()]
    qvecs = eng.embedder.embed([q for _, _, q in queries])
    cfg = eng.config.replace(limit=K)  # `ngr search` with no flags, asked for 20 hits
    ranks: dict[tuple[str, str], int | None] = {}
    for k, ((x, w, q), qv) in enumerate(zip(queries, qvecs)):
        t = time.perf_counter()
        res = eng.search(q, config=cfg, qvec=qv, record=False)
        lat[w].append((time.perf_counter() - t) * 1000)
        ids = list(dict.fromkeys(pr_commit.get(h.id, h.id) for h in res.hits))
        gold = "commit:" + str(gold_all[x])
        ranks[(x, w)] = ids.index(gold) + 1 if gold in ids else None
        if progress:
            progress("searching (code)", k + 1, len(queries))
    for x in sample:
        per.append(
            {"identifier": x, "files_at_head": cands[x], "gold": gold_all[x]}
            | {"rank": {w: ranks[(x, w)] for w in WORDINGS}}
        )
    return {
        "repo": repo.name,
        "embedder": eng.embedder.model_id,
        "identifiers": len(sample),
        "candidates": len(cands),
        "seed": seed,
        "sampling": f"length >= {MIN_LEN}, snake_case or camelCase, in <= {MAX_FILES} files at HEAD",
        "gold_check": {"checked": len(checked), "agree_with_git_log_S": agree, "seconds": round(check_s, 2)},
        "seconds": {"ingest": round(ingest_s, 2), "sample_and_gold": round(gold_s, 2)},
        "wordings": {
            w: {**_metrics([ranks[(x, w)] for x in sample]), "latency_ms_p50": float(np.median(lat[w]))}
            for w in WORDINGS
            if lat[w]
        },
        "per_identifier": per,
    }


def markdown_table(res: dict[str, Any]) -> str:
    lines = [
        f"**{res['repo']}** — {res['identifiers']} identifiers ({res['sampling']}; seed {res['seed']}), "
        f"gold = oldest `git log -S` commit ({res['gold_check']['agree_with_git_log_S']}/"
        f"{res['gold_check']['checked']} checked against git itself), encoder `{res['embedder']}`",
        "",
        "| wording | rank 1 | R@5 | MRR | found@20 | p50 ms |",
        "|---|---|---|---|---|---|",
    ]
    for w, m in res["wordings"].items():
        lines.append(
            f"| `{WORDINGS[w].format(x='X')}` | {m['rank1']:.3f} | {m['recall@5']:.3f} | {m['mrr']:.3f} | "
            f"{m[f'found@{K}']:.3f} | {m['latency_ms_p50']:.1f} |"
        )
    return "\n".join(lines)
