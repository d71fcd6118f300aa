"""Grades given by hand survive a regrade.

nbgrader's autograde flags every grade that has a hand-given score as "needs manual grade" again,
even when the student's answer did not change, so after a regrade (the same zip again, or a fixed
checker) the formgrader and the grade sheet would count written answers already graded as pending.
Here the answers are read from the graded notebooks before the regrade overwrites them; afterwards
a hand-given grade whose answer is unchanged is marked reviewed again, and one whose answer changed
(a resubmission) stays flagged, with a note, so the grader looks at it again.
"""

from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.api import Gradebook, MissingEntry

from course_build.cell_roles import grade_id, is_answer, is_code_answer, scores_points
from course_build.grader_notes import NotebookNotes


def _graded_notebook(course: Path, lesson: str, student: str) -> Path:
    return course / "autograded" / student / lesson / f"{lesson}.ipynb"


def _answers(notebook: NotebookNode) -> dict[str, str]:
    """What each grade judges: a written answer's own text; for a test cell, all the code answers."""
    code = "\n".join(cell.source for cell in notebook.cells if is_code_answer(cell))
    return {
        grade_id(cell): cell.source if is_answer(cell) else code
        for cell in notebook.cells
        if scores_points(cell)
    }


def answers_before_regrade(course: Path, lesson: str, students: list[str]) -> dict[str, dict[str, str]]:
    """student -> grade id -> the answer it was graded on, for the students already graded."""
    before = {}
    for student in students:
        path = _graded_notebook(course, lesson, student)
        if path.is_file():
            before[student] = _answers(nbformat.read(path, as_version=4))
    return before


def keep_hand_grades(course: Path, lesson: str, before: dict[str, dict[str, str]]) -> None:
    """After ``nbgrader autograde``: clear the review flag of hand-given grades whose answer is
    unchanged since ``before``; note the others for the grader (``course_build.grader_notes``)."""
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        for student, old_answers in before.items():
            path = _graded_notebook(course, lesson, student)
            if not path.is_file():
                continue
            try:
                grades = gradebook.find_submission_notebook(lesson, lesson, student).grades
            except MissingEntry:
                continue
            notebook = nbformat.read(path, as_version=4)
            new_answers = _answers(notebook)
            changed = []
            for grade in grades:
                if grade.manual_score is None or not grade.needs_manual_grade:
                    continue
                if grade.name in old_answers and old_answers[grade.name] == new_answers.get(grade.name):
                    grade.needs_manual_grade = False
                else:
                    changed.append(grade.name)
            gradebook.db.commit()
            for name in changed:
                NotebookNotes(course, student, lesson).add(
                    f"{name}: the answer changed since it was graded by hand; review it in the "
                    "formgrader (the earlier points are not counted until then)"
                )
