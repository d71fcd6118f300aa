#!/usr/bin/env bash
# Sourced by install.sh and install-student.sh. read_install_options reads their options (--gpu);
# make_course_venv creates .venv at the repository root (once), switches it on and puts PyTorch
# 2.13.0 in it (scripts/install_torch.py: the CPU build on Linux unless COURSE_TORCH=gpu).
# Afterwards the working directory is the repository root. Works with macOS's bash 3.2.
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo_root"

read_install_options() {
  local option
  for option in "$@"; do
    case "$option" in
      --gpu) export COURSE_TORCH=gpu ;;
      -h | --help)
        echo "Options: --gpu  PyTorch's CUDA build from PyPI on Linux (about 2.7 GB) instead of the CPU build (about 200 MB)"
        exit 0 ;;
      *) echo "Unknown option $option: the one option is --gpu (PyTorch's CUDA build on Linux)." >&2; exit 2 ;;
    esac
  done
}

# Drops the warning pip repeats for every package that a local file:// index in pip's
# configuration lacks (a mirror set in pip.conf; nothing is wrong); everything else passes.
without_local_index_noise() {
  grep -v -E "^WARNING: Location 'file:[^']*' is ignored: it is neither a file nor a directory\.$" || true
}

# pip, quiet: its warnings and errors only.
quiet_pip() {
  python -m pip "$@" --quiet 2>&1 | without_local_index_noise
}

make_course_venv() {
  if ! command -v python3 >/dev/null; then
    echo "Python 3.10 or newer is needed (python3 is not on PATH): see the README's prerequisites." >&2
    exit 1
  fi
  if ! python3 -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
    echo "Python 3.10 or newer is needed; python3 is $(python3 -V 2>&1 | cut -d' ' -f2)." >&2
    exit 1
  fi
  if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv >/dev/null || {
      rm -rf .venv
      echo "python3 could not make a virtual environment: on Debian or Ubuntu, apt install python3-venv." >&2
      exit 1
    }
  fi
  # shellcheck disable=SC1091
  source .venv/bin/activate
  quiet_pip install --upgrade pip
  python scripts/install_torch.py 2>&1 | without_local_index_noise
}
