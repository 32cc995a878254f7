"""A search's code evidence: the working set's line provenance and the identifiers the question names.

Two signals the text channels cannot give (issue 24): **blame** — the commits that last touched the lines
the agent is changing, as of the search's time (the SZZ idea: a fix's deleted lines were written by the
change it repairs) — and **code terms** — commits that added or removed an identifier the question or the
diff names (``git log -S`` at token level).  Both come from :class:`~neurongraph.index.code_history.CodeHistory`;
this module turns them into one sorted node array with per-node scores in [0, 1] and the phrases that
explain them, which the pipeline fuses (``retrieval/pipeline.py``: extra seeds and ``scores.blame`` /
``scores.code``).

Issue 46's rules (docs/code-history.md, chosen leave-one-repository-out): a blamed commit's share is weighed
by its age against the newest blamed commit (``blame_recency``); with a diff, a plain word of the question is
code only when the diff names it; the recent changers of the names the diff's lines touch get code credit
(def/use); and blame on a pull request's branch commit counts in part for the PR's merge.  When blame names
only a wrong commit: a newer change to the names the lines use weighs the old writers down, blame that ends
at the history's first commit counts a quarter (with a diff), and a line whose last toucher only moved it is
blamed on the commit that wrote it before (``blame2.py``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..config import SearchConfig
from ..index.code_history import CodeHistory, describe
from ..index.code_terms import STOP
from .blame2 import blame_through_moves, roots
from .changes import WorkingSet
from .query import Query

__all__ = ["CodeEvidence", "code_evidence", "query_intent"]

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
MAX_DIFF_TERMS = 40  # the diff's rarest identifiers that vote (common ones like `err` say nothing)
PLAIN_WORD_MAX_DF = 25  # a plain word counts as an identifier only if few commits changed it
# issue 46: with a diff, a plain word of the question is code only when the diff's lines name it (not an English
# word that some template or message also holds)
PLAIN_WORDS_FROM_DIFF = True
# issue 46: a term's adders get a share of at least a term this many commits changed (0: off; term_matches)
RARE_DF = 0
# issue 46 (def/use): the last DEF_USE_LAST commits that changed a name the fix's lines touch (its declaration or
# its uses, in any file) get code credit at this weight (0: off)
# issue 46 (a change is one unit): a PR's merge gets this share of the blame its branch commits got (0: off)
PR_CREDIT = 0.5
DEF_USE_WEIGHT = 2.0  # 2 and 5: every leave-one-repository-out fold's choice
DEF_USE_LAST = 5
# issue 46 (blame names only a wrong commit): when a commit that did not write the lines but has code evidence of
# at least NEWER_CODE_MIN (it changed names the lines touch) is newer than every blamed commit, the blame shares
# are multiplied by ((d + its gap) / (d + the newest blamed gap)) ** NEWER_CODE_POWER, d = NEWER_CODE_DAYS
# (0: off)
NEWER_CODE_POWER = 0.5  # 0.5, 1.5, 30 days: every leave-one-repository-out fold's choice with ROOT_BLAME 0
NEWER_CODE_MIN = 1.5
NEWER_CODE_DAYS = 30.0
# issue 46 (depth-2 blame, retrieval/blame2.py): a line whose last toucher only moved or renamed it (identifier
# changes, less names moved between files, at most BLAME2_MAX_TERMS) passes this share of its blame to the
# commit that wrote it before (0: off); BLAME2_IN_PLACE: a same-size rewrite counts as a rename too
BLAME2_WEIGHT = 1.0  # moves only (no identifier change, no same-size rewrite): two of three folds' choice
BLAME2_MAX_TERMS = 0
BLAME2_IN_PLACE = False
# issue 46: with a diff, blame that ends at a root commit (where the stored history starts: an import) keeps this
# share of it (1: off); 0 and 0.25 give the same hit@1 on every history, 0.25 keeps more of the root's blame
ROOT_BLAME = 0.25


# words of the question itself, never read as identifiers
_QUESTION_WORDS = frozenset(
    "which what who when where why how commit commits change changes patch introduced introduce introduces added "
    "add adds created create removed remove removes deleted delete dropped drop first last did does was were "
    "the this that".split()
)


def query_intent(query: Query | str) -> str:
    """``"introduced"`` / ``"removed"`` when the question asks for the change that added / removed something
    (``Query.intent``, read once per search in retrieval/query.py)."""
    return Query.of(query).intent


@dataclass
class CodeEvidence:
    """Per-node code signals of one search, aligned on ``nodes`` (sorted, unique)."""

    nodes: np.ndarray
    blame: np.ndarray
    code: np.ndarray
    why: dict[int, list[str]] = field(default_factory=dict)
    blamed_lines: int = 0
    asked_lines: int = 0
    pure_addition: bool = False
    intent: str = ""  # the question asks which change introduced / removed an identifier it names
    terms: tuple[str, ...] = ()  # the identifiers and plain words read from the question (its code terms)


def _query_terms(history: CodeHistory, query: Query | str, ws: WorkingSet | None = None) -> list[str]:
    """Identifiers the question names: code-looking tokens, plus plain words few commits changed when the
    question asks about an introduction or removal (``which commit introduced frobnicate``); with a diff and
    ``PLAIN_WORDS_FROM_DIFF``, only the plain words its lines name."""
    q = Query.of(query)
    terms = [t.strip("`") for t in q.identifiers]
    if q.intent or len(q.words) <= 2:
        named = None
        if PLAIN_WORDS_FROM_DIFF and ws is not None and ws.files:
            rem, add = ws.terms()
            named = {t.lower() for t in rem + add}
        for w in _WORD.findall(q.text):
            if w.lower() in _QUESTION_WORDS or w in STOP or w.lower() in (t.lower() for t in terms):
                continue
            if named is not None and w.lower() not in named:
                continue
            if 0 < history.document_frequency(w) <= PLAIN_WORD_MAX_DF:
                terms.append(w)
    return terms


def code_evidence(
    history: CodeHistory, query: Query | str, cfg: SearchConfig, ws: WorkingSet | None, visible: np.ndarray | None
) -> CodeEvidence | None:
    """The search's code evidence, or None when it has none (no commits with code facts, no identifiers
    named, no lines given) — the pipeline is then exactly the text search."""
    q = Query.of(query)
    use_blame = ws is not None and ws.has_lines and (cfg.blame_weight > 0 or cfg.blame_seed_weight > 0)
    # identifiers can only come from the question (``Query.names_code``) or the diff: a prose question never
    # reads the code history (its first use reads every commit's metadata)
    use_code = cfg.code_weight > 0 and (q.names_code or (ws is not None and any(f.removed for f in ws.files)))
    if not (use_blame or use_code) or history.commits == 0:
        return None
    as_of = cfg.horizon  # the search's one time limit (as_of, or the deprecated until)
    why: dict[int, list[str]] = {}
    b_nodes, b_share = np.zeros(0, np.int64), np.zeros(0)
    blamed = asked = 0
    pure = False
    if use_blame and ws is not None:
        pure = ws.pure_addition
        b_nodes, b_share, blamed, asked = _blame_part(history, cfg, ws, as_of, why)
    c_nodes, c_score = np.zeros(0, np.int64), np.zeros(0)
    intent = ""
    terms: list[str] = []
    if use_code:
        terms = _query_terms(history, q, ws)
        intent = q.intent
        # a question about an introduction or removal reads identifiers the way `git log -S` does: substrings too
        # (a question that asks for X's introduction or removal means X however common it is: no rare_df there)
        c_nodes, c_score, c_why = history.term_matches(
            terms, as_of, intent, visible=visible, substrings=bool(intent), rare_df=0 if intent else RARE_DF
        )
        if ws is not None:
            removed, _added = ws.terms()
            if removed:  # the diff's removed identifiers were written by earlier changes: who added them
                d_nodes, d_score, d_why = history.term_matches(
                    removed,
                    as_of,
                    "",
                    side_weights=(1.0, 0.0),
                    visible=visible,
                    max_terms=MAX_DIFF_TERMS,
                    rare_df=RARE_DF,
                )
                c_nodes, c_score = _combine(c_nodes, c_score, d_nodes, d_score)
                for n, w in d_why.items():
                    c_why.setdefault(n, []).extend(w)
        if ws is not None and DEF_USE_WEIGHT > 0:
            c_nodes, c_score = _def_use(history, ws, as_of, visible, c_nodes, c_score, c_why)
        if NEWER_CODE_POWER > 0 and b_nodes.size and c_nodes.size:
            b_share = _newer_code(history, (b_nodes, b_share), (c_nodes, c_score), as_of, ws, why)
        for n, w in c_why.items():
            shown = list(dict.fromkeys(w))
            more = f" (+{len(shown) - 4} more)" if len(shown) > 4 else ""
            why.setdefault(n, []).append(", ".join(shown[:4]) + more)
    if not b_nodes.size and not c_nodes.size:
        return None
    nodes = np.union1d(b_nodes, c_nodes).astype(np.int64)
    blame = np.zeros(nodes.shape[0])
    code = np.zeros(nodes.shape[0])
    if b_nodes.size:
        blame[np.searchsorted(nodes, b_nodes)] = b_share
    if c_nodes.size:
        code[np.searchsorted(nodes, c_nodes)] = c_score
    return CodeEvidence(nodes, blame, code, why, blamed, asked, pure, intent if c_nodes.size else "", tuple(terms))


def _blame_part(
    history: CodeHistory, cfg: SearchConfig, ws: WorkingSet, as_of: float | None, why: dict[int, list[str]]
) -> tuple[np.ndarray, np.ndarray, int, int]:
    """The blamed commits' shares (recency, depth-2 blame and PR credit applied), the lines blamed and asked,
    and each one's explanation in ``why``."""
    pure = ws.pure_addition
    # anchors stand in for changed lines only when nothing old-side changed anywhere (a pure addition)
    files = [(f.path, list(f.anchors) if pure else f.old_lines) for f in ws.files]
    # no visibility filter: the blamed commits are ancestors of the commit the lines are read in, so they
    # existed then, whatever a time filter says (a patch series applied in one second shares its time)
    bl = history.blame(files, as_of, None, ws.base, exact=cfg.blame_source == "git")
    b_nodes, b_share = bl.share()
    moved: dict[int, dict[str, list[int]]] = {}
    if BLAME2_WEIGHT > 0 and b_nodes.size:
        b_nodes, b_share, moved = _blame2(history, files, as_of, ws.base, bl.total, b_nodes, b_share)
    gaps = _age_gaps(history, b_nodes, as_of, ws.base)
    b_share = b_share * _recency(gaps, cfg.blame_recency, cfg.blame_recency_days)
    # with a diff only: lines alone (``--file F:A-B``) ask who wrote them, and there the first commit is the answer
    if ROOT_BLAME < 1.0 and b_nodes.size and any(f.added or f.removed for f in ws.files):
        root = roots(history, b_nodes)
        b_share = np.where(root, b_share * ROOT_BLAME, b_share)
        for n in b_nodes[root].tolist():
            why.setdefault(n, []).append(
                f"weighed ×{ROOT_BLAME:g}: the first commit of the history, where the lines' history starts"
            )
    at = {n: k for k, n in enumerate(b_nodes.tolist())}
    verb = "last changed the lines around the insertion at" if pure else "last changed"
    lines = [(n, w, verb) for n, w in sorted(bl.where.items())]
    lines += [(n, w, "wrote, before a later commit only moved or renamed them,") for n, w in sorted(moved.items())]
    for n, where, v in lines:
        k = at.get(n)
        age = f" ({_days(gaps[k])} before the lines' commit)" if cfg.blame_recency > 0 and k is not None else ""
        why.setdefault(n, []).append(f"{v} {describe(where)} before this{age}")
    if PR_CREDIT > 0:
        b_nodes, b_share = _pr_credit(history, b_nodes, b_share, why)
    return b_nodes, b_share, bl.total, bl.asked


