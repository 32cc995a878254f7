"""Read a folder of Markdown pages (a wiki, ADRs, design notes) into an IngestBatch (docs/ingest.md).

Each ``.md``/``.markdown`` file is a node ``md:<path relative to the folder>``; a page longer than
``SPLIT_CHARS`` is split by its headings into ``section`` nodes ``md:<path>#<slug>`` that are
``part_of`` it, so a search hit is a small original source.  Edges come from what authors write:
relative links and ``[[Wiki Links]]`` (``links_to``), ADR status lines ("Superseded by ADR-0012",
"Supersedes ADR-0003", "Amended by …", "Amends …": ``supersedes``/``amends``), ``#N`` and full commit
ids (``refs`` to ``issue:N``/``pr:N``/``commit:<sha>``) and repository paths (``mentions`` to
``file:<path>``).  Pure: reads files, returns a batch, never writes.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import tomllib
import unicodedata
from datetime import UTC, date, datetime
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from ..errors import InvalidArgument
from ..model import MAX_ID_LEN, Node
from . import refs as R
from .batch import EdgeSet, IngestBatch
from .confine import Refused, read_confined

__all__ = ["read_markdown", "parse_front_matter", "slugify", "SPLIT_CHARS", "MAX_FILE_BYTES"]

KIND = "markdown"
MAX_FILE_BYTES = 2 * 1024 * 1024  # a page larger than this is generated output, not a page; skipped with a reason
SPLIT_CHARS = 1500  # a page body longer than this is split into sections (~300 tokens: what MiniLM reads whole)
MIN_SECTION = 200  # a section with less text than this joins its neighbour (a heading followed by a line)
MAX_SECTION = 4000  # a section longer than this is cut at paragraph breaks into parts
MAX_CLAUSE_REFS = 10  # targets read from one "Superseded by …" clause
PAGE_SUMMARY = 600  # characters of the first paragraph a split page keeps, before its table of contents
SUFFIXES = (".md", ".markdown")
SKIP_DIRS = {"node_modules"}
DECISION_DIRS = {"adr", "adrs", "decisions", "decision"}

_FENCE = re.compile(r"^[ \t]{0,3}(`{3,}|~{3,})")
_HEADING_RE = re.compile(r"^[ \t]{0,3}(#{1,6})[ \t]+(.+?)[ \t]*#*[ \t]*$")
# bounded repetitions everywhere: a 2 MB page of brackets or base64 must not make a regex quadratic
_LINK = re.compile(
    r"(?<!!)\[((?:[^\[\]]|\[[^\[\]]{0,200}\]){0,1000})\]\(\s*<?([^)\s>]{1,2000})>?(?:\s+[\"'(][^)]{0,500})?\s*\)"
)
_REFDEF = re.compile(r"^[ \t]{0,3}\[([^\]\n]{1,500})\]:[ \t]*<?(\S{1,2000}?)>?(?:[ \t]+.*)?$", re.M)
_WIKI = re.compile(r"\[\[([^\[\]|#\n]{1,300})(?:#([^\]|\n]{0,300}))?(?:\|[^\]\n]{0,300})?\]\]")


def _heading(line: str):
    """An ATX heading line (``## Title``); a line longer than 500 characters is text, not a heading."""
    return _HEADING_RE.match(line) if len(line) <= 500 and line.lstrip(" \t").startswith("#") else None


_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:|^//", re.I)
_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+", re.I)
_PATH = re.compile(r"(?<![\w/.:@~-])((?:[\w-][\w.-]{0,100}/){1,16}[\w.-]{0,100}\w\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/])")
_ADR_REF = re.compile(r"\bADR[-_ #]?0*(\d{1,5})\b", re.I)
_ADR_FILE = re.compile(r"^(?:adr[-_ ]?)?0*(\d{1,5})(?:[-_ .]|$)", re.I)
_FILE_REF = re.compile(r"(?<![\w/.-])([\w./-]{0,300}[\w-]\.(?:md|markdown))\b", re.I)
_RELATION = re.compile(
    r"^[ \t>*_\-|]*(?:status[*_]*[ \t]*:?[ \t]*[*_]*[ \t]*)?(?:[A-Za-z]+[ \t]*[,;][ \t]*)?"
    r"(superseded[ \t]+by|supersedes|amended[ \t]+by|amends)\b[:*_ \t]*(.*)$",
    re.I | re.M,
)
_DATE_LINE = re.compile(
    r"^[ \t*_]*date[*_]*[ \t]*:[ \t]*[*_]*[ \t]*(\d{4}-\d{2}-\d{2}(?:[T ][\d:]+(?:Z|[+-]\d{2}:?\d{2})?)?)", re.I | re.M
)
_STATUS_LINE = re.compile(r"^[ \t*_]*status[*_]*[ \t]*:[ \t]*[*_]*[ \t]*(\S[^\n]*)$", re.I | re.M)
_FM_RELATIONS = {
    "supersedes": ("supersedes", False),
    "superseded_by": ("supersedes", True),
    "supersededby": ("supersedes", True),
    "amends": ("amends", False),
    "amended_by": ("amends", True),
    "amendedby": ("amends", True),
}


# ---------------------------------------------------------------------------------------- front matter
def _scalar(v: str) -> Any:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    if v.startswith("[") and v.endswith("]"):
        return [_scalar(x) for x in v[1:-1].split(",") if x.strip()]
    if " #" in v:
        v = v.split(" #", 1)[0].rstrip()
    if v.lower() in ("true", "false"):
        return v.lower() == "true"
    if re.fullmatch(r"-?\d{1,15}", v):
        return int(v)
    return v


def parse_front_matter(text: str) -> tuple[dict, str, str | None]:
    """(fields, body, error) of a page: YAML front matter between ``---`` lines (a subset: ``key: value``,
    quoted strings, ``[a, b]`` and ``- item`` lists, ``|``/``>`` blocks; nested maps are skipped) or TOML
    between ``+++`` lines.  A page without front matter gives ({}, text, None)."""
    lines = text.split("\n")
    if not lines or lines[0].rstrip() not in ("---", "+++"):
        return {}, text, None
    fence = lines[0].rstrip()
    end = next(
        (i for i in range(1, len(lines)) if lines[i].rstrip() in ((fence, "...") if fence == "---" else (fence,))), None
    )
    if end is None:
        return {}, text, "front matter is not closed"
    block, body = lines[1:end], "\n".join(lines[end + 1 :])
    if fence == "+++":
        try:
            data = tomllib.loads("\n".join(block))
        except tomllib.TOMLDecodeError as exc:
            return {}, body, f"TOML front matter: {exc}"
        try:  # TOML has nan and inf, JSON (node metadata) does not
            return json.loads(json.dumps(data, default=str, allow_nan=False)), body, None
        except ValueError:
            return {}, body, "TOML front matter holds nan or inf, which JSON metadata cannot hold"
    return _parse_yaml_subset(block), body, None


def _parse_yaml_subset(block: list[str]) -> dict[str, Any]:
    """``key: value`` lines, ``- item`` lists and ``|``/``>`` blocks; a nested map is skipped, not read."""
    out: dict[str, Any] = {}
    key = None
    block_mode = None
    for raw in block:
        if not raw.strip() or raw.lstrip().startswith("#"):
            if block_mode and key:
                out[key] = (out[key] + "\n") if out[key] else out[key]
            continue
        if raw[0] in " \t" or raw.startswith("- "):
            if key is not None:
                _continue_value(out, key, raw.strip(), block_mode)
            continue
        m = re.match(r"^([\w.-]+)[ \t]*:(?:[ \t]+(.*))?$", raw.rstrip())
        if not m:
            key, block_mode = None, None
            continue
        key, value = m.group(1), (m.group(2) or "").strip()
        block_mode = None
        if value in ("|", ">", "|-", ">-", "|+", ">+"):
            block_mode, out[key] = value[0], ""
        else:
            out[key] = _scalar(value) if value else ""
    return {k: v.strip() if isinstance(v, str) else v for k, v in out.items()}


def _continue_value(out: dict[str, Any], key: str, item: str, block_mode: str | None) -> None:
    """An indented line: more of a ``|``/``>`` block, or a ``- item`` of a list."""
    if block_mode:
        out[key] = out[key] + (" " if block_mode == ">" and out[key] else "\n" if out[key] else "") + item
    elif item.startswith("- ") or item == "-":
        if not isinstance(out.get(key), list):
            out[key] = []
        out[key].append(_scalar(item[1:]))


# ---------------------------------------------------------------------------------------- page structure
def slugify(heading: str) -> str:
    """GitHub's heading anchor: lower case, punctuation dropped, spaces to hyphens."""
    s = unicodedata.normalize("NFKC", _plain(heading)).lower().strip()
    s = "".join(ch for ch in s if ch.isalnum() or ch in " -_")
    return re.sub(r" ", "-", s)[:100].rstrip("-") or "section"


def _plain(s: str) -> str:
    """Inline markup out of a heading: links keep their text, emphasis and code marks go."""
    s = _LINK.sub(lambda m: m.group(1), s)
    s = re.sub(r"\[\[([^\]|]+)(?:\|([^\]]+))?\]\]", lambda m: m.group(2) or m.group(1), s)
    return re.sub(r"[`*]|(?<!\w)_|_(?!\w)", "", s).strip()


def _lines_outside_code(lines: list[str]) -> list[bool]:
    """True per line that is outside a fenced code block (fence lines count as inside)."""
    out: list[bool] = []
    fence: str | None = None
    for ln in lines:
        m = _FENCE.match(ln)
        if fence is None and m:
            fence = m.group(1)[0] * len(m.group(1))
            out.append(False)
        elif fence is not None:
            out.append(False)
            if m and m.group(1).startswith(fence):
                fence = None
        else:
            out.append(True)
    return out


def _strip_code(text: str) -> str:
    lines = text.split("\n")
    return "\n".join(ln if keep else "" for ln, keep in zip(lines, _lines_outside_code(lines)))


class _Section:
    __slots__ = ("level", "heading", "trail", "lines", "slug", "part")

    def __init__(self, level: int, heading: str, trail: list[str], part: int = 1):
        self.level, self.heading, self.trail, self.slug, self.part = level, heading, trail, "", part
        self.lines: list[str] = []

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


def _split(body: str, title_line: int | None) -> tuple[str, list[_Section]]:
    """(preamble, sections) of a page body cut at its headings (the title heading excluded)."""
    lines = body.split("\n")
    outside = _lines_outside_code(lines)
    pre: list[str] = []
    sections: list[_Section] = []
    trail: list[tuple[int, str]] = []
    for i, ln in enumerate(lines):
        m = _heading(ln) if outside[i] and i != title_line else None
        if m:
            level, heading = len(m.group(1)), _plain(m.group(2))
            trail = [t for t in trail if t[0] < level] + [(level, heading)]
            sections.append(_Section(level, heading, [t[1] for t in trail]))
        elif i == title_line:
            continue
        elif sections:
            sections[-1].lines.append(ln)
        else:
            pre.append(ln)
    out = _cut_long(_merge_short(sections))
    _assign_slugs(out)
    return "\n".join(pre).strip(), out


def _merge_short(sections: list[_Section]) -> list[_Section]:
    """A short section joins the next when that is its own subsection, else the previous one."""
    merged: list[_Section] = []
    k = 0
    while k < len(sections):
        s = sections[k]
        nxt = sections[k + 1] if k + 1 < len(sections) else None
        if len(s.text) < MIN_SECTION and nxt is not None and nxt.level > s.level:
            nxt.lines = s.lines + ["", "#" * nxt.level + " " + nxt.heading] + nxt.lines
            nxt.heading, nxt.level, nxt.trail = s.heading, s.level, s.trail
        elif len(s.text) < MIN_SECTION and merged:
            merged[-1].lines += ["", "#" * s.level + " " + s.heading] + s.lines
        else:
            merged.append(s)
        k += 1
    return merged


def _cut_long(sections: list[_Section]) -> list[_Section]:
    """A very long section is cut at paragraph breaks into parts."""
    out: list[_Section] = []
    for s in sections:
        if len(s.text) <= MAX_SECTION:
            out.append(s)
            continue
        parts: list[list[str]] = []
        cur: list[str] = []
        size = 0
        for para in re.split(r"\n[ \t]*\n", s.text):
            if cur and size + len(para) > MAX_SECTION:
                parts.append(cur)
                cur, size = [], 0
            cur.append(para)
            size += len(para) + 2
        if cur:
            parts.append(cur)
        for j, p in enumerate(parts):
            piece = _Section(s.level, s.heading, s.trail, part=j + 1)
            piece.lines = "\n\n".join(p).split("\n")
            out.append(piece)
    return out


def _assign_slugs(sections: list[_Section]) -> None:
    """GitHub's anchors: a repeated heading gets -1, -2, …; a part of a long section -part-N."""
    seen: dict[str, int] = {}
    slug = ""
    for s in sections:
        if s.part == 1:
            base = slugify(s.heading)
            n = seen.get(base, 0)
            seen[base] = n + 1
            slug = base if n == 0 else f"{base}-{n}"
            s.slug = slug
        else:
            s.slug = f"{slug}-part-{s.part}"


def _first_paragraph(text: str) -> str:
    for para in re.split(r"\n[ \t]*\n", _strip_code(text)):
        p = para.strip()
        if p and not _heading(p.split("\n")[0]):
            return p[:PAGE_SUMMARY]
    return ""


# ---------------------------------------------------------------------------------------- times
def _epoch(v: Any) -> tuple[str | None, int | None]:
    if isinstance(v, (datetime, date)):
        v = v.isoformat()
    if not isinstance(v, str) or not v.strip():
        return None, None
    s = v.strip()
    try:
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
            dt = datetime.fromisoformat(s).replace(tzinfo=UTC)
        else:
            dt = datetime.fromisoformat(s.replace("Z", "+00:00").replace(" ", "T", 1))
            if dt.tzinfo is None:
                dt = dt.replace(tzinfo=UTC)
    except ValueError:
        return s, None
    return s, int(dt.timestamp())


# ---------------------------------------------------------------------------------------- reading
class _Page:
    def __init__(self, rel: str, abspath: Path):
        self.rel, self.abspath = rel, abspath
        self.id = f"md:{rel}"
        self.fm: dict = {}
        self.body = ""
        self.title = ""
        self.type = "page"
        self.preamble = ""
        self.sections: list[_Section] = []
        self.section_ids: list[str] = []
        self.number: int | None = None  # ADR number from the file name


def _walk(root: Path, refused: list[tuple[str, str]]) -> list[tuple[str, Path]]:
    """Every page file under ``root``; a symbolic link to a folder is not followed (named in ``refused``)."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):  # followlinks=False: a linked folder is listed, not entered
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d not in SKIP_DIRS)
        for d in dirnames:
            if (Path(dirpath) / d).is_symlink():
                refused.append(
                    ((Path(dirpath) / d).relative_to(root).as_posix(), "a symbolic link to a folder: not followed")
                )
        for name in sorted(filenames):
            if name.lower().endswith(SUFFIXES) and not name.startswith("."):
                p = Path(dirpath) / name
                out.append((p.relative_to(root).as_posix(), p))
    return out


def _repo_root(root: Path) -> Path | None:
    for d in (root, *root.parents):
        if (d / ".git").exists():
            return d
    return None


def _norm_key(s: str) -> str:
    return re.sub(r"[-_\s]+", " ", unicodedata.normalize("NFKC", s)).strip().casefold()


def _list_files(base: Path, refused: list[tuple[str, str]]) -> tuple[Path, list[tuple[str, Path]], bool]:
    """(folder, [(relative path, path)], single file?) for ``root``; user mistakes are InvalidArgument."""
    if not base.exists():
        raise InvalidArgument(f"{base}: no such folder")
    if base.is_file():
        if not base.name.lower().endswith(SUFFIXES):
            raise InvalidArgument(f"{base}: not a Markdown file (.md or .markdown)")
        return base.parent, [(base.name, base)], True
    if not base.is_dir():
        raise InvalidArgument(f"{base}: not a folder or a Markdown file")
    files = _walk(base, refused)
    if not files:  # an empty listing is a mistake, not "every page was deleted" (which --prune would do)
        raise InvalidArgument(f"{base}: no Markdown files (.md, .markdown) in this folder")
    return base, files, False


def _read_text(base: Path, rel: str, path: Path, batch: IngestBatch, max_file_bytes: int) -> str | None:
    """The file's text, or None after recording in ``batch.skipped`` why it cannot be a page (too large,
    not UTF-8, or not a regular file inside the folder: see confine.py)."""
    try:
        text = read_confined(base, path, max_file_bytes).decode("utf-8-sig")
    except Refused as exc:
        batch.skip(rel, str(exc))
        return None
    except UnicodeDecodeError as exc:
        batch.skip(rel, f"not UTF-8 (byte {exc.start})")
        return None
    if len(rel) > MAX_ID_LEN - 120:  # room for "md:" and "#<slug>"
        batch.skip(rel, f"path longer than {MAX_ID_LEN - 120} characters (node ids are at most {MAX_ID_LEN})")
        return None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def _title(pg: _Page, lines: list[str], outside: list[bool]) -> int | None:
    """Set ``pg.title``; return the line of the heading that names the page (then not a section), if any."""
    first = next(((i, h) for i, ln in enumerate(lines) if outside[i] and (h := _heading(ln))), None)
    fm_title = pg.fm.get("title")
    if isinstance(fm_title, str) and fm_title.strip():
        pg.title = fm_title.strip()
        if first is not None and len(first[1].group(1)) == 1 and _plain(first[1].group(2)) == pg.title:
            return first[0]
        return None
    if first is None:
        pg.title = Path(pg.rel).stem.replace("-", " ").replace("_", " ").strip() or pg.rel
        return None
    at, head = first
    pg.title = _plain(head.group(2))
    # the first heading names the page (not a section) when it is an H1 or the only top-level one
    if len(head.group(1)) == 1 or all(
        len(m.group(1)) > len(head.group(1))
        for i, ln in enumerate(lines[at + 1 :], at + 1)
        if outside[i] and (m := _heading(ln))
    ):
        return at
    return None


def _classify(pg: _Page) -> None:
    """Set the page's type (front matter, else an ADR folder or file name) and its ADR number."""
    name = Path(pg.rel).name
    parts = [x.lower() for x in Path(pg.rel).parts[:-1]]
    fm_type = pg.fm.get("type")
    if isinstance(fm_type, str) and fm_type.strip() and not fm_type[0].isspace():
        pg.type = fm_type.strip()[:100]
    elif any(x in DECISION_DIRS for x in parts) or re.match(r"^adr[-_ ]?\d", name, re.I):
        pg.type = "decision"
    m = _ADR_FILE.match(name)
    if m and (pg.type == "decision" or name.lower().startswith("adr")):
        pg.number = int(m.group(1))


