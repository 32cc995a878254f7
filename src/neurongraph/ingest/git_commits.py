"""One git commit into the ingest batch: its node, its file edges, its pull request and what its message says.

It exists apart from the sync (``ingest/git.py``) so that what a commit becomes reads in one place:
:class:`CommitReader` writes the ``commit:<sha>`` node with its metadata, ``touches`` / ``renamed_to``,
``merged_in`` and the ``pr:N`` / ``issue:N`` placeholders, the edges a message states (``fixes``,
``reverts``, ``cherry_pick_of``, ``follows_up``, ``refs``) and, for each PR merge, ``part_of`` from the
commits its branch brought; :class:`Resolver` answers which commit a sha prefix, a quoted subject or a PR
number names.  A change to what it writes for the same commit bumps ``READER_VERSION`` (``ingest/git.py``).
"""

from __future__ import annotations

import bisect
import heapq
import re
from datetime import UTC, datetime
from functools import partial
from typing import Any

from ..model import Node
from . import refs as R
from .batch import IngestBatch, derived_edge
from .git_cmd import BIG_FILE_THRESHOLD
from .git_log import Commit

__all__ = ["CommitReader", "MAX_FILES_LISTED", "MAX_PR_RANGE", "MAX_TOUCHES", "Resolver"]

MAX_FILES_LISTED = 200  # files listed in a commit's metadata (all of them still get `touches` edges)
MAX_TOUCHES = 2000  # a vendor import touching more files gets no `touches` edges (counted as skipped)
MAX_PR_RANGE = 5000  # a merged branch with more commits than this gets no part_of edges (counted)


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


class Resolver:
    """Answers "which commit is this?" for sha prefixes, quoted subjects and PR numbers,
    over every commit reachable from the synced refs (not only the new ones)."""

    def __init__(self, listing: list[tuple[str, int, str]], mainline: set[str] | None = None):
        self.shas = sorted(s for s, _, _ in listing)
        self.time = {s: t for s, t, _ in listing}
        self.by_subject: dict[str, list[str]] = {}
        self.pr_commit: dict[str, str] = {}
        claims: list[tuple[int, str, str]] = []  # (time, sha, PR number) of every subject that names a PR
        for sha, t, subj in sorted(listing, key=lambda r: r[1]):  # oldest first: the first squash/merge wins
            self.by_subject.setdefault(subj.strip(), []).append(sha)
            n = R.squash_pr(subj) or (R.merge_pr(subj) or (None,))[0]
            if n is not None:
                claims.append((t, sha, n))
        self.prs_ours = _our_prs(claims, mainline)
        for _, sha, n in claims:
            if sha in self.prs_ours:
                self.pr_commit.setdefault(n, sha)

    def pr_is_ours(self, sha: str) -> bool:
        """Whether the PR number ``sha``'s subject names is this repository's (:func:`_our_prs`)."""
        return sha in self.prs_ours

    def sha(self, prefix: str) -> str | None:
        """The one commit whose id starts with ``prefix`` (None if none or ambiguous)."""
        prefix = prefix.lower()
        i = bisect.bisect_left(self.shas, prefix)
        if i < len(self.shas) and self.shas[i].startswith(prefix):
            if i + 1 < len(self.shas) and self.shas[i + 1].startswith(prefix):
                return None
            return self.shas[i]
        return None

    def subject(self, subject: str | None, before: int) -> str | None:
        """The newest commit older than ``before`` with exactly this subject."""
        if not subject:
            return None
        cands = [s for s in self.by_subject.get(subject.strip(), []) if self.time[s] <= before]
        return cands[-1] if cands else None


