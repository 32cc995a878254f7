"""Make the all-MiniLM-L6-v2 ONNX files once: at install time (scripts/bootstrap.sh) or on first use.

    python -m neurongraph.index.onnx_export            # idempotent: a no-op when the files are current
    python -m neurongraph.index.onnx_export --force    # build again
    python -m neurongraph.index.onnx_export --print-dir

Why: the run-time path (:mod:`neurongraph.index.onnx_embedder`) runs the transformer with ONNX Runtime and
the ``tokenizers`` library only, so no command imports torch (~4.5 s of a cold ``ngr search``) and the
``embed`` extra does not install it.  The graph is written from the safetensors weights with numpy and the
``onnx`` package (:mod:`.onnx_build`, no torch), from local files (:mod:`.onnx_weights` says where they
come from), then optimised and quantised with ONNX Runtime's tools.  It writes:

* ``model.onnx``       the transformer (input_ids, attention_mask, token_type_ids -> last_hidden_state),
  float32, the reference model's weights unchanged, with ONNX Runtime's BERT operator fusions; its weights
  in ``model.onnx.data`` beside it (ONNX external data), which ONNX Runtime maps instead of parsing and
  copying 90 MB of protobuf: a session opens in ~0.04 s of CPU instead of ~0.11 s (every cold ``ngr search``);
* ``model_int8.onnx``  the same graph with int8 dynamic quantisation of its MatMul weights (onnxruntime);
* ``manifest.json``    what they were made from (source weights' size and SHA-256, versions): an export
  whose manifest no longer matches the installed weights is stale and is redone.

The files go to :func:`onnx_dir` (``$NGR_ONNX_DIR``, else ``<venv>/share/neurongraph/onnx/all-MiniLM-L6-v2``):
stable, offline, and removed with the virtual environment.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
from pathlib import Path

try:
    import fcntl
except ImportError:  # not on Windows: builds there are not serialised
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "onnx_dir",
    "source_model_dir",
    "export",
    "ensure",
    "can_build",
    "is_current",
    "MODEL_NAME",
    "FP32_FILE",
    "FP32_DATA",
    "INT8_FILE",
]

MODEL_NAME = "all-MiniLM-L6-v2"
FP32_FILE = "model.onnx"
FP32_DATA = FP32_FILE + ".data"  # its weights (external data, named inside the graph; written with it)
INT8_FILE = "model_int8.onnx"
MANIFEST = "manifest.json"
OPSET = 17
# bump when the graph changes (inputs, outputs, quantisation settings); 3: written by onnx_build, no torch (its
# fused and int8 graphs gave bit-identical outputs to format 2's torch export); 4: the fp32 weights as external
# data (FP32_DATA), the same graph and values
EXPORT_FORMAT = 4


def onnx_dir() -> Path:
    """Where the exported files live: ``$NGR_ONNX_DIR`` or a folder inside the running environment."""
    env = os.environ.get("NGR_ONNX_DIR")
    if env:
        return Path(env)
    return Path(sys.prefix) / "share" / "neurongraph" / "onnx" / MODEL_NAME


def source_model_dir() -> Path:
    """The model directory (tokenizer.json, model.safetensors, ...) when it is on this machine; else
    :class:`~.onnx_weights.ModelFilesUnavailable` (an ImportError), see :func:`ensure` to fetch it."""
    from .onnx_weights import ModelFilesUnavailable, local_model_dir

    d = local_model_dir()
    if d is None:
        raise ModelFilesUnavailable("the all-MiniLM-L6-v2 files are not installed (ngr fetches them on first use)")
    return d


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


FILE_NOTES = {
    FP32_FILE: "float32, BERT fusions (onnxruntime.transformers)",
    INT8_FILE: "int8 dynamic quantisation, per channel (see _quantize)",
}
BOTH = (FP32_FILE, INT8_FILE)


def is_current(out: Path | None = None, model_dir: Path | None = None, files: tuple[str, ...] = (FP32_FILE,)) -> bool:
    """True when ``files`` (default: the fp32 graph, which the default embedder runs) exist and were built
    from the installed weights."""
    out = out or onnx_dir()
    if model_dir is None:
        from .onnx_weights import local_model_dir

        model_dir = local_model_dir()
        if model_dir is None:
            return False  # the model files themselves are not here yet
    m = _read_manifest(out)
    if m is None or not all((out / f).is_file() and f in (m.get("files") or {}) for f in files):
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


def _build_fp32(model_dir: Path, path: Path) -> None:
    """The plain (unfused) float32 graph, from the safetensors weights (no torch)."""
    import onnx

    from .onnx_build import build_model, read_config, read_safetensors

    model = build_model(read_safetensors(model_dir / "model.safetensors"), read_config(model_dir))
    onnx.save(model, str(path))


def _fuse(src: Path, dst: Path) -> None:
    """ONNX Runtime's BERT fusions (embedding + layer norm, attention, bias + GELU, skip + layer norm):
    graph rewrites only, nothing tuned to this machine; ~25% less CPU per passage than the plain graph."""
    from onnxruntime.transformers.fusion_options import FusionOptions
    from onnxruntime.transformers.optimizer import optimize_model

    config = json.loads((src.parent / "config.json").read_text()) if (src.parent / "config.json").is_file() else {}
    options = FusionOptions("bert")
    # no symbolic shape inference: it needs sympy (~80 MB, not in the embed extra), and the graph's shapes are
    # known (onnx_build.py); the fused graph is the same either way (tests/test_onnx_build.py checks the fusions)
    options.enable_shape_inference = False
    with quiet_logging():  # its note that the producer is not "pytorch" (the fusions match the graph all the same)
        fused = optimize_model(
            str(src),
            model_type="bert",
            num_heads=int(config.get("num_attention_heads", 12)),
            hidden_size=int(config.get("hidden_size", 384)),
            opt_level=0,
            optimization_options=options,
        )
    counts = fused.get_fused_operator_statistics()
    layers = int(config.get("num_hidden_layers", 6))
    if counts.get("Attention", 0) != layers or counts.get("EmbedLayerNormalization", 0) != 1:
        raise RuntimeError(f"the BERT fusions did not apply to the built graph: {counts}")  # a bug here, not the user's
    fused.save_model_to_file(str(dst), use_external_data_format=True)  # the weights in FP32_DATA


@contextlib.contextmanager
def quiet_logging():
    """onnxruntime's tools log through the root logger: only errors while one runs (shared with e5_embedder)."""
    root = logging.getLogger()
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        yield
    finally:
        root.setLevel(level)


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
    with quiet_logging():  # its advice to pre-process (shape inference) does not apply here
        quantize_dynamic(
            str(src),
            str(dst),
            weight_type=QuantType.QInt8,
            op_types_to_quantize=["MatMul"],
            per_channel=True,
            nodes_to_exclude=keep_float,
        )