def _parse_page(rel: str, path: Path, text: str, batch: IngestBatch, stats: dict[str, Any]) -> _Page:
    pg = _Page(rel, path)
    pg.fm, pg.body, err = parse_front_matter(text)
    if err:
        stats["front_matter_errors"] += 1
        batch.skip(rel + " (front matter)", err + "; read as plain text")
    lines = pg.body.split("\n")
    title_line = _title(pg, lines, _lines_outside_code(lines))
    _classify(pg)
    if len(pg.body.strip()) > SPLIT_CHARS:
        pg.preamble, pg.sections = _split(pg.body, title_line)
    else:
        if title_line is not None:
            lines = lines[:title_line] + lines[title_line + 1 :]
        pg.preamble = "\n".join(lines).strip()
    return pg


def _status(pg: _Page) -> str | None:
    """The page's status: front matter, else (a decision) a ``Status:`` line or a ``## Status`` paragraph."""
    status = pg.fm.get("status") if isinstance(pg.fm.get("status"), str) else None
    if status or pg.type != "decision":
        return status
    code_free = _strip_code(pg.body)
    m = _STATUS_LINE.search(code_free)
    if m:
        return m.group(1)
    m = re.search(r"^#{1,6}[ \t]+status[ \t]*#*[ \t]*\n+[ \t]*(\S[^\n]*)", code_free, re.I | re.M)  # adr-tools
    return m.group(1) if m else None


