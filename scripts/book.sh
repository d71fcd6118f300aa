#!/usr/bin/env bash
# Install everything and build the book into _build/html (warnings are errors).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/install.sh"
jupyter-book build . -W -n --keep-going
echo "The book is in _build/html/index.html"
