"""Regenerate a lesson's artifacts from its source, or check that they are up to date.

source (lessons/NN.md)
  -> autograder/source/NN/NN.ipynb   nbgrader source: solutions + hidden tests, no outputs
  -> solutions/NN.ipynb              the source executed, outputs and widget state kept
  -> notebooks/NN.ipynb              nbgrader's release (stubs, visible tests) carrying the
                                     solution run's outputs of the cells that do not depend on
                                     an exercise, minus the authors' provenance note

Regenerating is deterministic: the same source gives byte-identical files (stable cell and
widget ids, PNGs without metadata, and cells tagged ``measured``, such as timings, keeping their
committed measurement while they are unchanged), and a change to one cell changes only the lines
of that cell.
"""

import copy
import tempfile
from pathlib import Path
from typing import Any

import nbformat
from nbformat import NotebookNode

from course_build.authoring.execute import execute_notebook
from course_build.authoring.exercise_cells import cells_using_answers
from course_build.authoring.quiz_outputs import stale_quiz
from course_build.authoring.saved_widgets import (
    WIDGET_STATE,
    WIDGET_VIEW,
    prepare_saved_widgets,
    reachable_models,
    widget_state,
)
from course_build.authoring.source import PROVENANCE_CELL_ID, build_source_notebook
from course_build.cell_roles import is_graded
from course_build.nbgrader_runner import make_course_dir, run_nbgrader
from course_build.paths import (
    REPO_ROOT,
    nbgrader_source_notebook,
    solution_notebook,
    student_notebook,
)

# A cell whose output is a measurement (a timing) carries this tag in its lesson source. Its
# output differs on every run, so regeneration keeps the committed measurement while the lesson's
# measured cells are unchanged (their ids are hashes of their content): the same source then
# gives the same bytes. Editing a measured cell, or deleting the notebook, measures again.
MEASURED = "measured"


def write_notebook(notebook: NotebookNode, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, path)


def release_notebooks(sources: dict[str, NotebookNode]) -> dict[str, NotebookNode]:
    """nbgrader's student versions (``generate_assignment``) of lessons' source notebooks, made by
    one nbgrader run (each run costs seconds of start-up)."""
    with tempfile.TemporaryDirectory(prefix="course-release-") as tmp:
        course = make_course_dir(Path(tmp), sources)
        run_nbgrader(course, "generate_assignment", "*", "--force")
        return {
            lesson: nbformat.read(course / "release" / lesson / f"{lesson}.ipynb", as_version=4)
            for lesson in sources
        }


def _measured_ids(notebook: NotebookNode) -> list[str]:
    return [
        cell.id
        for cell in notebook.cells
        if cell.cell_type == "code" and MEASURED in cell.metadata.get("tags", [])
    ]


def with_previous_measurements(executed: NotebookNode, previous: NotebookNode | None) -> NotebookNode:
    """``executed`` with the outputs of its ``measured`` cells (and the widget models they show)
    taken from ``previous``, the committed run, when that run has every one of those cells.

    Several measured cells of a lesson usually show the same measurement (a plot and a table), so
    they are kept or refreshed together.
    """
    measured = _measured_ids(executed)
    old_cells = {cell.id: cell for cell in previous.cells} if previous is not None else {}
    if not measured or not all(cell_id in old_cells for cell_id in measured):
        return executed
    notebook = copy.deepcopy(executed)
    old_models = widget_state(previous)
    new_models = notebook.metadata.setdefault("widgets", {}).setdefault(WIDGET_STATE, {"state": {}})["state"]
    for cell in notebook.cells:
        if cell.id in measured:
            cell.outputs = copy.deepcopy(old_cells[cell.id].outputs)
            shown = [
                o["data"][WIDGET_VIEW]["model_id"] for o in cell.outputs if WIDGET_VIEW in o.get("data", {})
            ]
            for model_id in reachable_models(old_models, shown):
                new_models[model_id] = copy.deepcopy(old_models[model_id])
    return notebook


