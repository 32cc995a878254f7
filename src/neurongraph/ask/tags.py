"""Tags as sets of commits: "since v2.0", "between v1.1 and v1.2", "in v6.1", "which release first contained X".

Why ancestry and not the tag's date: a release is the commits reachable from its tag (``git log v2.0``),
and "since v2.0" is what ``git log v2.0..HEAD`` lists; a date cut gets both wrong as soon as a branch
merged after the tag carries older commits, or an annotated tag was made days after its commit.  The
commits' stored ``parents`` (the git ingest's metadata) become one sparse child → parent matrix per store
state (memoised on the projection), and each phrase is one ``breadth_first_order`` over it: no git at
query time, no per-commit Python walk.  "In vX" is vX's commits not reachable from the previous tag (the
tag below vX with the most ancestors: ``git describe --abbrev=0 vX^``).
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING

import numpy as np

from ..errors import NeuronGraphError

if TYPE_CHECKING:  # scipy.sparse costs ~0.1 s to import: only a tag phrase needs it
    from scipy.sparse import csr_matrix

__all__ = [
    "TagGraph",
    "LazyTags",
    "tag_graph",
    "commit_graph",
    "off_head",
    "tag_name",
    "looks_like_version",
    "titled_releases",
    "release_commits",
]


class TagGraph:
    """The store's commits (ids, parent matrix) and tags (name → commit row, time)."""

    def __init__(
        self,
        shas: list[str],
        parents: list[list[str]],
        tags: dict[str, tuple[str, int]],
        heads: list[str] | None = None,
        titled: bool = False,
    ):
        self.ids = np.array(["commit:" + s for s in shas], dtype=object)
        row = {s: i for i, s in enumerate(shas)}
        src = [i for i, ps in enumerate(parents) for p in ps if p in row]
        dst = [row[p] for ps in parents for p in ps if p in row]
        n = len(shas)
        from scipy.sparse import csr_matrix

        self.up = csr_matrix((np.ones(len(src), dtype=np.int8), (src, dst)), shape=(n, n))
        self.down = self.up.T.tocsr()
        self.tags = {name: (row[sha], t) for name, (sha, t) in tags.items() if sha in row}
        self.row = row
        self._size: dict[str, int] = {}
        self.heads = [row[h] for h in heads or [] if h in row]  # the synced default branches' tips (HEAD)
        self.titled = titled  # the "tags" are commits titled by a version (the history has no tag): titled_releases
        self._in_head: np.ndarray | None = None

    def in_head(self) -> np.ndarray | None:
        """Commits in the default branch's history (reachable from a synced ``HEAD``), as a mask; None when
        the store does not know its ``HEAD`` (a store synced before the tips were recorded)."""
        if not self.heads:
            return None
        if self._in_head is None:
            mask = np.zeros(len(self.ids), dtype=bool)
            for h in self.heads:
                mask |= self._walk(h, self.up)
            self._in_head = mask
        return self._in_head

    def __len__(self) -> int:
        return len(self.ids)

    def name(self, text: str) -> str | None:
        return tag_name(self.tags, text)

    def _walk(self, start: int, m: csr_matrix) -> np.ndarray:
        mask = np.zeros(len(self.ids), dtype=bool)
        from scipy.sparse.csgraph import breadth_first_order  # ~70 ms to import: only once a tag phrase is read

        mask[breadth_first_order(m, start, directed=True, return_predecessors=False)] = True
        return mask

    def below(self, sha: str) -> np.ndarray | None:
        """Commits reachable from the commit ``sha`` (itself included), as a mask; None when the graph lacks it."""
        r = self.row.get(sha)
        return None if r is None else self._walk(r, self.up)

    def reach(self, tag: str) -> np.ndarray:
        """Commits reachable from ``tag`` (its own commit included), as a mask over :attr:`ids`."""
        return self._walk(self.tags[tag][0], self.up)

    def previous(self, tag: str) -> str | None:
        """The nearest tag below ``tag``: reachable from it, on another commit, with the most ancestors."""
        mine = self.reach(tag)
        best: tuple[int, int, str] | None = None
        for other, (r, t) in self.tags.items():
            if other == tag or r == self.tags[tag][0] or not mine[r]:
                continue
            if other not in self._size:
                self._size[other] = int(self.reach(other).sum())
            key = (self._size[other], t, other)
            if best is None or key > best:
                best = key
        return best[2] if best else None

    def release(self, tag: str) -> tuple[np.ndarray, str | None]:
        """The commits ``tag`` brought: reachable from it, not from the previous tag (and which tag that is)."""
        prev = self.previous(tag)
        mask = self.reach(tag)
        if prev is not None:
            mask &= ~self.reach(prev)
        return mask, prev

    def select(self, mask: np.ndarray) -> tuple[list[str], bool]:
        """``(ids, negated)``: the commit ids of ``mask``, or of its complement (``negated``) when that is
        shorter, so a query's ``IN`` list stays small either way ("since v1.0" on a long history)."""
        if int(mask.sum()) * 2 <= len(mask):
            return self.ids[mask].tolist(), False
        return self.ids[~mask].tolist(), True

    def containing(self, commit_id: str) -> list[tuple[int, str]]:
        """(time, name) of every tag whose history holds ``commit_id``, oldest first (``git tag --contains``)."""
        r = self.row.get(commit_id.removeprefix("commit:"))
        if r is None:
            return []
        below = self._walk(r, self.down)
        return sorted((t, name) for name, (row, t) in self.tags.items() if below[row])


