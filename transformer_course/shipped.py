"""Where the files the package ships are: trained checkpoints, measured results, the GPT's text.

Both model families and lesson 9's studies read files shipped as package data in
``checkpoints/`` and ``data/`` beside this module, so a Colab install from the repository URL has
them with no checkout. Modules in the subpackages find them here instead of from their own
``__file__``, which would point one folder too deep.
"""

from __future__ import annotations

import os
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
CHECKPOINTS_DIR = PACKAGE_DIR / "checkpoints"
DATA_DIR = PACKAGE_DIR / "data"
CHECKPOINT_DIR_VARIABLE = "TRANSFORMER_COURSE_CHECKPOINTS"


def shipped_checkpoint(name: str) -> Path:
    """Find a file shipped in the package's ``checkpoints/`` folder (package data).

    Looks in ``$TRANSFORMER_COURSE_CHECKPOINTS`` first, so a user can point the lessons at their
    own runs, then in the installed package.
    """
    candidates = []
    if os.environ.get(CHECKPOINT_DIR_VARIABLE):
        candidates.append(Path(os.environ[CHECKPOINT_DIR_VARIABLE]) / name)
    candidates.append(CHECKPOINTS_DIR / name)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    searched = "\n  ".join(str(c) for c in candidates)
    raise FileNotFoundError(
        f"{name} is not in any of:\n  {searched}\nReinstall the course package (the file ships in "
        f"transformer_course/checkpoints/), set {CHECKPOINT_DIR_VARIABLE} to the folder holding it, or train "
        "your own with `python -m transformer_course.train --preset quick --out <file>` (the translator) or "
        "`python -m transformer_course.train_gpt --preset cpu --out-dir <folder>` (the GPT)."
    )
