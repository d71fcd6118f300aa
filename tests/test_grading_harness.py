"""The grading harness's courses: one ``generate_assignment`` per lesson per test run, copied for
each batch, and every copy a course of its own (its gradebook, its grades)."""

import sqlite3
from pathlib import Path

import pytest
from grading_harness import make_submission, prepare_course, solution_answers, write_submissions
from nbgrader.api import Gradebook

from course_build.instructor.grade_batch import grade_lesson

LESSON = "01_sequence_problem"  # the lesson with the fewest test cells


def _submissions(gradebook: Path) -> list[str]:
    with sqlite3.connect(gradebook) as db:
        return [student for (student,) in db.execute("SELECT student_id FROM submitted_assignment")]


@pytest.mark.slow
def test_two_batches_get_independent_copies_of_one_generated_course(tmp_path, course_templates):
    first = prepare_course(tmp_path / "first", LESSON)
    second = prepare_course(tmp_path / "second", LESSON)
    assert (course_templates / LESSON / "course" / "gradebook.db").is_file()  # generated once, here
    for name in ("gradebook.db", f"release/{LESSON}/{LESSON}.ipynb", f"source/{LESSON}/{LESSON}.ipynb"):
        assert (first / name).read_bytes() == (second / name).read_bytes()  # copies of one generation

    with Gradebook(f"sqlite:///{first / 'gradebook.db'}") as gradebook:
        gradebook.add_student("only_in_first")
    with Gradebook(f"sqlite:///{second / 'gradebook.db'}") as gradebook:
        assert [student.id for student in gradebook.students] == []

    submissions = {"solution": make_submission(LESSON, solution_answers(LESSON))}
    write_submissions(second, LESSON, submissions)
    report = grade_lesson(second, LESSON, submissions, jobs=1)["solution"]
    assert report.auto_max > 0
    assert report.auto_total == report.auto_max
    assert _submissions(second / "gradebook.db") == ["solution"]
    assert _submissions(first / "gradebook.db") == []
    assert _submissions(course_templates / LESSON / "course" / "gradebook.db") == []
