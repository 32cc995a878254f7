"""Read a JSONL file of nodes and edges, and write it all or nothing: ``ngr ingest FILE.jsonl``.

The file is validated whole first (every bad line reported with its number, edges to nodes neither in
the file nor in the store included), then read again from disk in chunks to embed and to write, so
memory grows with the number of records, not with their text.  The write is one transaction (nodes,
then edges): a bad edge, a crash or a kill leaves the store as it was.

Why not :func:`~neurongraph.ingest.sync.apply_batch`: a JSONL file is the user's own records, written
as given.  A sync stamps every node with its source, retracts derived edges an owner no longer makes,
parks edges to missing nodes and holds the whole batch in memory; a JSONL file wants none of that (a
dangling edge is an error, and a 10 GB file must stream).  Both end in the store's same upserts.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from .. import strict_json
from ..errors import InvalidArgument, NeuronGraphError
from ..model import Edge, Node
from .sync import released_on_refusal

__all__ = [
    "IngestError",
    "Parsed",
    "read_jsonl",
    "stream",
    "validate_file",
    "write_jsonl",
    "MAX_LINE_BYTES",
    "INGEST_CHUNK_CHARS",
    "EDGE_BATCH",
]

EDGE_BATCH = 50_000  # edges per add_edges call inside the one transaction
Progress = Callable[[str, int, int], None]  # (stage, done, total), as sync's


class IngestError(NeuronGraphError):
    """A JSONL file with bad lines: every bad line is reported, then the one-line summary."""

    code = "invalid_input"


@dataclass
class Parsed:
    """What validating a file keeps: ids and keys, never the records (a file is read again to write it, so
    memory grows with the number of records, not with their text)."""

    node_ids: dict  # id -> line
    edge_keys: dict  # (src, rel, dst) -> line
    errors: list  # {"line": n, "message": str}
    lines: int
    kinds: bytearray = field(default_factory=bytearray)  # per line: 0 blank/bad, 1 node, 2 edge
    stamp: tuple = ()  # (size, mtime) of the file when it was validated


MAX_LINE_BYTES = 16 * 2**20  # one JSONL record; NGR_MAX_LINE_BYTES overrides (a 50 MB line took 49 s, 2.6 GB)


def _max_line_bytes() -> int:
    raw = os.environ.get("NGR_MAX_LINE_BYTES")
    if raw is None:
        return MAX_LINE_BYTES
    if not raw.strip().isdigit() or int(raw) < 1:
        raise InvalidArgument(f"NGR_MAX_LINE_BYTES={raw!r}: expected a positive whole number of bytes")
    return int(raw)


def _bounded_lines(fh, limit: int):
    """``(raw line, size)`` per line, with ``raw`` None for a line over ``limit`` bytes (read past in
    1 MiB chunks, never held whole), so one huge line costs neither memory nor minutes."""
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        if len(raw) > limit and not raw.endswith(b"\n"):
            size = len(raw)
            while raw and not raw.endswith(b"\n"):
                raw = fh.readline(2**20)
                size += len(raw)
            yield None, size
        else:
            yield raw, len(raw)


class _BadLine(Exception):
    """One line of a JSONL file that cannot be read: its message is reported with the line number."""


def _json_object(raw: bytes | None, size: int, max_line: int) -> dict | None:
    """The JSON object on one line (None for a blank line); raises _BadLine."""
    if raw is None:
        raise _BadLine(f"line is {size:,} bytes, over the limit of {max_line:,} (set NGR_MAX_LINE_BYTES to raise it)")
    try:
        line = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        raise _BadLine(f"not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if not line.strip():
        return None
    try:
        d = strict_json.loads(line)
    except strict_json.StrictJSONError as exc:
        if exc.key is None:
            raise _BadLine(str(exc)) from None
        col = f" (column {exc.pos + 1})" if exc.pos >= 0 else ""
        raise _BadLine(f"duplicate key {exc.key[:80]!r} in one JSON object{col}; the last would silently win") from None
    except json.JSONDecodeError as exc:
        raise _BadLine(f"bad JSON: {exc.msg} (column {exc.pos + 1})") from None
    except RecursionError:
        raise _BadLine("bad JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer literal beyond Python's 4,300-digit limit
        raise _BadLine(f"bad JSON: {str(exc)[:200]}") from None
    if not isinstance(d, dict):
        raise _BadLine(f"expected a JSON object, got {type(d).__name__}")
    return d


def _kind_of(d: dict) -> str:
    """ "node" or "edge": the record's "kind", else "id" (node) or "src"/"dst" (edge); raises _BadLine."""
    kind = d.get("kind")
    if kind is None:
        kind = "node" if "id" in d else "edge" if ("src" in d or "dst" in d) else None
        if kind is None:
            raise _BadLine('cannot tell a node from an edge: give "kind", or "id" (node) or "src"/"dst" (edge)')
    if kind not in ("node", "edge"):
        raise _BadLine(f'unknown kind {kind!r}: expected "node" or "edge"')
    return kind


