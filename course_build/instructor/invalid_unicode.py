"""A submission whose cells hold text that is not valid Unicode: graded by hand, never guessed at.

A notebook's JSON may carry a lone surrogate (``"\\ud800"``) in a cell's text. No editor writes
one; a file edited by hand or forged does. Python cannot run such a cell (compiling needs UTF-8)
and nbgrader cannot store it (its files and gradebook are UTF-8): grading the file as it is
stopped that student's run and left a zero.

A zero would be a verdict the grader cannot justify, and changing the text would grade code the
student did not write. So, before nbgrader runs (``submitted_folders.normalize_submission``):

* the submitted file is kept byte for byte as ``<lesson>.ipynb.submitted``;
* nbgrader gets a copy in which each such character is written as its escape (``\\ud800``), so the
  formgrader can show the notebook and the autograder's verdicts are there to look at;
* after autograding, every autograded cell of that student waits for a grade given by hand
  (``send_to_hand_grading``): none of the copy's scores counts until the instructor decides, and a
  grade given by hand stays through regrades.

The note for the instructor says which cells, and why.
"""

from pathlib import Path

from nbformat import NotebookNode
from nbgrader.api import Grade

from course_build.grader_notes import encodable, is_valid_unicode
from course_build.instructor.code_grades import change_code_grades


def cells_not_unicode(notebook: NotebookNode) -> list[int]:
    """Indexes of the cells whose text (source) is not valid Unicode."""
    return [
        index
        for index, cell in enumerate(notebook.cells)
        if isinstance(cell.get("source"), str) and not is_valid_unicode(cell.source)
    ]


def escape_cells(notebook: NotebookNode, indexes: list[int]) -> None:
    """Write, in place, each character of the cells at ``indexes`` that UTF-8 cannot hold as its
    escape (``\\ud800``)."""
    for index in indexes:
        notebook.cells[index].source = encodable(notebook.cells[index].source)


def hand_grading_note(indexes: list[int], kept_as: str) -> str:
    """The instructor's note on a submission graded by hand for this reason."""
    cells = ", ".join(str(index) for index in indexes)
    plural = len(indexes) > 1
    which = f"cell{'s' if plural else ''} {cells} of the notebook hold{'' if plural else 's'}"
    return (
        f"{which} text that is not valid "
        "Unicode (a lone surrogate), which Python cannot run and nbgrader cannot store: a copy with "
        "those characters written as escapes (\\ud800) was autograded for you to look at, and every "
        f"autograded cell waits for your grade in the formgrader; the submitted file is kept unchanged "
        f"as {kept_as}"
    )


def send_to_hand_grading(course: Path, lesson: str, student: str) -> None:
    """Flag every autograded cell of ``student``'s notebook as waiting for a grade given by hand,
    except those the instructor has already graded by hand (their grade counts)."""

    def wait_for_the_instructor(grade: Grade) -> None:
        if grade.manual_score is None:
            grade.needs_manual_grade = True

    change_code_grades(course, lesson, student, wait_for_the_instructor)
