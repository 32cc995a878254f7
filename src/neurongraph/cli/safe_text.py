"""Terminal-safe text: stored text (titles, authors, paths, bodies, answers) shown without its control codes.

A repository's commit subject or an issue body may hold escape sequences (clear the screen, set the
window title, OSC 52 write to the clipboard), C1 controls (U+009B is CSI on some terminals) or bidi and
other format characters (U+202E RIGHT-TO-LEFT OVERRIDE makes ``exe.txt`` read ``txt.exe``). The CLI's
human output passes every string that comes from the store through :func:`terminal_safe`, which writes
each such character as visible text: ``\\x1b``, ``\\x9b``, ``\\u202e``. Newline and tab stay where the
layout needs them (a body); everything else is escaped.

``--json`` output goes through :func:`json_safe`: ``json.dumps`` escapes C0 controls itself
(``\\u001b``), and this writes C1 controls and the format characters as ``\\uXXXX`` escapes too, so the
JSON text is plain on a terminal and decodes to the same value.

Escaped: C0 controls but newline and tab (when kept), DEL, C1 controls, every Unicode format character
(category Cf: the bidi embeddings, overrides and isolates U+202A–U+202E, U+2066–U+2069, the marks
U+200E/U+200F and U+061C, invisible operators, U+FEFF, tag characters, ...) except U+200C/U+200D
(zero-width non-joiner and joiner, which Persian and Indic text and emoji sequences need), and the line
and paragraph separators U+2028/U+2029. ``tests/test_reliability_terminal_output.py`` checks the set
against :mod:`unicodedata`.
"""

from __future__ import annotations

import re

from rich.markup import escape

from ..model import strict_dumps

__all__ = ["UNSAFE", "json_safe", "print_safe_json", "safe_markup", "terminal_safe"]

# Unicode category Cf (format) as of Unicode 15/16, less U+200C/U+200D; plus Zl/Zp. A test compares this
# class with unicodedata, so a newer Python's new format characters are noticed.
_FORMAT = (
    "\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b\u200e\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U00013430-\U0001343f"
    "\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f\u2028\u2029"
)
UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")
_UNSAFE_ALL = re.compile(f"[\x00-\x1f\x7f-\x9f{_FORMAT}]")  # newline and tab too
_UNSAFE_JSON = re.compile(f"[\x7f-\x9f{_FORMAT}]")  # json.dumps has escaped C0 already


def _visible(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x100:
        return f"\\x{c:02x}"
    return f"\\u{c:04x}" if c < 0x10000 else f"\\U{c:08x}"


def _json_escape(m: re.Match[str]) -> str:
    c = ord(m.group())
    if c < 0x10000:
        return f"\\u{c:04x}"
    c -= 0x10000  # a UTF-16 surrogate pair, as JSON writes characters beyond the BMP
    return f"\\u{0xD800 + (c >> 10):04x}\\u{0xDC00 + (c & 0x3FF):04x}"


def terminal_safe(text: object, *, layout: bool = False) -> str:
    """``text`` (made a string) with every control and format character written as visible ``\\x1b`` /
    ``\\u202e`` text. ``layout=True`` keeps newline and tab (a body printed as lines); otherwise they are
    escaped too (a table cell, a title on one line)."""
    s = text if isinstance(text, str) else str(text)
    if layout:
        return UNSAFE.sub(_visible, s.replace("\r\n", "\n"))  # a CRLF text's lines are lines
    return _UNSAFE_ALL.sub(_visible, s)


def safe_markup(text: object, *, layout: bool = False) -> str:
    """:func:`terminal_safe` text escaped for rich markup (``[bold]`` in a title is text, not a style)."""
    return escape(terminal_safe(text, layout=layout))


def json_safe(json_text: str) -> str:
    """A JSON document (from ``json.dumps(..., ensure_ascii=False)``) with C1 controls and format characters
    written as ``\\uXXXX`` escapes: the same value, plain on a terminal. Those characters can only occur
    inside JSON strings, where such an escape means the character itself."""
    return _UNSAFE_JSON.sub(_json_escape, json_text)


def print_safe_json(obj: object) -> None:
    """``print_json`` (strict JSON, indented, not ASCII-only) with :func:`json_safe` applied."""
    print(json_safe(strict_dumps(obj, ensure_ascii=False, indent=2, default=str)))
