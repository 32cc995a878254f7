"""Read a git repository's history as nodes and typed edges, with one streaming ``git log``.

Why the git executable and not a binding: measured here, one ``git log --numstat -M``
process reads iproute2's 7k commits with rename detection in ~2 s and mypy's 13.7k in
~1.5 s; pygit2/dulwich would need a diff per commit in Python to get the same numstat
and renames.  Two processes per sync in all (the log of what is new, with its ``-U0``
patch streamed through ``git_log.py``, and a cheap ``sha/parents/time/subject`` listing
of everything reachable to resolve references), never one per commit.

What becomes what (docs/ingest.md, "git"):
- ``commit:<sha>`` (type ``commit``): title = subject (for a PR merge commit, the PR's
  title), text = the body with trailers; metadata: author, times, parents, files with
  line counts, references found, ``pr``, ``time`` = committer time (epoch seconds),
  ``hunks`` (``-U0`` hunk headers per new path), ``renames``, ``code`` (the identifiers whose
  count the commit raised / lowered, pickaxe semantics; ``index/code_terms.py``),
  ``aggregate: true`` on a merge commit that merged no pull request ("Merge branch 'net-next'"):
  its diff repeats the commits it merges, each already a node, so searches weigh it down;
- ``file:<path>`` (type ``file``), ``touches`` commit → file, ``renamed_to`` old → new;
- ``fixes`` (``Fixes: <sha> ("subject")``, by sha prefix, else by the quoted subject),
  ``reverts``, ``follows_up`` (phrases + ``#N``/sha), ``refs`` (other ``#N``/sha),
  ``merged_in`` commit → ``pr:N`` for squash ``(#N)`` and merge commits, ``part_of`` from each
  commit of a merged PR's branch (``M^1..M^2``) to ``pr:N``;
- ``tag:<name>`` (type ``tag``) ``tags`` → the commit, every sync (``git_tags.py``).

This module is the sync: which tips to read, the log, the state it leaves in the store's meta.  The
repository itself is :class:`~.git_repo.GitRepo` (``git_repo.py``); what one commit becomes is
:class:`~.git_commits.CommitReader` (``git_commits.py``).
"""

from __future__ import annotations

import json
import os

from ..model import Node
from .batch import IngestBatch
from .git_commits import MAX_FILES_LISTED, CommitReader, Resolver
from .git_log import read_log, start_merge_hunks
from .git_meta import path_key, reader_key, refs_key, root_key, state_key, tips_key
from .git_repo import GitError, GitRepo, url_name
from .git_tags import read_tags

__all__ = [
    "read_git",
    "GitError",
    "GitRepo",
    "url_name",
    "state_key",
    "tips_key",
    "refs_key",
    "root_key",
    "source_name",
    "MAX_FILES_LISTED",
]

DEFAULT_REFS = ["HEAD"]  # always read, with every tag (``tags=True``): what ``git log HEAD --tags`` reads


# What this reader derives from a commit, versioned: bump it whenever a commit's node or edges change for the
# same commit (2: merge commits without a PR are marked `aggregate`; 3: hunks, renames and code terms in the
# metadata, line counts from the -U0 diff, `part_of` edges from a merged PR's branch commits; 4: code terms
# of files up to 20,000 changed lines and 4,000 tokens a side, so an initial import names what it introduced;
# 5: a merge's hunks against its second parent, `hunks_p2`; 6: the code terms of files over 20,000 changed
# lines as `code.bulk_added` / `bulk_removed`, so "which commit introduced X" finds a generated header's X;
# 7: a listed file's `status` A / D from git's "new / deleted file mode", so "when was F removed" holds for
# binary and empty files too); 8: a revert without git's "This reverts commit" line links to the commit its
# subject names: ``Revert commit <sha>``, or the newest earlier commit with the subject of ``Revert "…"``);
# 9: every tag's history is read (not only HEAD's), a PR number counts only for a commit on a first-parent
# chain of a synced tip (a fork's "Merge pull request #1" is a plain merge, ``pr_elsewhere``), a merge titled
# "Title (#N)" gets its branch's ``part_of`` edges, a ``#N`` no PR has is an ``issue:N`` placeholder
# (``fixes`` after a closing keyword, else ``refs``), ``Revert "X" (#N)`` and ``Reverts owner/repo#N``,
# ``cherry_pick_of`` from ``(cherry picked from commit <sha>)``, the people a commit's trailers name as
# ``reviewed_by`` / ``acked_by`` / ``tested_by`` / ``reported_by`` / ``suggested_by`` / ``co_authored_by`` /
# ``signed_off_by``).
# A store synced
# by another version is read again in full on its next sync (unchanged commits are still not rewritten or
# re-embedded): incremental syncs otherwise never revisit old commits, and a store would keep an older reader's
# view of them for good.
READER_VERSION = 9