def _page_meta(pg: _Page, source: str, repo: Path | None) -> tuple[dict[str, Any], int | None]:
    """The page node's metadata and its event time (epoch seconds) if it has a date."""
    date_v = pg.fm.get("date")
    if date_v in (None, "") and pg.type == "decision":
        m = _DATE_LINE.search("\n".join(pg.body.split("\n")[:30]))
        date_v = m.group(1) if m else None
    iso, epoch = _epoch(date_v)
    status = _status(pg)
    meta: dict[str, Any] = {"source": source, "ingest": KIND, "path": pg.rel}
    if repo is not None:
        root = repo.resolve()
        meta["repo_path"] = pg.abspath.relative_to(root).as_posix() if pg.abspath.is_relative_to(root) else pg.rel
    if iso:
        meta["date"] = iso
    if epoch is not None:
        meta["time"] = epoch
    if status:
        meta["status"] = _plain(status)[:100]
    if pg.number is not None:
        meta["number"] = pg.number
    if pg.fm:
        meta["front_matter"] = pg.fm
    return meta, epoch


def _page_text(pg: _Page, meta: dict[str, Any]) -> str:
    """A split page's node holds its summary and table of contents; the sections hold the text."""
    if not pg.sections:
        return pg.preamble
    toc = "\n".join("  " * max(0, s.level - 2) + "- " + s.heading for s in pg.sections if s.part == 1)
    summary = _first_paragraph(pg.preamble) or _first_paragraph(pg.sections[0].text)
    meta["sections"] = len(pg.sections)
    return (summary + "\n\n" if summary else "") + "Contents:\n" + toc


