"""One hit per change: a pull request, the commit(s) that landed it and its branch commits are one result.

Why: the git ingest writes a PR as ``pr:N`` (a placeholder without text until a GitHub export brings the
real one) with ``merged_in`` from its merge or squash commit and ``part_of`` from each commit of its branch
(ingest/git.py, docs/schema.md).  Listed apart they spend several of a search's n slots on one change, and
the bare "PR #N" could stand above the commit that says what the change did (issue 43: 9 of 75 top-5 slots
on a C history were such placeholders, 8 repeating a commit already listed).  An ``issue:N`` placeholder
(a number a message names that no PR has) folds into the change that names it the same way.

Two halves, because the pipeline works on arrays and only the result assembly reads the store:
:func:`gather` (pipeline, after the final fusion) finds each ranked node's change in the graph and adds,
for a change whose only ranked node may be a placeholder, its best-scored node with text (a reserve);
:func:`collapse` (results, with the placeholder flags read for these nodes only) merges the hits of one
change into one, shown by its best-ranked node with text, placed where its best-ranked node was.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from ..graph.arrays import GraphArrays

if TYPE_CHECKING:
    from ..config import SearchConfig

__all__ = ["ChangeLinks", "OVERFETCH", "MAX_LISTED", "collapse", "describe", "gather", "groups_changes", "pool_size"]

REFER_RELS = ("fixes", "refs", "follows_up")  # commit -> issue:N: the change that names a placeholder issue
OVERFETCH = 4  # ranked nodes read per hit wanted, so n changes remain after grouping
MAX_LISTED = 20  # commits a hit's ``change`` lists by id (``commits_total`` counts them all)
# a merged branch of more commits than this is a history brought in (mypy's PR #7378 merged mypyc's 644
# commits), not one change: its commits stay apart, as those of a PR that merges other PRs do (click's
# largest one-change PR has 39)
MAX_BRANCH = 100


def groups_changes(cfg: SearchConfig, rel_ids: dict[str, int] | None = None) -> bool:
    """Whether a search groups its hits by change: always, unless it asks for one node type only (``--type
    commit`` wants the commits themselves, each a hit), or the store has no relation that makes a change of
    several nodes (``rel_ids``: no PR merged or branched, no issue named: a wiki, a QA corpus)."""
    if len(cfg.result_types) == 1:
        return False
    return rel_ids is None or any(r in rel_ids for r in ("merged_in", "part_of", *REFER_RELS))


def pool_size(cfg: SearchConfig, rel_ids: dict[str, int] | None = None) -> int:
    """How many ranked nodes a search reads before grouping (``limit`` when it does not group)."""
    return cfg.limit * OVERFETCH if groups_changes(cfg, rel_ids) else cfg.limit


@dataclass
class ChangeLinks:
    """The change of each ranked node: ``key[i]`` is the PR node of ``nodes[i]``'s change (-1: none).  The first
    ``n_pool`` ranked nodes are the best by final score; the rest are reserves (a change's node with text,
    for a change only its PR ranked)."""

    n_pool: int
    key: np.ndarray  # per ranked node: its change's PR node, -1 when it belongs to no PR
    landing: dict[int, list[int]] = field(default_factory=dict)  # PR node -> the commit(s) that merged it
    branch: dict[int, list[int]] = field(default_factory=dict)  # PR node -> the commits of its branch
    referrers: dict[int, list[int]] = field(default_factory=dict)  # node without out-edges -> commits naming it


def _rel_set(rel_ids: dict[str, int], names: tuple[str, ...]) -> np.ndarray:
    return np.array([rel_ids[n] for n in names if n in rel_ids], np.int32)


class _Prs:
    """The PRs met so far: the commit(s) that landed each (``merged_in``), its branch commits (``part_of``), and
    which PRs merge other PRs ("Merge stable into main": a branch commit landed a PR of its own) or a whole
    history (over :data:`MAX_BRANCH` commits), whose branch commits are other changes and stay apart."""

    def __init__(self, graph: GraphArrays, rel_ids: dict[str, int]):
        self.graph = graph
        self.merged, self.part = rel_ids.get("merged_in", -9), rel_ids.get("part_of", -9)
        self.landing: dict[int, list[int]] = {}
        self.branch: dict[int, list[int]] = {}
        self.merges_prs: set[int] = set()

    def load(self, prs: Iterable[int]) -> None:
        new = np.array(sorted(set(prs) - self.landing.keys()), np.int64)
        if not new.size:
            return
        for p in new.tolist():
            self.landing[p], self.branch[p] = [], []
        inn = self.graph.expand(new, direction="in")
        for p, rt, d in zip(inn.src.tolist(), inn.rtype.tolist(), inn.dst.tolist()):
            if rt == self.merged:
                self.landing[p].append(d)
            elif rt == self.part:
                self.branch[p].append(d)
        members = np.unique(np.fromiter((d for p in new.tolist() for d in self.branch[p]), np.int64))
        out = self.graph.expand(members, direction="out")
        on = out.rtype == self.merged
        landed = dict(zip(out.src[on].tolist(), out.dst[on].tolist()))  # a branch commit -> the PR it landed
        for p in new.tolist():
            if len(self.branch[p]) > MAX_BRANCH or any(landed.get(d, p) != p for d in self.branch[p]):
                self.merges_prs.add(p)
                self.branch[p] = []

    def key_of(self, nodes: np.ndarray) -> np.ndarray:
        """The PR each node's change is: the node itself when it is a PR (it has commits), else the PR it landed
        (``merged_in``), else the PR whose branch it is on (``part_of``, not a PR that merges other PRs); -1."""
        key = np.full(nodes.shape[0], -1, np.int64)
        if not nodes.size or self.merged < 0 and self.part < 0:  # a store with no PR: every node is its own
            return key
        inn = self.graph.expand(nodes, direction="in")
        pr = np.unique(inn.src_pos[(inn.rtype == self.merged) | (inn.rtype == self.part)])
        key[pr] = nodes[pr]
        out = self.graph.expand(nodes, direction="out")
        on = ((out.rtype == self.merged) | (out.rtype == self.part)) & (key[out.src_pos] < 0)
        pos, rt, dst = out.src_pos[on], out.rtype[on], out.dst[on]
        self.load(dst.tolist())
        ok = (rt == self.merged) | ~np.isin(dst, np.fromiter(self.merges_prs, np.int64, len(self.merges_prs)))
        # merged_in before part_of, then the lowest PR node
        order = np.lexsort((dst[ok], rt[ok] != self.merged, pos[ok]))
        pos, dst = pos[ok][order], dst[ok][order]
        first = np.unique(pos, return_index=True)[1]
        key[pos[first]] = dst[first]
        return key


def _referrers(graph: GraphArrays, nodes: np.ndarray, refer: np.ndarray) -> dict[int, list[int]]:
    """For the nodes with no out-edge (what a placeholder looks like in the graph: ``pr:N``, ``issue:N``), the
    commits whose messages name them."""
    if not refer.size or not nodes.size:
        return {}
    out = graph.expand(nodes, direction="out")
    bare = np.ones(nodes.shape[0], bool)
    bare[out.src_pos] = False
    if not bare.any():
        return {}
    inn = graph.expand(nodes[bare], direction="in")
    ok = np.isin(inn.rtype, refer)
    got: dict[int, list[int]] = {}
    for n, d in zip(inn.src[ok].tolist(), inn.dst[ok].tolist()):
        got.setdefault(n, []).append(d)
    return got


def _positions(all_nodes: np.ndarray, nodes: list[int]) -> np.ndarray:
    """Positions of ``nodes`` in the sorted ``all_nodes`` (-1 where absent)."""
    want = np.asarray(nodes, np.int64)
    if not want.size or not all_nodes.size:
        return np.full(want.shape[0], -1, np.int64)
    at = np.minimum(np.searchsorted(all_nodes, want), all_nodes.shape[0] - 1)
    return np.where(all_nodes[at] == want, at, -1)


def _best_reserve(
    all_nodes: np.ndarray, final: np.ndarray, eligible: np.ndarray, candidates: list[int], taken: set[int]
) -> int | None:
    """Of ``candidates``, the eligible position with the highest final score not already taken (None)."""
    pos = _positions(all_nodes, candidates)
    pos = pos[pos >= 0]
    pos = pos[eligible[pos] & (final[pos] > 0)] if pos.size else pos
    pos = np.array([p for p in pos.tolist() if p not in taken], np.int64)
    return int(pos[np.argmax(final[pos])]) if pos.size else None


def gather(
    graph: GraphArrays,
    rel_ids: dict[str, int],
    all_nodes: np.ndarray,
    final: np.ndarray,
    eligible: np.ndarray,
    keep: np.ndarray,
    placeholder: Callable[[np.ndarray], np.ndarray] | None = None,
) -> tuple[np.ndarray, ChangeLinks]:
    """``keep`` (positions into the sorted ``all_nodes``, best first) and the reserves after it, with the
    change links of every node kept: a PR whose only kept node is itself gets its best-scored landing commit,
    a node without out-edges whose namers were not kept gets its best-scored namer (``eligible``: may be a
    hit; ``final``: the final scores of ``all_nodes``; ``placeholder``: which nodes are placeholders, the only
    nodes folded into the change that names them)."""
    prs = _Prs(graph, rel_ids)
    pool = all_nodes[keep]
    key = prs.key_of(pool)
    lone = pool[key < 0]
    if placeholder is not None and lone.size:
        lone = lone[placeholder(lone)]
    referrers = _referrers(graph, lone, _rel_set(rel_ids, REFER_RELS))
    taken = set(keep.tolist())
    extra: list[int] = []

    def reserve(candidates: list[int]) -> None:
        got = _best_reserve(all_nodes, final, eligible, candidates, taken)
        if got is not None:
            extra.append(got)
            taken.add(got)

    alone = {int(k) for k in key.tolist() if k >= 0} - {int(k) for k, n in zip(key.tolist(), pool.tolist()) if k != n}
    prs.load(alone)
    for k in sorted(alone):  # only the PR node itself was kept: its landing commit stands by
        reserve(prs.landing[k])
    kept = set(pool.tolist())
    for ds in referrers.values():
        if not any(d in kept for d in ds):
            reserve(ds)
    if extra:
        keep = np.concatenate([keep, np.asarray(extra, np.int64)])
        key = np.concatenate([key, prs.key_of(all_nodes[np.asarray(extra, np.int64)])])
    prs.load(key[key >= 0].tolist())
    return keep, ChangeLinks(int(pool.shape[0]), key, prs.landing, prs.branch, referrers)


def _group_keys(nodes: list[int], links: ChangeLinks, placeholders: set[int]) -> list[int]:
    """Each ranked node's group: its PR; for a placeholder without one, the group of the best-ranked node
    naming it; else the node itself.  (PR nodes and node indices are both node indices: one namespace.)"""
    at = {n: i for i, n in enumerate(nodes)}
    key = links.key.tolist()
    out = []
    for i, n in enumerate(nodes):
        k = key[i]
        if k < 0 and n in placeholders:
            named_by = sorted(at[d] for d in links.referrers.get(n, []) if d in at)
            if named_by:
                j = named_by[0]
                k = key[j] if key[j] >= 0 else nodes[j]
        out.append(k if k >= 0 else n)
    return out


def collapse(
    nodes: list[int], links: ChangeLinks, placeholders: set[int], limit: int
) -> list[tuple[int, int, list[int]]]:
    """The hits after grouping, best first, at most ``limit``: (the change's key, the position of the node
    shown, the positions of the ranked nodes it stands for, best first).  The node shown is the best-ranked
    member that is not a placeholder (the placeholder when the change has nothing else ranked); a change is
    placed where its best-ranked member was, and a change whose members are all reserves is no hit."""
    keys = _group_keys(nodes, links, placeholders)
    groups: dict[int, list[int]] = {}
    for i, k in enumerate(keys):
        if i < links.n_pool or k in groups:
            groups.setdefault(k, []).append(i)
    out = []
    for k, members in groups.items():
        shown = next((i for i in members if nodes[i] not in placeholders), members[0])
        out.append((k, shown, members))
        if len(out) == limit:
            break
    return out


def describe(
    key: int, members: list[int], nodes: list[int], links: ChangeLinks, ids: dict[int, str], shown: int
) -> dict[str, Any] | None:
    """A grouped hit's ``change``: its PR, the commit(s) that landed it, its branch commits (at most
    :data:`MAX_LISTED` by id, ``commits_total`` all), the other ranked nodes folded into it (best first) and,
    when the node shown is not the best-ranked one, which one placed it.  None for a change of one node."""
    folded = [ids.get(nodes[i], str(nodes[i])) for i in members if i != shown and i < links.n_pool]
    pr = key if key in links.landing else None
    if pr is None and not folded:
        return None
    commits = [] if pr is None else links.landing.get(pr, []) + links.branch.get(pr, [])
    out: dict[str, Any] = {
        "pr": ids.get(pr, str(pr)) if pr is not None else None,
        "landed_by": [ids.get(c, str(c)) for c in (links.landing.get(pr, []) if pr is not None else [])],
        "commits": [ids.get(c, str(c)) for c in commits[:MAX_LISTED]],
        "commits_total": len(commits),
        "folded": folded,
    }
    if members[0] != shown:
        out["placed_by"] = ids.get(nodes[members[0]], str(nodes[members[0]]))
    return out
