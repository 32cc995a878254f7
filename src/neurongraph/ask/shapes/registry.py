"""The ordered registry of developer-question shapes, and the one chooser that walks it.

Order is meaning: a question that names a release, a commit or a PR is about that thing before it is a count;
a file's own history comes before "who" and the counts; the plain commit list is the last resort.  The
first entry that makes a plan answers; an entry that *claims* a question stops the walk even without a plan
(its kind of question is not to be read as another kind).  Adding a shape is a :class:`~.shape.Shape` in its
family's module and one line here; ``ngr ask --explain`` names the entry that answered.
"""

from __future__ import annotations

import re

from ...retrieval.topic_terms import rows_holding
from ..devplan import DevPlan
from ..explain import words_left
from ..names import Mention
from ..nl2cypher import type_words
from ..question import Question, read_question
from ..words import HASHNUM, RELATION
from .branch_tags import BRANCH_TAGS
from .counts import COUNTED, MISSING_SCOPE
from .file_history import DIR_MOVE, DIR_REMOVED, FILE_HISTORY
from .file_rankings import RENAMED_FILES
from .lists import LISTING
from .most_fixed import MOST_FIXED
from .named import NAMED_COMMIT, NAMED_PR
from .one_change import CHANGE_FILES, REVERT_OF
from .prs import PR_SIZES, PRS_OF
from .release_shapes import RELEASE
from .reverts import REVERTS
from .shape import Shape
from .tag_shapes import TAGS, asks_about_a_tag
from .trailer_shapes import TRAILERS
from .who import WHO_SHAPE

__all__ = ["REGISTRY", "choose", "plan"]


def _other_types(q: Question) -> bool:
    """ "latest 2 pull requests", "issues after 2023": a list of another node type, the translator's."""
    others = [t for t, _ in type_words(q.text, q.schema.labels) if t not in ("commit", "file")]
    return bool(others) and not q.has_filter or q.wants_prs


def _no_plan(engine, q: Question) -> DevPlan | None:
    return None


# "before that", "since then": a pointer back into the question (its rename, its release), no window asked for
_ANAPHORA = re.compile(r"^'[^']*\b(?:that|this|then|it|them|those|these)'", re.I)


def _unread(q: Question, said: str) -> bool:
    """A time phrase not understood that matters: not a pointer back ("before that"), not the tag the question
    asks about ("when was the last release tagged?")."""
    return not _ANAPHORA.search(said) and not (asks_about_a_tag(q.words) and _TAG_WORD.search(said))


_TAG_WORD = re.compile(r"\b(?:release|tag|version)s?\b", re.I)


def _unread_person(q: Question) -> bool:
    """A first name several authors share, or a name no author has: answering without it would count
    everyone's commits."""
    return any(n.startswith("not understood:") and (" authors (" in n or "names no author" in n) for n in q.notes)


def _unread_path(q: Question) -> bool:
    """Words joined by slashes that name no path ("the backspace/line-wrapping fix"): answering without them
    would answer about everything, and "no such path" would answer about nothing."""
    return any(n.startswith("not understood:") and "(no file or directory by that name" in n for n in q.notes)


def _unread_time(engine, q: Question) -> DevPlan | None:
    """No exact answer when a time phrase was not understood: the history's whole count would look like the
    answer ("how many commits on weekends?" → every commit).  The notes say what was not read."""
    q.notes.append("no exact answer without it: what follows is a search")
    return None


# entries that own a kind of question that no developer shape answers: the one-hop translator's (or search's)
NAMED_NODES = Shape(
    "named_nodes",
    _no_plan,
    claims=lambda q: bool(q.quoted_or_named) and q.scope is None or q.negated(),
    doc="a named title or issue (the translator's relation shapes); a negation (said, not read)",
)
RELATIONS = Shape(
    "relations",
    _no_plan,
    claims=lambda q: bool(RELATION.search(q.text)) and not q.has_filter,
    doc="fixes / follows up / references without a filter: the translator's relation shapes",
)
OTHER_TYPES = Shape("other_types", _no_plan, claims=_other_types, doc="lists of PRs, issues: the translator's")

UNREAD_TIME = Shape(
    "unread_time",
    _unread_time,
    claims=lambda q: any(_unread(q, said) for said in q.tw.not_understood) or _unread_person(q) or _unread_path(q),
    doc=(
        "a time phrase, a person or a sha not understood ('on weekends', a missing tag, one 'Kevin' of three, a sha "
        "no commit has): a search"
    ),
    then="search",
)

