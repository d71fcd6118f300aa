"""Give a submitted notebook back the graded structure of the released one.

Students delete, copy, move and re-tag cells, by accident or not. nbgrader 0.9.6 restores the
source of locked cells and their points, but not a test cell that was deleted (it scores 0 even
for correct code), nor a test cell re-tagged as an answer (it becomes a manual grade), and it
re-inserts cells by the gradebook's unordered list. Here the released notebook is the reference:

* every graded or locked cell of the release (an *anchor*) appears exactly once, in the release's
  order, with the release's nbgrader metadata and cell type; a missing test cell or written-answer
  cell is re-inserted from the release (nbgrader then puts the hidden tests back); a missing
  code answer is not re-inserted, so a stub cannot overwrite an answer the student moved;
* the student's own cells stay where they were, after the anchor they followed;
* a cell claiming an unknown or repeated ``grade_id`` becomes an ordinary cell.

``RestoreGradedCells``, a sanitizing step named in ``autograder/nbgrader_config.py``, does this
before a submission is executed and leaves a note for the instructor for each repair. The student's
own code is never changed.
"""

import copy
import os

import nbformat
from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from course_build.cell_roles import (
    grade_id,
    is_answer,
    is_code_answer,
    is_graded,
    is_locked,
    nbgrader_metadata,
)
from course_build.nbgrader_plugins.run_notes import notes_for


def _is_anchor(cell: NotebookNode) -> bool:
    return is_graded(cell) or is_locked(cell)


def _as_release(student_cell: NotebookNode, release_cell: NotebookNode) -> NotebookNode:
    """The student's cell with the release's type and metadata; answers keep the student's text."""
    restored = copy.deepcopy(release_cell)
    if is_answer(release_cell):
        restored.source = student_cell.source
    if restored.cell_type == "code" and student_cell.cell_type == "code":
        restored.outputs = student_cell.get("outputs", [])
    return restored


def restore_structure(submitted: NotebookNode, release: NotebookNode) -> tuple[NotebookNode, list[str]]:
    """``submitted`` rebuilt on the release's graded cells, and notes on what was repaired."""
    submitted = copy.deepcopy(submitted)
    anchors = {grade_id(c): c for c in release.cells if _is_anchor(c) and grade_id(c)}
    order = list(anchors)
    notes: list[str] = []
    leading: list[NotebookNode] = []
    found: dict[str, NotebookNode] = {}
    followers: dict[str, list[NotebookNode]] = {anchor: [] for anchor in order}
    seen_order: list[str] = []
    current: list[NotebookNode] = leading
    for cell in submitted.cells:
        claimed = grade_id(cell) if "nbgrader" in cell.metadata else None
        if "nbgrader" in cell.metadata and (claimed not in anchors or claimed in found):
            why = "a repeated" if claimed in found else "an unknown"
            notes.append(f"a cell claiming {why} grade_id {claimed!r} was graded as an ordinary cell")
            cell = copy.deepcopy(cell)
            del cell.metadata["nbgrader"]
            current.append(cell)
            continue
        if claimed is None:
            current.append(cell)
            continue
        release_cell = anchors[claimed]
        changed = nbgrader_metadata(cell) != nbgrader_metadata(release_cell)
        if changed or cell.cell_type != release_cell.cell_type:
            notes.append(f"{claimed}: its cell type or nbgrader metadata had been changed; restored")
        elif is_locked(release_cell) and cell.source != release_cell.source:
            notes.append(f"{claimed}: the locked cell had been edited; restored")
        found[claimed] = _as_release(cell, release_cell)
        seen_order.append(claimed)
        current = followers[claimed]
    if [g for g in order if g in found] != seen_order:
        notes.append("graded cells had been moved; they were put back in the released order")
    cells = list(leading)
    for anchor in order:
        if anchor in found:
            cells.append(found[anchor])
        elif is_code_answer(anchors[anchor]):
            notes.append(f"{anchor}: the answer cell was missing")
        else:
            cells.append(copy.deepcopy(anchors[anchor]))
            notes.append(f"{anchor}: the cell was missing and was restored from the release")
        cells.extend(followers[anchor])
    _unique_cell_ids(cells)
    submitted.cells = cells
    return submitted, notes


def _unique_cell_ids(cells: list[NotebookNode]) -> None:
    """Copied cells share an id; nbformat needs them unique."""
    used: set[str] = set()
    for index, cell in enumerate(cells):
        if "id" not in cell:
            continue
        if cell.id in used:
            cell.id = f"{cell.id[:50]}-{index}"
        used.add(cell.id)


def _release_notebook(preprocessor: NbGraderPreprocessor, resources: dict) -> nbformat.NotebookNode:
    """The released version of the notebook being graded (``release/<assignment>/<nb>.ipynb``)."""
    coursedir = CourseDirectory(config=preprocessor.config)
    info = resources["nbgrader"]
    folder = coursedir.format_path(coursedir.release_directory, ".", info["assignment"])
    path = os.path.join(folder, f"{info['notebook']}.ipynb")
    if not os.path.isfile(path):
        raise FileNotFoundError(f"{path} is missing: run `nbgrader generate_assignment {info['assignment']}`")
    return nbformat.read(path, as_version=4)


class RestoreGradedCells(NbGraderPreprocessor):
    """Rebuild the submission on the release's graded cells (deleted tests come back)."""

    def preprocess(self, nb, resources):
        repaired, notes = restore_structure(nb, _release_notebook(self, resources))
        grader_notes = notes_for(self, resources)
        for note in notes:
            grader_notes.add(note)
        return repaired, resources