def _def_use(
    history: CodeHistory,
    ws: WorkingSet,
    as_of: float | None,
    visible: Any,
    c_nodes: np.ndarray,
    c_score: np.ndarray,
    c_why: dict[int, list[str]],
) -> tuple[np.ndarray, np.ndarray]:
    """The recent changers of the names the diff's lines touch, as code credit (``DEF_USE_WEIGHT``)."""
    rem, add = ws.terms()
    u_nodes, u_score, u_why = history.recent_changers(
        rem + add, as_of, DEF_USE_LAST, visible=visible, max_terms=MAX_DIFF_TERMS, rare_df=RARE_DF
    )
    for n, names in u_why.items():
        c_why.setdefault(n, []).append("recently changed " + ", ".join(names[:3]) + " (a name the change touches)")
    return _combine(c_nodes, c_score, u_nodes, DEF_USE_WEIGHT * u_score)


def _newer_code(
    history: CodeHistory,
    blamed: tuple[np.ndarray, np.ndarray],
    coded: tuple[np.ndarray, np.ndarray],
    as_of: float | None,
    ws: WorkingSet | None,
    why: dict[int, list[str]],
) -> np.ndarray:
    """Blame weighed down when a newer commit changed the names the lines touch (``NEWER_CODE_POWER``): the
    commit that wrote the lines is old, and the regression more likely came from the newer change to what the
    lines use or declare (issue 46: "blame names only a wrong commit")."""
    b_nodes, b_share = blamed
    c_nodes, c_score = coded
    cand = c_nodes[(c_score >= NEWER_CODE_MIN) & ~np.isin(c_nodes, b_nodes)]
    if not cand.size:
        return b_share
    base = ws.base if ws is not None else None
    g_blamed = float(_age_gaps(history, b_nodes, as_of, base).min())
    gaps = _age_gaps(history, cand, as_of, base)
    k = int(np.argmin(gaps))
    if gaps[k] >= g_blamed:
        return b_share
    d = max(NEWER_CODE_DAYS, 1e-3)
    factor = ((d + float(gaps[k])) / (d + g_blamed)) ** NEWER_CODE_POWER
    for n in b_nodes.tolist():
        why.setdefault(n, []).append(
            f"weighed ×{factor:.2f}: a newer change ({_days(float(gaps[k]))} before the lines' commit) changed "
            "names these lines use"
        )
    out: np.ndarray = b_share * factor
    return out


