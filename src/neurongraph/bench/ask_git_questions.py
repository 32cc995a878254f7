"""The question generator of ``ngr bench ask --repo``: up to ``per_shape`` questions per shape, gold from git.

It exists so that each shape's sampling and its gold (a ``git log`` / ``git rev-list`` / ``git tag`` command
on the repository, never the store) read in one place: ``generate`` draws the candidates with a seeded random
generator and asks ``GitFacts`` (``bench/ask_git_facts.py``) for each gold; the wordings and the scoring kind
of each shape are in ``bench/ask_git_wordings.py``.  A shape a history has no data for yields no question.
"""

from __future__ import annotations

import bisect
import datetime as dt
import random
import re
import subprocess
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from ..ingest.git_cmd import git_argv, git_env
from ..ingest.refs import fixes_trailers
from .ask_git_facts import MERGE_RE, SQUASH_RE, GitFacts
from .ask_git_wordings import KIND, SHAPES, WORDINGS

__all__ = ["Question", "generate", "singular"]

SHA_CHARS = 10
# What a question's words mean, defined here from what a git user means by them, not taken from ask/ (the
# gold must not share the product's definitions): "commits that mention W" are those ``git log -i -F --grep=W``
# lists (the whole message); "commits about W" are the subjects with a word that starts with W, after one
# opening bracket or quote ("(btf)"), or with W after ``_ - / .`` ("bpf_ringbuf"); topics are plain subject
# words that are not plurals of another (a plural's question finds both forms).
LEAD_PUNCTUATION = ("(", "[", "{", "<", '"', "'", "`")
PART_SEPARATORS = ("_", "-", "/", ".")
MAX_ITEMS = 500  # a list question is asked only when its gold is at most this long (what an answer lists)
# words never asked about as a topic: the frame of a question ("commits about the ...") and generic nouns
TOPIC_STOP = frozenset(
    "a an the some any this that these those word words term string in since before after until till by during "
    "from between on under to for and or were was are is have has had did do does been be there last which who "
    "their its it them than with without made committed landed merged so far ever total overall all at bug bugs "
    "issue issues problem problems thing things something stuff commit commits change changes patch patches fix "
    "files file".split()
)


def singular(word: str) -> str:
    """The singular of an English plural ("crashes" -> "crash", "leaks" -> "leak"); other words unchanged."""
    if len(word) > 4 and word.endswith("es") and word[:-2].endswith(("sh", "ch", "x", "ss")):
        return word[:-2]
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


MAX_SET = 150  # questions whose gold set is larger are not asked (an answer lists at most this many)
_PR_MERGE = re.compile(r"^Merge pull request #\d+ from \S+|^(?:Auto merge of|Merge) #\d+\b")  # titled by the PR
_FIXES = re.compile(r"^\s*Fixes:\s*([0-9a-f]{7,40})\b", re.M)


def _year_bounds(year: int) -> tuple[str, str]:
    return f"{year}-01-01 00:00:00", f"{year}-12-31 23:59:59"


def _year(t: int) -> int:
    return dt.datetime.fromtimestamp(t, dt.UTC).year


def _dir_of(path: str) -> str | None:
    return path.rsplit("/", 1)[0] + "/" if "/" in path else None


@dataclass
class Question:
    """One generated question: its shape, its wording, git's gold answer and the kind of answer scored."""

    shape: str
    question: str
    gold: object  # set[str] | int | str
    kind: str = "commits"
    facts: dict = field(default_factory=dict)