def tag_name(tags, text: str) -> str | None:
    """The stored tag ``text`` names (``tags``: a collection of names): as written, else with or without a
    leading ``v``, any case."""
    for cand in (text, text.lstrip("vV"), "v" + text.lstrip("vV")):
        if cand in tags:
            return cand
    low = {k.lower(): k for k in tags}
    return low.get(text.lower()) or low.get("v" + text.lower().lstrip("v"))


class LazyTags:
    """What :func:`.timephrase.parse_time` reads tags through: names come from the tag ids alone (one prefix
    lookup); the commit matrix is built only once a phrase names a stored tag, so a question without one,
    or a store without tags, never pays for it."""

    def __init__(self, engine):
        self.engine = engine
        self._names: set[str] | None = None

    def name(self, text: str) -> str | None:
        if self._names is None:
            self._names = self.engine.cypher_projection().memo("tag_names", lambda: _tag_names(self.engine.store))
        if self._names:
            return tag_name(self._names, text)
        if not looks_like_version(text):  # "since the parser": no release; only a version builds the commit graph
            return None
        graph = tag_graph(self.engine)  # a history without tags: its commits titled by a version, if any
        return graph.name(text) if graph is not None else None

    def __getattr__(self, attr: str):
        graph = tag_graph(self.engine)
        if graph is None:
            raise AttributeError(attr)
        return getattr(graph, attr)


def _tag_names(store) -> set[str]:
    return {i[4:] for i, t in store.ids_with_prefix("tag:", 1_000_000) if t == "tag"}


def _parents(v) -> list[str]:
    if isinstance(v, str):
        v = json.loads(v)
    return [str(p) for p in v] if isinstance(v, list) else []


def release_commits(engine) -> list[str] | None:
    """The commits that stand for the releases of a history without tags (:func:`titled_releases`), oldest first;
    None when the store has tags, or no such commits (the tag shapes then read ``tag:`` nodes)."""
    if engine.cypher_projection().memo("tag_names", lambda: _tag_names(engine.store)):
        return None
    graph = tag_graph(engine)
    if graph is None or not graph.titled:
        return None
    return [str(graph.ids[row]) for row, _ in sorted(graph.tags.values(), key=lambda rt: (rt[1], rt[0]))]


def tag_graph(engine) -> TagGraph | None:
    """The store's :class:`TagGraph`, rebuilt only when the store changed; None when it has no tag."""
    graph = commit_graph(engine)
    return graph if graph is not None and graph.tags else None


def commit_graph(engine) -> TagGraph | None:
    """The store's commits with their parents, tags and synced ``HEAD`` s (rebuilt only when the store
    changed); None when the store has no commit."""

    def load() -> TagGraph | None:
        store = engine.store
        commits = [i for i, t in store.ids_with_prefix("commit:", 10_000_000) if t == "commit"]
        if not commits:
            return None
        cmeta = store.node_meta_values(store.lookup_idx(commits).values(), ["sha", "parents", "repo"])
        rows = sorted((str(m["sha"]), _parents(m.get("parents"))) for m in cmeta.values() if "sha" in m)
        tag_ids = [i for i, t in store.ids_with_prefix("tag:", 1_000_000) if t == "tag"]
        tmeta = store.node_meta_values(store.lookup_idx(tag_ids).values(), ["name", "sha", "time"]) if tag_ids else {}
        tags = {
            str(m["name"]): (str(m["sha"]), int(m.get("time") or 0))
            for m in tmeta.values()
            if "name" in m and "sha" in m
        }
        heads = _heads(store, sorted({str(m["repo"]) for m in cmeta.values() if m.get("repo")}))
        titled = not tags and bool(tags := titled_releases(engine))
        return TagGraph([s for s, _ in rows], [p for _, p in rows], tags, heads, titled)

    return engine.cypher_projection().memo("commit_graph", load)


