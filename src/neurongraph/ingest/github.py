"""Read GitHub issues and pull requests from the JSON the ``gh`` CLI prints (docs/ingest.md).

Accepted input: one file or a folder of ``*.json`` files, each holding what one of these printed:

- ``gh issue list --json …`` / ``gh pr list --json …`` (camelCase: ``number``, ``title``, ``body``,
  ``state``, ``labels[{name}]``, ``author{login}``, ``createdAt``, ``closedAt``, ``mergedAt``, ``url``,
  ``comments[{author{login}, body, createdAt}]``, ``closingIssuesReferences[{number, url}]``,
  ``mergeCommit{oid}``, ``headRefName``, ``baseRefName``, ``isDraft``); ``gh issue view``/``gh pr view``
  (one object);
- ``gh api repos/O/R/issues``, ``…/pulls``, ``…/issues/comments`` (snake_case: ``user{login}``,
  ``created_at``, ``closed_at``, ``html_url``, ``pull_request{merged_at}`` marking a PR in the issues
  API, ``merged_at``/``merge_commit_sha`` in the pulls API, ``issue_url`` on a comment), including
  ``--paginate`` output (several arrays one after another) and ``--slurp`` (an array of arrays).

Nothing else is read; unknown fields are ignored.  The reader is pure: it returns an
:class:`IngestBatch` and never writes.
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

from .. import strict_json
from ..errors import InvalidArgument
from ..model import Node
from . import refs as R
from .batch import EdgeSet, IngestBatch
from .confine import Refused, read_confined

__all__ = ["read_github", "MAX_FILE_BYTES", "MIN_COMMENT_CHARS"]

KIND = "github"
# An export of a few thousand threads with bodies and comments is tens of MB; larger than this is not
# an export we were asked to read (skipped with a reason, never loaded whole into memory by mistake).
MAX_FILE_BYTES = 64 * 1024 * 1024
MAX_TEXT = 20_000  # characters of one body/comment kept (the embedder reads far less anyway)
MIN_COMMENT_CHARS = 40  # a comment shorter than this ("LGTM", "+1", "thanks!") is not a node of its own

# github.com/O/R/issues/N, github.com/O/R/pull/N, api.github.com/repos/O/R/issues/N, …/pulls/N
_URL = re.compile(r"https?://(?:api\.)?github\.com/(?:repos/)?([\w.-]+)/([\w.-]+)/(issues|pull|pulls)/(\d+)", re.I)
_QUALIFIED = re.compile(r"([\w.-]+/[\w.-]+)#\d|github\.com/([\w.-]+/[\w.-]+)/(?:issues|pull)/", re.I)
_FULL_SHA = re.compile(r"^[0-9a-f]{40}$")
# camelCase fields only `gh pr list/view` prints, snake_case fields only the pulls API has
_PR_FIELDS = (
    "mergeCommit",
    "mergedAt",
    "headRefName",
    "baseRefName",
    "isDraft",
    "closingIssuesReferences",
    "reviewDecision",
    "mergeStateStatus",
    "headRefOid",
    "baseRefOid",
    "mergedBy",
    "potentialMergeCommit",
    "merge_commit_sha",
    "merged_at",
    "head",
    "base",
    "draft",
    "requested_reviewers",
)


def _fail(where: str, msg: str) -> InvalidArgument:
    return InvalidArgument(f"{where}: {msg}")


_WS = " \t\r\n"


class _Located(list):
    """A JSON array read element by element: ``[(line, element), ...]``, so an error names the line an
    item starts on (an array element that is itself an array is a ``_Located`` too: ``--slurp`` pages)."""


def _skip_ws(text: str, i: int) -> int:
    n = len(text)
    while i < n and text[i] in _WS:
        i += 1
    return i


def _decode(text: str, i: int, depth: int = 0) -> tuple[Any, int]:
    """One JSON value at ``i`` (strict: see strict_json); the top two levels of arrays as :class:`_Located`."""
    if depth > 1 or i >= len(text) or text[i] != "[":
        return strict_json.raw_decode(text, i)
    out = _Located()
    line, pos = text.count("\n", 0, i) + 1, i
    i = _skip_ws(text, i + 1)
    if i < len(text) and text[i] == "]":
        return out, i + 1
    while True:
        line, pos = line + text.count("\n", pos, i), i
        value, end = _decode(text, i, depth + 1)
        out.append((line, value))
        i = _skip_ws(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_ws(text, i + 1)
            continue
        if i < len(text) and text[i] == "]":
            return out, i + 1
        raise json.JSONDecodeError("Expecting ',' delimiter", text, i)


def _parse_json(text: str, where: str) -> list:
    """All JSON values in ``text`` (``gh api --paginate`` writes several arrays back to back)."""
    values, i, n = [], 0, len(text)
    while True:
        i = _skip_ws(text, i)
        if i >= n:
            break
        try:
            value, i = _decode(text, i)  # a repeated key is an error, not "the last one wins"
        except strict_json.StrictJSONError as exc:
            raise _fail(where, str(exc)) from None
        except json.JSONDecodeError as exc:
            raise _fail(where, f"not valid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}") from None
        except RecursionError:
            raise _fail(where, "JSON nested too deeply to be a gh export") from None
        values.append(value)
    if not values:
        raise _fail(where, "empty file (expected a JSON array of issues, pull requests or comments)")
    return values


def _items(values: list, where: str) -> list[tuple[str, Any]]:
    """(label, item) for every item: arrays are concatenated, an array of arrays flattened, an object
    with a ``number`` (``gh issue view --json``) is one item.  A label names the item's line."""
    out: list[tuple[str, Any]] = []
    for v_no, value in enumerate(values):
        page = f"array {v_no + 1} " if len(values) > 1 else ""
        if isinstance(value, dict):
            if "number" not in value and "issue_url" not in value:
                raise _fail(
                    where,
                    f"{page or 'the top level '}is a JSON object without 'number'; expected an array "
                    "of issues/pull requests/comments as `gh issue list --json …` or `gh api` print",
                )
            out.append((f"{page}object", value))
            continue
        if not isinstance(value, list):
            raise _fail(
                where,
                f"{page or 'the top level '}is a JSON {type(value).__name__}; expected an array of "
                "issues, pull requests or comments",
            )
        for k, (line, item) in enumerate(value):
            if isinstance(item, _Located):  # gh api --paginate --slurp: an array of pages
                out.extend((f"line {ln}: {page}item {k} item {j}", x) for j, (ln, x) in enumerate(item))
            else:
                out.append((f"line {line}: {page}item {k}", item))
    return out


