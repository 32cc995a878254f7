"""A repository's tags as ``tag:<name>`` nodes with a ``tags`` edge to the commit each names.

Why tags at all: "since v2.0", "what changed in v6.1" and "which release first contained X" are answered
through them (``ask/tags.py``).  Why every sync lists every tag (one ``git for-each-ref``, milliseconds
even for thousands of tags) instead of only new commits' tags: a tag can be created on an old commit,
moved (``git tag -f``) or deleted without any new commit.  Unchanged tag nodes are not rewritten (the
sync step compares them); a moved tag is an updated node whose old ``tags`` edge is retracted; a tag the
repository no longer has is named in ``batch.gone`` (the tag names written last time are store meta,
:func:`tags_key`) and deleted.  Only tags reachable from the synced refs are written (their commit is a
node); the others are counted as ``tags_unreachable``.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime

from ..model import Node
from .batch import IngestBatch, derived_edge
from .git_log import epoch_or_none

__all__ = ["read_tags", "tags_key"]

# the fields of one tag; a tag's message and its tagger's name are anyone's text, so each field ends with a
# nonce drawn for the read (no fixed separator a message could hold: a "%1f" in one forged tags, issue 40)
_FIELDS = (
    "%(refname:strip=2)",
    "%(objecttype)",
    "%(*objecttype)",
    "%(*objectname)",
    "%(objectname)",
    "%(taggerdate:unix)",
    "%(taggername)",
    "%(creatordate:unix)",
    "%(*committerdate:unix)",
    "%(contents)",
)


def tags_key(source: str) -> str:
    """Store meta key holding the JSON list of tag names the last sync of ``source`` wrote."""
    return f"ingest.git-tags.{source}"


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).isoformat().replace("+00:00", "Z")


def read_tags(repo, batch: IngestBatch, source: str, tips: list[str], known: list[str] | None) -> None:
    """Append the tag nodes and ``tags`` edges reachable from ``tips`` to ``batch``; name the tags written
    last time (``known``) that are gone in ``batch.gone``; record the names in ``batch.state``."""
    merged = [f"--merged={t}" for t in sorted(set(tips))]
    nonce = secrets.token_hex(16)
    start, sep = nonce + "r", nonce + "f"
    fmt = start + sep.join(_FIELDS) + sep
    out = repo._git("for-each-ref", "refs/tags", *merged, f"--format={fmt}", check=False)
    listed = repo._git("for-each-ref", "refs/tags", "--format=%(refname:strip=2)", check=False)
    every = set(listed.stdout.decode("utf-8", "replace").split("\n")) - {""}
    names: list[str] = []
    for rec in out.stdout.decode("utf-8", "replace").split(start)[1:]:
        parts = rec.split(sep)
        if len(parts) != len(_FIELDS) + 1:
            continue
        name, otype, ptype, peeled, obj, tagger_t, tagger, creator_t, commit_t, message = parts[:-1]
        annotated = otype == "tag"
        if (ptype if annotated else otype) != "commit":
            continue  # a tag of a tree or blob, or of another tag: no commit to point at
        sha = peeled if annotated else obj
        # tagger time of an annotated tag, committer time of a lightweight one; a date git cannot print (a
        # crafted tag object): the commit's time, named in date_unknown
        t = epoch_or_none(creator_t)
        unknown = t is None
        if t is None:
            t = epoch_or_none(commit_t) or 0
        md = {"name": name, "repo": source, "sha": sha, "annotated": annotated, "time": t, "date": _iso(t)}
        if annotated and tagger.strip():
            md["tagger"] = tagger.strip()
        if annotated and (tt := epoch_or_none(tagger_t)) is not None:
            md["tag_time"] = tt
        if unknown:
            md["date_unknown"] = ["time"]
            batch.skip("tag:" + name, f"date unknown: git printed {creator_t.strip()[:40]!r} for the tag's date")
        text = message.strip() if annotated else ""
        batch.nodes.append(Node("tag:" + name, "tag", name, text, md))
        batch.edges.append(derived_edge("tag:" + name, "tags", "commit:" + sha, by="git", evidence=name))
        names.append(name)
    gone = sorted(set(known or []) - set(names))
    batch.gone.update("tag:" + n for n in gone)
    if names or known:  # a repository that never had a tag gets no meta key
        batch.state[tags_key(source)] = json.dumps(sorted(names))
    batch.stats.update(
        tags=len(names),
        tags_annotated=sum(1 for n in batch.nodes if n.type == "tag" and n.metadata.get("annotated")),
        tags_unreachable=len(every - set(names)),
        tags_gone=len(gone),
    )
