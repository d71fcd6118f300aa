#!/usr/bin/env bash
# Course authors and CI: create .venv at the repository root (once) and install everything into it
# (lessons, grading, book, tests; nbgrader with its instructor tools). Students use
# install-student.sh. Option --gpu (when run itself): PyTorch's CUDA build on Linux (see the README).
# Sourced by book.sh and test.sh; afterwards the virtual environment is active.
set -euo pipefail
# shellcheck source=scripts/venv.sh
source "$(dirname "${BASH_SOURCE[0]}")/venv.sh"
# Options only when run itself: test.sh passes pytest's arguments through.
[ "${BASH_SOURCE[0]}" != "$0" ] || read_install_options "$@"
make_course_venv
quiet_pip install -r requirements-dev.txt
# -qq: the editable build's only messages are setuptools' notes on editable layouts; errors still show.
quiet_pip install -q --no-deps -e .

# JavaScript the book serves itself, so it works offline (MathJax, RequireJS, widget manager).
command -v npm >/dev/null || { echo "npm (Node.js >= 18) is needed: apt-get install -y nodejs npm" >&2; exit 1; }
[ node_modules/.package-lock.json -nt package-lock.json ] || npm ci --ignore-scripts --no-audit --no-fund --silent

# Headless Chromium for the browser checks (Debian's package; no browser is downloaded).
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# bubblewrap, the sandbox every submission is graded in (Debian's package; grading refuses to
# run without it unless the instructor passes --unsandboxed).
if [ ! -x /usr/bin/bwrap ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq --no-install-recommends bubblewrap >/dev/null
fi

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  python scripts/check_environment.py --requirements requirements-dev.txt \
    --next "source .venv/bin/activate, then bash scripts/test.sh or bash scripts/book.sh"
else
  python scripts/check_environment.py --requirements requirements-dev.txt
fi