def _str(v: Any) -> str:
    return v if isinstance(v, str) else ""


def _login(v: Any) -> str | None:
    return v.get("login") if isinstance(v, dict) and isinstance(v.get("login"), str) else None


def _time(v: Any) -> tuple[str | None, int | None]:
    """(ISO string as given, epoch seconds) of a GitHub timestamp; (None, None) when absent or unreadable."""
    if not isinstance(v, str) or not v:
        return None, None
    try:
        dt = datetime.fromisoformat(v.replace("Z", "+00:00"))
    except ValueError:
        return v, None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return v, int(dt.timestamp())


def _number(v: Any, where: str) -> int:
    """gh and the REST API print ``number`` as a JSON integer; ``"12"`` is another tool's output, not read."""
    if type(v) is not int or v <= 0:
        raise _fail(where, f"'number' must be a positive integer (a JSON number, not a string), got {_shown(v)}")
    return v


def _shown(v: Any) -> str:
    """A bad value for an error message: its JSON type, and the value when it is short."""
    kind = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(v), "a number"
    )
    r = json.dumps(v, ensure_ascii=False, default=str) if not isinstance(v, (dict, list)) else ""
    return f"{kind} {r}" if r and len(r) <= 60 else kind


# the fields the reader uses, by the JSON type gh / the REST API print them (null is always allowed):
# a field of another type means the file is not what the reader thinks it is, so it is refused, not guessed
_STRINGS = (
    "title",
    "body",
    "state",
    "url",
    "html_url",
    "headRefName",
    "baseRefName",
    "merge_commit_sha",
    "issue_url",
    "pull_request_url",
)
_TIMES = ("createdAt", "created_at", "closedAt", "closed_at", "mergedAt", "merged_at", "submittedAt")
_OBJECTS = ("author", "user", "pull_request", "mergeCommit", "head", "base")
_LISTS = ("labels", "reviews")  # closingIssuesReferences: anything but an array is read as none
_BOOLS = ("isDraft", "draft")