def export(
    out: Path | None = None, model_dir: Path | None = None, force: bool = False, files: tuple[str, ...] = BOTH
) -> Path:
    """Build (or keep, when current) the ONNX ``files`` (default both: fp32 and int8); returns their folder.

    A file already built from the same weights is kept (the int8 graph is made only when first asked
    for: the default path runs fp32 alone).  Files are written under temporary names and renamed into
    place, the manifest last, so an interrupted build leaves no file that :func:`is_current` accepts."""
    out = out or onnx_dir()
    model_dir = model_dir or source_model_dir()
    if not force and _ready(out, model_dir, files):
        return out
    out.mkdir(parents=True, exist_ok=True)
    import onnx
    import onnxruntime

    kept = [f for f in BOTH if not force and f not in files and _ready(out, model_dir, (f,))]
    with tempfile.TemporaryDirectory(dir=out, prefix=".export-") as tmp:
        raw, fp32, int8 = Path(tmp) / "raw.onnx", Path(tmp) / FP32_FILE, Path(tmp) / INT8_FILE
        shutil.copy(model_dir / "config.json", Path(tmp) / "config.json")
        _build_fp32(model_dir, raw)
        if FP32_FILE in files:
            _fuse(raw, fp32)
        if INT8_FILE in files:
            _quantize(raw, int8)  # from the plain graph: its MatMuls (the fused Attention keeps float weights)
        (out / MANIFEST).unlink(missing_ok=True)
        for f in files:
            if f == FP32_FILE:  # its weights first: a reader that finds the new graph finds its data
                data = Path(tmp) / FP32_DATA
                os.chmod(data, (Path(tmp) / f).stat().st_mode & 0o777)  # readable like the graph (onnx writes 0600)
                os.replace(data, out / FP32_DATA)
            os.replace(Path(tmp) / f, out / f)
    manifest = {
        "model": MODEL_NAME,
        "source_dir": str(model_dir),
        "source": _source_fingerprint(model_dir),
        "opset": OPSET,
        "builder": "neurongraph.index.onnx_build (numpy + onnx, no torch)",
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
        "files": {f: FILE_NOTES[f] for f in BOTH if f in files or f in kept},
    }
    tmp_manifest = out / (MANIFEST + ".tmp")
    tmp_manifest.write_text(json.dumps(manifest, indent=2) + "\n")
    os.replace(tmp_manifest, out / MANIFEST)
    return out