def _blame2(
    history: CodeHistory,
    files: list[tuple[str, list[int]]],
    as_of: float | None,
    base: str | None,
    total: int,
    nodes: np.ndarray,
    share: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, dict[int, dict[str, list[int]]]]:
    """Depth-2 blame (``BLAME2_WEIGHT``): the lines a mover only moved or renamed pass that part of their
    share to the commit that wrote them before (retrieval/blame2.py); with where those lines are."""
    got = blame_through_moves(history, files, as_of, base, BLAME2_MAX_TERMS, BLAME2_IN_PLACE)
    if not got.moved:
        return nodes, share, {}
    acc = dict(zip(nodes.tolist(), share.tolist()))
    for (x, y), count in got.moved.items():
        part = BLAME2_WEIGHT * count / max(total, 1)
        acc[x] = max(acc.get(x, 0.0) - part, 0.0)
        acc[y] = acc.get(y, 0.0) + part
    out = np.array(sorted(acc), np.int64)
    return out, np.array([acc[n] for n in out.tolist()]), got.where


def _pr_credit(
    history: CodeHistory, nodes: np.ndarray, share: np.ndarray, why: dict[int, list[str]]
) -> tuple[np.ndarray, np.ndarray]:
    """Blame on a pull request's branch commits counts for the PR's merge too (``PR_CREDIT`` of their sum)."""
    credit: dict[int, float] = {}
    for n, s in zip(nodes.tolist(), share.tolist()):
        got = history.landing_pr(n)
        if got is not None:
            credit[got[0]] = credit.get(got[0], 0.0) + s
            if len(why.get(got[0], [])) < 1:
                why.setdefault(got[0], []).append(f"merged PR #{got[1]}, whose commits last changed these lines")
    if not credit:
        return nodes, share
    m = np.array(sorted(credit), np.int64)
    return _combine(nodes, share, m, PR_CREDIT * np.array([credit[x] for x in m.tolist()]))