def _check_types(item: dict, where: str) -> None:
    """Refuse (with the item's line and the field) a field of the wrong JSON type or an unreadable time."""
    for fields, ok, want in (
        (_STRINGS, lambda v: isinstance(v, str), "a string"),
        (_OBJECTS, lambda v: isinstance(v, dict), "an object"),
        (_LISTS, lambda v: isinstance(v, list), "an array"),
        (_BOOLS, lambda v: isinstance(v, bool), "true or false"),
    ):
        for f in fields:
            v = item.get(f)
            if v is not None and not ok(v):
                raise _fail(where, f"field {f!r} must be {want} or null, got {_shown(v)}")
    for f in _TIMES:
        v = item.get(f)
        if v is None:
            continue
        if not isinstance(v, str) or (v and _time(v)[1] is None):
            raise _fail(where, f"field {f!r} must be an ISO-8601 time (2024-05-01T12:00:00Z) or null, got {_shown(v)}")
    comments = item.get("comments")
    if comments is not None and not isinstance(comments, list) and type(comments) is not int:
        raise _fail(where, f"field 'comments' must be an array (gh) or a count (REST) or null, got {_shown(comments)}")
    for k, c in enumerate(comments if isinstance(comments, list) else []):
        if not isinstance(c, dict):
            raise _fail(where, f"comments[{k}] must be an object, got {_shown(c)}")
        _check_types(c, f"{where} comments[{k}]")
    for k, r in enumerate(item.get("reviews") or []):
        if not isinstance(r, dict):
            raise _fail(where, f"reviews[{k}] must be an object, got {_shown(r)}")
        _check_types(r, f"{where} reviews[{k}]")


def _repo_of(url: Any) -> tuple[str | None, str | None, int | None]:
    """(owner/repo, 'issues'|'pull', number) of a GitHub web or API url."""
    m = _URL.search(url) if isinstance(url, str) else None
    if not m:
        return None, None, None
    kind = "pull" if m.group(3).lower() in ("pull", "pulls") else "issues"
    return f"{m.group(1)}/{m.group(2)}", kind, int(m.group(4))


class _Thread:
    """What the files say about one issue or pull request (several files may each say part of it)."""

    def __init__(self, number: int):
        self.number = number
        self.is_pr = False
        self.f: dict[str, Any] = {}
        self.comments: dict[
            tuple, dict
        ] = {}  # (created, author, body) -> comment: the same comment from two files once
        self.closing: list[tuple[int, str]] = []
        self.files: list[str] = []

    def put(self, key: str, value: Any) -> None:
        if value not in (None, "", []) and self.f.get(key) in (None, "", []):
            self.f[key] = value

    def add_comment(self, author: str | None, body: str, created: str | None, url: str | None) -> None:
        key = (created or "", author or "", body)
        if key not in self.comments:
            self.comments[key] = {"author": author, "body": body, "created": created, "url": url}


def _labels(v: Any) -> list[str]:
    out = []
    for x in v if isinstance(v, list) else []:
        name = x.get("name") if isinstance(x, dict) else x
        if isinstance(name, str) and name and name not in out:
            out.append(name)
    return out