def _our_prs(claims: list[tuple[int, str, str]], mainline: set[str] | None) -> set[str]:
    """The commits whose subject's PR number is this repository's, from ``(time, sha, number)`` oldest first.
    Evidence, strongest first: the commit is on a first-parent chain of a synced tip (where GitHub's squash
    and merge commits land); else its number is claimed by no main-line commit and by no other commit, and
    is not far below the numbers the main line had reached by then (pull request numbers only grow: a fork's
    "Merge pull request #1 from someone/unstable" merged in a year of #3000s is that fork's #1; an early
    project's own merges that left the first-parent chain keep numbers near their time's)."""
    if mainline is None:
        return {sha for _, sha, _ in claims}
    ours = {sha for _, sha, _ in claims if sha in mainline}
    main_numbers = {n for _, sha, n in claims if sha in ours}
    off = [(t, sha, n) for t, sha, n in claims if sha not in ours]
    times, reached, best = [], [], 0
    for t, sha, n in claims:
        if sha in ours:
            best = max(best, int(n))
            times.append(t)
            reached.append(best)
    seen: dict[str, int] = {}
    for _, _, n in off:
        seen[n] = seen.get(n, 0) + 1
    for t, sha, n in off:
        k = bisect.bisect_right(times, t)
        high = reached[k - 1] if k else 0
        if n not in main_numbers and seen[n] == 1 and int(n) * 2 >= high:
            ours.add(sha)
    return ours


def _pr_title(c: Commit, merge: tuple[str, str | None] | None) -> str:
    """A merge commit's PR title: the first body line of GitHub's "Merge pull request" (and bors)."""
    if merge is None:
        return c.subject
    first = c.body.strip().split("\n", 1)[0].strip() if c.body.strip() else ""
    return first or c.subject


