"""What a notebook cell is to nbgrader, read in one place.

nbgrader keeps a cell's role in ``cell.metadata["nbgrader"]``: ``solution`` (the student writes
it), ``grade`` (it scores ``points``), ``locked`` (the student may not change it) and the cell's
``grade_id``. Their combinations are the roles the course talks about:

* a *code answer*: a code cell with ``solution`` (a function to write or a value to give);
* a *written answer*: a Markdown cell with ``solution`` and ``grade``, graded by hand;
* a *test cell*: a code cell with ``grade`` and no ``solution``, autograded.

The authoring pipeline, the nbgrader plugins and the grading commands all ask here, so a change in
how nbgrader marks a role (or in what the course counts as one) is made once.
"""

from typing import Any

from nbformat import NotebookNode


def nbgrader_metadata(cell: NotebookNode) -> dict[str, Any]:
    """The cell's nbgrader metadata (the dict itself, so changes stick), or {} for an ordinary cell.

    A submitted notebook's metadata is the student's: metadata of another type than nbgrader's
    (a list, a string) reads as none, so no reader of roles fails on it.
    """
    metadata = cell.get("metadata")
    nbgrader = metadata.get("nbgrader", {}) if isinstance(metadata, dict) else {}
    return nbgrader if isinstance(nbgrader, dict) else {}


def grade_id(cell: NotebookNode) -> str | None:
    """The cell's ``grade_id``; None where there is none, or it is not a string."""
    value = nbgrader_metadata(cell).get("grade_id")
    return value if isinstance(value, str) else None


def is_answer(cell: NotebookNode) -> bool:
    """A cell the student writes: a code answer or a written answer."""
    return bool(nbgrader_metadata(cell).get("solution"))


def scores_points(cell: NotebookNode) -> bool:
    """A cell with points of its own: a test cell or a written answer."""
    return bool(nbgrader_metadata(cell).get("grade"))


def is_locked(cell: NotebookNode) -> bool:
    return bool(nbgrader_metadata(cell).get("locked"))


def is_code_answer(cell: NotebookNode) -> bool:
    return cell.cell_type == "code" and is_answer(cell)


def is_written_answer(cell: NotebookNode) -> bool:
    return cell.cell_type == "markdown" and is_answer(cell) and scores_points(cell)


def is_test_cell(cell: NotebookNode) -> bool:
    """An autograded test: a code cell with points that is not a student's answer."""
    return cell.cell_type == "code" and scores_points(cell) and not is_answer(cell)


def is_graded(cell: NotebookNode) -> bool:
    """An answer or a cell with points: its outputs can show a solution's results."""
    return is_answer(cell) or scores_points(cell)