def _read_item(
    item: dict, where: str, threads: dict[int, _Thread], repos: dict[str, tuple[str, str]], stats: dict, pr_hint: bool
) -> None:
    """Fold one JSON object (an issue, a pull request or a comment) into ``threads``."""
    _check_types(item, where)
    if "number" not in item:
        _read_comment(item, where, threads, repos, stats)
        return
    num = _number(item["number"], where)
    url = _str(item.get("html_url")) or _str(item.get("url"))
    repo, url_kind, _ = _repo_of(url)
    if repo:
        repos.setdefault(repo.lower(), (repo, where))
    t = threads.setdefault(num, _Thread(num))
    t.files.append(where)
    pr = (
        url_kind == "pull"
        or isinstance(item.get("pull_request"), dict)
        or any(k in item for k in _PR_FIELDS)
        or _str(item.get("state")).upper() == "MERGED"
        or (pr_hint and url_kind is None and "pull_request" not in item)
    )
    t.is_pr = t.is_pr or pr
    t.put("title", _str(item.get("title")))
    t.put("body", _str(item.get("body")))
    if "html_url" in item or (url and "api.github.com" not in url):
        t.put("url", _str(item.get("html_url")) or url)
    _read_state(item, t)
    t.put("labels", _labels(item.get("labels")))
    t.put("author", _login(item.get("author")) or _login(item.get("user")))
    t.put("created", _str(item.get("createdAt")) or _str(item.get("created_at")) or None)
    t.put("closed", _str(item.get("closedAt")) or _str(item.get("closed_at")) or None)
    _read_branches(item, t)
    for c in _inline_comments(item):
        t.add_comment(
            _login(c.get("author")) or _login(c.get("user")),
            c["body"],
            _str(c.get("createdAt")) or _str(c.get("created_at")) or None,
            _str(c.get("url")) or _str(c.get("html_url")) or None,
        )
        stats["comments_read"] = stats.get("comments_read", 0) + 1
    _read_closing(item, t, where)


def _read_comment(
    item: dict, where: str, threads: dict[int, _Thread], repos: dict[str, tuple[str, str]], stats: dict
) -> None:
    """A comment of the REST API: repos/O/R/issues/comments (issue_url), …/pulls/comments (pull_request_url)."""
    key = "issue_url" if "issue_url" in item else "pull_request_url" if "pull_request_url" in item else None
    if key is None:
        raise _fail(
            where,
            "object without 'number' (nor 'issue_url'/'pull_request_url', as a comment has); not an issue, "
            "pull request or comment as gh prints them",
        )
    repo, _, num = _repo_of(item.get(key))
    if num is None:
        raise _fail(where, f"comment {key!r} is not a GitHub issue or pull request url: {item.get(key)!r}")
    if repo:
        repos.setdefault(repo.lower(), (repo, where))
    t = threads.setdefault(num, _Thread(num))
    t.is_pr = t.is_pr or key == "pull_request_url"
    t.add_comment(
        _login(item.get("user")) or _login(item.get("author")),
        _str(item.get("body")),
        _str(item.get("created_at")) or _str(item.get("createdAt")) or None,
        _str(item.get("html_url")) or None,
    )
    stats["comments_read"] = stats.get("comments_read", 0) + 1


def _read_state(item: dict, t: _Thread) -> None:
    """state (open/closed/merged), merged time and the merge commit, from either the gh or the REST shape."""
    state = _str(item.get("state")).lower()
    merged = item.get("mergedAt") or item.get("merged_at")
    if not merged and isinstance(item.get("pull_request"), dict):
        merged = item["pull_request"].get("merged_at")
    t.put("merged", merged if isinstance(merged, str) else None)
    if state:
        if state == "merged" or (merged and state == "closed"):
            t.f["state"] = "merged"
        else:
            t.put("state", state)
    mc = item.get("mergeCommit")
    sha = mc.get("oid") if isinstance(mc, dict) else None
    sha_from = "mergeCommit.oid"
    if not sha and isinstance(item.get("merge_commit_sha"), str):
        sha, sha_from = item["merge_commit_sha"], "merge_commit_sha"
    if isinstance(sha, str) and _FULL_SHA.match(sha.lower()):
        t.put("merge_commit", (sha.lower(), sha_from))


def _read_branches(item: dict, t: _Thread) -> None:
    head, base = item.get("headRefName"), item.get("baseRefName")
    if head is None and isinstance(item.get("head"), dict):
        head = item["head"].get("ref")
    if base is None and isinstance(item.get("base"), dict):
        base = item["base"].get("ref")
    t.put("head", head if isinstance(head, str) else None)
    t.put("base", base if isinstance(base, str) else None)
    draft = item.get("isDraft", item.get("draft"))
    if isinstance(draft, bool):
        t.put("draft", draft)


def _inline_comments(item: dict) -> list[dict]:
    """gh …list --json comments/reviews: the thread's comments inline (a review's summary text is one too)."""
    comments = item.get("comments")
    if not isinstance(comments, list):  # REST: a count
        comments = []
    reviews = item.get("reviews")
    if isinstance(reviews, list):
        comments = comments + [
            {**r, "createdAt": r.get("submittedAt")}
            for r in reviews
            if isinstance(r, dict) and isinstance(r.get("body"), str) and r["body"].strip()
        ]
    return [c for c in comments if isinstance(c, dict) and isinstance(c.get("body"), str)]


