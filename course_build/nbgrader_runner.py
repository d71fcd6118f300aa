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


def _nbgrader_env(single_threaded: bool) -> dict[str, str]:
    """nbgrader's environment: the interpreter's ``bin/`` first on PATH, because nbgrader runs
    ``alembic`` as a subprocess to create the gradebook; one math thread per kernel when several
    nbgrader processes share the machine."""
    env = dict(os.environ)
    env["PATH"] = str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", "")
    env.pop("NBGRADER_EXECUTION", None)
    if single_threaded:
        env.update(OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1")
    return env


def start_nbgrader(course: Path, *args: str, single_threaded: bool = False) -> subprocess.Popen:
    """Start ``nbgrader ARGS`` in ``course`` without waiting; read its output with ``finish_nbgrader``."""
    return subprocess.Popen(
        [sys.executable, "-m", "nbgrader", *args],
        cwd=course,
        env=_nbgrader_env(single_threaded),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def finish_nbgrader(process: subprocess.Popen, timeout_s: float = 3600) -> str:
    """Wait for a started nbgrader command; return its output or raise NbgraderError."""
    command = " ".join(process.args[3:])
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        output, _ = process.communicate()
        raise NbgraderError(f"nbgrader {command} ran past {timeout_s} s:\n{output}") from None
    if process.returncode != 0:
        raise NbgraderError(f"nbgrader {command} failed ({process.returncode}):\n{output}")
    return output


def run_nbgrader(course: Path, *args: str, timeout_s: float = 1800) -> str:
    """Run ``nbgrader ARGS`` in ``course`` and return its output; raise NbgraderError on failure."""
    return finish_nbgrader(start_nbgrader(course, *args), timeout_s)
