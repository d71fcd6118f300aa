"""The course's sanitizing preprocessor, named in ``autograder/nbgrader_config.py``.

``RestoreGradedCells`` runs before a submission is executed: it puts the released graded cells back
(``course_build.restore_cells``: deleted or re-tagged test cells return, as nbgrader intends) and
leaves a note for the instructor for each repair. The student's own code is never changed.
"""

import os

import nbformat
from nbgrader.coursedir import CourseDirectory
from nbgrader.preprocessors import NbGraderPreprocessor

from course_build.grader_notes import add_note
from course_build.restore_cells import restore_structure


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