def _read_closing(item: dict, t: _Thread, where: str) -> None:
    """GitHub's own closingIssuesReferences: (number, repository) of the issues a PR closes."""
    closing = item.get("closingIssuesReferences")
    for ref in closing if isinstance(closing, list) else []:
        if not (isinstance(ref, dict) and "number" in ref):
            continue
        rrepo, _, _ = _repo_of(ref.get("url"))
        rr = ref.get("repository")
        if rrepo is None and isinstance(rr, dict) and isinstance(rr.get("name"), str):
            owner = _login(rr.get("owner"))
            rrepo = f"{owner}/{rr['name']}" if owner else None
        try:
            t.closing.append((_number(ref["number"], where + " closingIssuesReferences"), rrepo or ""))
        except InvalidArgument:
            continue


def _files(path: Path, batch: IngestBatch, max_bytes: int) -> list[Path]:
    if path.is_file():
        files = [path]
    elif path.is_dir():
        files = sorted(
            p
            for p in path.rglob("*.json")
            if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts)
        )
    else:
        raise InvalidArgument(f"{path}: no such file or folder")
    if not files:
        raise InvalidArgument(
            f"{path}: no *.json files (expected the JSON that `gh issue list --json …`, "
            "`gh pr list --json …` or `gh api` print)"
        )
    return files


def _cross_repo(evidence: str, repo: str | None) -> bool:
    """True when a reference names another repository (``other/repo#12``, a url of another repo)."""
    m = _QUALIFIED.search(evidence)
    if not m:
        return False
    named = (m.group(1) or m.group(2) or "").lower()
    return repo is None or named != repo.lower()


def _read_files(root: Path, batch: IngestBatch, max_file_bytes: int, stats: dict) -> dict[int, _Thread]:
    """Every thread the export's files describe; one repository only (ids issue:N / pr:N do not name it)."""
    threads: dict[int, _Thread] = {}
    repos: dict[str, tuple[str, str]] = {}  # lower-case owner/repo -> (as spelled, where first seen)
    base = root if root.is_dir() else root.parent
    for f in _files(root, batch, max_file_bytes):
        where = str(f)
        try:  # only regular files inside the folder given (a link out of it is skipped, see confine.py)
            raw = read_confined(base, f, max_bytes=max_file_bytes)
        except Refused as exc:
            batch.skip(where, str(exc))
            continue
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise _fail(where, f"not UTF-8 (byte {exc.start}); gh writes UTF-8 JSON") from None
        name = f.name.lower()
        pr_hint = "pull" in name or name.startswith(("pr", "prs"))
        stats["files"] += 1
        for label, item in _items(_parse_json(text, where), where):
            if not isinstance(item, dict):
                raise _fail(
                    f"{where}: {label}",
                    f"is a JSON {type(item).__name__}, not an object (an issue, pull request or comment)",
                )
            _read_item(item, f"{where}: {label}", threads, repos, stats, pr_hint)
    if len(repos) > 1:
        a, b = list(repos.values())[:2]
        raise InvalidArgument(
            f"items of several repositories in one export: {a[0]} ({a[1]}) and {b[0]} ({b[1]}); "
            "ingest each repository separately (ids issue:N / pr:N do not name the repository)"
        )
    stats["repository"] = next(iter(repos.values()))[0] if repos else None
    # threads known only from comments (no issue/pr record) are not nodes: nothing says what they are
    orphans = [n for n, t in threads.items() if not t.files]
    for n in orphans:
        del threads[n]
    if orphans:
        stats["comments_without_thread"] = len(orphans)
    return threads


