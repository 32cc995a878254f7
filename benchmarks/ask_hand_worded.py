"""Hand-worded developer questions (other words than `ngr bench ask --repo`'s templates), gold from git.

    python benchmarks/ask_hand_worded.py iproute2 .ngr/history/iproute2 STORE.db
    python benchmarks/ask_hand_worded.py mypy .ngr/history/mypy-paths-only STORE.db

Prints each question with OK/MISS and the total; the store is opened with the hashing embedder (the
answers come from the graph, not the embedder).  Scoring as the bench: ``bench.ask_git.exact``.
"""

from __future__ import annotations

import os
import subprocess
import sys

import neurongraph as ngr
from neurongraph.bench.ask_git import Question, answer_value, exact


def _git(repo: str, *args: str) -> str:
    env = {**os.environ, "TZ": "UTC", "GIT_LITERAL_PATHSPECS": "1"}
    cmd = ["git", "-C", repo, "-c", "log.mailmap=false", *args]
    return subprocess.run(cmd, capture_output=True, text=True, env=env, check=True).stdout


def _log(repo: str, *args: str) -> set[str]:
    return set(_git(repo, "log", "--format=%H", *args).split())


def _year(y: str, *rest: str) -> tuple[str, ...]:
    return (f"--since-as-filter={y} 00:00:00", f"--until={rest[0] if rest else y} 23:59:59")


NM = ("--no-merges", "--full-history")


def _squash(repo: str, n: int) -> str:
    return next(ln.split()[0] for ln in _git(repo, "log", "--format=%H %s").splitlines() if ln.endswith(f"(#{n})"))


QUESTIONS = {
    "iproute2": [
        (
            "what changed in ip/iproute.c during 2021?",
            "commits",
            lambda r: _log(r, *NM, *_year("2021-01-01", "2021-12-31"), "--", "ip/iproute.c"),
        ),
        (
            "who was the last person to modify tc/q_netem.c",
            "author",
            lambda r: _git(r, "log", "-1", *NM, "--format=%an", "--", "tc/q_netem.c").strip(),
        ),
        ("number of commits under the bridge directory", "count", lambda r: len(_log(r, *NM, "--", "bridge/"))),
        (
            "how many changes did Stephen Hemminger make in 2019",
            "count",
            lambda r: len(_log(r, "-F", "--author=Stephen Hemminger <", *_year("2019-01-01", "2019-12-31"))),
        ),
        ("give me the 4 newest commits", "commits", lambda r: _log(r, "-4")),
        (
            "what got committed from 2020-03-01 through 2020-03-07",
            "commits",
            lambda r: _log(r, *_year("2020-03-01", "2020-03-07")),
        ),
        ("who wrote 2cd0578fcb", "author", lambda r: _git(r, "log", "-1", "--format=%an", "2cd0578fcb").strip()),
        (
            "when did lib/json_print.c get added",
            "commits",
            lambda r: _log(r, *NM, "--no-renames", "--diff-filter=A", "--", "lib/json_print.c"),
        ),
        (
            "how many commits in total touched man/man8/ in 2015?",
            "count",
            lambda r: len(_log(r, *NM, *_year("2015-01-01", "2015-12-31"), "--", "man/man8/")),
        ),
        (
            "list David Ahern's commits from March 2018",
            "commits",
            lambda r: _log(r, "-F", "--author=David Ahern <", *_year("2018-03-01", "2018-03-31")),
        ),
        (
            "the 3 most recent changes to ip/ipaddress.c",
            "commits",
            lambda r: _log(r, "-3", *NM, "--", "ip/ipaddress.c"),
        ),
        (
            "how many commits were there between 2010 and 2012?",
            "count",
            lambda r: len(_log(r, *_year("2010-01-01", "2012-12-31"))),
        ),
    ],
    "mypy": [
        (
            "which files were changed by pull request 15953",
            "files",
            lambda r: set(_git(r, "diff", "--name-only", "-M", _squash(r, 15953) + "^", _squash(r, 15953)).split()),
        ),
        (
            "who touched mypy/semanal.py most recently?",
            "author",
            lambda r: _git(r, "log", "-1", *NM, "--format=%an", "--", "mypy/semanal.py").strip(),
        ),
        (
            "how many commits modified mypyc/irbuild in 2022",
            "count",
            lambda r: len(_log(r, *NM, *_year("2022-01-01", "2022-12-31"), "--", "mypyc/irbuild/")),
        ),
        (
            "what did Jukka Lehtosalo commit between 2024-06-01 and 2024-06-30?",
            "commits",
            lambda r: _log(r, "-F", "--author=Jukka Lehtosalo <", *_year("2024-06-01", "2024-06-30")),
        ),
        (
            "PR that merged 8c33cf0666?",
            "prs",
            lambda r: {_git(r, "log", "-1", "--format=%s", "8c33cf0666").rsplit("(#", 1)[1].rstrip(")\n")},
        ),
        ("how many commits touched docs/ overall", "count", lambda r: len(_log(r, *NM, "--", "docs/"))),
        ("show the last 6 commits", "commits", lambda r: _log(r, "-6")),
        (
            "when was mypy/stubtest.py first added",
            "commits",
            lambda r: _log(r, *NM, "--no-renames", "--diff-filter=A", "--", "mypy/stubtest.py"),
        ),
        (
            "list the commits that changed mypy/typeshed/stdlib/builtins.pyi in 2025",
            "commits",
            lambda r: _log(r, *NM, *_year("2025-01-01", "2025-12-31"), "--", "mypy/typeshed/stdlib/builtins.pyi"),
        ),
        (
            "how many commits were made in March 2023?",
            "count",
            lambda r: len(_log(r, *_year("2023-03-01", "2023-03-31"))),
        ),
        (
            "which person authored 122b09c3bb",
            "author",
            lambda r: _git(r, "log", "-1", "--format=%an", "122b09c3bb").strip(),
        ),
        (
            "how many commits under the misc directory in 2021?",
            "count",
            lambda r: len(_log(r, *NM, *_year("2021-01-01", "2021-12-31"), "--", "misc/")),
        ),
    ],
}


def main(name: str, repo: str, db: str) -> int:
    ok = 0
    with ngr.open(db, embedder="hashing") as eng:
        for text, kind, gold_of in QUESTIONS[name]:
            q = Question("hand", text, gold_of(repo), kind)
            hit = exact(q, answer_value(eng.ask(text), kind))
            ok += hit
            print("OK  " if hit else "MISS", text)
    print(f"{ok}/{len(QUESTIONS[name])}")
    return 0 if ok == len(QUESTIONS[name]) else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