# a subject that is a version and nothing else: "v6.1.0", "2.4.1.", "Release 1.2", "version v3.0-rc1"
_VERSION_TITLE = re.compile(r"\s*(?:release\s+|version\s+)?(v?\d+(?:\.\d+){1,3}(?:-rc\d+)?)\s*\.?\s*", re.I)
MIN_TITLED = 2  # one commit titled "1.0" is a commit; a history's releases are a habit


def titled_releases(engine) -> dict[str, tuple[str, int]]:
    """A history without tags whose release commits carry the version as their whole subject (iproute2's "v6.1.0",
    where upstream puts its tag): version → (sha, commit time).  A version that titles two commits is left out,
    and so is a history with fewer than :data:`MIN_TITLED` of them; subjects that only mention a version ("bump to
    v1.8.0", "Prepare for 3.7.0.") are no release, since where the tag went is not known."""
    query = (
        "MATCH (c:commit) WHERE size(c.title) <= 32 AND toLower(left(c.title, 1)) IN $first "
        "RETURN c.sha AS sha, c.title AS title, c.commit_time AS t ORDER BY sha SKIP $s LIMIT 900"
    )
    rows: list[dict] = []
    try:
        while True:  # (a reply holds a bounded number of rows: read them page by page)
            page = engine.cypher(query, {"first": list("vr0123456789"), "s": len(rows)})["rows"]
            rows += page
            if len(page) < 900:
                break
    except NeuronGraphError:  # the graph is down: no release is read, and the question says what it did not read
        return {}
    found: dict[str, list[tuple[str, int]]] = {}
    for r in rows:
        m = _VERSION_TITLE.fullmatch(str(r.get("title") or ""))
        if m is not None and r.get("sha"):
            found.setdefault(m.group(1), []).append((str(r["sha"]), int(r.get("t") or 0)))
    out = {name: shas[0] for name, shas in found.items() if len(shas) == 1}
    return out if len(out) >= MIN_TITLED else {}


def off_head(engine) -> list[str]:
    """The commits no synced ``HEAD`` reaches (only a tag or another named branch does: backports, a release
    past the default branch), as node ids; empty when every commit is in ``HEAD``'s history or the store does
    not know its ``HEAD``.  What ``git log`` (which reads ``HEAD``) leaves out, so the commit shapes do too."""
    if _head_only(engine.store):
        return []  # the store read HEAD alone: nothing to leave out, and no commit graph to build
    graph = commit_graph(engine)
    mask = graph.in_head() if graph is not None else None
    if graph is None or mask is None:
        return []
    return [str(i) for i in graph.ids[~mask]]


def _head_only(store) -> bool:
    """Whether the store's git source (read from one commit's ``repo``: a store of several sources is judged by
    that one) was synced from ``HEAD`` alone, with no tag: every commit is then in ``HEAD``'s history."""
    first = store.ids_with_prefix("commit:", 1)
    if not first:
        return True
    row = store.get_node(first[0][0])
    repo = (row.metadata or {}).get("repo") if row is not None else None
    if not repo:
        return False
    try:
        tips = json.loads(store.get_meta(f"ingest.git-tips.{repo}") or "{}")
    except ValueError:
        return False
    return isinstance(tips, dict) and set(tips) == {"HEAD"} and not store.ids_with_prefix("tag:", 1)


def _heads(store, sources: list[str]) -> list[str]:
    """The ``HEAD`` tip each git source was last synced at (store meta written by the git reader,
    ``ingest.git.tips_key``: ``{"HEAD": sha, "refs/tags/…": sha}``)."""
    out = []
    for source in sources:
        try:
            tips = json.loads(store.get_meta(f"ingest.git-tips.{source}") or "{}")
        except ValueError:
            continue
        if isinstance(tips, dict) and isinstance(tips.get("HEAD"), str):
            out.append(tips["HEAD"])
    return out


_VERSION = re.compile(r"v?\d+(?:\.\d+)+[\w.+-]*|v\d+[\w.+-]*|[\w.-]*\d[\w.-]*-rc\d+", re.I)


def looks_like_version(text: str) -> bool:
    """``v2.0``, ``6.1``, ``v3``, ``5.10-rc2``: a word that names a release even when no tag has it."""
    return bool(_VERSION.fullmatch(text))