class _Gen:
    """One shape at a time: candidates drawn at random, the gold computed by git for each."""

    def __init__(self, facts: GitFacts, rnd: random.Random, per_shape: int):
        self.f, self.rnd, self.n = facts, rnd, per_shape
        self.out: list[Question] = []
        self.pr = facts.pr_commit()
        # a path that was a file once and a directory later ("travis-ci"): `git log -- P` reads both
        dirs = {p[:k] for p in facts.file_commits for k in range(len(p)) if p[k] == "/"}
        self.files = sorted(
            p
            for p, shas in facts.file_commits.items()
            if p not in facts.rename_paths and p not in dirs and not any(s in facts.big for s in shas) and "\t" not in p
        )

    def ask(self, shape: str, gold, wording: int | None = None, **kw) -> None:
        """One question; ``wording`` picks the shape's wording when the gold depends on it (else at random)."""
        text = (WORDINGS[shape][wording] if wording is not None else self.rnd.choice(WORDINGS[shape])).format(**kw)
        self.out.append(Question(shape, text, gold, KIND.get(shape, "commits"), kw))

    def count(self, shape: str) -> int:
        return sum(q.shape == shape for q in self.out)

    def sample(self, seq, k: int | None = None) -> list:
        seq = list(seq)
        self.rnd.shuffle(seq)
        return seq[: k if k is not None else 20 * self.n]

    # ------------------------------------------------------------------ shapes
    def author_of(self) -> None:
        for sha, *_ in self.sample(self.f.commits, self.n):
            self.ask("author_of", self.f.git("log", "-1", "--format=%an", sha).strip(), sha=sha[:SHA_CHARS])

    def last_changed_by(self) -> None:
        for p in self.sample(self.files):
            if self.count("last_changed_by") >= self.n:
                return
            shas = self.f.file_commits[p][:2]
            if len(shas) == 2 and self.f.by_sha[shas[0]][3] == self.f.by_sha[shas[1]][3]:
                continue  # a tie on the newest time: "last" is not defined
            gold = self.f.git("log", "-1", "--no-merges", "--full-history", "--format=%an", "--", p).strip()
            self.ask("last_changed_by", gold, path=p)

    def file_in_year(self) -> None:
        for p in self.sample(self.files):
            if self.count("file_in_year") >= self.n:
                return
            years = sorted({_year(self.f.by_sha[s][3]) for s in self.f.file_commits[p]})
            y = self.rnd.choice(years)
            a, b = _year_bounds(y)
            gold = set(self.f.shas("--no-merges", "--full-history", f"--since-as-filter={a}", f"--until={b}", "--", p))
            if 0 < len(gold) <= MAX_SET:
                self.ask("file_in_year", gold, path=p, year=y)

    def _dirs(self) -> list[str]:
        return sorted({d for p in self.files if (d := _dir_of(p))})

    def count_dir(self) -> None:
        for d in self.sample(self._dirs(), self.n):
            gold = len(self.f.shas("--no-merges", "--full-history", "--", d))
            self.ask("count_dir", gold, dir=d)

    def count_dir_year(self) -> None:
        for d in self.sample(self._dirs(), self.n):
            shas = self.f.shas("--no-merges", "--full-history", "--", d)
            y = _year(self.f.by_sha[self.rnd.choice(shas)][3]) if shas else 2020
            a, b = _year_bounds(y)
            gold = len(self.f.shas("--no-merges", "--full-history", f"--since-as-filter={a}", f"--until={b}", "--", d))
            self.ask("count_dir_year", gold, dir=d, year=y)

    def latest_n(self) -> None:
        times = [c[3] for c in self.f.commits]
        for _ in range(4 * self.n):
            if self.count("latest_n") >= self.n:
                return
            n = self.rnd.randint(2, 12)
            gold = self.f.shas(f"-{n}")
            if sorted(times, reverse=True)[n - 1] == sorted(times, reverse=True)[n]:
                continue  # a tie at the cut
            self.ask("latest_n", set(gold), n=n)

    def latest_n_file(self) -> None:
        for p in self.sample(self.files):
            if self.count("latest_n_file") >= self.n:
                return
            shas = self.f.file_commits[p]
            if len(shas) < 3:
                continue
            n = self.rnd.randint(2, min(8, len(shas) - 1))
            ts = sorted((self.f.by_sha[s][3] for s in shas), reverse=True)
            if ts[n - 1] == ts[n]:
                continue
            self.ask("latest_n_file", set(self.f.shas(f"-{n}", "--no-merges", "--full-history", "--", p)), path=p, n=n)

    def between_dates(self) -> None:
        for sha, *_ in self.sample(self.f.commits):
            if self.count("between_dates") >= self.n:
                return
            d0 = dt.datetime.fromtimestamp(self.f.by_sha[sha][3], dt.UTC).date()
            d1 = d0 + dt.timedelta(days=self.rnd.randint(0, 10))
            gold = set(self.f.shas(f"--since-as-filter={d0} 00:00:00", f"--until={d1} 23:59:59"))
            if 0 < len(gold) <= MAX_SET:
                self.ask("between_dates", gold, a=d0.isoformat(), b=d1.isoformat())

    def _authors(self) -> list[str]:
        names = sorted({c[2] for c in self.f.commits})
        # a name that ends another name ("Li" in "Yan Li") cannot be told apart by `git log --author`
        return [a for a in names if len(a) >= 4 and not any(b != a and b.endswith(a) for b in names)]

    def author_in_year(self) -> None:
        authors = self._authors()
        for a in self.sample(authors):
            if self.count("author_in_year") >= self.n:
                return
            years = sorted({_year(c[3]) for c in self.f.commits if c[2] == a})
            y = self.rnd.choice(years)
            s, e = _year_bounds(y)
            gold = set(self.f.shas("-F", f"--author={a} <", f"--since-as-filter={s}", f"--until={e}"))
            if 0 < len(gold) <= MAX_SET:
                self.ask("author_in_year", gold, author=a, year=y)

    def count_year(self) -> None:
        years = sorted({_year(c[3]) for c in self.f.commits})
        for y in self.sample(years, self.n):
            s, e = _year_bounds(y)
            self.ask("count_year", len(self.f.shas(f"--since-as-filter={s}", f"--until={e}")), year=y)

    def reverted_by(self) -> None:
        reverting = self.f.shas("--grep=This reverts commit")
        targets = set()
        for sha in reverting:
            body = self.f.git("log", "-1", "--format=%B", sha)
            targets |= {m for m in re.findall(r"This reverts commit ([0-9a-f]{40})", body) if m in self.f.by_sha}
        for t in self.sample(sorted(targets), self.n):
            gold = set(self.f.shas("-F", f"--grep=This reverts commit {t}"))
            self.ask("reverted_by", gold, sha=t[:SHA_CHARS])

    def fixed_by(self) -> None:
        raw = self.f.git("log", "-E", "--grep=^[[:space:]]*Fixes:[[:space:]]*[0-9a-f]{7,40}", "--format=%x1e%H%x1f%B")
        fixes: dict[str, set[str]] = defaultdict(set)
        shas = sorted(self.f.by_sha)
        import bisect

        for rec in raw.split("\x1e")[1:]:
            sha, _, body = rec.partition("\x1f")
            for pre in _FIXES.findall(body):
                i = bisect.bisect_left(shas, pre)
                hits = [s for s in shas[i : i + 2] if s.startswith(pre)]
                if len(hits) == 1 and hits[0] != sha:
                    fixes[hits[0]].add(sha)
        for t in self.sample(sorted(fixes), self.n):
            self.ask("fixed_by", fixes[t], sha=t[:SHA_CHARS])

    def file_created(self) -> None:
        for p in self.sample(self.files):
            if self.count("file_created") >= self.n:
                return
            gold = self.f.shas("--no-merges", "--full-history", "--no-renames", "--diff-filter=A", "--", p)
            if len(gold) == 1:
                self.ask("file_created", set(gold), path=p)

    def file_renamed(self) -> None:
        once = [o for o, v in self.f.renamed.items() if len(v) == 1 and not self.f.renamed.get(v[0][1])]
        for o in self.sample(sorted(once), self.n):
            self.ask("file_renamed", {self.f.renamed[o][0][0]}, path=o)

    def pr_files(self) -> None:
        for n, sha in self.sample(sorted(self.pr.items())):
            if self.count("pr_files") >= self.n:
                return
            parents = self.f.by_sha[sha][1]
            gold = set(self.f.git("diff", "--name-only", "-M", parents[0], sha).split("\n")) - {""}
            if 0 < len(gold) <= MAX_SET:
                self.ask("pr_files", gold, pr=n)

    def pr_commits(self) -> None:
        for n, sha in self.sample(sorted(self.pr.items())):
            if self.count("pr_commits") >= self.n:
                return
            gold = set(self.f.shas(f"{sha}^1..{sha}"))
            if 0 < len(gold) <= MAX_SET:
                self.ask("pr_commits", gold, pr=n)

    def pr_of_commit(self) -> None:
        owner: dict[str, set[int]] = defaultdict(set)
        for n, sha in self.pr.items():
            for c in self.f.shas(f"{sha}^1..{sha}"):
                owner[c].add(n)
        merges = [c for c in owner if len(self.f.by_sha[c][1]) == 1 and not SQUASH_RE.search(self.f.by_sha[c][4])]
        squashes = [c for c in owner if c not in merges]
        # half from merged branches (when the history has them), half squash commits
        picks = self.sample(merges, self.n // 2) + self.sample(squashes, self.n)
        for c in picks[: self.n]:
            self.ask("pr_of_commit", {str(x) for x in owner[c]}, sha=c[:SHA_CHARS])

    def prs_by_author(self) -> None:
        if not self.pr:
            return
        for a in self.sample(self._authors()):
            if self.count("prs_by_author") >= self.n:
                return
            subjects = self.f.git("log", "-F", f"--author={a} <", "--format=%P%x1f%s").splitlines()
            gold = set()
            for line in subjects:
                parents, subj = line.split("\x1f", 1)
                m = MERGE_RE.match(subj) if len(parents.split()) > 1 else SQUASH_RE.search(subj)
                if m and self.pr.get(int(m.group(1))) is not None:
                    gold.add(m.group(1))
            # a PR counts for the author of the commit that merged it (first merge or squash of that number)
            gold = {g for g in gold if self.f.by_sha[self.pr[int(g)]][2] == a}
            if 0 < len(gold) <= MAX_SET:
                self.ask("prs_by_author", gold, author=a)

    # ------------------------------------------------------------------ tags (gold: git rev-list / tag --contains)
    def _tag_set(self, shape: str, gold: set[str], **kw) -> None:
        if 0 < len(gold) <= MAX_SET and self.count(shape) < self.n:
            self.ask(shape, gold, **kw)

    def since_tag(self) -> None:
        for name, _, _ in self.sample(self.f.tags()):
            if self.count("since_tag") >= self.n:
                return
            self._tag_set("since_tag", set(self.f.shas(f"refs/tags/{name}..HEAD")), tag=name)

    def before_tag(self) -> None:
        for name, sha, _ in self.sample(self.f.tags()):
            if self.count("before_tag") >= self.n:
                return
            self._tag_set("before_tag", set(self.f.shas(f"refs/tags/{name}")) - {sha}, tag=name)

    def between_tags(self) -> None:
        tags = self.f.tags()
        for b in self.sample(tags[1:]):
            if self.count("between_tags") >= self.n:
                return
            reach = set(self.f.shas(b[1]))
            older = [a for a in tags if a[2] < b[2] and a[1] != b[1] and a[1] in reach][-3:]  # the nearest three
            if older:
                a = self.rnd.choice(older)
                self._tag_set("between_tags", set(self.f.shas(f"refs/tags/{a[0]}..refs/tags/{b[0]}")), a=a[0], b=b[0])

    def in_tag(self) -> None:
        for name, sha, _ in self.sample(self.f.tags()):
            if self.count("in_tag") >= self.n:
                return
            try:  # the previous tag as git describe finds it
                prev = self.f.git("describe", "--tags", "--abbrev=0", f"{sha}^").strip()
            except subprocess.CalledProcessError:
                prev = ""
            args = [f"refs/tags/{name}"] + ([f"^refs/tags/{prev}"] if prev else [])
            self._tag_set("in_tag", set(self.f.shas(*args)), tag=name)

    def first_tag(self) -> None:
        if not self.f.tags():
            return
        for sha, *_ in self.sample(self.f.commits):
            if self.count("first_tag") >= self.n:
                return
            out = self.f.git(
                "tag",
                "--contains",
                sha,
                "--merged=HEAD",
                "--sort=creatordate",
                "--format=%(refname:strip=2)%1f%(creatordate:unix)",
            )
            rows = [ln.split("\x1f") for ln in out.splitlines() if ln]
            if not rows or len(rows) > 1 and rows[0][1] == rows[1][1]:
                continue  # no tag holds it yet, or two tags of the same second: "first" is not defined
            self.ask("first_tag", {rows[0][0]}, sha=sha[:SHA_CHARS])

    def authors_dir(self) -> None:
        for d in self.sample(self._dirs(), self.n):
            names = self.f.git("log", "--no-merges", "--full-history", "--format=%an", "--", d).splitlines()
            self.ask("authors_dir", len(set(names)), dir=d)

    def _pairs(self) -> list[tuple[str, str]]:
        """Pairs of files some commit changed together (so that "both" has an answer)."""
        files = set(self.files)
        by_commit: dict[str, list[str]] = defaultdict(list)
        for p in self.files:
            for sha in self.f.file_commits[p]:
                by_commit[sha].append(p)
        pairs = set()
        for sha in self.sample(sorted(by_commit)):
            got = sorted(set(by_commit[sha]) & files)
            if len(got) >= 2:
                a, b = self.rnd.sample(got, 2)
                pairs.add((a, b))
        return sorted(pairs)

    def both_files(self) -> None:
        for a, b in self.sample(self._pairs()):
            if self.count("both_files") >= self.n:
                return
            one = set(self.f.shas("--no-merges", "--full-history", "--", a))
            gold = one & set(self.f.shas("--no-merges", "--full-history", "--", b))
            if 0 < len(gold) <= MAX_SET:
                self.ask("both_files", gold, a=a, b=b)

    def either_files(self) -> None:
        for a, b in self.sample(self._pairs(), self.n):
            gold = len(self.f.shas("--no-merges", "--full-history", "--", a, b))
            self.ask("either_files", gold, a=a, b=b)

    # ------------------------------------------------------------------ the files themselves
    def _deleted(self) -> list[tuple[str, str]]:
        """(path, the commit that deleted it) for paths whose last change was their deletion."""
        _, last = self._status()
        return [(p, last[p][1]) for p in self.files if last.get(p, ("", ""))[0] == "D"]

    def file_deleted(self) -> None:
        for p, sha in self.sample(self._deleted(), self.n):
            self.ask("file_deleted", {sha}, path=p)

    def who_deleted(self) -> None:
        for p, sha in self.sample(self._deleted(), self.n):
            self.ask("who_deleted", self.f.by_sha[sha][2], path=p)

    def who_created(self) -> None:
        for p in self.sample(self.files):
            if self.count("who_created") >= self.n:
                return
            added = self.f.shas("--no-merges", "--full-history", "--no-renames", "--diff-filter=A", "--", p)
            first = self.f.file_commits[p][-1]
            if len(added) == 1 and added[0] == first and len(self.f.file_commits[p]) > 1:
                if self.f.by_sha[first][3] != self.f.by_sha[self.f.file_commits[p][-2]][3]:  # no tie on "first"
                    self.ask("who_created", self.f.by_sha[first][2], path=p)

    def count_files(self) -> None:
        paths = set(self.f.git("log", "--no-renames", "--name-only", "--format=").split("\n")) - {""}
        self.ask("count_files", len(paths))

    def files_by_author(self) -> None:
        for a in self.sample(self._authors(), self.n):
            got = self.f.git("log", "--no-merges", "-F", f"--author={a} <", "--name-only", "--format=")
            self.ask("files_by_author", len(set(got.split("\n")) - {""}), author=a)

    def _by_last_change(self) -> list[tuple[int, str]]:
        """(time of the last non-merge change, path), newest first, as plain ``git log --name-only`` lists
        paths (renames detected: a renamed file's change is on its new path)."""
        last: dict[str, int] = {}
        t = 0
        for line in self.f.git("log", "--no-merges", "-M", "--format=%x1e%ct", "--name-only").split("\n"):
            if line.startswith("\x1e"):
                t = int(line[1:])
            elif line.strip():
                last.setdefault(line, t)
        return sorted(((t, p) for p, t in last.items()), reverse=True)

    def latest_file(self) -> None:
        ranked = self._by_last_change()
        if ranked:
            self.ask("latest_file", {p for t, p in ranked if t == ranked[0][0]})

    def latest_n_files(self) -> None:
        ranked = self._by_last_change()
        for n in self.sample(range(2, min(12, len(ranked))), self.n):
            if ranked[n - 1][0] != ranked[n][0]:  # no tie at the cut
                self.ask("latest_n_files", {p for _, p in ranked[:n]}, n=n)

    def top_dir(self) -> None:
        per: dict[str, set[str]] = defaultdict(set)
        for p, shas in self.f.file_commits.items():
            per[_dir_of(p) or "(top level)"].update(shas)
        ranked = sorted(((len(v), d) for d, v in per.items()), reverse=True)
        if ranked and (len(ranked) == 1 or ranked[0][0] != ranked[1][0]):
            self.ask("top_dir", ranked[0][1])

    def count_fixes(self) -> None:
        """Commits (merges too) whose subject has a word starting with fix or bug (or ``[fix`` / ``(fix``), or
        whose message has a ``Fixes: <sha>`` trailer naming another commit of the history: a unique sha prefix,
        else the newest earlier commit with the trailer's quoted subject."""
        shas = sorted(c[0] for c in self.f.commits)
        by_subject = self._by_subject()

        def named(prefix: str, subject: str | None, me: str, t: int) -> bool:
            i = bisect.bisect_left(shas, prefix)
            hits = shas[i : i + 2]
            if hits and hits[0].startswith(prefix) and not (len(hits) > 1 and hits[1].startswith(prefix)):
                return hits[0] != me
            earlier = [x for x in by_subject.get((subject or "").strip(), []) if x[0] <= t and x[1] != me]
            return bool(subject) and bool(earlier)

        subjects = self._first_lines()
        n = 0
        for rec in self.f.git("log", "--format=%H%x1f%ct%x1f%B%x1e").split("\x1e"):
            if "\x1f" not in rec:
                continue
            sha, ct, body = rec.strip("\n").split("\x1f", 2)
            words = subjects.get(sha, "").lower().split(" ")
            if any(w.startswith(("fix", "bug", "[fix", "(fix")) for w in words) or any(
                named(r.value, r.subject, sha, int(ct))
                for r in fixes_trailers(body)  # the trailers as written
            ):
                n += 1
        self.ask("count_fixes", n)

    def _by_subject(self) -> dict[str, list[tuple[int, str]]]:
        """Subject (``%s``) -> the (commit time, sha) of the commits with it."""
        if not hasattr(self, "_subject_index"):
            self._subject_index: dict[str, list[tuple[int, str]]] = defaultdict(list)
            for c in self.f.commits:
                self._subject_index[c[4].strip()].append((c[3], c[0]))
        return self._subject_index

    def newest_file(self) -> None:
        """The file whose creating commit (its first status ``A``) is the newest (no tie in that second)."""
        first, _ = self._status()
        made = sorted((self.f.by_sha[sha][3], p) for p, (st, sha) in first.items() if st == "A")
        if len(made) > 1 and made[-1][0] != made[-2][0]:
            self.ask("newest_file", {made[-1][1]})

    def busiest_month(self) -> None:
        """The month with the most commits (merges too: no path scope), by committer date in UTC."""
        per = Counter(dt.datetime.fromtimestamp(c[3], dt.UTC).strftime("%Y-%m") for c in self.f.commits)
        ranked = per.most_common(2)
        if ranked and (len(ranked) == 1 or ranked[0][1] != ranked[1][1]):
            self.ask("busiest_month", ranked[0][0])

    def top_lines_author(self) -> None:
        """The author whose non-merge commits added the most lines (``git log --no-merges --numstat``)."""
        lines: Counter = Counter()
        who = ""
        for line in self.f.git("log", "--no-merges", "--numstat", "--format=%x1e%an").split("\n"):
            if line.startswith("\x1e"):
                who = line[1:]
            elif (m := re.match(r"(\d+)\t(?:\d+|-)\t", line)) is not None:
                lines[who] += int(m.group(1))
        ranked = lines.most_common(2)
        if ranked and (len(ranked) == 1 or ranked[0][1] != ranked[1][1]):
            self.ask("top_lines_author", ranked[0][0])

    def author_last(self) -> None:
        for a in self.sample(self._authors()):
            if self.count("author_last") >= self.n:
                return
            shas = self.f.shas("--no-merges", "-F", f"--author={a} <")
            own = self.f.shas("-F", f"--author={a} <")
            if len(shas) < 2 or own != shas:  # merges by the author: "last commit" would depend on them
                continue
            first = self.rnd.random() < 0.5
            pick, nxt = (shas[-1], shas[-2]) if first else (shas[0], shas[1])
            if self.f.by_sha[pick][3] != self.f.by_sha[nxt][3]:
                self.ask("author_last", {pick}, wording=1 if first else 0, author=a)

    def _status(self) -> tuple[dict[str, tuple[str, str]], dict[str, tuple[str, str]]]:
        """Per path, its oldest and its newest (status, commit) in ``git log --no-merges -M --name-status``
        (a rename counted on its new path only, as the ingest records it)."""
        if not hasattr(self, "_st"):
            first: dict[str, tuple[str, str]] = {}
            last: dict[str, tuple[str, str]] = {}
            sha = ""
            for line in self.f.git("log", "--no-merges", "-M", "--format=%x1e%H", "--name-status").split("\n"):
                if line.startswith("\x1e"):
                    sha = line[1:]
                elif line.strip():
                    parts = line.split("\t")
                    st, path = parts[0][:1], parts[-1]
                    last.setdefault(path, (st, sha))
                    first[path] = (st, sha)
            self._st = (first, last)
        return self._st

    def file_exists(self) -> None:
        gone = dict(self._deleted())
        kept = [p for p in self.files if p not in gone]
        for p in self.sample(sorted(gone), self.n // 2) + self.sample(kept, self.n - min(len(gone), self.n // 2)):
            self.ask("file_exists", {gone[p]} if p in gone else set(), path=p)

    def files_deleted(self) -> None:
        _, last = self._status()
        gold = {p for p, (st, _) in last.items() if st == "D"}
        if 0 < len(gold) <= MAX_ITEMS:
            self.ask("files_deleted", gold)

    def files_added_year(self) -> None:
        first, _ = self._status()
        per: dict[int, set[str]] = defaultdict(set)
        for p, (st, sha) in first.items():
            if st == "A":
                per[_year(self.f.by_sha[sha][3])].add(p)
        for y in self.sample(sorted(per), self.n):
            if 0 < len(per[y]) <= MAX_ITEMS:
                self.ask("files_added_year", per[y], year=y)

    def count_files_deleted(self) -> None:
        _, last = self._status()
        self.ask("count_files_deleted", sum(st == "D" for st, _ in last.values()))

    def count_files_added_year(self) -> None:
        first, _ = self._status()
        per: dict[int, int] = defaultdict(int)
        for st, sha in first.values():
            if st == "A":
                per[_year(self.f.by_sha[sha][3])] += 1
        for y in self.sample(sorted(per), self.n):
            self.ask("count_files_added_year", per[y], year=y)

    def count_reverts(self) -> None:
        self.ask("count_reverts", sum(c[4].startswith("Revert") for c in self.f.commits))  # git log --format=%s

    def reverted(self) -> None:
        """The commits a revert names: ``This reverts commit <sha>`` (a sha of this history); without that
        line, a subject ``Revert commit <sha>``, else the newest earlier commit whose subject a ``Revert
        "<subject>"`` repeats (a mirror's revert names a sha from elsewhere; ovs reverts by hand)."""
        shas = {c[0] for c in self.f.commits}
        by_subject = self._by_subject()
        gold: set[str] = set()
        for line in self.f.git("log", "--format=%H%x1f%ct%x1f%s%x1f%B%x1e").split("\x1e"):
            if "\x1f" not in line:
                continue
            _, ct, subj, body = line.strip("\n").split("\x1f", 3)
            cited = [m.group(1) for m in re.finditer(r"This reverts commit ([0-9a-f]{7,40})", body)]
            if not cited and (m := re.match(r"Revert(?:s|ed)?\s+commit\s+([0-9a-f]{7,40})\b", subj, re.I)):
                cited = [m.group(1).lower()]
            named = [s for c in cited for s in shas if s.startswith(c)]
            if named:
                gold.update(named)
            elif m := re.match(r'Revert "(.+)"$', subj):
                earlier = [(t, s) for t, s in by_subject.get(m.group(1).strip(), []) if t <= int(ct)]
                if earlier:
                    gold.add(max(earlier)[1])
        if 0 < len(gold) <= MAX_ITEMS:
            self.ask("reverted", gold)

    def count_renamed(self) -> None:
        self.ask("count_renamed", len(self.f.renamed))  # the old paths of `git log -M --diff-filter=R`

    def renamed_files(self) -> None:
        if 0 < len(self.f.renamed) <= MAX_ITEMS:
            self.ask("renamed_files", set(self.f.renamed))

    def lines_added(self) -> None:
        for p in self.sample(self.files, self.n):
            out = self.f.git("log", "--no-merges", "--full-history", "-U0", "--numstat", "--format=", "--", p)
            # -U0 makes git print the patch too (the counts are those of its -U0 hunks, as the ingest reads them)
            rows = [ln.split("\t") for ln in out.splitlines() if re.match(r"(?:\d+|-)\t(?:\d+|-)\t", ln)]
            col = self.rnd.randrange(2)  # the wordings: 0 added, 1 removed
            self.ask("lines_added", sum(int(r[col]) for r in rows if r[col] != "-"), wording=col, path=p)

    def file_lines(self) -> None:
        """The lines a file has at HEAD (``git show HEAD:F``, newlines counted as ``wc -l`` does, plus an
        unterminated last line); text files only."""
        head = set(self.f.git("ls-tree", "-r", "--name-only", "HEAD").splitlines())
        for p in self.sample([x for x in self.files if x in head]):
            if self.count("file_lines") >= self.n:
                return
            raw = subprocess.run(
                git_argv(self.f.repo, "show", f"HEAD:{p}"), capture_output=True, check=True, env=git_env()
            ).stdout
            if b"\0" in raw[:8000] or not raw:
                continue  # binary or empty: no line count to ask about
            self.ask("file_lines", raw.count(b"\n") + (0 if raw.endswith(b"\n") else 1), path=p)

    def _subject_words(self) -> Counter:
        """How many commit subjects name each plain word (a word 'starts' a subject word, as ask reads a topic)."""
        if not hasattr(self, "_words"):
            seen: Counter = Counter()
            for subject in self._first_lines().values():
                seen.update({m for m in re.findall(r"[a-z][a-z0-9_]{3,}", subject.lower()) if singular(m) == m})
            self._words = seen
        return self._words

    def _first_lines(self) -> dict[str, str]:
        """Each commit's subject as its message's first line (``%s`` joins a wrapped first paragraph); a
        GitHub or bors merge of a PR is titled by the first line of its body, the PR's title."""
        if not hasattr(self, "_subjects"):
            self._subjects = {}
            for rec in self.f.git("log", "--format=%H%x1f%P%x1f%B%x1f%b%x1e").split("\x1e"):
                if rec.count("\x1f") != 3:
                    continue
                sha, parents, message, body = rec.strip("\n").split("\x1f")
                first = message.split("\n", 1)[0]
                if len(parents.split()) > 1 and _PR_MERGE.match(first) and body.strip():
                    first = body.strip().split("\n", 1)[0].strip()
                self._subjects[sha] = first
        return self._subjects

    def _mentioning(self, word: str) -> set[str]:
        """Commits (merges too: no path scope) with a subject word that starts with ``word`` (after one
        opening bracket or quote) or holds it after ``_ - / .``: each message's first line read word by word."""
        lead = tuple(LEAD_PUNCTUATION)
        parts = [sep + word for sep in PART_SEPARATORS]

        def names(w: str) -> bool:
            return w.startswith(word) or w.startswith(lead) and w[1:].startswith(word) or any(p in w for p in parts)

        return {sha for sha, subject in self._first_lines().items() if any(map(names, subject.lower().split(" ")))}

    def _topics(self) -> list[str]:
        stop = TOPIC_STOP | {"fixes", "fixed", "mention", "about", "revert", "merge"}
        return sorted(w for w, n in self._subject_words().items() if 3 <= n <= 400 and w not in stop)

    def _grepped(self, word: str) -> set[str]:
        """The commits of HEAD's history whose message holds ``word``, any case: ``git log -i -F --grep``."""
        return set(self.f.git("log", "-i", "-F", f"--grep={word}", "--format=%H").split())

    def count_mentions(self) -> None:
        for w in self.sample(self._topics(), self.n):
            self.ask("count_mentions", len(self._grepped(w)), word=w)

    def mentions(self) -> None:
        for w in self.sample(self._topics()):
            if self.count("mentions") >= self.n:
                return
            gold = self._grepped(w)
            if 0 < len(gold) <= MAX_SET:
                self.ask("mentions", gold, word=w)

    def count_about(self) -> None:
        for w in self.sample(self._topics(), self.n):
            self.ask("count_about", len(self._mentioning(w)), word=w)

    def prs_dir(self) -> None:
        """PRs one of whose commits (a merged branch's, or the squash itself; merges left out) touched DIR."""
        if not self.pr:
            return
        touched: dict[str, set[str]] = defaultdict(set)  # commit -> dirs of its files (and their parents)
        for p, shas in self.f.file_commits.items():
            parts = p.split("/")[:-1]
            for sha in shas:
                touched[sha].update("/".join(parts[: k + 1]) + "/" for k in range(len(parts)))
        by_dir: dict[str, set[str]] = defaultdict(set)
        for n, sha in self.pr.items():
            own = self.f.shas(f"{sha}^1..{sha}") if len(self.f.by_sha[sha][1]) > 1 else [sha]
            for c in own:
                for d in touched.get(c, ()):
                    by_dir[d].add(str(n))
        for d in self.sample(self._dirs()):
            if self.count("prs_dir") >= self.n:
                return
            if 0 < len(by_dir.get(d, ())) <= MAX_SET:
                self.ask("prs_dir", by_dir[d], dir=d)

    def count_merges(self) -> None:
        self.ask("count_merges", int(self.f.git("rev-list", "--merges", "--count", "HEAD").strip()))

    # ------------------------------------------------------------------ the tags themselves
    def count_tags(self) -> None:
        self.ask("count_tags", len(self.f.every_tag()))  # what `git tag` lists

    def _newest_tag(self) -> str | None:
        """The newest tag by creation time, or None when there is none or two share the newest second."""
        tags = self.f.tags()
        if not tags or len(tags) > 1 and tags[-1][2] == tags[-2][2]:
            return None
        return tags[-1][0]

    def latest_tag(self) -> None:
        """The newest of every tag (``git tag --sort=-creatordate``), unless two share the newest second."""
        tags = self.f.every_tag()
        if tags and not (len(tags) > 1 and tags[-1][1] == tags[-2][1]):
            self.ask("latest_tag", {tags[-1][0]})

    def since_latest_tag(self) -> None:
        if (name := self._newest_tag()) is not None:
            self._tag_set("since_latest_tag", set(self.f.shas(f"refs/tags/{name}..HEAD")))


def generate(facts: GitFacts, per_shape: int = 20, seed: int = 0) -> list[Question]:
    """Up to ``per_shape`` questions of every shape the history has data for."""
    g = _Gen(facts, random.Random(seed), per_shape)
    for shape in SHAPES:
        getattr(g, shape)()
    return g.out