class _ThreadWriter:
    """Turns threads into nodes (thread, long comments) and edges (part_of, closes, duplicate_of, refs,
    merged_as); one per read, it holds the id of every thread and the counts the summary reports."""

    def __init__(self, batch: IngestBatch, threads: dict[int, _Thread], repo: str | None):
        self.batch, self.threads, self.repo = batch, threads, repo
        self.ids = {n: (f"pr:{n}" if t.is_pr else f"issue:{n}") for n, t in threads.items()}
        self.edges = EdgeSet(KIND)
        self.counts = {
            "issues": 0,
            "pull_requests": 0,
            "comment_nodes": 0,
            "comments_folded": 0,
            "refs_unresolved": 0,
            "refs_other_repo": 0,
        }

    def target(self, num: int, default: str = "issue") -> str:
        return self.ids.get(num) or f"{default}:{num}"

    def other_repo(self, evidence: str) -> bool:
        if _cross_repo(evidence, self.repo):
            self.counts["refs_other_repo"] += 1
            return True
        return False

    def write(self, n: int) -> None:
        t = self.threads[n]
        tid = self.ids[n]
        meta, merge_sha = self._meta(n, t)
        comments = sorted(t.comments.values(), key=lambda c: (c["created"] or "", c["author"] or "", c["body"]))
        meta["comments"] = len(comments)
        body = t.f.get("body", "").replace("\r\n", "\n")[:MAX_TEXT]
        folded = [c for c in comments if len(c["body"].strip()) < MIN_COMMENT_CHARS and c["body"].strip()]
        text = body
        if folded:  # short replies stay with the thread: too little to be a source of their own
            text = (body + "\n\n" if body else "") + "\n".join(
                f"{c['author'] or 'someone'}: {c['body'].strip()}" for c in folded
            )
            self.counts["comments_folded"] += len(folded)
        title = t.f.get("title", "") or f"{'Pull request' if t.is_pr else 'Issue'} #{n}"
        self.batch.nodes.append(Node(tid, "pull_request" if t.is_pr else "issue", title, text, meta))
        self.counts["pull_requests" if t.is_pr else "issues"] += 1
        texts = [(None, body), *self._comment_nodes(n, tid, title, comments)]
        closes = self._closes(t, tid, body, merge_sha) if t.is_pr else set()
        self._refs(n, tid, texts, closes)

    def _meta(self, n: int, t: _Thread) -> tuple[dict[str, Any], tuple[str, str] | None]:
        f = t.f
        created_iso, created_t = _time(f.get("created"))
        meta: dict[str, Any] = {"source": self.batch.source, "ingest": KIND, "number": n}
        for k in ("state", "url", "author", "labels", "head", "base", "draft"):
            if f.get(k) not in (None, "", []):
                meta[k] = f[k]
        if created_iso:
            meta["created"] = created_iso
        if created_t is not None:
            meta["time"] = created_t
        if f.get("closed"):
            meta["closed"] = f["closed"]
        if f.get("merged"):
            meta["merged"] = f["merged"]
        merge_sha = None
        if t.is_pr and f.get("merge_commit"):
            sha, field = f["merge_commit"]
            # gh's mergeCommit is null until a PR merges; the pulls API's merge_commit_sha is also set on
            # open PRs (a test merge), so that one counts only for a merged PR
            if field == "mergeCommit.oid" or f.get("merged") or f.get("state") == "merged":
                merge_sha = (sha, field)
                meta["merge_commit"] = sha
        return meta, merge_sha

    def _comment_nodes(self, n: int, tid: str, title: str, comments: list[dict]) -> list[tuple[str | None, str]]:
        """Nodes for the comments long enough to be sources; (node id or None, text) of every comment."""
        texts: list[tuple[str | None, str]] = []
        for k, c in enumerate(comments, 1):
            ctext = c["body"].replace("\r\n", "\n")[:MAX_TEXT]
            if len(ctext.strip()) < MIN_COMMENT_CHARS:
                texts.append((None, ctext))
                continue
            cid = f"comment:{n}:{k}"
            c_iso, c_t = _time(c["created"])
            cmeta: dict[str, Any] = {
                "source": self.batch.source,
                "ingest": KIND,
                "number": n,
                "thread": tid,
                "owner": tid,
                "position": k,
            }
            if c["author"]:
                cmeta["author"] = c["author"]
            if c_iso:
                cmeta["created"] = c_iso
            if c_t is not None:
                cmeta["time"] = c_t
            if c["url"]:
                cmeta["url"] = c["url"]
            self.batch.nodes.append(Node(cid, "comment", f"Comment {k} on #{n}: {title}"[:300], ctext, cmeta))
            self.edges.add(cid, "part_of", tid, cid, "")
            self.counts["comment_nodes"] += 1
            texts.append((cid, ctext))
        return texts

    def _closes(self, t: _Thread, tid: str, body: str, merge_sha: tuple[str, str] | None) -> set[str]:
        """GitHub's own closingIssuesReferences, then closing keywords in the PR body; the merge commit.
        Returns the threads it closes."""
        closes: set[str] = set()
        for num, rrepo in t.closing:
            if rrepo and self.repo and rrepo.lower() != self.repo.lower():
                self.counts["refs_other_repo"] += 1
                continue
            closes.add(self.target(num))
            self.edges.add(tid, "closes", self.target(num), tid, f"closingIssuesReferences #{num}")
        for r in R.closing_refs(body):
            if not self.other_repo(r.evidence):
                closes.add(self.target(int(r.value)))
                self.edges.add(tid, "closes", self.target(int(r.value)), tid, r.evidence)
        if merge_sha:
            self.edges.add(tid, "merged_as", f"commit:{merge_sha[0]}", tid, f"{merge_sha[1]} {merge_sha[0]}")
        return closes

    def _refs(self, n: int, tid: str, texts: list[tuple[str | None, str]], explicit: set[str]) -> None:
        """duplicate_of first (it outranks a plain ref), then refs to known threads and full commit ids;
        a thread this one closes or duplicates (``explicit``) gets no plain ref as well."""
        for cid, txt in texts:
            where = {"in": cid} if cid else {}
            for r in R.duplicate_refs(txt):
                if self.other_repo(r.evidence):
                    continue
                dst = self.target(int(r.value))
                self.edges.add(tid, "duplicate_of", dst, tid, r.evidence, **where)
                explicit.add(dst)
        for cid, txt in texts:
            where = {"in": cid} if cid else {}
            for r in R.issue_refs(txt):
                num = int(r.value)
                if self.other_repo(r.evidence) or num == n:
                    continue
                if num not in self.ids:
                    self.counts["refs_unresolved"] += 1
                    continue
                if self.ids[num] not in explicit:
                    self.edges.add(tid, "refs", self.ids[num], tid, r.evidence, **where)
            for r in R.sha_refs(txt):
                if len(r.value) == 40:  # only full commit ids: a prefix cannot be resolved without the git history
                    self.edges.add(tid, "refs", f"commit:{r.value}", tid, r.evidence, **where)


