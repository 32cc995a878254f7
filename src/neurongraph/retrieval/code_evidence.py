"""A search's code evidence: the working set's line provenance and the identifiers the question names.

Two signals the text channels cannot give (issue 24): **blame** — the commits that last touched the lines
the agent is changing, as of the search's time (the SZZ idea: a fix's deleted lines were written by the
change it repairs) — and **code terms** — commits that added or removed an identifier the question or the
diff names (``git log -S`` at token level).  Both come from :class:`~neurongraph.index.code_history.CodeHistory`;
this module turns them into one sorted node array with per-node scores in [0, 1] and the phrases that
explain them, which the pipeline fuses (``retrieval/pipeline.py``: extra seeds and ``scores.blame`` /
``scores.code``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from ..config import SearchConfig
from ..index.code_history import CodeHistory, describe
from ..index.code_terms import STOP, query_identifiers
from .changes import WorkingSet

__all__ = ["CodeEvidence", "code_evidence", "query_intent"]

_ASKING = r"^\s*(?:which|what|who|when|where|how)\b.*"
_INTRODUCED = re.compile(r"\bintroduc\w*|" + _ASKING + r"\b(?:add(?:ed|s)?|creat\w*|first\w*)\b", re.I)
_REMOVED = re.compile(_ASKING + r"\b(?:remov\w*|delet\w*|dropp?\w*|got rid|eliminat\w*)\b", re.I)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")
MAX_DIFF_TERMS = 40  # the diff's rarest identifiers that vote (common ones like `err` say nothing)
PLAIN_WORD_MAX_DF = 25  # a plain word counts as an identifier only if few commits changed it


# words of the question itself, never read as identifiers
_QUESTION_WORDS = frozenset(
    "which what who when where why how commit commits change changes patch introduced introduce introduces added "
    "add adds created create removed remove removes deleted delete dropped drop first last did does was were "
    "the this that".split()
)


def query_intent(query: str) -> str:
    """``"introduced"`` / ``"removed"`` when the question asks for the change that added / removed something;
    a bare identifier (``ensure_sync``) asks for its history from the start, like ``git log -S``."""
    if _REMOVED.search(query):
        return "removed"
    if _INTRODUCED.search(query):
        return "introduced"
    words = query.split()
    if len(words) == 1 and query_identifiers(query):
        return "introduced"
    return ""


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


def _query_terms(history: CodeHistory, query: str) -> list[str]:
    """Identifiers the question names: code-looking tokens, plus plain words few commits changed when the
    question asks about an introduction or removal (``which commit introduced frobnicate``)."""
    terms = [t.strip("`") for t in query_identifiers(query)]
    if query_intent(query) or len(query.split()) <= 2:
        for w in _WORD.findall(query):
            if w.lower() in _QUESTION_WORDS or w in STOP or w.lower() in (t.lower() for t in terms):
                continue
            if 0 < history.document_frequency(w) <= PLAIN_WORD_MAX_DF:
                terms.append(w)
    return terms


def code_evidence(
    history: CodeHistory, query: str, cfg: SearchConfig, ws: WorkingSet | None, visible: np.ndarray | None
) -> CodeEvidence | None:
    """The search's code evidence, or None when it has none (no commits with code facts, no identifiers
    named, no lines given) — the pipeline is then exactly the text search."""
    use_blame = ws is not None and ws.has_lines and (cfg.blame_weight > 0 or cfg.blame_seed_weight > 0)
    # identifiers can only come from code-looking tokens, a question about an introduction or removal, a
    # one- or two-word query, or the diff: a prose question never reads the code history (its first use
    # reads every commit's metadata)
    names_code = bool(query_identifiers(query)) or bool(query_intent(query)) or len(query.split()) <= 2
    use_code = cfg.code_weight > 0 and (names_code or (ws is not None and any(f.removed for f in ws.files)))
    if not (use_blame or use_code) or history.commits == 0:
        return None
    as_of = min((x for x in (cfg.as_of, cfg.until) if x is not None), default=None)
    why: dict[int, list[str]] = {}
    b_nodes, b_share = np.zeros(0, np.int64), np.zeros(0)
    blamed = asked = 0
    pure = False
    if use_blame and ws is not None:
        pure = ws.pure_addition
        # anchors stand in for changed lines only when nothing old-side changed anywhere (a pure addition)
        files = [(f.path, list(f.anchors) if pure else f.old_lines) for f in ws.files]
        # no visibility filter: the blamed commits are ancestors of the commit the lines are read in, so they
        # existed then, whatever a time filter says (a patch series applied in one second shares its time)
        bl = history.blame(files, as_of, None, ws.base, exact=cfg.blame_source == "git")
        b_nodes, b_share = bl.share()
        blamed, asked = bl.total, bl.asked
        for n, where in bl.where.items():
            verb = "last changed the lines around the insertion at" if pure else "last changed"
            why.setdefault(n, []).append(f"{verb} {describe(where)} before this")
    c_nodes, c_score = np.zeros(0, np.int64), np.zeros(0)
    intent = ""
    if use_code:
        terms = _query_terms(history, query)
        intent = query_intent(query)
        # a question about an introduction or removal reads identifiers the way `git log -S` does: substrings too
        c_nodes, c_score, c_why = history.term_matches(terms, as_of, intent, visible=visible, substrings=bool(intent))
        if ws is not None:
            removed, _added = ws.terms()
            if removed:  # the diff's removed identifiers were written by earlier changes: who added them
                d_nodes, d_score, d_why = history.term_matches(
                    removed, as_of, "", side_weights=(1.0, 0.0), visible=visible, max_terms=MAX_DIFF_TERMS
                )
                c_nodes, c_score = _combine(c_nodes, c_score, d_nodes, d_score)
                for n, w in d_why.items():
                    c_why.setdefault(n, []).extend(w)
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
    return CodeEvidence(nodes, blame, code, why, blamed, asked, pure, intent if c_nodes.size else "")


def _combine(a_nodes, a_score, b_nodes, b_score):
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