REGISTRY: tuple[Shape, ...] = (
    UNREAD_TIME,
    MISSING_SCOPE,
    RELEASE,
    BRANCH_TAGS,
    DIR_MOVE,
    MOST_FIXED,
    TRAILERS,
    NAMED_COMMIT,
    NAMED_PR,
    REVERT_OF,
    CHANGE_FILES,
    NAMED_NODES,
    PR_SIZES,
    PRS_OF,
    FILE_HISTORY,
    DIR_REMOVED,
    REVERTS,
    RELATIONS,
    WHO_SHAPE,
    TAGS,
    RENAMED_FILES,
    COUNTED,
    OTHER_TYPES,
    LISTING,
)


# a word of a period that no time reading took ("between March and June 2025", "the first half of 2024"): the
# period the plan reads, if any, is not the question's
_TIME_WORD = re.compile(
    r"(?:19|20)\d\d|jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?"
    r"|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?|half|quarter|q[1-4]|h[12]",
    re.I,
)

# the entries that answer for the whole history when the question gives no filter (their words are few and
# general); the others read their own words (a tag's, a branch's, a file's)
_WHOLE_HISTORY = (WHO_SHAPE, COUNTED, LISTING)


def choose(engine, q: Question) -> tuple[DevPlan | None, Shape | None]:
    """The first entry's plan, or the entry that claimed the question without one; ``(None, None)`` when no
    entry reads it."""
    for shape in REGISTRY:
        claimed = shape.claims is not None and shape.claims(q)
        if shape.claims is not None and not claimed:
            continue
        made = shape.plan(engine, q)
        unread = _unread_topic(engine, q, made) if made is not None and shape in _WHOLE_HISTORY else ""
        if made is not None and (missed := _ignored(q, made) or unread):
            q.notes.append(f"the {shape.name} shape does not read {missed}")
            made = None  # a plan that drops the question's author or period would answer another question
        if made is not None or claimed:
            return made, shape
    return None, None


def _unread_topic(engine, q: Question, p: DevPlan) -> str:
    """Words that name a topic of this history which the plan does not read, when the plan answers for the whole
    history ("who added shell completion for fish?": every author): two or more of the words left are
    informative here and go together in its commits (retrieval/topic_terms.py); "who made the most commits?"
    leaves one word, "the top contributors to the repository" none that go together."""
    own = [c for c in q.tw.conditions if "$off_head" not in c[0]]  # (reading HEAD's history is no filter)
    filtered = q.scope is not None or q.tw.active or q.author is not None or bool(own) or q.topic is not None
    if filtered or p.shape == "change_not_read" or p.about_file or q.commit is not None or q.pr is not None:
        return ""
    left = list({w.lower(): w for w in words_left(q)}.values())
    code = [w for w in left if _CODE_WORD.fullmatch(w)]
    for w in code:  # "which PR added librt.random": one name of the code is a topic on its own
        if engine.store.message_grep([w]):
            return f"the name {w!r}"
    if len(left) < 2:
        return ""
    n_commits = engine.store.node_type_counts().get("commit", 0)
    _, kept = rows_holding(engine.store.lexical_search, n_commits, left)
    return f"the words {' '.join(repr(w) for w in kept)}" if len(kept) >= 2 else ""


# a word written as code: a dotted or snake_case name ("librt.random", "get_os_args"), not a file (a scope's)
_CODE_WORD = re.compile(r"[A-Za-z_]\w*(?:[._]\w+)+(?<!\.py)(?<!\.c)(?<!\.h)(?<!\.md)")


def _ignored(q: Question, p: DevPlan) -> str:
    """What the question names that the plan's queries do not use: its author, its period."""
    text = " ".join(x for x in (p.cypher, p.count_cypher, p.extra, p.fallback[0] if p.fallback else None) if x)
    if p.shape == "change_not_read" or p.none_text and p.cypher.startswith("UNWIND [] AS x"):
        return ""  # said, not answered: nothing is dropped
    missed = []
    if q.author and "$author" not in text:
        missed.append(f"the author {q.author}")
    dated = "$since" in text or "$until" in text or "length_until" in p.params  # (a file's length: read when run)
    if (q.tw.since or q.tw.until) and not dated:
        missed.append(f"the period ({q.tw.describe()})")
    if q.tw.commits is not None and "$within" not in text and "$tag" not in text:  # (a plan of the named tag: read)
        missed.append("the tag range")
    if (num := HASHNUM.search(q.words)) is not None:  # an issue or PR number no reading took
        missed.append(f"the number {num.group(0)}")
    if timed := [w for w in words_left(q) if _TIME_WORD.fullmatch(w)]:  # a period the time reading missed
        missed.append(f"the time words {' '.join(repr(w) for w in timed)}")
    return " or ".join(missed)


def plan(engine, question: str, schema, mentions: list[Mention]) -> tuple[DevPlan | None, Question, Shape | None]:
    """Read the question once and choose its shape."""
    q = read_question(engine, question, schema, mentions)
    made, shape = choose(engine, q)
    return made, q, shape