def read_github(
    path: str | os.PathLike,
    source: str | None = None,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    strict: bool = False,
) -> IngestBatch:
    """Read a ``gh`` JSON export (one file or a folder of them) into an :class:`IngestBatch` of kind ``github``.

    Nodes ``issue:N`` (type ``issue``), ``pr:N`` (type ``pull_request``) and ``comment:N:K`` (type
    ``comment``, the K-th comment of thread N by creation time, for comments of at least
    ``MIN_COMMENT_CHARS`` characters) ``part_of`` their thread; edges ``closes``, ``duplicate_of``,
    ``refs`` and ``merged_as`` (PR -> ``commit:<sha>``).  A folder is a complete batch (``--prune`` may
    delete what is missing from it), a single file is not.  A thread over a field limit (a title of a
    megabyte) is skipped and named, the rest is read (``strict``: an error).
    """
    root = Path(path)
    batch = IngestBatch(kind=KIND, source="", complete=root.is_dir())
    stats: dict[str, Any] = {"files": 0, "comments_read": 0}
    threads = _read_files(root, batch, max_file_bytes, stats)
    repo = stats.pop("repository")
    batch.source = source or repo or (root.name if root.is_dir() else root.resolve().parent.name) or "github"
    writer = _ThreadWriter(batch, threads, repo)
    refused: set[str] = set()
    for n in sorted(threads):
        counts = dict(writer.counts)
        if not batch.take(writer.ids[n], partial(writer.write, n), strict=strict, edges=writer.edges):
            writer.counts = counts
            refused.add(writer.ids[n])
    if refused:  # nothing points at a thread that was not taken (its comments went with it)
        writer.edges.drop_touching(refused)
    batch.edges = writer.edges.edges()
    stats.update(writer.counts)
    stats["repository"] = repo
    stats["edges"] = writer.edges.counts()
    batch.stats = stats
    return batch
