"""Build student submissions from a lesson's notebooks, for grading tests and benchmarks."""

import nbformat
from nbformat import NotebookNode

from course_build.paths import nbgrader_source_notebook, student_notebook
from course_build.source import graded_cells


def solution_answers(lesson: str) -> dict[str, str]:
    """grade_id -> reference source, for every answer cell (code and written) of the lesson."""
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    return {
        grade_id: cell.source
        for grade_id, cell in graded_cells(source).items()
        if cell.metadata["nbgrader"]["solution"]
    }


def make_submission(lesson: str, answers: dict[str, str]) -> NotebookNode:
    """The student notebook with the answer cells named in ``answers`` filled in, the rest blank."""
    notebook = nbformat.read(student_notebook(lesson), as_version=4)
    cells = graded_cells(notebook)
    for grade_id, source in answers.items():
        cell = cells.get(grade_id)
        if cell is None or not cell.metadata["nbgrader"]["solution"]:
            known = sorted(g for g, c in cells.items() if c.metadata["nbgrader"]["solution"])
            raise KeyError(f"{lesson} has no answer cell {grade_id!r}; its answer cells: {known}")
        cell.source = source
    return notebook
