"""The first step of grading a submission: start the grader's notes, make its metadata well-typed.

A submitted notebook's metadata is the student's, to fill with anything: notes of its own
(``course_grader_notes``, the key the grader once used), or a list where nbgrader and nbconvert
expect a dictionary, which used to crash grading (nbconvert's ``ClearOutput`` pops keys from
every cell's metadata). ``CleanSubmissionMetadata``, the first sanitizing step named in
``autograder/nbgrader_config.py``, begins this run's notes (``course_build.grader_notes``: they come
only from the grader) and gives the notebook, and each cell, metadata of the types nbgrader reads:

* notebook or cell metadata that is not a dictionary is replaced by an empty one;
* nbgrader metadata that is not a dictionary is removed, so the cell is an ordinary cell (a test
  cell it was is then restored from the release by ``RestoreGradedCells``);
* a cell whose source is not text gets an empty source, an entry of ``cells`` that is not a cell
  is dropped;
* text in metadata that is not valid Unicode (a lone surrogate, which JSON can carry but no file can
  be written with) is escaped;
* the notebook's own ``course_grader_notes`` is removed: it is never read as notes; so is a cell's
  ``course_grader_guide`` (the formgrader would show that cell as the grader's model answer).

Each repair is noted for the instructor. The student's code (any cell's text) is never changed.
"""

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from course_build.grader_notes import encodable, is_valid_unicode
from course_build.nbgrader_plugins.grader_guide import GUIDE_KEY
from course_build.nbgrader_plugins.run_notes import notes_for

FORGED_NOTES_KEY = "course_grader_notes"


def clean_metadata(notebook: NotebookNode) -> list[str]:
    """Give ``notebook`` (changed in place) metadata of the types nbgrader reads; return notes."""
    notes = []
    if not isinstance(notebook.get("metadata"), dict):
        notebook.metadata = NotebookNode()
        notes.append("the notebook's metadata was not a dictionary; it was ignored")
    if FORGED_NOTES_KEY in notebook.metadata:
        del notebook.metadata[FORGED_NOTES_KEY]
        notes.append(
            f"the notebook's metadata held {FORGED_NOTES_KEY!r}; ignored (notes come only from the grader)"
        )
    if _escape_surrogates(notebook.metadata):
        notes.append("the notebook's metadata held text that is not valid Unicode; it was escaped")
    cells = notebook.get("cells")
    if not isinstance(cells, list):
        notebook.cells = []
        notes.append("the notebook's cells were not a list; graded as a notebook without cells")
        return notes
    kept = [cell for cell in cells if isinstance(cell, dict)]
    if len(kept) < len(cells):
        notes.append(f"{len(cells) - len(kept)} entries of the notebook's cells were not cells; ignored")
    for index, cell in enumerate(kept):
        notes += [f"cell {index}: {problem}" for problem in _clean_cell(cell)]
    notebook.cells = kept
    return notes


def _clean_cell(cell: NotebookNode) -> list[str]:
    problems = []
    if not isinstance(cell.get("metadata"), dict):
        cell.metadata = NotebookNode()
        problems.append("its metadata was not a dictionary; it was ignored")
    if "nbgrader" in cell.metadata and not isinstance(cell.metadata.nbgrader, dict):
        del cell.metadata["nbgrader"]
        problems.append("its nbgrader metadata was not a dictionary; graded as an ordinary cell")
    if _escape_surrogates(cell.metadata):
        problems.append("its metadata held text that is not valid Unicode; it was escaped")
    if GUIDE_KEY in cell.metadata:
        del cell.metadata[GUIDE_KEY]
        problems.append(f"its metadata held {GUIDE_KEY!r} (the formgrader's guide for graders); ignored")
    if not isinstance(cell.get("source", ""), str):
        cell.source = ""
        problems.append("its source was not text; graded as an empty cell")
    return problems


def _escape_surrogates(root: dict) -> bool:
    """Escape, in place, every string in ``root`` (keys too, at any depth) that is not valid
    Unicode; whether there was one. Walks with its own stack: metadata may nest deeper than
    Python's recursion limit allows."""
    changed, stack = False, [root]
    while stack:
        node = stack.pop()
        entries = list(node.items()) if isinstance(node, dict) else list(enumerate(node))
        for key, value in entries:
            if isinstance(value, str) and not is_valid_unicode(value):
                value = node[key] = encodable(value)
                changed = True
            elif isinstance(value, dict | list):
                stack.append(value)
            if isinstance(key, str) and not is_valid_unicode(key):
                node[encodable(key)] = node.pop(key)
                changed = True
    return changed


class CleanSubmissionMetadata(NbGraderPreprocessor):
    """Begin the run's notes; make the submission's metadata well-typed (see the module docstring)."""

    def preprocess(self, nb, resources):
        notes = notes_for(self, resources)
        notes.start_run()
        for note in clean_metadata(nb):
            notes.add(note)
        return nb, resources
