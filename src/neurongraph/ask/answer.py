"""Answers that cite what was retrieved and nothing else.

* :func:`evidence_ids` — the node ids a set of graph rows and search hits can be cited by;
* :func:`check_refs` — parse ``[refs: …]`` from a model's answer, keep the ids that were retrieved, drop and
  report the others;
* :func:`extractive_answer` — the LLM-free answer: graph rows as facts, then the best-matching sentences
  of the top hits, each line ending with the id it came from.
"""

from __future__ import annotations

import re

__all__ = ["NOT_FOUND", "evidence_ids", "row_ids", "check_refs", "extractive_answer", "render_row"]

NOT_FOUND = "Not found in the history: nothing retrieved answers this question."
_REFS = re.compile(r"\[refs?:\s*([^\]]*)\]", re.I)
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")
_WORD = re.compile(r"\w+")
STOP = set(
    "a an the of to in on for and or is are was were be been by with what which who whom when where why how "
    "did does do that this it its from at as into about than then there their".split()
)


def row_ids(value, known: set[str] | None = None) -> list[str]:
    """Node ids inside a row value: a node's ``id``, a path's nodes, or a string that is a known id."""
    out: list[str] = []
    if isinstance(value, dict):
        if (
            "id" in value
            and isinstance(value["id"], str)
            and ("_labels" in value or known is None or value["id"] in known)
        ):
            out.append(value["id"])
        for k, v in value.items():
            if k != "id":
                out += row_ids(v, known)
    elif isinstance(value, list):
        for v in value:
            out += row_ids(v, known)
    elif isinstance(value, str) and known is not None and value in known:
        out.append(value)
    return out


def evidence_ids(engine, rows: list[dict], hits: list[dict]) -> list[str]:
    cands: list[str] = [h["id"] for h in hits]
    strings = []
    for r in rows:
        strings += row_ids(r, None)
    if strings:
        real = set(engine.store.node_types(set(strings)))
        cands += [s for s in strings if s in real]
    return list(dict.fromkeys(cands))


def check_refs(answer: str, allowed: list[str]) -> tuple[str, list[str], list[str]]:
    """``(answer with only allowed refs, refs kept, refs dropped)``; ``[refs: …]`` blocks are rewritten."""
    allowed_set = set(allowed)
    kept: list[str] = []
    dropped: list[str] = []
    for m in _REFS.finditer(answer):
        for ref in (x.strip().strip("`'\"") for x in m.group(1).split(",")):
            if not ref:
                continue
            (kept if ref in allowed_set else dropped).append(ref)
    kept, dropped = list(dict.fromkeys(kept)), list(dict.fromkeys(dropped))
    body = _REFS.sub("", answer).rstrip()
    if kept:
        body += f"\n[refs: {', '.join(kept)}]"
    return body, kept, dropped


def _fmt(v) -> str:
    if isinstance(v, dict):
        if "nodes" in v and "edges" in v:  # a path
            parts = [_fmt(v["nodes"][0])] if v["nodes"] else []
            for e, n in zip(v["edges"], v["nodes"][1:]):
                parts.append(f"-[{e.get('rel')}]- {_fmt(n)}")
            return " ".join(parts)
        if "id" in v:
            return (
                f"{v.get('title') or v['id']} ({v['id']})"
                if v.get("title") and v.get("title") != v["id"]
                else str(v["id"])
            )
        return ", ".join(f"{k}={_fmt(x)}" for k, x in v.items() if k != "_labels")
    if isinstance(v, list):
        return "[" + ", ".join(_fmt(x) for x in v) + "]"
    return str(v)


def render_row(row: dict) -> str:
    if "id" in row and isinstance(row.get("id"), str):
        head = f"{row.get('title') or row['id']} ({row['id']}"
        head += f", {row['type']}" if row.get("type") else ""
        head += f", {row['time']}" if row.get("time") not in (None, "") else ""
        head += ")"
        if row.get("rel") and row.get("anchor"):
            out = row.get("outgoing")
            head += (
                f" <-[{row['rel']}]- {row['anchor']}"
                if out is True
                else f" -[{row['rel']}]-> {row['anchor']}"
                if out is False
                else f" · {row['rel']} · {row['anchor']}"
            )
        return head
    return "; ".join(f"{k}: {_fmt(v)}" for k, v in row.items())


def _best_sentence(text: str, qwords: set[str]) -> tuple[float, str]:
    best = (0.0, "")
    for s in _SENT.split(text or ""):
        s = s.strip()
        if len(s) < 8:
            continue
        w = {x.lower() for x in _WORD.findall(s)} - STOP
        score = len(w & qwords) / (1 + 0.02 * len(w))
        if score > best[0]:
            best = (score, s[:400])
    return best