def student_view(release: NotebookNode) -> NotebookNode:
    """nbgrader's release as students get it: without the course authors' provenance note."""
    student = copy.deepcopy(release)
    student.cells = [cell for cell in student.cells if cell.get("id") != PROVENANCE_CELL_ID]
    return student


def student_with_outputs(release: NotebookNode, executed: NotebookNode) -> NotebookNode:
    """The student notebook: the release carrying the executed solution's outputs, except in
    exercise and test cells and in the cells that use an exercise's answer (they would show the
    solution's results beside a stub). Saved widgets get a static picture for untrusted views."""
    student = student_view(release)
    executed_cells = {cell.id: cell for cell in executed.cells}
    # Found on the executed source: the release no longer has the solution regions to follow.
    withheld = {executed.cells[i].id for i in cells_using_answers(executed.cells)}
    for cell in student.cells:
        if cell.cell_type != "code":
            continue
        ran = executed_cells[cell.id]
        if is_graded(cell) or cell.id in withheld:
            cell.outputs, cell.execution_count = [], None
        else:
            cell.outputs, cell.execution_count = copy.deepcopy(ran.outputs), ran.execution_count
    if "widgets" in executed.metadata:
        student.metadata["widgets"] = copy.deepcopy(executed.metadata["widgets"])
    prepare_saved_widgets(student, snapshots=True)
    return student


def regenerate(lesson: str) -> None:
    """Write all three artifacts of ``lesson`` (executes the lesson: seconds to a minute)."""
    source = build_source_notebook(lesson)
    write_notebook(source, nbgrader_source_notebook(lesson))
    executed = execute_notebook(copy.deepcopy(source))
    # The kernel wrote its own language_info (this machine's Python); keep the course's.
    executed.metadata["language_info"] = copy.deepcopy(source.metadata["language_info"])
    executed = with_previous_measurements(executed, _read(solution_notebook(lesson)))
    prepare_saved_widgets(executed, snapshots=False)
    write_notebook(executed, solution_notebook(lesson))
    release = release_notebooks({lesson: source})[lesson]
    write_notebook(student_with_outputs(release, executed), student_notebook(lesson))


def _structure(notebook: NotebookNode) -> dict[str, Any]:
    """What a notebook says, without what running it produced (outputs, counts, widget state)."""
    return {
        "metadata": {k: v for k, v in notebook.metadata.items() if k != "widgets"},
        "cells": [
            {"type": c.cell_type, "id": c.get("id"), "source": c.source, "metadata": c.metadata}
            for c in notebook.cells
        ],
    }


def _read(path: Path) -> NotebookNode | None:
    return nbformat.read(path, as_version=4) if path.is_file() else None


def stale_artifacts(sources: dict[str, NotebookNode]) -> list[str]:
    """Reasons the lessons' generated files differ from what their sources (lesson -> source
    notebook, ``build_source_notebook``) and quiz files make; empty: in sync."""
    problems = []
    releases = release_notebooks(sources)
    for lesson, source in sources.items():
        expected = {
            nbgrader_source_notebook(lesson): source,
            solution_notebook(lesson): source,
            student_notebook(lesson): student_view(releases[lesson]),
        }
        for path, wanted in expected.items():
            shown = path.relative_to(REPO_ROOT)
            found = _read(path)
            if found is None:
                problems.append(f"{shown} is missing")
            elif _structure(found) != _structure(wanted):
                problems.append(f"{shown} is stale: its cells differ from lessons/{lesson}.md")
            elif path != nbgrader_source_notebook(lesson):  # the two notebooks that keep outputs
                quiz_file = f"transformer_course/quizzes/{lesson}.yaml"
                problems += [f"{shown} is stale: {why} in {quiz_file}" for why in stale_quiz(lesson, found)]
        solutions = _read(solution_notebook(lesson))
        if solutions is not None:
            unrun = [c.id for c in solutions.cells if c.cell_type == "code" and c.execution_count is None]
            if unrun:
                problems.append(f"solutions/{lesson}.ipynb has cells that never ran: {unrun[:5]}")
    return problems
