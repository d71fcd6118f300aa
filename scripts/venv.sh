#!/usr/bin/env bash
# Sourced by install.sh and install-student.sh: create .venv at the repository root (once), switch
# it on and put PyTorch's CPU build in it. Afterwards the working directory is the repository root.
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
