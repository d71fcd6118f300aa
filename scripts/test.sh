#!/usr/bin/env bash
# Install everything and run the checks: lint, then the test suite (extra pytest arguments pass through).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/install.sh"
ruff check .
ruff format --check .
# One worker per CPU; a test file stays on one worker, so its module fixtures (one nbgrader
# batch per lesson) are built once; the heaviest files are handed out first, in the order
# tests/heaviest_first.py collects them (xdist would otherwise reorder by number of tests).
python -m pytest -n auto --dist loadfile --no-loadscope-reorder "$@"
