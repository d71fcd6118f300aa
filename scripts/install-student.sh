#!/usr/bin/env bash
# Students: create .venv at the repository root (once), install what the lessons need and switch
# off nbgrader's instructor tools. Then: source .venv/bin/activate && jupyter lab notebooks/
set -euo pipefail
# shellcheck source=scripts/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
python -m pip install --quiet -r requirements.txt
python -m pip install --quiet --no-deps -e .

# shellcheck source=scripts/student_tools.sh
source scripts/student_tools.sh
disable_instructor_tools sys_prefix
echo "Ready: source .venv/bin/activate && jupyter lab notebooks/"
