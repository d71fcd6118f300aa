#!/usr/bin/env bash
# Students: create .venv at the repository root (once), install what the lessons need and switch
# off nbgrader's instructor tools. Option --gpu: PyTorch's CUDA build on Linux (see the README).
# Then: source .venv/bin/activate && jupyter lab notebooks/
set -euo pipefail
# shellcheck source=scripts/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
read_install_options "$@"
make_course_venv
quiet_pip install -r requirements.txt
# -qq: the editable build's only messages are setuptools' notes on editable layouts; errors still show.
quiet_pip install -q --no-deps -e .

# shellcheck source=scripts/student_tools.sh
source scripts/student_tools.sh
disable_instructor_tools sys_prefix
serve_lessons_for_this_python sys_prefix
python scripts/check_environment.py --next "source .venv/bin/activate && jupyter lab notebooks/"
