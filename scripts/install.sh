#!/usr/bin/env bash
# Create .venv at the repository root (once) and install everything the course needs into it.
# Sourced by book.sh and test.sh; afterwards the virtual environment is active.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
# shellcheck disable=SC1091
source .venv/bin/activate

python -m pip install --quiet --upgrade pip
# The CPU build of torch first: an unpinned torch would pull a multi-GB CUDA build.
python -m pip install --quiet "torch==2.13.0"
python -m pip install --quiet -r requirements-dev.txt
python -m pip install --quiet --no-deps -e .