class _Links:
    """Resolves what pages say about each other (links, wiki links, ADR numbers, file paths) into edges.

    One object per read: it holds the page indexes and the counters the summary reports."""

    def __init__(self, base: Path, repo: Path | None, pages: list[_Page], stats: dict[str, Any]):
        self.base, self.repo, self.stats = base, repo, stats
        self.missing_examples: list[str] = []
        self.edges = EdgeSet(KIND)
        self.by_rel = {p.rel: p for p in pages}
        self.by_key: dict[str, list[_Page]] = {}
        self.by_number: dict[int, list[_Page]] = {}
        self.sections_of: dict[str, list[str]] = {}
        self._resolved: dict[tuple[str, str], tuple[str, Any] | None] = {}
        for p in pages:
            for k in {_norm_key(Path(p.rel).stem), _norm_key(p.title), _norm_key(p.rel.rsplit(".", 1)[0])}:
                self.by_key.setdefault(k, []).append(p)
            if p.number is not None:
                self.by_number.setdefault(p.number, []).append(p)

    def _missing(self, example: str) -> None:
        if len(self.missing_examples) < 10:
            self.missing_examples.append(example)

    @staticmethod
    def closest(cands: list[_Page], frm: _Page) -> _Page:
        d = posixpath.dirname(frm.rel)
        same = [c for c in cands if posixpath.dirname(c.rel) == d]
        return (same or sorted(cands, key=lambda c: c.rel))[0]

    def resolve_path(self, target: str, frm: _Page) -> tuple[str, Any] | None:
        """('page', _Page) | ('file', repo path) | ('missing', text) | None (not a local link)."""
        key = (target, posixpath.dirname(frm.rel))
        if key not in self._resolved:
            self._resolved[key] = self._resolve_path(target, frm)
        return self._resolved[key]

    def _resolve_path(self, target: str, frm: _Page) -> tuple[str, Any] | None:
        t = target.strip()
        if not t or t.startswith("#") or _SCHEME.match(t):
            return None
        t = unquote(t.split("#", 1)[0].split("?", 1)[0])
        if not t:
            return None
        absp = (self.base / t.lstrip("/")) if t.startswith("/") else (frm.abspath.parent / t)
        absp = Path(os.path.normpath(absp))
        rel = absp.relative_to(self.base).as_posix() if absp.is_relative_to(self.base) else None
        if rel is not None:
            cands = (
                [rel]
                if rel.lower().endswith(SUFFIXES)
                else [rel + ".md", rel + ".markdown", rel + "/README.md", rel + "/readme.md", rel + "/index.md", rel]
            )
            for c in cands:
                if c in self.by_rel:
                    return "page", self.by_rel[c]
        if absp.suffix.lower() in SUFFIXES or (rel is not None and not absp.suffix):
            return "missing", t
        if self.repo is not None and absp.is_relative_to(self.repo.resolve()):
            return "file", absp.relative_to(self.repo.resolve()).as_posix()
        return "missing", t

    def resolve_wiki(self, name: str, frm: _Page) -> _Page | None:
        cands = self.by_key.get(_norm_key(name), [])
        if not cands:
            self.stats["wiki_links_missing"] += 1
            self._missing(f"{frm.rel}: [[{name}]]")
            return None
        if len({c.rel for c in cands}) > 1:
            self.stats["wiki_links_ambiguous"] += 1
        return self.closest(cands, frm)

    def resolve_adr(self, rest: str, frm: _Page) -> list[tuple[_Page, str]]:
        """Pages a status clause names: Markdown links, wiki links, ADR-N, file names; in order."""
        out: list[tuple[_Page, str]] = []
        rest = rest[:500]
        for m in _LINK.finditer(rest):
            r = self.resolve_path(m.group(2), frm)
            if r and r[0] == "page":
                out.append((r[1], m.group(0)))
        for m in _WIKI.finditer(rest):
            cands = self.by_key.get(_norm_key(m.group(1)), [])
            if cands:
                out.append((self.closest(cands, frm), m.group(0)))
        plain = _WIKI.sub(" ", _LINK.sub(lambda m: m.group(1), rest))
        if not out:
            for m in _FILE_REF.finditer(plain):
                r = self.resolve_path(m.group(1), frm)
                if r and r[0] == "page":
                    out.append((r[1], m.group(0)))
        if not out:
            for m in _ADR_REF.finditer(plain):
                cands = self.by_number.get(int(m.group(1)), [])
                if cands:
                    out.append((self.closest(cands, frm), m.group(0)))
                else:
                    self.stats["adr_refs_unresolved"] += 1
        return out[:MAX_CLAUSE_REFS]

    def edge(self, src: str, rel: str, dst: str, owner: str, evidence: str, **meta) -> None:
        self.edges.add(src, rel, dst, owner, evidence, **meta)

    def content_edges(self, src: str, text: str, frm: _Page) -> None:
        """Edges from what a page or section's text links to or mentions (code blocks are not read)."""
        code_free = _strip_code(text)
        targets = [(m.group(2), m.group(0)) for m in _LINK.finditer(code_free)]
        targets += [(m.group(2), m.group(0)) for m in _REFDEF.finditer(code_free)]
        for target, ev in targets:
            self._link_edge(src, target, ev, frm)
        for m in _WIKI.finditer(code_free):
            p = self.resolve_wiki(m.group(1), frm)
            if p is not None:
                self.edge(src, "links_to", p.id, src, m.group(0), **({"anchor": m.group(2)} if m.group(2) else {}))
        for ref in R.issue_refs(_URL.sub(" ", code_free)):
            for kind in ("issue", "pr"):  # #N does not say which; the sync keeps the one that exists
                self.edge(src, "refs", f"{kind}:{ref.value}", src, ref.evidence)
        for ref in R.sha_refs(text):
            if len(ref.value) == 40:
                self.edge(src, "refs", f"commit:{ref.value}", src, ref.evidence)
        no_links = _REFDEF.sub(" ", _LINK.sub(lambda m: m.group(1), _URL.sub(" ", text)))
        for m in _PATH.finditer(no_links):
            path = m.group(1)
            if path.startswith("./"):
                path = path[2:]
            if ".." in path.split("/") or path.startswith("/"):
                continue
            self.edge(src, "mentions", f"file:{path}", src, m.group(0))

    def _link_edge(self, src: str, target: str, evidence: str, frm: _Page) -> None:
        r = self.resolve_path(target, frm)
        if r is None:
            return
        if r[0] == "page":
            anchor = target.split("#", 1)[1] if "#" in target else None
            self.edge(src, "links_to", r[1].id, src, evidence, **({"anchor": anchor} if anchor else {}))
        elif r[0] == "file":
            self.edge(src, "mentions", f"file:{r[1]}", src, evidence)
        else:
            self.stats["links_missing"] += 1
            self._missing(f"{frm.rel}: {target}")

    def relate(self, newer: _Page, rel: str, older: _Page, owner: _Page, evidence: str) -> None:
        """newer supersedes/amends older; a section of a superseded page is superseded with it."""
        self.edge(newer.id, rel, older.id, owner.id, evidence)
        if rel == "supersedes":
            for sid in self.sections_of[older.id]:
                self.edge(newer.id, rel, sid, owner.id, evidence, via=older.id)

    def adr_relations(self, pg: _Page) -> None:
        """supersedes/amends edges from front matter keys, a status value and "Superseded by …" sentences."""
        for key, value in pg.fm.items():
            spec = _FM_RELATIONS.get(key.lower().replace("-", "_"))
            if spec is None and key.lower() == "status" and isinstance(value, str):
                for m in _RELATION.finditer(value):
                    self._clause(pg, m.group(1), m.group(2), f"status: {value}")
                continue
            if spec is None:
                continue
            rel, passive = spec
            for v in value if isinstance(value, list) else [value]:
                clause = f"ADR-{v}" if isinstance(v, int) or (isinstance(v, str) and v.strip().isdigit()) else str(v)
                for target, _ev in self.resolve_adr(clause, pg):
                    newer, older = (target, pg) if passive else (pg, target)
                    self.relate(newer, rel, older, pg, f"{key}: {v}")
        for m in _RELATION.finditer(_strip_code(pg.body)):
            self._clause(pg, m.group(1), m.group(2), m.group(0).strip())

    def _clause(self, pg: _Page, phrase: str, rest: str, evidence: str) -> None:
        phrase = re.sub(r"\s+", " ", phrase.lower())
        rel = "supersedes" if phrase.startswith("supersed") else "amends"
        passive = phrase.endswith(" by")
        rest = re.split(r"[.;](?:\s|$)", rest, maxsplit=1)[0]  # the clause, not the sentences after it
        for target, _ in self.resolve_adr(rest, pg):
            newer, older = (target, pg) if passive else (pg, target)
            self.relate(newer, rel, older, pg, evidence)