class CommitReader:
    """One commit at a time into the batch: its node, touches/renamed_to edges, its pull request, and the
    edges its message states (fixes, reverts, follows_up, refs).  Holds the files seen and the counts."""

    def __init__(self, batch: IngestBatch, source: str, resolver: Resolver, ref_repo: str | None = None):
        self.batch, self.source, self.resolver = batch, source, resolver
        # the repository a qualified reference (``owner/repo#N``, an issue URL) must name to count as this one's:
        # the hosted remote's ``owner/repo``; without one only the name is known (a clone of a local path or a
        # bundle: its folder is no owner)
        self.ref_repo = ref_repo if ref_repo is not None else source
        self.files: dict[str, None] = {}
        self.issues: dict[str, None] = {}  # issue placeholders written in this batch, in order
        self.counts = {
            "fixes": 0,
            "fixes_by_subject": 0,
            "fixes_unresolved": 0,
            "reverts": 0,
            "follows_up": 0,
            "refs": 0,
            "merged_in": 0,
            "renames": 0,
            "part_of": 0,
            "part_of_skipped": 0,
            "prs_elsewhere": 0,
            "issues": 0,
        }
        self.merges: list[tuple[Commit, str]] = []  # PR merge commits of the batch, with their PR

    def take_all(self, commits: list[Commit], progress, strict: bool) -> list[Commit]:
        """Each commit into the batch (:meth:`read`); the commits taken.  A commit the batch refuses (a field
        over its limit) takes back what it had recorded here too (merges, files, issues, counts)."""
        taken = []
        for k, c in enumerate(commits):
            if progress and k % 500 == 0:
                progress("reading", k, len(commits))
            marks = (len(self.merges), len(self.files), dict(self.counts), len(self.issues))
            if self.batch.take("commit:" + c.sha, partial(self.read, c), strict=strict):
                taken.append(c)
                continue
            del self.merges[marks[0] :]
            for p in list(self.files)[marks[1] :]:
                del self.files[p]
            for n in list(self.issues)[marks[3] :]:
                del self.issues[n]
            self.counts = marks[2]
        return taken

    def read(self, c: Commit) -> None:
        cid = "commit:" + c.sha
        merge = R.merge_pr(c.subject) if len(c.parents) > 1 else None
        squash = R.squash_pr(c.subject) if merge is None else None
        named = merge[0] if merge else squash  # the PR number the subject names
        # this repository's PR only with evidence (_our_prs): a merge inside a contributor's fork, "Merge pull
        # request #1 from someone/unstable", is no PR of this repository
        ours = self.resolver.pr_is_ours(c.sha)
        pr = named if ours else None
        merge = merge if ours else None
        title = _pr_title(c, merge)
        message = c.subject + "\n" + c.body
        iss = R.issue_refs(message, self.ref_repo)
        shas = R.sha_refs(c.body)
        md = self._metadata(c, pr, merge, iss, shas)
        if named and not ours:
            md["pr_elsewhere"] = int(named)  # a number of another repository's (a fork's) pull requests
            self.counts["prs_elsewhere"] += 1
        self.batch.nodes.append(Node(cid, "commit", title, c.body, md))
        if c.unreadable:
            self.batch.skip(cid, f"diff not read ({c.unreadable}): no line counts, hunks or code terms")
        self._name_notes(cid, c.notes)
        if pr and len(c.parents) > 1:  # GitHub's merge commit, titled "Merge pull request #N" or "Title (#N)"
            self.merges.append((c, pr))
        self._file_edges(c, cid)
        if pr:
            self._pull_request(c, cid, pr, title, merge is not None)
        self._message_edges(c, cid, named, message, iss + shas)

    def _metadata(self, c: Commit, pr: str | None, merge, iss: list[R.Ref], shas: list[R.Ref]) -> dict[str, Any]:
        md: dict[str, Any] = {
            "sha": c.sha,
            "repo": self.source,
            "author": c.author,
            "author_email": c.email,
            "author_time": c.author_time,
            "author_date": _iso(c.author_time),
            "commit_time": c.commit_time,
            "commit_date": _iso(c.commit_time),
            "time": c.commit_time,
            "parents": c.parents,
            "files": [_file_entry(c, p, a, d) for p, a, d in c.files[:MAX_FILES_LISTED]],
            "file_status": 1,  # each listed file says "status" A (new) or D (deleted); none: modified
            "files_total": len(c.files),
            "refs": {"issues": sorted({r.value for r in iss}, key=int), "shas": sorted({r.value for r in shas})},
        }
        if pr:
            md["pr"] = int(pr)
        if merge:
            md["subject"] = c.subject
        if len(c.parents) > 1 and not pr:
            md["aggregate"] = True  # the aggregate prior reads it (retrieval/priors.py; option aggregate_weight)
        if c.hunks:
            md["hunks"] = c.hunks
        if c.flags.get("p2_read"):
            md["hunks_p2"] = c.hunks_p2  # a merge against its second parent: blame follows the branch exactly
        if c.renames:
            md["renames"] = [[o, n] for o, n in c.renames]
        if c.code_added or c.code_removed or c.code_bulk_added or c.code_bulk_removed:
            md["code"] = {"added": c.code_added, "removed": c.code_removed}
            if c.code_bulk_added or c.code_bulk_removed:  # files over MAX_CODE_LINES (docs/ingest.md)
                md["code"].update(bulk_added=c.code_bulk_added, bulk_removed=c.code_bulk_removed)
        for flag in ("code_truncated", "hunks_truncated", "code_skipped", "bulk_truncated"):
            if c.flags.get(flag):
                md[flag] = c.flags[flag]
        if c.unreadable:
            md["unreadable"] = c.unreadable
        md.update(c.notes)  # date_unknown, too_large: what the log reader could not read as it is
        md.update(R.trailers(c.body))  # reviewed_by, acked_by, …: who the trailers name (ask ranks them)
        return md

    def _name_notes(self, cid: str, notes: dict[str, list[str]]) -> None:
        """Name in the summary what the log reader noted: ``date_unknown`` (git printed no date it could read:
        a crafted commit; stored as the other date, else 0) and ``too_large`` (files over
        ``git_cmd.BIG_FILE_THRESHOLD`` bytes, not diffed: no line counts)."""
        if "date_unknown" in notes:
            which = ", ".join(notes["date_unknown"])
            why = f"date unknown ({which}): git printed none it could read; stored as the other date or 0"
            self.batch.skip(cid, why)
        if big := notes.get("too_large"):
            self.batch.skip(
                cid,
                f"{len(big)} file(s) over {BIG_FILE_THRESHOLD:,} bytes not diffed (no line counts, hunks or code "
                f"terms; NGR_GIT_BIG_FILE_BYTES raises it): {', '.join(big[:5])}",
            )

    def _file_edges(self, c: Commit, cid: str) -> None:
        if len(c.files) <= MAX_TOUCHES:
            for p, a, d in c.files:
                self.files.setdefault(p)
                self.batch.edges.append(derived_edge(cid, "touches", "file:" + p, by="git", added=a, deleted=d))
        else:
            self.batch.skip(cid, f"touches {len(c.files)} files (> {MAX_TOUCHES}): no touches edges")
        for o, n in c.renames:
            self.files.setdefault(o)
            self.files.setdefault(n)
            self.batch.edges.append(
                derived_edge(
                    "file:" + o, "renamed_to", "file:" + n, by="git", owner=cid, evidence=f"{o} => {n}", commit=c.sha
                )
            )
            self.counts["renames"] += 1

    def branch_edges(self, commits: list[Commit]) -> None:
        """``part_of`` from each commit a PR merge brought in (``M^1..M^2``, computed from the batch's
        parent lists) to the PR; owned by the merge commit.  A range over :data:`MAX_PR_RANGE` is skipped."""
        if not self.merges:
            return
        parents = {c.sha: c.parents for c in commits}
        gen = _generations(parents)
        for m, pr in self.merges:
            branch = _branch(m.parents[0], m.parents[1], parents, gen, MAX_PR_RANGE)
            if branch is None:
                self.counts["part_of_skipped"] += 1
                self.batch.skip("commit:" + m.sha, f"merged branch of PR #{pr} has over {MAX_PR_RANGE} commits")
                continue
            for sha in branch:
                self.batch.edges.append(
                    derived_edge(
                        "commit:" + sha,
                        "part_of",
                        "pr:" + pr,
                        by="git",
                        owner="commit:" + m.sha,
                        evidence=m.subject,
                        merge=m.sha,
                    )
                )
                self.counts["part_of"] += 1

    def _pull_request(self, c: Commit, cid: str, pr: str, title: str, merge: bool) -> None:
        """A placeholder ``pr:N`` (a GitHub export brings the real one) and the commit ``merged_in`` it."""
        self.batch.nodes.append(
            Node(
                "pr:" + pr,
                "pull_request",
                f"PR #{pr}" + (f": {title}" if merge else ""),
                "",
                {"number": int(pr), "repo": self.source, "placeholder": True, "time": c.commit_time},
            )
        )  # merged then: invisible before (as_of)
        self.batch.placeholders.add("pr:" + pr)
        evidence = c.subject if merge else c.subject[-80:]
        self.batch.edges.append(derived_edge(cid, "merged_in", "pr:" + pr, by="git", evidence=evidence))
        self.counts["merged_in"] += 1

    def _issue(self, number: str) -> None:
        """A placeholder ``issue:N`` for a number a message names that no pull request of this history has
        (GitHub numbers issues and PRs alike: an export brings the real node, which replaces this one)."""
        if number in self.issues:
            return
        self.issues[number] = None
        md = {"number": int(number), "repo": self.source, "placeholder": True}
        self.batch.nodes.append(Node("issue:" + number, "issue", f"Issue #{number}", "", md))
        self.batch.placeholders.add("issue:" + number)
        self.counts["issues"] += 1

    def _message_edges(self, c: Commit, cid: str, pr: str | None, message: str, refs: list[R.Ref]) -> None:
        """What the message says about earlier changes; one edge per target, the strongest relation first."""
        linked: set[str] = set()

        def link(rel: str, dst: str | None, evidence: str, **meta) -> None:
            if dst is None or dst == cid or dst in linked:
                return
            linked.add(dst)
            self.batch.edges.append(derived_edge(cid, rel, dst, by="git", evidence=evidence, **meta))
            self.counts[rel] = self.counts.get(rel, 0) + 1

        resolver = self.resolver
        for r in R.fixes_trailers(c.body):
            sha = resolver.sha(r.value)
            how = "sha"
            if sha is None and r.subject:
                sha, how = resolver.subject(r.subject, c.commit_time), "subject"
                if sha:
                    self.counts["fixes_by_subject"] += 1
            if sha is None:
                self.counts["fixes_unresolved"] += 1
                continue
            link("fixes", "commit:" + sha, r.evidence, resolved_by=how)
        self._revert_edges(c, pr, link)
        for r in R.cherry_picks(c.body):  # a backport names the commit it copies
            sha = resolver.sha(r.value)
            link("cherry_pick_of", "commit:" + sha if sha else None, r.evidence)
        for r in R.follow_up_refs(message, self.ref_repo):
            for t in _targets(r, resolver, pr):
                link("follows_up", t, r.evidence)
        closing = {r.value: r.evidence for r in R.closing_refs(message, self.ref_repo)}
        for r in refs:
            if r.kind == "issue" and r.value == pr:
                continue  # the commit's own PR number
            targets = _targets(r, resolver, pr)
            if r.kind == "issue" and "issue:" + r.value in targets:  # a number no PR of this history has
                self._issue(r.value)
                if r.value in closing:
                    link("fixes", "issue:" + r.value, closing[r.value])
            for t in targets:
                link("refs", t, r.evidence)

    def _revert_edges(self, c: Commit, pr: str | None, link) -> None:
        """``reverts`` to the commit git's revert line, ``Revert commit <sha>`` or ``Revert "<subject>"`` (with
        GitHub's `` (#N)``) names, and to the pull request GitHub's ``Reverts owner/repo#N`` names."""
        resolver = self.resolver
        for r in R.revert_refs(c.subject, c.body):
            sha = (resolver.sha(r.value) if r.value else None) or resolver.subject(r.subject, c.commit_time)
            link("reverts", "commit:" + sha if sha else None, r.evidence)
        for r in R.reverted_prs(c.body, self.ref_repo):
            if r.value != pr and r.value in resolver.pr_commit:
                link("reverts", "pr:" + r.value, r.evidence)


