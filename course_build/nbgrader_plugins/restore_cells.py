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
import shutil
from collections.abc import Sequence
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor, OverwriteCells

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


def _same_role(cell: NotebookNode, release_cell: NotebookNode) -> bool:
    """Whether ``cell`` has the release cell's type and nbgrader metadata (its checksum aside: that
    follows the source, compared on its own)."""

    def role(c: NotebookNode) -> dict:
        return {key: value for key, value in nbgrader_metadata(c).items() if key != "checksum"}

    return cell.cell_type == release_cell.cell_type and role(cell) == role(release_cell)


def restore_structure(
    submitted: NotebookNode, release: NotebookNode, earlier: Sequence[NotebookNode] = ()
) -> tuple[NotebookNode, list[str]]:
    """``submitted`` rebuilt on the release's graded cells, and notes on what was repaired.

    ``earlier`` are releases handed out before this one (kept by ``course_build.regrade`` when a
    test was fixed): a locked cell as one of them released it was not edited by the student.
    """
    submitted = copy.deepcopy(submitted)
    anchors = {grade_id(c): c for c in release.cells if _is_anchor(c) and grade_id(c)}
    earlier_anchors = [{grade_id(c): c for c in nb.cells if _is_anchor(c) and grade_id(c)} for nb in earlier]
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
        handed_out = [release_cell, *(e[claimed] for e in earlier_anchors if claimed in e)]
        if not any(_same_role(cell, version) for version in handed_out):
            notes.append(f"{claimed}: its cell type or nbgrader metadata had been changed; restored")
        elif is_locked(release_cell) and all(cell.source != version.source for version in handed_out):
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


def earlier_releases_dir(course: Path | str, lesson: str) -> Path:
    """Where ``course_build.regrade`` keeps the releases a lesson had before it was regenerated."""
    return Path(course) / "earlier_releases" / lesson


def keep_release(course: Path, lesson: str) -> None:
    """Keep the lesson's current release before ``nbgrader generate_assignment --force`` replaces it
    (students who worked from it are then not told they edited a test cell that was fixed since)."""
    release = course / "release" / lesson / f"{lesson}.ipynb"
    if not release.is_file():
        return
    folder = earlier_releases_dir(course, lesson)
    kept = list(folder.glob(f"*-{lesson}.ipynb"))
    if any(path.read_bytes() == release.read_bytes() for path in kept):
        return
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(release, folder / f"{len(kept) + 1:03d}-{lesson}.ipynb")  # in the order handed out


def _earlier_releases(preprocessor: NbGraderPreprocessor, resources: dict) -> list[NotebookNode]:
    coursedir = CourseDirectory(config=preprocessor.config)
    info = resources["nbgrader"]
    kept = sorted(
        earlier_releases_dir(coursedir.root, info["assignment"]).glob(f"*-{info['notebook']}.ipynb")
    )
    return [nbformat.read(path, as_version=4) for path in kept]


class RestoreGradedCells(NbGraderPreprocessor):
    """Rebuild the submission on the release's graded cells (deleted tests come back)."""

    def preprocess(self, nb, resources):
        repaired, notes = restore_structure(
            nb, _release_notebook(self, resources), _earlier_releases(self, resources)
        )
        grader_notes = notes_for(self, resources)
        for note in notes:
            grader_notes.add(note)
        return repaired, resources


class PutBackHiddenTests(OverwriteCells):
    """nbgrader's ``OverwriteCells``, without its warning for each hidden test it puts back.

    The release's test cells lack their hidden tests, so every such cell of every submission has
    another checksum than the source's, and nbgrader warns "Attribute 'checksum' for cell ... has
    changed!" while restoring the source, as it must: about twenty lines per student, none of them
    news. ``RestoreGradedCells`` runs first and has already rebuilt each locked cell on the release
    and noted any real edit, so here a checksum change is only that restoration and is logged at
    debug level. Every other change nbgrader reports (type, locked, points) still warns.
    """

    def report_change(self, name: str, attr: str, old: object, new: object) -> None:
        if attr == "checksum":
            self.log.debug("Put back the hidden tests of cell %s", name)
        else:
            super().report_change(name, attr, old, new)