def _age_gaps(history: CodeHistory, nodes: np.ndarray, as_of: float | None, base: str | None) -> np.ndarray:
    """Days from each blamed commit to the commit the lines are read in (0 where a time is unknown)."""
    if not nodes.size:
        return np.zeros(0)
    start = history.start_of(as_of, base)
    ref = history.times_of([start])[0] if start is not None else (as_of if as_of is not None else np.nan)
    gaps = (ref - history.times_of(nodes)) / 86400.0
    return np.where(np.isfinite(gaps), np.maximum(gaps, 0.0), 0.0)


def _recency(gaps: np.ndarray, r: float, days: float) -> np.ndarray:
    """Each blamed commit's recency factor ``(1 - r) + r·(d + newest gap) / (d + its gap)``: 1 for the newest
    blamed commit, lower the older a commit is than it (a regression is usually recent; issue 46)."""
    if r <= 0 or not gaps.size:
        return np.ones(gaps.shape[0])
    d = max(days, 1e-3)
    out: np.ndarray = (1.0 - r) + r * (d + gaps.min()) / (d + gaps)
    return out


def _days(gap: float) -> str:
    return "the same day" if gap < 1 else f"{gap:.0f} day{'s' if gap >= 1.5 else ''}"


def _combine(
    a_nodes: np.ndarray, a_score: np.ndarray, b_nodes: np.ndarray, b_score: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Per-node maximum of two sorted score lists."""
    if not b_nodes.size:
        return a_nodes, a_score
    if not a_nodes.size:
        return b_nodes, b_score
    nodes = np.union1d(a_nodes, b_nodes)
    out = np.zeros(nodes.shape[0])
    out[np.searchsorted(nodes, a_nodes)] = a_score
    pos = np.searchsorted(nodes, b_nodes)
    out[pos] = np.maximum(out[pos], b_score)
    return nodes, out