def _generations(parents: dict[str, list[str]]) -> dict[str, int]:
    """Each commit's generation within the batch: 1 + the largest of its parents' (0 outside the batch),
    so a commit always comes after its descendants when walked by decreasing generation."""
    gen: dict[str, int] = {}
    for start in parents:
        stack = [start]
        while stack:
            c = stack[-1]
            if c in gen:
                stack.pop()
                continue
            todo = [p for p in parents[c] if p in parents and p not in gen]
            if todo:
                stack.extend(todo)
            else:
                gen[c] = 1 + max((gen[p] for p in parents[c] if p in parents), default=0)
                stack.pop()
    return gen


def _branch(p1: str, p2: str, parents: dict[str, list[str]], gen: dict[str, int], limit: int) -> list[str] | None:
    """The batch commits reachable from ``p2`` and not from ``p1`` (``git rev-list p1..p2``), newest
    generation first; None past ``limit`` of them (or ``50 * limit`` steps).  One walk of both sides by
    decreasing generation, painting reachability bits (1: from p1, 2: from p2); it stops as soon as no
    commit reachable only from p2 is left to visit."""
    if p2 not in parents:
        return []
    color: dict[str, int] = {p2: 2}
    heap = [(-gen[p2], p2)]
    if p1 in parents:
        color[p1] = color.get(p1, 0) | 1
        if p1 != p2:
            heap.append((-gen[p1], p1))
    heapq.heapify(heap)
    only2 = 1 if color[p2] == 2 else 0
    out: list[str] = []
    steps = 0
    while heap and only2:
        _, c = heapq.heappop(heap)
        col = color[c]
        steps += 1
        if col == 2:
            only2 -= 1
            out.append(c)
            if len(out) > limit:
                return None
        if steps > 50 * limit:
            return None
        for p in parents[c]:
            if p not in parents:
                continue
            old = color.get(p, 0)
            new = old | col
            if new == old:
                continue
            color[p] = new
            if old == 0:
                heapq.heappush(heap, (-gen[p], p))
            if new == 2:
                only2 += 1
            elif old == 2:
                only2 -= 1
    return out


_ISSUE_ONLY = re.compile(r"^\d+$")


def _targets(r: R.Ref, resolver: Resolver, own_pr: str | None) -> list[str]:
    """Node ids a reference points to: a commit for a sha; the PR node for a number some commit
    merged; otherwise both ``issue:N`` and ``pr:N`` (git cannot tell which; the one a GitHub export
    brings is written then, through the pending edges, and the other never is)."""
    if r.kind == "sha":
        sha = resolver.sha(r.value)
        return ["commit:" + sha] if sha else []
    if not _ISSUE_ONLY.match(r.value) or r.value == own_pr:
        return []
    if r.value in resolver.pr_commit:
        return ["pr:" + r.value]
    return ["issue:" + r.value, "pr:" + r.value]


def _file_entry(c: Commit, path: str, added: int | None, deleted: int | None) -> dict:
    """A commit's file as its metadata lists it: line counts, and "status" when git created or deleted it."""
    entry: dict = {"path": path, "added": added, "deleted": deleted}
    if path in c.status:
        entry["status"] = c.status[path]
    return entry