def _add_page(pg: _Page, batch: IngestBatch, links: _Links, source: str, repo: Path | None) -> None:
    """The page's node, its sections' nodes (``part_of`` the page) and the edges their text makes."""
    meta, epoch = _page_meta(pg, source, repo)
    batch.nodes.append(Node(pg.id, pg.type, pg.title, _page_text(pg, meta), meta))
    links.stats["pages"] += 1
    links.content_edges(pg.id, pg.preamble, pg)
    for k, s in enumerate(pg.sections):
        sid = f"{pg.id}#{s.slug}"
        pg.section_ids.append(sid)
        smeta: dict[str, Any] = {
            "source": source,
            "ingest": KIND,
            "path": pg.rel,
            "page": pg.id,
            "owner": pg.id,
            "heading": s.heading,
            "level": s.level,
            "anchor": s.slug,
            "position": k + 1,
        }
        if epoch is not None:
            smeta["time"] = epoch
        title = " › ".join([pg.title, *s.trail]) + (f" (part {s.part})" if s.part > 1 else "")
        batch.nodes.append(Node(sid, "section", title[:500], s.text, smeta))
        links.edge(sid, "part_of", pg.id, sid, "")
        links.content_edges(sid, s.text, pg)
        links.stats["sections"] += 1
    links.sections_of[pg.id] = pg.section_ids


