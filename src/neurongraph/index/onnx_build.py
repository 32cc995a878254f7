"""Build the all-MiniLM-L6-v2 transformer as an ONNX graph from its safetensors weights: numpy and ``onnx`` only.

Why: the run-time path (:mod:`.onnx_embedder`) needs an ONNX file, and exporting one through torch meant
installing PyTorch (~750 MB) to run it once.  The model is a plain BERT encoder, so its graph is written
here node by node with ``onnx.helper`` (opset 17) and its weights are read straight from
``model.safetensors`` (an 8-byte little-endian header length, a JSON header naming each tensor's dtype,
shape and byte range, then the raw little-endian tensors).

The graph is the one ``torch.onnx.export`` gave for ``BertModel`` with eager attention, in the node pattern
ONNX Runtime's BERT fusions recognise (:func:`.onnx_export._fuse`), so the same fusions and the same int8
quantisation apply to it:

* embeddings: ``Gather(word, input_ids) + Gather(token_type, token_type_ids) + Gather(position, 0..seq-1)``
  then LayerNorm;
* per layer: Q, K, V projections (``x @ W.T + b``) reshaped to ``(batch, seq, heads, head_dim)``;
  ``softmax(Q K^T / sqrt(head_dim) + (1 - mask) * -10000) V``; output projection, residual, LayerNorm;
  ``GELU(x @ W1.T + b1)`` with the exact (erf) GELU, ``@ W2.T + b2``, residual, LayerNorm;
* inputs ``input_ids``, ``attention_mask``, ``token_type_ids`` (int64, ``batch x seq``), output
  ``last_hidden_state`` (float32, ``batch x seq x hidden``).

The masked attention scores get ``-10000`` added (the classic BERT mask); after the softmax their weight is
exactly 0 in float32, as with the reference's ``finfo.min``.  Equality with the reference model is tested
(tests/test_onnx_build.py: cosine >= 0.9999 per text on 1,000 texts).
"""

from __future__ import annotations

import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["read_safetensors", "read_config", "build_model", "SafetensorsError"]

OPSET = 17
_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}
_MAX_HEADER = 100 << 20  # the format caps the JSON header at 100 MB; a bigger length is a corrupt file


class SafetensorsError(ValueError):
    """The weights file is not a readable safetensors file (truncated, corrupt, or an unsupported dtype)."""


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """Every tensor of a safetensors file as a numpy array (float16/bfloat16 widened to float32)."""
    data = Path(path).read_bytes()
    if len(data) < 8:
        raise SafetensorsError(f"{path}: shorter than the 8-byte header length")
    (n,) = struct.unpack("<Q", data[:8])
    if n > min(_MAX_HEADER, len(data) - 8):
        raise SafetensorsError(f"{path}: header length {n} does not fit the file ({len(data)} bytes)")
    try:
        header = json.loads(data[8 : 8 + n])
    except ValueError as exc:
        raise SafetensorsError(f"{path}: the header is not JSON ({exc})") from None
    body = memoryview(data)[8 + n :]
    out: dict[str, np.ndarray] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        out[name] = _tensor(path, name, spec, body)
    return out


def _tensor(path: str | Path, name: str, spec: dict, body: memoryview) -> np.ndarray:
    dtype, shape, (begin, end) = spec["dtype"], [int(d) for d in spec["shape"]], spec["data_offsets"]
    if not 0 <= begin <= end <= len(body):
        raise SafetensorsError(f"{path}: tensor {name} lies outside the file ({begin}..{end})")
    raw = body[begin:end]
    if dtype == "BF16":  # bfloat16 is the top half of a float32
        arr = (np.frombuffer(raw, "<u2").astype(np.uint32) << 16).view(np.float32)
    elif dtype in _DTYPES:
        arr = np.frombuffer(raw, np.dtype(_DTYPES[dtype]).newbyteorder("<"))
    else:
        raise SafetensorsError(f"{path}: tensor {name} has dtype {dtype}, not one of F32 F16 BF16 F64 I64 I32")
    if arr.size != math.prod(shape):
        raise SafetensorsError(f"{path}: tensor {name} holds {arr.size} values, its shape {shape} needs more")
    arr = arr.reshape(shape)
    return arr.astype(np.float32) if arr.dtype.kind == "f" else arr.astype(np.int64)


def read_config(model_dir: str | Path) -> dict[str, Any]:
    """The model's ``config.json``, checked to be the BERT encoder this module writes."""
    config = json.loads((Path(model_dir) / "config.json").read_text())
    if config.get("model_type", "bert") != "bert" or config.get("hidden_act", "gelu") != "gelu":
        raise ValueError(
            f"{model_dir}: expected a BERT model with the exact GELU, got model_type={config.get('model_type')!r}, "
            f"hidden_act={config.get('hidden_act')!r}"
        )
    if config.get("position_embedding_type", "absolute") != "absolute":
        raise ValueError(f"{model_dir}: only absolute position embeddings are supported")
    return config


