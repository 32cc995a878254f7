#!/usr/bin/env bash
# The lint and type gate that `make test` (and so `.ci/run`) runs before the tests: ruff (rules in
# pyproject.toml, including a docstring on every public module and class: D100/D101), the formatter's
# check, mypy on src/, the import-graph check (no cycle, layer order) and the docs check (no commit hash in
# docs/, stated line counts within 5% of the files).
# Seconds of CPU, not minutes; any violation fails.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests scripts benchmarks
.venv/bin/ruff format --check --quiet src tests scripts benchmarks
.venv/bin/mypy
.venv/bin/python scripts/check_imports.py
.venv/bin/python scripts/check_docs.py
