"""Change, in the gradebook, the grades of one student's autograded cells.

Two steps of grading overrule the autograder's verdicts after it ran: a notebook whose run never
ended scores zero (``grade_batch``), and one graded from an escaped copy waits for the instructor
(``invalid_unicode``). Both go through ``change_code_grades``.
"""

from collections.abc import Callable
from pathlib import Path

from nbgrader.api import Grade, Gradebook, MissingEntry


def change_code_grades(course: Path, lesson: str, student: str, change: Callable[[Grade], None]) -> None:
    """Apply ``change`` to the grade of every autograded (code) cell of ``student``'s notebook of
    ``lesson``, and save; nothing when the gradebook has no such submission."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        try:
            grades = gradebook.find_submission_notebook(lesson, lesson, student).grades
        except MissingEntry:
            return
        for grade in grades:
            if grade.cell_type == "code":
                change(grade)
        gradebook.db.commit()