class _Graph:
    """Nodes and initialisers being collected, with unique names."""

    def __init__(self, helper: Any, numpy_helper: Any) -> None:
        self.h, self.nh = helper, numpy_helper
        self.nodes: list = []
        self.inits: list = []
        self._n = 0

    def const(self, name: str, value: np.ndarray) -> str:
        self.inits.append(self.nh.from_array(np.array(value, order="C"), name))  # 0-d stays 0-d
        return name

    def op(self, op_type: str, inputs: list[str], name: str, **attrs) -> str:
        self._n += 1
        out = f"{name}_output_{self._n}"
        self.nodes.append(self.h.make_node(op_type, inputs, [out], name=name, **attrs))
        return out


def _linear(g: _Graph, w: dict[str, np.ndarray], x: str, prefix: str) -> str:
    """``x @ W.T + b`` as MatMul then Add(bias, product): the exported pattern the fusions look for."""
    wt = g.const(f"{prefix}.weight_t", w[f"{prefix}.weight"].T)
    b = g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("Add", [b, g.op("MatMul", [x, wt], f"/{prefix}/MatMul")], f"/{prefix}/Add")


def _layer_norm(g: _Graph, w: dict[str, np.ndarray], x: str, prefix: str, eps: float) -> str:
    scale, bias = g.const(f"{prefix}.weight", w[f"{prefix}.weight"]), g.const(f"{prefix}.bias", w[f"{prefix}.bias"])
    return g.op("LayerNormalization", [x, scale, bias], f"/{prefix}/LayerNormalization", axis=-1, epsilon=eps)


def _embeddings(g: _Graph, w: dict[str, np.ndarray], eps: float) -> str:
    p = "embeddings"
    word = g.op(
        "Gather",
        [g.const(f"{p}.word_embeddings.weight", w[f"{p}.word_embeddings.weight"]), "input_ids"],
        f"/{p}/word_embeddings/Gather",
    )
    types = g.const(f"{p}.token_type_embeddings.weight", w[f"{p}.token_type_embeddings.weight"])
    summed = g.op(
        "Add", [word, g.op("Gather", [types, "token_type_ids"], f"/{p}/token_type_embeddings/Gather")], f"/{p}/Add"
    )
    # position ids 0..seq-1: Slice(arange(max_positions)[None], 0, seq) -- the BERT pattern the fusion knows
    n_pos = w[f"{p}.position_embeddings.weight"].shape[0]
    seq = g.op(
        "Gather",
        [g.op("Shape", ["input_ids"], f"/{p}/Shape"), g.const("one_scalar", np.array(1, np.int64))],
        f"/{p}/Gather",
        axis=0,
    )
    end = g.op("Unsqueeze", [seq, g.const("axes_0", np.array([0], np.int64))], f"/{p}/Unsqueeze")
    ids = g.op(
        "Slice",
        [
            g.const(f"{p}.position_ids", np.arange(n_pos, dtype=np.int64)[None, :]),
            g.const("zero_1d", np.array([0], np.int64)),
            end,
            g.const("one_1d", np.array([1], np.int64)),
            "one_1d",
        ],
        f"/{p}/Slice",
    )
    pos = g.op(
        "Gather",
        [g.const(f"{p}.position_embeddings.weight", w[f"{p}.position_embeddings.weight"]), ids],
        f"/{p}/position_embeddings/Gather",
    )
    return _layer_norm(g, w, g.op("Add", [summed, pos], f"/{p}/Add_1"), f"{p}.LayerNorm", eps)


def _attention_bias(g: _Graph) -> str:
    """``(1 - mask[:, None, None, :]) * -10000``: 0 where a token is attended to, -10000 at padding."""
    m = g.op("Unsqueeze", ["attention_mask", g.const("axes_1", np.array([1], np.int64))], "/mask/Unsqueeze")
    m = g.op("Unsqueeze", [m, g.const("axes_2", np.array([2], np.int64))], "/mask/Unsqueeze_1")
    m = g.op("Cast", [m], "/mask/Cast", to=1)
    inv = g.op("Sub", [g.const("one_float", np.array(1.0, np.float32)), m], "/mask/Sub")
    return g.op("Mul", [inv, g.const("mask_fill", np.array(-10000.0, np.float32))], "/mask/Mul")


