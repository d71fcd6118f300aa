"""Dropping and restoring a student (fast: a real gradebook, no kernel).

Dropping keeps every file and grade; the grade sheet marks the student's rows "dropped" and the
lesson table leaves them out of its rows and counts; restoring brings them back as they were.
A student removed from the gradebook by nbgrader itself no longer stops the feedback.
"""

import json
import warnings

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_build import roster
from course_build.instructor.dropped import RosterError, dropped_students, restore
from course_build.instructor.grade_batch import _graded_but_not_in_gradebook
from course_build.instructor.grade_sheet import lesson_table, sheet_row
from course_build.instructor.late_policy import LatePolicy
from course_build.instructor.results import class_results

LESSON = "L01"
STUDENTS = (("ada", "Ada Lovelace", "101"), ("bob", "Bob", "102"), ("bob-u103", "Bob", "103"))


@pytest.fixture
def course(tmp_path):
    course = tmp_path / "autograder"
    (course / "source" / LESSON).mkdir(parents=True)
    (course / "nbgrader_config.py").write_text("c = get_config()\n")
    meta = {"nbgrader": {"grade_id": "t1", "grade": True, "solution": False, "points": 2}}
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("assert True", metadata=meta)])
    nbformat.write(notebook, course / "source" / LESSON / f"{LESSON}.ipynb")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on add_submission
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            gradebook.add_assignment(LESSON)
            gradebook.add_notebook(LESSON, LESSON)
            gradebook.add_grade_cell("t1", LESSON, LESSON, max_score=2, cell_type="code")
            for student, name, user_id in STUDENTS:
                gradebook.add_student(student, last_name=name, lms_user_id=user_id)
                gradebook.add_submission(LESSON, student)
                grade = gradebook.find_grade("t1", LESSON, LESSON, student)
                grade.auto_score, grade.needs_manual_grade = 2.0, False
                gradebook.db.commit()
    return course


def _run(capsys, course, *args):
    code = roster.main([*args, "--course", str(course)])
    return code, capsys.readouterr().out


def _rows(course):
    return {r.student: r for r in class_results(course, LatePolicy())}


def test_a_dropped_student_keeps_their_grades_and_the_sheet_says_so(course, capsys):
    gradebook_before = (course / "gradebook.db").read_bytes()
    code, out = _run(capsys, course, "drop", "Ada Lovelace", "--reason", "withdrew 2026-11-02")
    assert code == 0 and "dropped ada" in out
    assert (course / "gradebook.db").read_bytes() == gradebook_before
    rows = _rows(course)
    assert sheet_row(rows["ada"])["status"] == "dropped: withdrew 2026-11-02"
    assert sheet_row(rows["ada"])["auto_score"] == "2"  # the grade is kept
    assert sheet_row(rows["bob"])["status"] == "complete"
    table = lesson_table(list(rows.values()))
    assert not any(line.startswith("ada") for line in table.splitlines())
    assert "2 student(s); not counted, dropped from the course: ada (withdrew 2026-11-02)" in table
    code, out = _run(capsys, course, "list")
    ada = next(line for line in out.splitlines() if line.startswith("ada"))
    assert ada.startswith("ada  Ada Lovelace  (LMS user id 101)  dropped since ") and ada.endswith(
        ": withdrew 2026-11-02"
    )
    assert "bob  Bob  (LMS user id 102)  enrolled" in out


def test_restoring_brings_the_student_back_and_the_history_is_kept(course, capsys):
    _run(capsys, course, "drop", "101")
    assert _run(capsys, course, "drop", "ada")[1].startswith("ada was already dropped")
    code, out = _run(capsys, course, "restore", "ada")
    assert code == 0 and "restored ada" in out
    assert dropped_students(course) == {} and sheet_row(_rows(course)["ada"])["status"] == "complete"
    events = json.loads((course / "roster.json").read_text())["events"]
    assert [(e["action"], e["student"]) for e in events] == [("drop", "ada"), ("restore", "ada")]


@pytest.mark.parametrize(
    "args, message",
    [
        (("drop", "zoe"), "no student 'zoe' in the gradebook"),
        (("drop", "Bob"), "'Bob' names 2 students (bob, bob-u103): give the student id"),
        (("restore", "bob"), "bob is not dropped"),
    ],
)
def test_a_wrong_student_is_one_clear_line(course, capsys, args, message):
    with pytest.raises(SystemExit) as stopped:
        roster.main([*args, "--course", str(course)])
    err = capsys.readouterr().err
    assert stopped.value.code == 2 and err.count("\n") == 1 and message in err, err
    assert not (course / "roster.json").exists()


def test_a_damaged_roster_file_is_one_clear_error(course):
    (course / "roster.json").write_text("{not json")
    with pytest.raises(RosterError, match="roster.json cannot be read"):
        restore(course, "ada")


def test_a_student_removed_from_the_gradebook_is_left_out_of_the_feedback(course):
    for student, _, _ in STUDENTS:
        (course / "autograded" / student / LESSON).mkdir(parents=True)
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        gradebook.remove_student("bob")  # what nbgrader db student remove --force does
    assert _graded_but_not_in_gradebook(course, LESSON) == ["bob"]
    assert set(_rows(course)) == {"ada", "bob-u103"}
