"""Regenerate a lesson's artifacts from its source, or check that they are up to date.

source (lessons/NN.md)
  -> autograder/source/NN/NN.ipynb   nbgrader source: solutions + hidden tests, no outputs
  -> solutions/NN.ipynb              the source executed, outputs and widget state kept
  -> notebooks/NN.ipynb              nbgrader's release (stubs, visible tests) carrying the
                                     solution run's outputs of every ungraded cell
"""

import copy
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from course_build.execute import execute_notebook
from course_build.nbgrader_runner import make_course_dir, run_nbgrader
from course_build.paths import (
    REPO_ROOT,
    nbgrader_source_notebook,
    solution_notebook,
    student_notebook,
)
from course_build.source import build_source_notebook


def write_notebook(notebook: NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def release_notebook(lesson: str, source: NotebookNode) -> NotebookNode:
    """nbgrader's student version (``generate_assignment``) of the lesson's source notebook."""
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        course = make_course_dir(Path(tmp), {lesson: source})
        run_nbgrader(course, "generate_assignment", lesson, "--force")
        return nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)


def is_graded_cell(cell: NotebookNode) -> bool:
    """Solution and test cells: their outputs would show a solution's results, so students don't get them."""
    nbgrader = cell.metadata.get("nbgrader", {})
    return bool(nbgrader.get("solution") or nbgrader.get("grade"))


def student_with_outputs(release: NotebookNode, executed: NotebookNode) -> NotebookNode:
    """The release notebook carrying the executed solution's outputs for its ungraded cells."""
    student = copy.deepcopy(release)
    executed_cells = {cell.id: cell for cell in executed.cells}
    for cell in student.cells:
        if cell.cell_type != "code":
            continue
        ran = executed_cells[cell.id]
        if is_graded_cell(cell):
            cell.outputs, cell.execution_count = [], None
        else:
            cell.outputs, cell.execution_count = ran.outputs, ran.execution_count
    if "widgets" in executed.metadata:
        student.metadata["widgets"] = executed.metadata["widgets"]
    return student


def regenerate(lesson: str) -> None:
    """Write all three artifacts of ``lesson`` (executes the lesson: seconds to a minute)."""
    source = build_source_notebook(lesson)
    write_notebook(source, nbgrader_source_notebook(lesson))
    executed = execute_notebook(copy.deepcopy(source))
    write_notebook(executed, solution_notebook(lesson))
    release = release_notebook(lesson, source)
    write_notebook(student_with_outputs(release, executed), student_notebook(lesson))


def _structure(notebook: NotebookNode) -> dict[str, Any]:
    """What a notebook says, without what running it produced (outputs, counts, widget state)."""
    return {
        "metadata": {k: v for k, v in notebook.metadata.items() if k not in ("widgets", "language_info")},
        "cells": [
            {"type": c.cell_type, "id": c.get("id"), "source": c.source, "metadata": c.metadata}
            for c in notebook.cells
        ],
    }


def _read(path: Path) -> NotebookNode | None:
    return nbformat.read(path, as_version=4) if path.is_file() else None


def stale_artifacts(lesson: str) -> list[str]:
    """Reasons the lesson's generated files differ from what its source makes (empty: in sync)."""
    problems = []
    source = build_source_notebook(lesson)
    expected = {
        nbgrader_source_notebook(lesson): source,
        solution_notebook(lesson): source,
        student_notebook(lesson): release_notebook(lesson, source),
    }
    for path, wanted in expected.items():
        shown = path.relative_to(REPO_ROOT)
        found = _read(path)
        if found is None:
            problems.append(f"{shown} is missing")
        elif _structure(found) != _structure(wanted):
            problems.append(f"{shown} is stale: its cells differ from lessons/{lesson}.md")
    solutions = _read(solution_notebook(lesson))
    if solutions is not None:
        unrun = [c.id for c in solutions.cells if c.cell_type == "code" and c.execution_count is None]
        if unrun:
            problems.append(f"solutions/{lesson}.ipynb has cells that never ran: {unrun[:5]}")
    return problems