def _self_attention(g: _Graph, w: dict[str, np.ndarray], x: str, bias: str, prefix: str, heads: int) -> str:
    hidden = w[f"{prefix}.query.weight"].shape[0]
    head_dim = hidden // heads
    split = g.const("shape_heads", np.array([0, 0, heads, head_dim], np.int64))

    def project(name: str, perm: list[int]) -> str:
        y = g.op("Reshape", [_linear(g, w, x, f"{prefix}.{name}"), split], f"/{prefix}/{name}/Reshape")
        return g.op("Transpose", [y], f"/{prefix}/{name}/Transpose", perm=perm)

    q, k, v = project("query", [0, 2, 1, 3]), project("key", [0, 2, 3, 1]), project("value", [0, 2, 1, 3])
    scores = g.op("MatMul", [q, k], f"/{prefix}/MatMul")
    # divided by sqrt(head_dim) (the reference multiplies by its inverse: a last-bit difference): a Div keeps
    # the scaled scores and the mask term (a Mul) of distinct op types, as the attention fusion's pattern needs
    scores = g.op(
        "Div", [scores, g.const(f"sqrt_{head_dim}", np.array(math.sqrt(head_dim), np.float32))], f"/{prefix}/Div"
    )
    probs = g.op("Softmax", [g.op("Add", [scores, bias], f"/{prefix}/Add")], f"/{prefix}/Softmax", axis=-1)
    ctx = g.op(
        "Transpose", [g.op("MatMul", [probs, v], f"/{prefix}/MatMul_1")], f"/{prefix}/Transpose", perm=[0, 2, 1, 3]
    )
    return g.op("Reshape", [ctx, g.const("shape_merge", np.array([0, 0, hidden], np.int64))], f"/{prefix}/Reshape")


def _gelu(g: _Graph, x: str, prefix: str) -> str:
    """The exact GELU, ``x * (1 + erf(x / sqrt 2)) * 0.5``, in the exported order."""
    erf = g.op(
        "Erf",
        [g.op("Div", [x, g.const("sqrt2", np.array(math.sqrt(2.0), np.float32))], f"/{prefix}/Div")],
        f"/{prefix}/Erf",
    )
    plus = g.op("Add", [erf, g.const("one_float", np.array(1.0, np.float32))], f"/{prefix}/Add")
    return g.op(
        "Mul",
        [g.op("Mul", [x, plus], f"/{prefix}/Mul"), g.const("half", np.array(0.5, np.float32))],
        f"/{prefix}/Mul_1",
    )


def _layer(g: _Graph, w: dict[str, np.ndarray], x: str, bias: str, i: int, heads: int, eps: float) -> str:
    p = f"encoder.layer.{i}"
    ctx = _self_attention(g, w, x, bias, f"{p}.attention.self", heads)
    attn = g.op("Add", [_linear(g, w, ctx, f"{p}.attention.output.dense"), x], f"/{p}/attention/output/Add")
    attn = _layer_norm(g, w, attn, f"{p}.attention.output.LayerNorm", eps)
    inner = _gelu(g, _linear(g, w, attn, f"{p}.intermediate.dense"), f"{p}/intermediate/act")
    out = g.op("Add", [_linear(g, w, inner, f"{p}.output.dense"), attn], f"/{p}/output/Add")
    return _layer_norm(g, w, out, f"{p}.output.LayerNorm", eps)


def build_model(weights: dict[str, np.ndarray], config: dict[str, Any]):
    """The encoder as an ``onnx.ModelProto`` (opset 17), weights as initialisers (float32, transposed for MatMul)."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    w = {k.removeprefix("bert."): v for k, v in weights.items()}  # some checkpoints prefix every name
    heads, layers = int(config["num_attention_heads"]), int(config["num_hidden_layers"])
    hidden, eps = int(config["hidden_size"]), float(config.get("layer_norm_eps", 1e-12))
    missing = [
        k
        for k in ("embeddings.word_embeddings.weight", f"encoder.layer.{layers - 1}.output.dense.weight")
        if k not in w
    ]
    if missing:
        raise ValueError(f"the weights lack {', '.join(missing)}: not a {layers}-layer BERT checkpoint")
    if w["embeddings.word_embeddings.weight"].shape[1] != hidden or hidden % heads:
        raise ValueError(f"hidden size {hidden} does not match the weights or {heads} heads")
    g = _Graph(helper, numpy_helper)
    x = _embeddings(g, w, eps)
    bias = _attention_bias(g)
    for i in range(layers):
        x = _layer(g, w, x, bias, i, heads, eps)
    g.nodes[-1].output[0] = "last_hidden_state"  # the last LayerNorm writes the graph's output
    dims = ["batch", "seq"]
    inputs = [
        helper.make_tensor_value_info(n, TensorProto.INT64, dims)
        for n in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("last_hidden_state", TensorProto.FLOAT, [*dims, hidden])
    uniq = {t.name: t for t in g.inits}  # shared constants (shapes, scalars) were added once per use
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], list(uniq.values()))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="neurongraph")
    model.ir_version = min(model.ir_version, 8)  # readable by every onnxruntime release of the last years
    onnx.checker.check_model(model, full_check=False)
    return model
