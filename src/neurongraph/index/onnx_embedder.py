"""The all-MiniLM-L6-v2 sentence embedder on ONNX Runtime: no torch at run time.

Same computation as the sentence-transformers pipeline the model directory configures
(``modules.json``: Transformer -> Pooling(mean) -> Normalize; ``sentence_bert_config.json``:
max_seq_length 256): the packaged ``tokenizer.json`` (lower-casing BERT word-piece, the texts stripped
of surrounding white space like sentence-transformers does), truncation to ``max_seq_length`` tokens,
the transformer built by :mod:`neurongraph.index.onnx_export` (on first use when missing), mean pooling over
the attention mask, L2 normalisation.

Speed comes from (1) not importing torch (cold start), (2) batches of texts of similar token length
(sorted, so padding is small), (3) the optional int8 graph (dynamic quantisation of the MatMul
weights).  ``variant="fp32"`` gives the reference model's vectors to float rounding; ``"int8"`` is
close but not identical (see docs/performance.md for the measured cosines and recall).

The int8 variant runs texts of fewer than :data:`INT8_MIN_TOKENS` tokens (titles, short queries) through
the fp32 graph: with a handful of tokens the per-tensor activation scale of dynamic quantisation is set
by the [CLS]/[SEP] outliers and the cosine to the reference fell to 0.984 (one-word texts), while such
texts cost little to run in float.  From 16 tokens on, int8 stayed >= 0.992 on the benchmark texts.
The choice depends on the text alone, so a text's vector does not depend on which path embedded it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from ..errors import EmbedderUnavailable, InvalidArgument
from .onnx_export import FP32_FILE, INT8_FILE, MODEL_NAME, ensure, onnx_dir, source_model_dir
from .onnx_weights import ModelFilesUnavailable

__all__ = ["OnnxEmbedder", "VARIANTS", "onnx_model_id"]

VARIANTS = ("fp32", "int8")
INT8_MIN_TOKENS = 16  # shorter texts (special tokens included) take the fp32 graph in the int8 variant
Progress = Callable[[int, int], None]


def onnx_model_id(variant: str, max_seq_length: int = 256) -> str:
    """The vector-cache key.  fp32 vectors are the reference model's (cosine >= 0.9999 per text, tested), so
    they share its key and a store embedded by either path is reused by the other; int8 vectors differ
    slightly, so they get their own key (switching re-embeds, it never mixes the two in one matrix)."""
    if variant == "fp32":
        return f"st:{MODEL_NAME}:{max_seq_length}"
    return f"onnx-int8:{MODEL_NAME}:{max_seq_length}"


class OnnxEmbedder:
    """ONNX Runtime + ``tokenizers``; ``dim`` 384, rows L2-normalised float32."""

    def __init__(
        self,
        variant: str = "fp32",
        *,
        batch_size: int = 32,
        max_seq_length: int = 256,
        threads: int | None = None,
        onnx_path: str | Path | None = None,
        model_dir: str | Path | None = None,
    ):
        if variant not in VARIANTS:
            raise InvalidArgument(f"onnx embedder: variant must be one of {', '.join(VARIANTS)}, got {variant!r}")
        if type(batch_size) is not int or not 1 <= batch_size <= 4096:
            raise InvalidArgument(f"onnx embedder: batch_size must be an integer within 1..4096, got {batch_size!r}")
        if type(max_seq_length) is not int or not 1 <= max_seq_length <= 512:
            raise InvalidArgument(f"onnx embedder: max_seq_length must be within 1..512, got {max_seq_length!r}")

        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise EmbedderUnavailable(
                f"the ONNX embedder needs onnxruntime and tokenizers: pip install 'neurongraph[embed]' ({exc})"
            ) from exc
        if onnx_path is None:  # the installed files, built here on first use (one line to stderr says so)
            try:
                files = (FP32_FILE,) if variant == "fp32" else (FP32_FILE, INT8_FILE)  # int8 runs short texts in fp32
                onnx_path = ensure(files=files) / files[-1]
            except ImportError as exc:
                hint = "" if isinstance(exc, ModelFilesUnavailable) else " (pip install 'neurongraph[embed]')"
                raise EmbedderUnavailable(
                    f"the ONNX files of {MODEL_NAME} are missing in {onnx_dir()} and cannot be built here: "
                    f"{exc}{hint}; then `python -m neurongraph.index.onnx_export` builds them"
                ) from exc
        try:
            mdir = Path(model_dir) if model_dir is not None else source_model_dir()
        except ImportError as exc:
            raise EmbedderUnavailable(f"model files not found: {exc}") from exc
        onnx_path = Path(onnx_path)
        self._fp32_path = onnx_path if variant == "fp32" else onnx_path.with_name(FP32_FILE)
        self.variant = variant
        self.batch_size = batch_size
        self.max_seq_length = max_seq_length
        self.dim = 384
        self.model_id = onnx_model_id(variant, max_seq_length)
        self._tok = Tokenizer.from_file(str(mdir / "tokenizer.json"))
        self._tok.enable_truncation(max_length=max_seq_length)
        self._tok.no_padding()
        self.threads = threads if threads is not None else _default_threads()
        self._ort = ort
        self._sess = self._session(onnx_path)
        self._fp32_sess = self._sess if variant == "fp32" else None  # loaded on the first short text
        self._inputs = {i.name for i in self._sess.get_inputs()}
        out_dim = self._sess.get_outputs()[0].shape[-1]
        if isinstance(out_dim, int):
            self.dim = out_dim

    def _session(self, path: Path):
        ort = self._ort
        opts = ort.SessionOptions()
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        opts.intra_op_num_threads = self.threads
        opts.inter_op_num_threads = 1
        # no busy-waiting between parallel sections: the same arithmetic, ~10% less CPU for one query (a cold
        # search) and for a batch on a loaded machine (192 passages, 2 threads, load ~7: 1.47-1.64 s CPU
        # against 1.89-2.26 s, the same wall time; 2026-12-05)
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
        opts.log_severity_level = 3
        return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])

    def _session_for(self, width: int):
        if self.variant == "fp32" or width >= INT8_MIN_TOKENS:
            return self._sess
        if self._fp32_sess is None:
            self._fp32_sess = self._session(self._fp32_path)
        return self._fp32_sess

    def _run(self, encs: list) -> np.ndarray:
        width = max(len(e.ids) for e in encs)
        ids = np.zeros((len(encs), width), np.int64)
        mask = np.zeros((len(encs), width), np.int64)
        for r, e in enumerate(encs):
            ids[r, : len(e.ids)] = e.ids
            mask[r, : len(e.ids)] = 1
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session_for(width).run(None, feed)[0]  # (batch, width, dim)
        m = mask[:, :, None].astype(np.float32)
        pooled = (hidden * m).sum(axis=1) / np.clip(m.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)

    def embed(self, texts: Sequence[str], show_progress: bool = False, progress: Progress | None = None) -> np.ndarray:
        """(n, dim) float32, L2-normalised rows, in the order of ``texts``; ``progress(done, total)``
        is called after each batch (``show_progress`` is accepted for interface parity and ignored)."""
        n = len(texts)
        out = np.zeros((n, self.dim), np.float32)
        if n == 0:
            return out
        encs = self._tok.encode_batch([str(t).strip() for t in texts], add_special_tokens=True)
        order = sorted(range(n), key=lambda i: len(encs[i].ids))  # similar lengths together: little padding
        short = sum(1 for i in order if len(encs[i].ids) < INT8_MIN_TOKENS) if self.variant == "int8" else 0
        groups = [order[:short], order[short:]]  # int8: short texts (fp32 graph) never share a batch with long
        batches = [g[s : s + self.batch_size] for g in groups for s in range(0, len(g), self.batch_size)]
        done = 0
        for rows in batches:
            out[rows] = self._run([encs[i] for i in rows])
            done += len(rows)
            if progress is not None:
                progress(done, n)
        return out


def _default_threads() -> int:
    """One intra-op thread per CPU this process may run on (ONNX Runtime's own default counts all cores)."""
    env = os.environ.get("NGR_EMBED_THREADS")
    if env and env.isdigit() and int(env) > 0:
        return int(env)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return max(1, cpus)