def _record(d: dict) -> Node | Edge:
    """The validated node or edge of one JSON object; raises _BadLine or a NeuronGraphError of the model."""
    return Node.from_dict(d) if _kind_of(d) == "node" else Edge.from_dict(d)


class _Records:
    """The ids and keys of one file's records, each at most once (a duplicate is an error naming the first line)."""

    def __init__(self) -> None:
        self.node_line: dict[str, int] = {}  # id -> first line
        self.edge_line: dict[tuple, int] = {}  # (src, rel, dst) -> first line
        self.kinds = bytearray()

    def add(self, rec: Node | Edge, line: int) -> None:
        """Add ``rec`` of ``line``; raises _BadLine for a duplicate."""
        if isinstance(rec, Node):
            first = self.node_line.setdefault(rec.id, line)
            if first != line:
                raise _BadLine(f"duplicate node id {rec.id!r} (first on line {first}); one file holds each node once")
            self.kinds[line - 1] = 1
            return
        first = self.edge_line.setdefault((rec.src, rec.rel, rec.dst), line)
        if first != line:
            raise _BadLine(
                f"duplicate edge ({rec.src}, {rec.rel}, {rec.dst}) (first on line {first}); "
                "one file holds each edge once"
            )
        self.kinds[line - 1] = 2

    def dangling(self, lookup) -> list[dict]:
        """Errors for edges whose endpoints are neither in this file nor (``lookup``) in the store."""
        outside = {x for key in self.edge_line for x in (key[0], key[2]) if x not in self.node_line}
        known = set(lookup(outside)) if outside else set()
        errors = []
        for (src, rel, dst), line_no in self.edge_line.items():
            missing = [x for x in dict.fromkeys((src, dst)) if x not in self.node_line and x not in known]
            if missing:
                errors.append(
                    {
                        "line": line_no,
                        "message": f"edge ({src}, {rel}, {dst}) refers to unknown node(s) "
                        + ", ".join(repr(m) for m in missing)
                        + " (neither in this file nor in the store)",
                    }
                )
        return errors


def _file_stamp(path: Path) -> tuple:
    st = path.stat()
    return (st.st_size, st.st_mtime_ns)


INGEST_CHUNK_CHARS = 8 * 2**20  # bytes of records written (and embedded) at a time: what bounds ingest memory


def stream(parsed: Parsed, path: Path, kind: int, chunk_chars: int | None = None, chunk_items: int = 5000):
    """The file's nodes (kind 1) or edges (kind 2) again, in chunks of at most ``chunk_items`` records or about
    ``chunk_chars`` characters, read from disk: the records are never all in memory.  The file must be the
    one that was validated (size and mtime), else IngestError."""
    if _file_stamp(path) != parsed.stamp:
        raise IngestError(f"{path} changed while it was being ingested; nothing was written", file=str(path), errors=[])
    max_line = _max_line_bytes()
    chunk: list = []
    size = 0
    chunk_chars = chunk_chars or INGEST_CHUNK_CHARS
    with open(path, "rb") as fh:
        for n, (raw, rsize) in enumerate(_bounded_lines(fh, max_line), 1):
            if n > len(parsed.kinds) or parsed.kinds[n - 1] != kind:
                continue  # another kind, blank or (never) bad: not parsed again
            try:
                d = _json_object(raw, rsize, max_line)
                rec = _record(d) if d is not None else None
            except (_BadLine, NeuronGraphError, TypeError):
                rec = None
            if rec is None:  # it validated a moment ago: the file was rewritten in place
                raise IngestError(f"{path} line {n} changed while it was being ingested", file=str(path), errors=[])
            chunk.append(rec)
            size += rsize
            if len(chunk) >= chunk_items or size >= chunk_chars:
                yield chunk
                chunk, size = [], 0
    if chunk:
        yield chunk


