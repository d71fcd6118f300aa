#!/usr/bin/env bash
# Students: create .venv at the repository root (once), install what the lessons need and switch
# off nbgrader's instructor tools. Then: source .venv/bin/activate && jupyter lab notebooks/
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
python -m pip install --quiet -r requirements.txt
python -m pip install --quiet --no-deps -e .

# shellcheck source=scripts/student_tools.sh
source scripts/student_tools.sh
disable_instructor_tools sys_prefix
echo "Ready: source .venv/bin/activate && jupyter lab notebooks/"