def reference_name(repo: GitRepo, source: str) -> str:
    """The repository that references in messages name as this one: the hosted remote's ``owner/repo``
    (whatever the source is called), else only the source's last part. A local clone's or a bundle's path
    (``history/libbpf``) names no owner, and ``Closes: https://github.com/libbpf/libbpf/issues/928`` is
    still this repository's issue."""
    if repo.remote_is_hosted():
        hosted = repo.remote_name()
        if hosted:
            return hosted
    return source.rstrip("/").rpartition("/")[2] or source


def source_name(repo: GitRepo, store=None, refs: list[str] | None = None) -> str:
    """A git source's default name: the repository's own (GitHub ``owner/repo``, else a remote URL's last
    part); with no remote, the name ``store`` recorded for the repository's root commit (meta
    :func:`root_key`, else the source of that commit's node), so a copy in another folder is the same
    source; only for a repository the store has never seen, the folder's name.  A source this store already
    synced from this very folder keeps its name, and so does a clone whose remote is a local path."""
    known = _known_source(repo, store, refs) if store is not None else None
    if known and (store.get_meta(path_key(known)) == str(repo.path) or not repo.remote_is_hosted()):
        return known  # this folder's own name, or a local clone's: the project the store knows by its root
    return repo.remote_name() or known or repo.path.name.removesuffix(".git")


def _known_source(repo: GitRepo, store, refs: list[str] | None) -> str | None:
    """The source ``store`` recorded for the repository's root commit (meta, else the root's node)."""
    roots = repo.roots([repo.resolve(x) for r in dict.fromkeys(DEFAULT_REFS + (refs or [])) for x in repo.expand(r)])
    for root in roots:
        known = store.get_meta(root_key(root))
        if known:
            return str(known)
    for root in roots:
        row = store.get_node("commit:" + root)
        if row is not None and row.metadata.get("ingest") == "git" and row.metadata.get("source"):
            return str(row.metadata["source"])
    return None