SOURCE_TYPES = ("commit", "pull_request", "pr", "issue", "document", "doc", "decision", "page", "section")


_WHY = re.compile(r"\bwhy\b|\breason\b|\bmotivat\w*", re.I)
_TRAILER_LINE = re.compile(r"^[\w-]+(?:-by|-id)?:\s", re.I)


def _why_of(text: str, limit: int = 400) -> str:
    """A message's reason: its body up to the trailers (Signed-off-by, Fixes: …), one line, cut at ``limit``."""
    kept = []
    for line in text.strip().splitlines():
        if _TRAILER_LINE.match(line.strip()):
            break
        kept.append(line.strip())
    said = " ".join(x for x in kept if x)
    return said if len(said) <= limit else said[: limit - 1].rstrip() + "…"


def _anchor_line(engine, anchor, why: bool = False) -> str | None:
    """One line on the node a graph query started from: its title, type, author and date; with ``why``, the
    reason its message gives."""
    if not isinstance(anchor, str):
        return None
    row = engine.store.get_node(anchor)
    if row is None:
        return None
    md = row.metadata or {}
    when = str(md.get("commit_date") or md.get("date") or "")[:10]
    who = ", ".join(x for x in (row.type, str(md.get("author") or ""), when) if x)
    reason = _why_of(row.text or "") if why else ""
    return f"- {row.title or anchor} ({who})" + (f": {reason}" if reason else "") + f" [{anchor}]"


def _versions(question: str) -> list[re.Pattern]:
    """The version numbers a question names ("v5.10.0", "5.10"), each as a pattern that finds it in a title with
    or without the "v" and with more parts after it ("5.10" finds "5.10.0")."""
    out = []
    for m in re.finditer(r"(?<![\w.])v?(\d+(?:\.\d+)+)(?![\w])", question):
        out.append(re.compile(rf"(?<![\w.])v?{re.escape(m.group(1))}(?:\.\d+)*(?!\.?\d)", re.I))
    return out


def extractive_answer(
    engine, question: str, rows: list[dict], hits: list[dict], max_rows: int = 10, max_hits: int = 5
) -> tuple[str, list[str]]:
    """Facts from the graph rows, then the best sentence (title included) of every retrieved hit, changes
    and documents before structural nodes; ``(answer, refs)``.  "Not found" only when no retrieved source
    shares a content word with the question (the answer once read only the top 3 hits, often files)."""
    lines, refs = [], []
    anchors = {r.get("anchor") for r in rows if isinstance(r, dict)}
    subject = bool(rows) and all(isinstance(r, dict) and r.get("outgoing") is True for r in rows)
    why = bool(_WHY.search(question))
    if subject and len(anchors) == 1 and (line := _anchor_line(engine, anchors.pop(), why)) is not None:
        lines.append(line)  # the named node the rows are *its* ends of: "what did X change?" says what X is
        refs.append(rows[0]["anchor"])
    for r in rows[:max_rows]:
        ids = evidence_ids(engine, [r], [])
        lines.append(f"- {render_row(r)}" + (f" [{', '.join(ids[:4])}]" if ids else ""))
        refs += ids
    if len(rows) > max_rows:
        lines.append(f"- (showing {max_rows} of {len(rows)} rows)")
    qwords = {x.lower() for x in _WORD.findall(question)} - STOP
    ordered = sorted(hits, key=lambda h: h.get("type") not in SOURCE_TYPES)  # stable: rank kept within each
    scored = []
    versions = _versions(question)
    for h in ordered:
        text = (h.get("title") or "") + ".\n" + (h.get("text") or h.get("snippet") or "")
        score, sent = _best_sentence(text, qwords)
        if sent and score > 0:
            scored.append((h, sent))
        elif versions and (title := h.get("title") or "") and any(v.search(title) for v in versions):
            scored.append((h, title))  # "did 5.10 get skipped?": the commit titled "5.10.0" shares no word
    for h, sent in scored[:max_hits]:
        m = h.get("meta") or {}
        who = ", ".join(str(m[k]) for k in ("author", "date") if m.get(k))
        lines.append(f"- {h.get('title') or h['id']}{f' ({who})' if who else ''}: {sent} [{h['id']}]")
        refs.append(h["id"])
    refs = list(dict.fromkeys(refs))
    if not lines:  # nothing retrieved shares a word with the question: no source answers it
        return NOT_FOUND, []
    head = "From the graph:" if rows else "From the retrieved sources:"
    return head + "\n" + "\n".join(lines) + (f"\n[refs: {', '.join(refs)}]" if refs else ""), refs
