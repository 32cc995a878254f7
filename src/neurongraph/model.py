"""Records of the property graph (DESIGN §2.1), validated at the boundary.

Nodes carry a caller-chosen string id; edges are unique by ``(src, rel, dst)``.
Validation happens here, once, so every interface (API, CLI, MCP, ingest)
rejects the same bad input with the same message.
"""

from __future__ import annotations

import hashlib
import json
import math
import numbers
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .errors import InvalidArgument

__all__ = [
    "Node",
    "Edge",
    "content_hash",
    "body_of",
    "strict_dumps",
    "MAX_WEIGHT",
    "as_edges",
    "checked_edge_columns",
    "edge_columns",
]

MAX_ID_LEN = 512


def _env_limit(name: str, default: int) -> int:
    """A size limit, raised or lowered with an environment variable (a positive integer; else the default)."""
    raw = os.environ.get(name, "")
    return int(raw) if raw.isdigit() and int(raw) > 0 else default


# Field sizes (issue 17): one node is a source an agent reads, not a data dump. A longer field is a clear
# invalid_argument at validation, before any write; the variables raise the limits where a corpus needs it.
MAX_TITLE_CHARS = _env_limit("NGR_MAX_TITLE_CHARS", 10_000)
MAX_TEXT_CHARS = _env_limit("NGR_MAX_TEXT_CHARS", 4_000_000)
MAX_METADATA_BYTES = _env_limit("NGR_MAX_METADATA_BYTES", 1_000_000)  # node metadata and edge meta, as JSON
# Edge weights live in 0..MAX_WEIGHT: spreading multiplies weights along a path, so a bound keeps every
# activation finite (1e6 ** 50 hops is still far below float64's 1.8e308).
MAX_WEIGHT = 1e6


def _short(value: Any) -> str:
    """A bounded repr for error messages (a huge int has no repr beyond 4,300 digits)."""
    try:
        r = repr(value)
    except ValueError:
        return f"<{type(value).__name__} too large to show>"
    return r if len(r) <= 80 else r[:77] + "..."


def _is_number(value: Any) -> bool:
    """A real number, not a bool and not a numeric string: no lenient coercion on any interface."""
    return isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_))