def read_git(
    repo: str | os.PathLike | GitRepo,
    refs: list[str] | None = None,
    source: str | None = None,
    synced: dict[str, str] | None = None,
    progress=None,
    *,
    strict: bool = False,
    known_tags: list[str] | None = None,
    tags: bool = True,
) -> IngestBatch:
    """The commits of ``HEAD``, of ``refs`` (more branches: a glob such as ``origin/release-*`` names every
    branch it matches) and, with ``tags``, of every tag (releases live on release branches: what ``git log
    HEAD --tags`` reads), not yet synced, as an :class:`IngestBatch`.  ``HEAD`` is always read: "now", "since
    the last release" and ``git log`` mean its history.

    ``synced`` maps a ref name to the tip ingested last time (store meta, see :func:`tips_key`);
    commits reachable from those tips are skipped.  After a force-push the old tip is still
    excluded if git still has it, so only the rewritten commits are read; if git no longer has
    it, everything reachable is read again and the sync step skips what is unchanged.  A commit over a
    field limit (a 10 MB message) is skipped and named, the rest is read (``strict``: an error)."""
    g = repo if isinstance(repo, GitRepo) else GitRepo(repo)
    source = source or g.name
    synced = synced or {}
    branch_tips, tag_tips = _tips(g, DEFAULT_REFS + list(refs or []), tags)
    tips = {**tag_tips, **branch_tips}
    batch = IngestBatch(kind="git", source=source, complete=False)
    batch.state = {
        tips_key(source): json.dumps(tips, sort_keys=True),
        refs_key(source): json.dumps({"refs": list(refs or []), "tags": tags}),
        reader_key(source): str(READER_VERSION),
        path_key(source): str(g.path),  # where exact provenance (git blame) can be read later, if still there
    }
    heads = sorted(set(tips.values()))
    if synced == tips:
        batch.stats = {"commits": 0, "up_to_date": True, "tips": branch_tips, "tag_tips": len(tag_tips)}
        read_tags(g, batch, source, heads, known_tags)  # a tag can move without a new commit
        return batch
    old = {r: synced[r] for r in tips if synced.get(r)}
    exclude = sorted({sha for sha in synced.values() if g.has_commit(sha)})
    force_pushed = [
        r
        for r in branch_tips
        if r in old and old[r] != tips[r] and (old[r] not in exclude or not g.is_ancestor(old[r], tips[r]))
    ]
    revs = heads + ["^" + s for s in exclude]
    on_log = None
    if progress:  # the log stream is most of a big history's read: its own bar, with a total and an ETA
        counted = g._git("rev-list", "--count", *revs, "--", check=False).stdout.decode().strip()
        total = int(counted) if counted.isdigit() else 0
        progress("log", 0, total)
        on_log = lambda n: progress("log", n, max(n, total))  # noqa: E731
    merge_hunks = start_merge_hunks(g.path, revs)  # its own git process, alongside the main log
    commits, lost = read_log(g.path, revs, on_log)
    if progress:
        progress("log", len(commits), len(commits))
        progress("reading", 0, len(commits))
    p2 = merge_hunks()
    if p2:
        for c in commits:
            if c.sha in p2:
                c.hunks_p2 = p2[c.sha]
                c.flags["p2_read"] = True
    mainline = g.mainline(heads)
    resolver = Resolver(g.listing(heads), mainline)
    for root in g.roots(heads):
        batch.state[root_key(root)] = source  # a later ingest from another folder finds the name (source_name)
    reader = CommitReader(batch, source, resolver, reference_name(g, source))
    commits = reader.take_all(commits, progress, strict)
    reader.branch_edges(commits)
    for p in reader.files:
        batch.nodes.append(Node("file:" + p, "file", p, "", {"path": p, "repo": source}))
    unreadable = [c.sha for c in commits if c.unreadable] + [sha for sha, _ in lost]
    for sha, why in lost:
        batch.skip("commit:" + sha, "unreadable: " + why)
    batch.stats = {
        "commits": len(commits),
        "files": len(reader.files),
        "up_to_date": False,
        "tips": branch_tips,
        "tag_tips": len(tag_tips),
        "force_pushed": force_pushed,
        **reader.counts,
        "unreadable_commits": len(unreadable),
        "unreadable": unreadable[:200],
    }
    read_tags(g, batch, source, heads, known_tags)
    if progress:
        progress("reading", len(commits), len(commits))
    return batch


def _tips(g: GitRepo, refs: list[str], tags: bool) -> tuple[dict[str, str], dict[str, str]]:
    """(``{ref: sha}`` of the named refs, globs expanded; ``{refs/tags/NAME: sha}`` of every tag, with ``tags``)."""
    named = list(dict.fromkeys(r for ref in refs for r in g.expand(ref)))
    return {r: g.resolve(r) for r in named}, (g.tag_tips() if tags else {})
