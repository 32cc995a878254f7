"""What ``ngr ask --explain`` shows: the shape that answered, what each phrase was read as, what was left.

Why it is part of every answer (JSON ``explain``): an agent or a user who gets a wrong-looking answer can see
at once whether the question was misread (a name taken as a path, a time phrase not read) without reading the
code; the query itself is the answer's ``query``.
"""

from __future__ import annotations

import re

from .devplan import DevPlan
from .question import Question
from .words import COMMITS, COUNT, FILE_WORDS, FIRST, LAST, LISTY, PEOPLE, PRS, WHO

_INTENT = (WHO, COUNT, LAST, FIRST, COMMITS, FILE_WORDS, PRS, PEOPLE, LISTY)  # what a shape reads as its intent

__all__ = ["explain", "words_left"]

# words that carry no filter of their own: the question's frame ("which", "the", "did")
_FRAME = frozenset(
    "a an the of to in on at by for from with and or is are was were be been did does do has have had which what "
    "who whom whose when where how many much show me list give gimme all any ever there it its this that these "
    "those i we you our my can could would should please tell find number count".split()
)


def explain(q: Question | None, entry: str | None, dev: DevPlan | None, code, route: str) -> dict:
    """``{"answered_by", "shape", "read", "left"}``: ``answered_by`` is the registry entry of a developer shape,
    ``code:<shape>`` for the code history and "not recorded", else ``route:<mode>`` (the translator or search);
    ``read`` the (phrase, read as) pairs; ``left`` the words no reading took (not read as a filter)."""
    if code is not None:
        answered_by, shape = f"code:{code.shape}", code.shape
    elif dev is not None:
        answered_by, shape = entry or "developer", dev.shape
    else:
        answered_by, shape = f"route:{route}", None
    if q is None:
        return {"answered_by": answered_by, "shape": shape, "read": [], "left": []}
    read = [{"phrase": phrase, "as": what} for phrase, what in q.readings]
    return {"answered_by": answered_by, "shape": shape, "read": read, "left": words_left(q)}


def words_left(q: Question) -> list[str]:
    """The question's words that no reading took and that are not its frame or its intent."""
    words = [w for w in re.findall(r"[\w'./-]+", q.words) if w.lower() not in _FRAME]
    return [w for w in words if not any(rx.fullmatch(w) for rx in _INTENT)]
