"""The course's nbgrader preprocessors, named in ``autograder/nbgrader_config.py``.

Sanitizing (before a submission runs): ``RestoreGradedCells`` puts the released graded cells back
(``course_build.restore_cells``), ``NeutralizeTampering`` removes statements that tamper with
grading (``course_build.tamper_scan``). Grading (after it ran): ``StderrDoesNotFail`` keeps a
warning from zeroing a test that passed. Each leaves notes for the instructor in the notebook.
"""

import os

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from course_build.grader_notes import add_note, is_test_cell
from course_build.restore_cells import restore_structure
from course_build.tamper_scan import neutralize, scan


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
        for note in notes:
            add_note(repaired, note)
        return repaired, resources


class NeutralizeTampering(NbGraderPreprocessor):
    """Replace statements that tamper with grading by a comment; the rest is graded as usual."""

    def preprocess_cell(self, cell, resources, index):
        locked = cell.metadata.get("nbgrader", {}).get("locked")
        if cell.cell_type != "code" or locked or cell.source in self._untouched:
            return cell, resources
        findings = scan(cell.source)
        if findings:
            cell.source = neutralize(cell.source, findings)
            label = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell {index}"
            for finding in findings:
                self._notes.append(f"{label}: removed a statement that {finding.reason}")
        return cell, resources

    def preprocess(self, nb, resources):
        release = _release_notebook(self, resources)
        self._untouched = {c.source for c in release.cells if c.cell_type == "code"}
        self._notes = []
        nb, resources = super().preprocess(nb, resources)
        for note in self._notes:
            add_note(nb, note)
        return nb, resources


class StderrDoesNotFail(NbGraderPreprocessor):
    """A test cell that passed keeps its points even if the code it called printed a warning.

    nbgrader scores a test cell 0 when anything reached stderr. The tests' assertions decide
    here: stderr text of a test cell without an error is shown as ordinary output, with a note.
    Tests that must forbid warnings check for them explicitly (``warnings.catch_warnings``).
    """

    def preprocess_cell(self, cell, resources, index):
        if not is_test_cell(cell):
            return cell, resources
        outputs = cell.get("outputs", [])
        if any(o.output_type == "error" for o in outputs):
            return cell, resources
        for output in outputs:
            if output.output_type == "stream" and output.name == "stderr":
                output.name = "stdout"
                if not self._first_line:
                    lines = output.text.strip().splitlines()
                    self._first_line = lines[0].split(": ", 1)[-1][:120] if lines else ""
                self._cells.append(cell.metadata["nbgrader"]["grade_id"])
        return cell, resources

    def preprocess(self, nb, resources):
        self._cells, self._first_line = [], ""
        nb, resources = super().preprocess(nb, resources)
        if self._cells:
            cells = ", ".join(dict.fromkeys(self._cells))
            add_note(nb, f"passing tests wrote to stderr, not penalized ({cells}): {self._first_line}")
        return nb, resources
