#!/usr/bin/env bash
# The lint and type gate of `.ci/run`: ruff (rules in pyproject.toml), the formatter's check, and mypy on src/.
# Seconds, not minutes; a violation fails CI.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check src tests
.venv/bin/ruff format --check --quiet src tests
.venv/bin/mypy