def can_build() -> bool:
    """True when :func:`ensure` can make the files here: ``onnx`` and ``onnxruntime`` installed, and the model
    files on this machine or pip (or uv) there to fetch them.  Imports nothing (a cold start pays for no check)."""
    from .onnx_weights import installer, local_model_dir, usable

    if any(importlib.util.find_spec(m) is None for m in ("onnx", "onnxruntime")):
        return False
    d = local_model_dir()
    return usable(d) if d is not None else installer() is not None


def _say(line: str) -> None:
    print(f"ngr: {line}", file=sys.stderr, flush=True)


def _ready(out: Path, model_dir: Path, files: tuple[str, ...]) -> bool:
    """:func:`is_current`, and the fp32 graph's external weights are there (a folder that lost them is built again)."""
    return is_current(out, model_dir, files) and (FP32_FILE not in files or (out / FP32_DATA).is_file())


def ensure(out: Path | None = None, log=_say, files: tuple[str, ...] = (FP32_FILE,)) -> Path:
    """The folder of the current ONNX ``files``, building them first when missing or stale (fetching the model
    files first when they are not on this machine), with a one-line note to ``log`` for each step taken.

    One process builds at a time (a lock file in the folder); another waiting for it finds the files
    current and returns.  Errors: ImportError (``onnx``/``onnxruntime`` missing, model files unavailable)."""
    from .onnx_weights import ModelFilesUnavailable, fetch, local_model_dir, usable

    out = out or onnx_dir()
    model_dir = local_model_dir()
    if model_dir is not None and _ready(out, model_dir, files):
        return out
    out.mkdir(parents=True, exist_ok=True)
    with open(out / ".lock", "a") as lock:
        if fcntl is not None:
            fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        model_dir = local_model_dir() or fetch(log=log)
        if not usable(model_dir):
            raise ModelFilesUnavailable(f"{model_dir} lacks config.json, tokenizer.json or model.safetensors")
        if not _ready(out, model_dir, files):
            log(f"building the ONNX graph of {MODEL_NAME} once (~15 s) into {out}")
            todo = tuple(f for f in files if not _ready(out, model_dir, (f,)))
            export(out, model_dir, files=todo)
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
        if not args.force and _ready(target, model_dir, BOTH):
            print(f"onnx export: current ({target})")
            return 0
    except ImportError:
        pass  # ensure() fetches the model files
    try:
        if args.force:
            from .onnx_weights import fetch, local_model_dir

            export(target, local_model_dir() or fetch(log=_say), force=True)
        else:
            ensure(target, files=BOTH)
    except ImportError as exc:
        print(
            f"error[embedder_unavailable]: the build needs onnx and onnxruntime "
            f"(pip install 'neurongraph[embed]'): {exc}",
            file=sys.stderr,
        )
        return 2
    print(f"onnx export: wrote {target / FP32_FILE} and {target / INT8_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
