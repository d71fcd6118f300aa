"""Run real nbgrader commands in a throw-away course directory.

Regeneration and the tests use a temporary copy of ``autograder/`` so the instructor's own
course directory (and its gradebook) is never touched by them.
"""

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
from nbformat import NotebookNode

from course_build.paths import NBGRADER_CONFIG


class NbgraderError(RuntimeError):
    """An nbgrader command failed; the message carries its output."""


def make_course_dir(workdir: Path, sources: dict[str, NotebookNode]) -> Path:
    """A fresh nbgrader course directory under ``workdir`` holding the given source notebooks."""
    course = workdir / "course"
    course.mkdir(parents=True, exist_ok=True)
    shutil.copy(NBGRADER_CONFIG, course / "nbgrader_config.py")
    for lesson, notebook in sources.items():
        path = course / "source" / lesson / f"{lesson}.ipynb"
        path.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, path)
    return course


def run_nbgrader(course: Path, *args: str, timeout_s: float = 1800) -> str:
    """Run ``nbgrader ARGS`` in ``course`` and return its output; raise NbgraderError on failure.

    The interpreter's ``bin/`` goes first on PATH because nbgrader runs ``alembic`` as a
    subprocess to create the gradebook.
    """
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("NBGRADER_EXECUTION", None)
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
    )
    output = result.stdout + result.stderr
    if result.returncode != 0:
        raise NbgraderError(f"nbgrader {' '.join(args)} failed ({result.returncode}):\n{output}")
    return output