def _take_pages(pages: list[_Page], batch: IngestBatch, links: _Links, name: str, repo: Path | None, strict: bool):
    """Each page's nodes and edges; a page over a limit is skipped and named (``strict``: the error stands),
    and no edge is left pointing at it or its sections.  Returns the pages taken."""
    taken: list[_Page] = []
    refused: set[str] = set()
    for pg in pages:
        counts = (links.stats["pages"], links.stats["sections"])
        if batch.take(pg.rel, partial(_add_page, pg, batch, links, name, repo), strict=strict, edges=links.edges):
            taken.append(pg)
            continue
        links.stats["pages"], links.stats["sections"] = counts
        refused |= {pg.id, *pg.section_ids}
        links.sections_of[pg.id] = []
    for pg in taken:  # ADR relations, after every page and section is known
        links.adr_relations(pg)
    if refused:
        links.edges.drop_touching(refused)
    return taken


def read_markdown(
    root: str | os.PathLike,
    source: str | None = None,
    *,
    max_file_bytes: int = MAX_FILE_BYTES,
    strict: bool = False,
) -> IngestBatch:
    """Read every ``.md``/``.markdown`` page under ``root`` (hidden folders and ``node_modules`` skipped)
    into an :class:`IngestBatch` of kind ``markdown``; ``complete=True`` (the folder lists every page).

    ``root`` may also be a single Markdown file (then the batch is not complete).  ``source`` defaults
    to the folder's name.  A page over a field limit is skipped and named (``strict``: an error).
    """
    refused: list[tuple[str, str]] = []
    base, files, single = _list_files(Path(root), refused)
    base = base.resolve()
    name = source or base.name or "markdown"
    batch = IngestBatch(kind=KIND, source=name, complete=not single)
    for rel, why in refused:
        batch.skip(rel, why)
    stats: dict[str, Any] = {
        "files": 0,
        "pages": 0,
        "sections": 0,
        "links_missing": 0,
        "wiki_links_missing": 0,
        "wiki_links_ambiguous": 0,
        "adr_refs_unresolved": 0,
        "front_matter_errors": 0,
    }
    repo = _repo_root(base)
    pages: list[_Page] = []
    for rel, _ in files:
        path = base / rel  # read only if it resolves inside the folder (confine.py)
        text = _read_text(base, rel, path, batch, max_file_bytes)
        if text is not None:
            stats["files"] += 1
            pages.append(_parse_page(rel, path, text, batch, stats))
    links = _Links(base, repo, pages, stats)
    _take_pages(pages, batch, links, name, repo, strict)
    batch.edges = links.edges.edges()
    stats["edges"] = links.edges.counts()
    if links.missing_examples:
        stats["missing_examples"] = links.missing_examples
    batch.stats = stats
    return batch
