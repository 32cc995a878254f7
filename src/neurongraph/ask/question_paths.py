"""The paths a question names: a file, a directory, a glob, a bare file name, several at once.

Read against the store (a path is a scope only when some file node has it), so a word that merely looks like
a path is no filter; what names nothing is said in the notes.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import re

from .devplan import (
    Scope,
)
from .names import Mention
from .shapes.file_removal import file_status


# ---------------------------------------------------------------------- what the question names
def _scopes(engine, question: str, taken: list[tuple[int, int]], notes: list[str], now=None) -> list[Scope]:
    """Paths the question names: a file node, a directory (some file below it), a glob; else a note."""
    cands, coded = _candidates(question, taken)
    bare = _bare_dirs(question, taken)
    if not cands and not bare:
        return []
    found = engine.store.node_types([f"file:{p}" for p in cands])
    out: list[Scope] = []
    for p in cands:
        if f"file:{p}" in found and p not in coded and _plain_word_gone(engine, p):
            continue  # "commits to mypy", "typeshed syncs": the project or a topic, not a file long gone
        if f"file:{p}" in found:
            out.append(Scope("file", now(p) if now is not None else f"file:{p}", p))
        elif "*" in p or ("[" in p and "]" in p):
            prefix = re.split(r"[*?\[]", p, maxsplit=1)[0]
            files = [
                i for i, _ in engine.store.ids_with_prefix(f"file:{prefix}", 200_000) if fnmatch.fnmatchcase(i[5:], p)
            ]
            if files:
                out.append(Scope("set", files, p))
            else:
                notes.append(f"no file matches '{p}' in the store")
        elif "/" in p and re.fullmatch(r"[\w.@~+/-]+", p):
            d = p.strip("/")
            if d and engine.store.ids_with_prefix(f"file:{d}/", 1):
                out.append(Scope("dir", f"file:{d}/", p))
            elif not p.endswith("/") and engine.store.ids_with_prefix(f"file:{p}", 1):
                out.append(Scope("dir", f"file:{p}", p))  # a path prefix ("mypy/sem": semanal.py, semanal_*.py)
            elif re.fullmatch(r"[A-Z0-9]+(?:/[A-Z0-9]+)+", p) or set(p.lower().split("/")) <= _ASKING_WORDS:
                pass  # "STT/LISP", "TCP/IP": words, not a path; "when/why", "added/removed": the question's own
            elif _words_with_slashes(engine, p):  # "the backspace/line-wrapping fix", "added/removed": prose
                notes.append(f"not understood: '{p}' (no file or directory by that name in the store)")
            else:
                notes.append(f"no file or directory '{p}' in the store")
        elif re.fullmatch(r"[\w.-]+\.[A-Za-z]\w{0,7}", p) and not re.fullmatch(r"v?\d+(\.\d+)+\w*", p):
            out.extend(_basename(engine, p, notes))
    out += [
        sc for d, phrase, after_verb, prev in bare if (sc := _bare_dir(engine, d, phrase, after_verb, out, notes, prev))
    ]
    return out


def _bare_dir(
    engine, d: str, phrase: str, after_verb: bool, found: list[Scope], notes: list[str], prev: str = ""
) -> Scope | None:
    """ "under docs", "the bridge directory": the directory, only when the store has files below it (or below the
    hidden directory of that name: "the github workflows" is .github/); the project's own name after "in" or a
    verb is the project.  The word before it may be part of the name: "the windows datapath" is
    ``datapath-windows/`` where that exists, not ``datapath/``."""
    if prev:
        for joined in (f"{d}-{prev}", f"{prev}-{d}", f"{d}_{prev}", f"{prev}_{d}"):
            for name in dict.fromkeys((joined, joined.lower())):
                if engine.store.ids_with_prefix(f"file:{name}/", 1):
                    return Scope("dir", f"file:{name}/", f"{prev} {d}")
    if (after_verb or re.match(r"in\s", phrase, re.I)) and names_project(engine, d):
        notes.append(f"'{phrase}' read as the project, not its directory {d}/")
        return None  # "the very first commit in click": the repository, whatever click/ once held
    if any(sc.phrase == d for sc in found):
        return None
    for name in dict.fromkeys((d, d.lower(), "." + d, "." + d.lower())):  # "OVN" is ovn/; "github" .github/
        if engine.store.ids_with_prefix(f"file:{name}/", 1):
            return Scope("dir", f"file:{name}/", phrase)
    return None


def project_name(engine) -> str:
    """The synced repository's own name, lowercased (the last part of the source its commits carry: a checkout's
    directory, ``click``), or "" when the store does not say."""
    first = engine.store.ids_with_prefix("commit:", 1)
    node = engine.store.get_node(first[0][0]) if first else None
    repo = str((node.metadata or {}).get("repo") or "") if node is not None else ""
    return repo.rstrip("/").rsplit("/", 1)[-1].lower()


def names_project(engine, word: str) -> bool:
    """Whether ``word`` is the repository's own name: the checkout's name, or its first part when the checkout
    is named "<project>-<what>" ("mypy" for ``mypy-paths-only``, "linux" for ``linux-stable``, "click" for
    ``click.git``), as people name a project whatever its clone is called."""
    name = project_name(engine)
    w = word.lower()
    return bool(name) and (w == name or w == re.split(r"[-_.]", name, maxsplit=1)[0])


# words a question joins with slashes to ask two things at once ("when/why", "added/removed")
_ASKING_WORDS = frozenset(
    "when why who what where which how and or added removed deleted created dropped renamed moved changed "
    "modified fixed introduced".split()
)


def _words_with_slashes(engine, p: str) -> bool:
    """Words joined by slashes that name nothing ("backspace/line-wrapping", "bond/LACP/bundle", "when/why"): no
    extension, no trailing slash, and no file or directory of the store starts like it.  Read as prose, the
    question is searched with the words said as not understood; a path-like miss ("src/gone.c") is answered
    "nothing matches"."""
    first = p.split("/", 1)[0]
    return (
        re.fullmatch(r"[A-Za-z][\w-]*(?:/[A-Za-z][\w-]*)+", p) is not None
        and not engine.store.ids_with_prefix(f"file:{first}/", 1)
        and not engine.store.node_types([f"file:{first}"])
    )


def _candidates(question: str, taken: list[tuple[int, int]]) -> tuple[list[str], set[str]]:
    """The question's words that may be paths (outside the spans taken), and those written as code or quoted:
    a path even when it is a plain word."""
    cands: list[str] = []
    coded: set[str] = set()
    for m in re.finditer(r"\S+", question):
        if any(s < m.end() and m.start() < e for s, e in taken):
            continue
        p = m.group(0).strip("`'\"()[]{}<>“”‘’").rstrip(".,;:!?")
        if p and not p.startswith(("#", "http")) and ":" not in p:
            cands.append(p)
            if m.group(0)[:1] in "`'\"“‘":
                coded.add(p)
    return cands, coded


def _plain_word_gone(engine, path: str) -> bool:
    """A lowercase word with no directory and no extension ("mypy", "typeshed") that names a file no longer
    at ``HEAD`` (no lines there, or none known: a submodule): read as a word, not as that file; a file that is
    there ("configure") stays a path, and so does one written as code (`` `typeshed` ``)."""
    if "/" in path or "." in path or not path.islower() or not path.isidentifier():
        return False
    return not engine.code_history.line_count(path)


def _renamed_now(engine, path: str, notes: list[str], moves: dict[str, tuple[str, ...]]) -> str:
    """A bare file name ("checkexpr.py") that was renamed away (to ``mypy/checkexpr.py``) is read as the path
    it has now, the end of its renames (its history still reaches back through them); one that was removed,
    as the one file of that name that exists now (a move git saw as a delete and an add); a path written with
    a directory is taken as written ("back when it was click/core.py")."""
    node = f"file:{path}"
    if "/" in path:
        return node
    seen = {node}
    while True:
        nxt = sorted(d for s, rel, d in engine.store.edges_from([node]) if rel == "renamed_to" and d not in seen)
        if len(nxt) != 1:
            break
        node = nxt[0]
        seen.add(node)
    if node != f"file:{path}":
        notes.append(f"'{path}' read as {node[5:]} (renamed since)")
        return node
    if engine.code_history.line_count(path) == 0:  # removed: moved, if the removing commit added its namesake
        now = [
            f
            for f, _ in engine.store.ids_with_prefix("file:", 1_000_000)
            if f.endswith("/" + path) and engine.code_history.line_count(f[5:])
        ]
        if len(now) == 1 and _moved_together(engine, node, now[0]):
            notes.append(f"'{path}' read as {now[0][5:]} (moved there; {path} itself was removed)")
            moves[now[0]] = (node,)  # its beginning is the removed path's (Scope.moved_from)
            return now[0]
    return node


def _moved_together(engine, old: str, new: str) -> bool:
    """Whether one commit removed ``old`` and added ``new`` (a move git's rename detection did not pair)."""
    rows = engine.cypher(
        "MATCH (c:commit)-[:touches]->(:file {id: $old}), (c)-[:touches]->(:file {id: $new}) RETURN c.id AS id",
        {"old": old, "new": new},
    )["rows"]
    for r in rows:
        node = engine.store.get_node(r["id"])
        if node is not None and file_status(node, old[5:]) == "D":
            return file_status(node, new[5:]) in ("A", None)
    return False


def _basename(engine, name: str, notes: list[str]) -> list[Scope]:
    """The one file a bare file name stands for ("usdt.c" for ``src/usdt.c``): the file of that name, or
    the last of a chain of renames among several (``click/x.py`` renamed to ``src/click/x.py``: one file's
    history); several unrelated files of that name are said, not guessed between."""
    every = [i for i, _ in engine.store.ids_with_prefix("file:", 1_000_000)]  # read once: the name, then its extension
    files = [i for i in every if i.endswith("/" + name)]
    if len(files) > 1:
        renamed = {s for s, rel, d in engine.store.edges_from(files) if rel == "renamed_to" and d in files}
        files = [f for f in files if f not in renamed]
    if len(files) == 1:
        notes.append(f"'{name}' read as {files[0][5:]}")
        return [Scope("file", files[0], name)]
    if files:
        shown = ", ".join(f[5:] for f in files[:5]) + (" …" if len(files) > 5 else "")
        notes.append(f"'{name}' names {len(files)} files ({shown}): name one by its path")
    elif _known_extension(every, name):
        notes.append(f"no file '{name}' in the store")
    return []  # "shlex.quote", "click.echo": a dotted name whose "extension" no file has is no path


def _known_extension(file_ids: list[str], name: str) -> bool:
    """Whether some file of ``file_ids`` ends with ``name``'s extension (".c", ".py"; "quote" is none)."""
    ext = "." + name.rsplit(".", 1)[-1]
    return any(f.endswith(ext) for f in file_ids)


_BARE_DIR = re.compile(
    r"\b(?:under|inside|within|below|beneath|in)\s+(?:the\s+)?([\w.@~+-]+)(?:\s+(?:directory|folder|dir|tree))?\b"
    r"|\b(?:the\s+)?([\w.@~+-]+)\s+(?:directory|folder|dir)\b"
    r"|\b(?:which|what)\s+([\w.@~+-]+)\s+files?\b"  # "which mypyc file has had the most commits?"
    # "commits Jukka made to mypyc", "authors who touched mypyc", "who hacked on tc"
    r"|\b(?:to|into|touch(?:ed|es|ing)?|chang(?:ed|es|ing)|edit(?:ed|s|ing)?|modif(?:ied|ies|ying|y)"
    r"|(?:hack|work)(?:ed|s|ing)?\s+on)\s+(?:the\s+)?([\w.@~+-]+)\b(?![/.\w-])"
    # "when was OVN removed", "when did xsk get dropped": a name whose removal is asked
    r"|\b(?:was|were|did|has|had)\s+(?:the\s+)?(?:[\w-]+\s+){0,3}?"
    r"(?!(?:directory|folder|dir|tree|tool|utility|subsystem|component|code)\b)([\w.@~+-]+)\s+(?:(?:get|got|being|been)\s+)?"
    r"(?:removed|deleted|dropped)\b"
    # "the dpll tool", "the rdma code": a part of the project named like its directory
    r"|\b(?:the\s+)?([\w.@~+-]+)\s+(?:tool|utility|subsystem|component|code)\b",
    re.I,
)


def _bare_dirs(question: str, taken: list[tuple[int, int]]) -> list[tuple[str, str, bool, str]]:
    """Directory names written without a slash: after "under/inside/in (the)", before "directory", between
    "which" and "file(s)", or after "to" / "touched" / "changed" / "worked on" (only those with files below them
    in the store are read as a scope); each with its phrase, whether a verb or "to" came before it, and the word
    right before a name "the X directory / tool" or "was X removed" gives (it may be part of the name)."""
    out = []
    for m in _BARE_DIR.finditer(question):
        g = next((i for i in range(1, 7) if m.group(i)), 0)
        name = m.group(g) if g else None
        if name and not name.isdigit() and not any(s < m.end() and m.start() < e for s, e in taken):
            # "which X file": the file word is the intent's; "touched X", "was X removed": the verb is the question's
            bare = m.group(3) or m.group(4) or m.group(5)
            before = re.search(r"([A-Za-z][\w-]*)\s+$", question[: m.start(g)]) if g in (2, 5, 6) else None
            prev = before.group(1) if before and before.group(1).lower() not in _NOT_PART else ""
            out.append((name, name if bare else m.group(0), bool(m.group(4)), prev))
    return out


# words before a directory's name that are not part of it ("when was the datapath removed")
_NOT_PART = frozenset("the a an was were did has had is are get got been being of in on to its their old new".split())


def _at(question: str, phrase: str) -> int:
    """Where ``phrase`` stands on its own in the question: "CHECKPOINT-COMMIT" is not the end of
    "BPF-CHECKPOINT-COMMIT" (the first such place; else the first place at all)."""
    m = re.search(r"(?<![\w./-])" + re.escape(phrase) + r"(?![\w/-])", question)
    return m.start() if m else question.find(phrase)


def scope_of(
    engine, question: str, taken: list, mentions: list[Mention], notes: list[str], dated: bool = False
) -> Scope | None:
    """The question's path scope: one path (a file mention counts), or several — "touched both A and B" needs
    every one, "commits to A and B" / "A or B" any of them; their spans are added to ``taken``."""

    moves: dict[str, tuple[str, ...]] = {}

    def now(path: str) -> str:  # a dated question means the file as it was then: not read as today's file
        return f"file:{path}" if dated else _renamed_now(engine, path, notes, moves)

    found = [(_at(question, sc.phrase), sc) for sc in _scopes(engine, question, taken, notes, now)]
    found += [(m.start, Scope("file", now(m.node[5:]), m.phrase)) for m in mentions if m.type == "file"]
    kept: list[tuple[int, Scope]] = []
    for at, sc in sorted(found, key=lambda t: (" " in t[1].phrase, -len(t[1].phrase))):
        # one stretch of text is one path, a written path before a bare directory phrase and the longest
        # first: "under include/linux/" is not also the bare directory "under include"
        end = at + len(sc.phrase)
        if all(sc.value != o.value for _, o in kept) and not any(at < a + len(o.phrase) and a < end for a, o in kept):
            kept.append((at, sc))
    scopes = [
        dataclasses.replace(sc, moved_from=moves[sc.value]) if sc.kind == "file" and sc.value in moves else sc
        for _, sc in sorted(kept, key=lambda t: t[0])
    ]
    taken += [(at, at + len(sc.phrase)) for at, sc in sorted(kept, key=lambda t: t[0])]
    if len(scopes) < 2:
        return scopes[0] if scopes else None
    both = re.search(r"\b(both|all of|together|at once|as well as)\b", question, re.I)
    joint = (" and " if both else " or ").join(sc.phrase for sc in scopes)
    return Scope("all" if both else "any", list(scopes), ("both " if both else "") + joint)