def read_jsonl(path: Path, lookup) -> Parsed:
    """Parse and validate the whole file; nothing is written.

    ``lookup(ids)`` returns the subset of ``ids`` already in the store (for edge endpoints).
    """
    records = _Records()
    errors: list[dict] = []
    n_lines = 0
    max_line = _max_line_bytes()
    stamp = _file_stamp(path)
    with open(path, "rb") as fh:
        for n_lines, (raw, size) in enumerate(_bounded_lines(fh, max_line), 1):
            records.kinds.append(0)
            try:
                d = _json_object(raw, size, max_line)
                if d is not None:
                    records.add(_record(d), n_lines)
            except _BadLine as exc:
                errors.append({"line": n_lines, "message": str(exc)})
            except NeuronGraphError as exc:
                errors.append({"line": n_lines, "message": exc.message})
            except TypeError as exc:  # e.g. a non-dict 'meta' slipping past a validator
                errors.append({"line": n_lines, "message": str(exc)})
    errors.extend(records.dangling(lookup))
    errors.sort(key=lambda x: x["line"])
    return Parsed(records.node_line, records.edge_line, errors, n_lines, records.kinds, stamp)


def validate_file(file: Path, lookup: Callable) -> Parsed:
    """Validate ``file`` completely (nothing is written).  ``lookup(ids)``: the subset already in the store.
    Raises IngestError (with every bad line) or InvalidArgument for a path that is no file."""
    if file.is_dir():
        raise InvalidArgument(f"{file} is a directory, not a JSONL file")
    parsed = read_jsonl(file, lookup)
    if parsed.errors:
        raise IngestError(
            f"{file}: {len(parsed.errors)} bad line(s); nothing was written. First: "
            f"line {parsed.errors[0]['line']}: {parsed.errors[0]['message']}",
            file=str(file),
            errors=parsed.errors,
        )
    if not parsed.node_ids and not parsed.edge_keys:
        raise IngestError(f"{file}: no nodes or edges found ({parsed.lines} lines)", file=str(file), errors=[])
    return parsed


def _new_in_store(store, parsed: Parsed) -> tuple[int, int]:
    """How many of the file's node ids and (src, rel, dst) edges the store does not hold yet."""
    triples = set(parsed.edge_keys)
    have = store.edges_from({t[0] for t in triples}) if triples else set()
    return len(parsed.node_ids) - len(store.lookup_idx(parsed.node_ids)), len(triples - have)


def write_jsonl(engine, parsed: Parsed, path: Path, progress: Progress | None = None) -> dict:
    """Embed (outside the write transaction: a cache, safe to crash in), then write the whole file as one
    transaction — nodes, then edges, each streamed from the file in chunks.  ``progress`` gets the stages
    ``embedding`` and ``writing``.  When the store refuses a write (a full disk) the vectors this file
    cached are released too (sync.released_on_refusal)."""
    with released_on_refusal(engine.store):
        return _write(engine, parsed, path, progress)


def _write(engine, parsed: Parsed, path: Path, progress: Progress | None) -> dict:
    report = progress or (lambda stage, done, total: None)
    store = engine.store
    t1 = time.perf_counter()
    embedded = 0
    n_nodes, n_edges = len(parsed.node_ids), len(parsed.edge_keys)
    if n_nodes:
        done = 0
        report("embedding", 0, n_nodes)
        for chunk in stream(parsed, path, 1):
            engine.vectors_for([n.body for n in chunk], lambda d, _t, base=done: report("embedding", base + d, n_nodes))
            embedded += engine.last_embedded
            done += len(chunk)
            report("embedding", done, n_nodes)
    t2 = time.perf_counter()
    total = n_nodes + n_edges
    written = 0
    report("writing", 0, total)
    # the whole file is one transaction: a schema violation in the last edge, a crash or a kill
    # leaves the store as it was (nested batches are savepoints of it)
    with store.transaction():
        # counted under the write lock, before writing: exact even while another process ingests too
        new_nodes, new_edges = _new_in_store(store, parsed)
        for kind, add in ((1, engine.add_nodes), (2, engine.add_edges)):
            for chunk in stream(parsed, path, kind, chunk_items=5000 if kind == 1 else EDGE_BATCH):
                add(chunk)
                written += len(chunk)
                report("writing", written, total)
    engine.refresh()
    report("writing", total or 1, total or 1)
    return {
        "new_nodes": new_nodes,
        "new_edges": new_edges,
        "embedded": embedded,
        "seconds": {"embed": round(t2 - t1, 3), "write": round(time.perf_counter() - t2, 3)},
    }