def _check_unit(name: str, value: float, where: str) -> float:
    if type(value) is float and 0.0 <= value <= 1.0:
        return value
    if not _is_number(value):
        raise InvalidArgument(f"{where}: {name} must be a number, got {_short(value)}")
    try:
        value = float(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidArgument(f"{where}: {name} must be a number, got {_short(value)}") from None
    if not (0.0 <= value <= 1.0) or math.isnan(value):
        raise InvalidArgument(f"{where}: {name} must be within 0..1, got {value}")
    return value


def _check_text(value: str, what: str) -> str:
    """``value`` if it is encodable text: a lone surrogate (``"\\ud800"`` in JSON) is not Unicode text and
    would fail later, mid-write (SQLite, hashing), so it is rejected here with the rest of the input."""
    if value.isascii():
        return value
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidArgument(
            f"{what} contains a lone surrogate ({value[exc.start]!a} at position {exc.start}); not valid Unicode text"
        ) from None
    return value


def _check_size(value: str, limit: int, what: str, env: str) -> None:
    if len(value) > limit:
        raise InvalidArgument(
            f"{what} is {len(value):,} characters, over the limit of {limit:,} (set {env} to raise it)"
        )


def _check_id(value: Any, what: str) -> str:
    if type(value) is str and 0 < len(value) <= MAX_ID_LEN and not value[0].isspace():
        return _check_text(value, what)  # fast path for the common, valid case (bulk ingest)
    if not isinstance(value, str) or not value.strip():
        raise InvalidArgument(f"{what} must be a non-empty string, got {_short(value)}")
    if len(value) > MAX_ID_LEN:
        raise InvalidArgument(f"{what} is longer than {MAX_ID_LEN} characters")
    return _check_text(value, what)


def check_json_object(value: Any, what: str) -> dict:
    """A dict that serialises as JSON (None reads as {}); the one check every JSON field goes through."""
    if value is None or (type(value) is dict and not value):
        return {} if value is None else value
    if not isinstance(value, dict):
        raise InvalidArgument(f"{what} must be a JSON object, got {type(value).__name__}")
    try:
        size = len(json.dumps(value, allow_nan=False, ensure_ascii=False).encode("utf-8"))  # as the store writes it
    except UnicodeEncodeError as exc:
        raise InvalidArgument(
            f"{what} contains a lone surrogate ({exc.object[exc.start]!a}); not valid Unicode text"
        ) from None
    except ValueError as exc:
        if "JSON compliant" in str(exc):  # json's message for NaN / Infinity / -Infinity
            raise InvalidArgument(
                f"{what} contains a non-finite number (NaN or Infinity); JSON has none, use null or a string"
            ) from None
        raise InvalidArgument(f"{what} is not JSON-serialisable: {exc}") from None
    except TypeError as exc:
        raise InvalidArgument(f"{what} is not JSON-serialisable: {exc}") from None
    except RecursionError:
        raise InvalidArgument(f"{what} is nested too deeply") from None
    if size > MAX_METADATA_BYTES:
        raise InvalidArgument(
            f"{what} is {size:,} bytes as JSON, over the limit of {MAX_METADATA_BYTES:,} "
            "(set NGR_MAX_METADATA_BYTES to raise it)"
        )
    return value


def _finite_only(obj: Any) -> Any:
    """``obj`` with every non-finite float replaced by None (output side of strict JSON)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: _finite_only(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_finite_only(v) for v in obj]
    return obj


def strict_dumps(obj: Any, **kw) -> str:
    """``json.dumps`` that never writes ``NaN``/``Infinity`` (not JSON): every output path uses it.

    Inputs are validated finite, so a non-finite number here is a computed one (e.g. a score);
    it is written as ``null`` rather than as invalid JSON."""
    try:
        return json.dumps(obj, allow_nan=False, **kw)
    except ValueError as exc:
        if "JSON compliant" not in str(exc):
            raise
        return json.dumps(_finite_only(obj), allow_nan=False, **kw)


def body_of(title: str, text: str) -> str:
    """What is indexed and embedded for a node: its title and text, non-empty parts joined."""
    return f"{title}\n{text}" if title and text else (title or text)


def content_hash(body: str) -> str:
    """Hash of embedded text; the vector cache key together with the model id."""
    return hashlib.blake2b(body.encode("utf-8"), digest_size=16).hexdigest()


@dataclass
class Node:
    """A source (commit, issue, page, ...) as the user gives it; validated on construction."""

    id: str
    type: str = "node"
    title: str = ""
    text: str = ""
    metadata: dict = field(default_factory=dict)
    confidence: float = 1.0

    def __post_init__(self):
        self.id = _check_id(self.id, "node id")
        self.type = _check_id(self.type, f"node {self.id!r}: type")
        if not isinstance(self.title, str) or not isinstance(self.text, str):
            raise InvalidArgument(f"node {self.id!r}: title and text must be strings")
        _check_size(self.title, MAX_TITLE_CHARS, f"node {self.id!r}: title", "NGR_MAX_TITLE_CHARS")
        _check_size(self.text, MAX_TEXT_CHARS, f"node {self.id!r}: text", "NGR_MAX_TEXT_CHARS")
        _check_text(self.title, f"node {self.id!r}: title")
        _check_text(self.text, f"node {self.id!r}: text")
        self.metadata = check_json_object(self.metadata, f"node {self.id!r}: metadata")
        self.confidence = _check_unit("confidence", self.confidence, f"node {self.id!r}")

    @property
    def body(self) -> str:
        return body_of(self.title, self.text)

    @property
    def hash(self) -> str:
        return content_hash(self.body)

    @classmethod
    def from_dict(cls, d: dict) -> Node:
        if not isinstance(d, dict):
            raise InvalidArgument(f"a node must be a JSON object, got {type(d).__name__}")
        allowed = {"id", "type", "title", "text", "metadata", "confidence"}
        extra = set(d) - allowed - {"kind"}
        if extra:
            raise InvalidArgument(f"node {d.get('id')!r}: unknown field(s) {sorted(extra)}; allowed: {sorted(allowed)}")
        if "id" not in d:
            raise InvalidArgument("node is missing its 'id'")
        return cls(**{k: v for k, v in d.items() if k in allowed})

    def to_dict(self) -> dict:
        return {
            "id": self.id,
            "type": self.type,
            "title": self.title,
            "text": self.text,
            "metadata": self.metadata,
            "confidence": self.confidence,
        }


@dataclass
class Edge:
    """A typed, weighted relation between two nodes; validated on construction."""

    src: str
    rel: str
    dst: str
    weight: float = 1.0
    polarity: int = 1
    factuality: float = 1.0
    meta: dict = field(default_factory=dict)

    def __post_init__(self):
        self.src = _check_id(self.src, "edge src")
        self.dst = _check_id(self.dst, "edge dst")
        self.rel = _check_id(self.rel, f"edge {self.src!r}->{self.dst!r}: rel")
        w = self.weight
        if not (type(w) is float and 0.0 <= w <= MAX_WEIGHT):  # fast path skips the slow checks
            where = f"edge ({self.src}, {self.rel}, {self.dst})"
            if not _is_number(w):
                raise InvalidArgument(f"{where}: weight must be a number, got {_short(w)}")
            try:
                w = float(w)
            except (TypeError, ValueError, OverflowError):
                raise InvalidArgument(f"{where}: weight must be a number, got {_short(self.weight)}") from None
            if not (0.0 <= w <= MAX_WEIGHT):  # also rejects NaN and Infinity
                raise InvalidArgument(f"{where}: weight must be a finite number within 0..{MAX_WEIGHT:g}, got {w}")
            self.weight = w
        p = self.polarity
        if not (type(p) is int or isinstance(p, numbers.Integral) and not isinstance(p, (bool, np.bool_))) or (
            p != 1 and p != -1
        ):
            raise InvalidArgument(
                f"edge ({self.src}, {self.rel}, {self.dst}): polarity must be 1 or -1, got {self.polarity!r}"
            )
        self.polarity = int(self.polarity)
        f = self.factuality
        if not (type(f) is float and 0.0 <= f <= 1.0):
            self.factuality = _check_unit("factuality", f, f"edge ({self.src}, {self.rel}, {self.dst})")
        if not (type(self.meta) is dict and not self.meta):
            self.meta = check_json_object(self.meta, f"edge ({self.src}, {self.rel}, {self.dst}): meta")

    @classmethod
    def from_dict(cls, d: dict) -> Edge:
        if not isinstance(d, dict):
            raise InvalidArgument(f"an edge must be a JSON object, got {type(d).__name__}")
        allowed = {"src", "rel", "dst", "weight", "polarity", "factuality", "meta"}
        extra = set(d) - allowed - {"kind"}
        if extra:
            raise InvalidArgument(f"edge: unknown field(s) {sorted(extra)}; allowed: {sorted(allowed)}")
        missing = {"src", "rel", "dst"} - set(d)
        if missing:
            raise InvalidArgument(f"edge is missing {sorted(missing)}")
        return cls(**{k: v for k, v in d.items() if k in allowed})

    def to_dict(self) -> dict:
        return {
            "src": self.src,
            "rel": self.rel,
            "dst": self.dst,
            "weight": self.weight,
            "polarity": self.polarity,
            "factuality": self.factuality,
            "meta": self.meta,
        }


def edge_fields(e: Any) -> dict:
    """An edge given any way the API takes one (an Edge, a dict, a ``(src, rel, dst[, weight])`` tuple) as
    :meth:`Edge.from_dict`'s fields: the relation schema resolves aliases and default weights on these
    before an Edge exists; everyone else builds the Edge (:func:`as_edges`)."""
    if isinstance(e, Edge):
        return e.to_dict()
    if isinstance(e, dict):
        return dict(e)
    if isinstance(e, (tuple, list)) and len(e) in (3, 4):
        return dict(zip(("src", "rel", "dst", "weight"), e))
    raise InvalidArgument(f"an edge must be an Edge, a dict or a (src, rel, dst[, weight]) tuple, got {e!r}")


def as_edges(items: Iterable[Any]) -> list[Edge]:
    """Edges given any way :func:`edge_fields` takes them, validated."""
    return [e if isinstance(e, Edge) else Edge.from_dict(edge_fields(e)) for e in items]


# ------------------------------------------------------------------ edge columns (the bulk write path)
def edge_columns(items: list) -> tuple | None:
    """Columns of a batch of plain ``(src, rel, dst[, weight])`` tuples (or lists) of one length, or of
    ``Edge`` objects without meta; None for anything else (dicts, meta, mixed shapes: validated per edge)."""
    if not items:
        return None
    t0 = type(items[0])
    if t0 is tuple or t0 is list:
        k = len(items[0])
        if k not in (3, 4) or not all(type(e) is t0 and len(e) == k for e in items):
            return None
        cols = list(zip(*items))
        return (*map(list, cols[:3]), list(cols[3]) if k == 4 else None, None, None)
    if t0 is Edge and all(type(e) is Edge and not e.meta for e in items):
        return (
            [e.src for e in items],
            [e.rel for e in items],
            [e.dst for e in items],
            [e.weight for e in items],
            [e.polarity for e in items],
            [e.factuality for e in items],
        )
    return None


def _number_column(values: Any, n: int, default: float, dtype: type) -> np.ndarray | None:
    """A numeric edge column as an array: ``default`` when absent; None when its values need the
    per-edge checks (not all plain ints / floats, or a non-numeric array)."""
    if values is None:
        return np.full(n, default, dtype)
    integral = dtype is not np.float64  # polarity: integers only, as Edge checks it
    if isinstance(values, np.ndarray):
        if values.ndim != 1 or values.dtype.kind not in (("i", "u") if integral else ("f", "i", "u")):
            return None
        arr = values
    else:
        values = list(values)
        if not all(type(v) is int or (type(v) is float and not integral) for v in values):
            return None
        arr = np.array(values, np.float64)
    if arr.shape[0] != n:
        raise InvalidArgument(f"edge columns must have one length: {n} sources, {arr.shape[0]} values")
    return arr.astype(dtype)


def checked_edge_columns(src, rel, dst, weight, polarity, factuality) -> tuple:
    """Validated edge columns (the checks ``Edge`` makes, vectorised); a batch with a bad value raises the
    error ``Edge`` raises for its first bad edge."""
    src, rel, dst = list(src), list(rel), list(dst)
    n = len(src)
    if len(rel) != n or len(dst) != n:
        raise InvalidArgument(
            f"edge columns must have one length: {n} sources, {len(rel)} relations, {len(dst)} targets"
        )
    w = _number_column(weight, n, 1.0, np.float64)
    p = _number_column(polarity, n, 1, np.int64)
    f = _number_column(factuality, n, 1.0, np.float64)
    ok = (
        w is not None
        and p is not None
        and f is not None
        and all(type(x) is str for x in src)
        and all(type(x) is str for x in dst)
        and all(type(x) is str for x in rel)
    )
    if ok:
        assert w is not None and p is not None and f is not None
        good = (w >= 0) & (w <= MAX_WEIGHT) & ((p == 1) | (p == -1)) & (f >= 0) & (f <= 1)  # NaN fails
        ok = bool(good.all())
    if ok:
        for r in set(rel):  # a relation name is registered by the write: check each once, as Edge would
            i = rel.index(r)
            Edge(src[i], r, dst[i])
        return src, rel, dst, w, p, f

    def col(values, default):
        return [default] * n if values is None else list(values)

    edges = [
        Edge(s, r, d, weight=wv, polarity=pv, factuality=fv)  # raises the first bad edge's error
        for s, r, d, wv, pv, fv in zip(src, rel, dst, col(weight, 1.0), col(polarity, 1), col(factuality, 1.0))
    ]
    return (
        [e.src for e in edges],
        [e.rel for e in edges],
        [e.dst for e in edges],
        np.array([e.weight for e in edges], np.float64),
        np.array([e.polarity for e in edges], np.int64),
        np.array([e.factuality for e in edges], np.float64),
    )
