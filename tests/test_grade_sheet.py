"""The grade sheet and the feedback summary read a real gradebook (no kernel, no autograde).

A small course with one lesson (a 2-point test cell, a 3-point written answer) and three students:
Ada's written answer waits for the grader, Bob never submitted, Cleo submitted two days late
under a per-day penalty. Pending points must never count or show as 0; a hand-given grade must
survive nbgrader flagging it again on a regrade unless the answer changed.
"""

import csv
import shutil
import warnings
from datetime import datetime, timedelta, timezone
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook

from course_build.grader_notes import NotebookNotes
from course_build.instructor import grade_batch
from course_build.instructor.grade_batch import write_feedback
from course_build.instructor.grade_sheet import lesson_table, sheet_row, status, write_sheet
from course_build.instructor.invalid_unicode import send_to_hand_grading
from course_build.instructor.late_policy import LatePolicy, LatePolicyError, assess
from course_build.instructor.manual_grades import answers_before_regrade, keep_hand_grades
from course_build.instructor.results import NO_SUBMISSION_NOTE, class_results
from course_build.instructor.student_records import StudentRecord, write_record
from course_build.nbgrader_plugins.feedback import cell_score_text, summary_rows
from course_build.paths import NBGRADER_CONFIG

LESSON = "L01"


def _notebook(answer: str, code: str = "x = 1") -> nbformat.NotebookNode:
    def meta(grade_id, **flags):
        return {"nbgrader": {"grade_id": grade_id, "grade": False, "solution": False, **flags}}

    return nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(code, metadata=meta("answer", solution=True)),
            nbformat.v4.new_code_cell("assert x == 1", metadata=meta("t1", grade=True, points=2)),
            nbformat.v4.new_markdown_cell(answer, metadata=meta("w1", grade=True, solution=True, points=3)),
        ]
    )


@pytest.fixture(scope="module")
def _course_template(tmp_path_factory):
    """The course, built once (a gradebook takes seconds to create); each test gets a copy."""
    course = tmp_path_factory.mktemp("template") / "course"
    nbformat.write(_notebook("*Model answer.* x"), _path(course / "source", "", create=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # nbgrader's own SQLAlchemy warnings on add_submission
        with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
            gradebook.add_assignment(LESSON)
            gradebook.add_notebook(LESSON, LESSON)
            gradebook.add_grade_cell("t1", LESSON, LESSON, max_score=2, cell_type="code")
            gradebook.add_grade_cell("w1", LESSON, LESSON, max_score=3, cell_type="markdown")
            gradebook.add_solution_cell("w1", LESSON, LESSON)
            gradebook.add_solution_cell("answer", LESSON, LESSON)
            for student, name in (("ada", "Ada"), ("bob", "Bob"), ("cleo", "Cleo")):
                gradebook.add_student(student, last_name=name, lms_user_id=name.lower())
            for student in ("ada", "cleo"):
                gradebook.add_submission(LESSON, student)
                _set(gradebook, student, "t1", auto=2.0)
                _set(gradebook, student, "w1", auto=None)
    write_record(course, LESSON, "ada", StudentRecord("Ada", "1", submitted_at="2026-10-12T20:00:00"))
    write_record(
        course, LESSON, "cleo", StudentRecord("Cleo", "3", late=True, submitted_at="2026-10-14T01:30:00")
    )
    for student in ("ada", "cleo"):
        nbformat.write(_notebook(f"{student}'s answer"), _path(course / "autograded", student, create=True))
    return course


@pytest.fixture
def course(_course_template, tmp_path):
    return Path(shutil.copytree(_course_template, tmp_path / "course"))


def _path(root, student, create=False):
    folder = root / student / LESSON if student else root / LESSON
    if create:
        folder.mkdir(parents=True, exist_ok=True)
    return folder / f"{LESSON}.ipynb"


def _set(gradebook, student, grade_id, auto=None, manual=None, review=None):
    grade = gradebook.find_grade(grade_id, LESSON, LESSON, student)
    grade.auto_score, grade.manual_score = auto, manual
    grade.needs_manual_grade = (auto is None and manual is None) if review is None else review
    gradebook.db.commit()


def _grade_by_hand(course, student, grade_id, points, comment=""):
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        _set(gradebook, student, grade_id, auto=None, manual=points, review=False)
        gradebook.find_comment(grade_id, LESSON, LESSON, student).manual_comment = comment
        gradebook.db.commit()


POLICY = LatePolicy(deadlines={LESSON: "2026-10-12T23:59"}, penalty_per_day=0.1, max_penalty=0.5)


def _results(course, policy=POLICY):
    return {r.student: r for r in class_results(course, policy)}


def test_pending_written_answers_are_neither_counted_nor_shown_as_zero(course):
    ada = _results(course)["ada"]
    assert (ada.auto_score, ada.auto_max, ada.manual_score, ada.pending_points) == (2, 2, None, 3)
    assert (ada.total, ada.max_score, ada.complete) == (2, 5, False)
    row = sheet_row(ada)
    assert (row["auto_score"], row["manual_score"], row["manual_pending"], row["total"]) == (
        "2",
        "",
        "3",
        "2",
    )
    assert row["status"] == "3 points pending: w1"
    assert ("Written answers", "not graded yet (3 points)") in summary_rows(ada)
    assert ("Total", "2 / 5 so far (3 points not graded yet)") in summary_rows(ada)
    assert cell_score_text(None, 3) == "Not graded yet (3 points)"
    line = next(
        line for line in lesson_table(list(_results(course).values())).splitlines() if line.startswith("ada")
    )
    assert "pending (3)" in line and "2/5 so far" in line and "0/3" not in line


def test_points_given_by_hand_count_and_reach_the_feedback(course):
    _grade_by_hand(course, "ada", "w1", 2.5, "Name the chain.")
    ada = _results(course)["ada"]
    assert (ada.manual_score, ada.pending_points, ada.total, status(ada)) == (2.5, 0, 4.5, "complete")
    assert next(item for item in ada.items if item.grade_id == "w1").comment == "Name the chain."
    assert ("Written answers", "2.5 / 3") in summary_rows(ada) and ("Total", "4.5 / 5") in summary_rows(ada)
    assert cell_score_text(2.5, 3) == "Score: 2.5 / 3"


def test_a_student_without_a_submission_gets_a_zero_row_that_says_so(course):
    bob = _results(course)["bob"]
    assert not bob.submitted and (bob.total, bob.pending_points, bob.max_score) == (0, 0, 5)
    assert NO_SUBMISSION_NOTE in bob.notes
    assert sheet_row(bob)["status"] == "not submitted" and sheet_row(bob)["lms_name"] == "Bob"


def test_the_late_policy_is_applied_and_shown(course):
    _grade_by_hand(course, "cleo", "w1", 3)
    cleo, ada = _results(course)["cleo"], _results(course)["ada"]
    # 1 day 1.5 hours late: two started days, 10 % of 5 points each.
    assert (cleo.lateness.label, cleo.lateness.days_late, cleo.penalty, cleo.total) == (
        "2 days late",
        2,
        1.0,
        4.0,
    )
    row = sheet_row(cleo)
    assert (row["late"], row["late_penalty"], row["lms_late"]) == ("2 days late", "1", "yes")
    assert row["submitted_at"] == "2026-10-14T01:30:00+00:00"
    assert ("Submission", f"2 days late: -1 points ({POLICY.describe()})") in summary_rows(cleo)
    assert ada.lateness.label == "on time" and ada.penalty == 0
    assert _results(course, LatePolicy())["cleo"].penalty == 0, "no policy, no penalty"


def test_a_penalty_never_takes_more_than_was_earned():
    # Two days late at 40 % a day of 5 points would be 4, but only the 2 autograded points exist so far.
    late = assess(
        LatePolicy(deadlines={LESSON: "2026-10-12T23:59"}, penalty_per_day=0.4),
        LESSON,
        "2026-10-14T01:30",
        True,
    )
    assert late.penalty_fraction == pytest.approx(0.8)


@pytest.mark.parametrize(
    "submitted_at, lms_late, policy, label, fraction, note",
    [
        ("2026-10-13T00:10", False, {"grace_minutes": 15}, "on time", 0.0, None),
        (
            "2026-10-13T00:20",
            False,
            {"grace_minutes": 15},
            "1 day late",
            0.1,
            "LMS marked this submission on time",
        ),
        (
            None,
            True,
            {},
            "late",
            0.0,
            "days late unknown (no submission time known; give it with --submitted-at STUDENT=TIME)",
        ),
        (None, True, {"flat_penalty": 0.3}, "late", 0.3, "the per-day penalty was not applied"),
        ("2026-10-20T00:00", True, {}, "8 days late", 0.5, None),
    ],
)
def test_lateness_from_the_deadline_the_zip_time_and_the_lms_marker(
    submitted_at, lms_late, policy, label, fraction, note
):
    settings = {
        "deadlines": {LESSON: "2026-10-12T23:59"},
        "penalty_per_day": 0.1,
        "max_penalty": 0.5,
        **policy,
    }
    late = assess(LatePolicy(**settings), LESSON, submitted_at, lms_late)
    assert late.label == label and late.penalty_fraction == pytest.approx(fraction)
    assert (note is None and not late.notes) or any(note in n for n in late.notes), late.notes


def test_deadlines_without_an_offset_are_in_the_course_time_zone():
    policy = LatePolicy(deadlines={LESSON: "2026-10-12T23:59"}, timezone="Europe/Berlin")
    assert policy.deadline(LESSON) == datetime(2026, 10, 12, 21, 59, tzinfo=timezone.utc)
    assert policy.local_time("2026-10-12T23:00+00:00").utcoffset() == timedelta(0)


@pytest.mark.parametrize(
    "settings, says",
    [
        ({"deadlines": {LESSON: "next friday"}}, "is not a date and time"),
        ({"timezone": "Mars/Olympus"}, "is not an IANA time zone"),
        ({"penalty_per_day": 10}, "between 0 and 1"),
        ({"grace_minutes": -5}, "must not be negative"),
    ],
)
def test_a_late_policy_that_cannot_work_is_refused_with_what_to_write(settings, says):
    with pytest.raises(LatePolicyError, match=says):
        LatePolicy(**settings).check()


def test_the_sheet_has_one_row_per_student_and_lesson(course, tmp_path):
    write_sheet(class_results(course, POLICY), tmp_path / "grades.csv")
    with (tmp_path / "grades.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert [(r["assignment"], r["student_id"]) for r in rows] == [
        (LESSON, "ada"),
        (LESSON, "bob"),
        (LESSON, "cleo"),
    ]


def test_hand_grades_survive_a_regrade_unless_the_answer_changed(course):
    _grade_by_hand(course, "ada", "w1", 2.5)
    _grade_by_hand(course, "cleo", "w1", 1)
    before = answers_before_regrade(course, LESSON, ["ada", "cleo"])
    # nbgrader's autograde flags every hand-given grade for review; Cleo resubmitted another answer.
    nbformat.write(_notebook("cleo's new answer"), _path(course / "autograded", "cleo"))
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        _set(gradebook, "ada", "w1", manual=2.5, review=True)
        _set(gradebook, "cleo", "w1", manual=1, review=True)
    keep_hand_grades(course, LESSON, before)
    results = _results(course)
    assert results["ada"].manual_score == 2.5 and results["ada"].complete
    assert results["cleo"].pending_points == 3, "a changed answer must be graded again"
    notes = NotebookNotes(course, "cleo", LESSON).notes()
    assert any("w1: the answer changed since it was graded by hand" in note for note in notes)
    assert any("w1: the answer changed" in note for note in results["cleo"].notes)


@pytest.mark.slow
def test_feedback_written_by_several_nbgrader_processes_is_the_same_as_by_one(course, monkeypatch):
    shutil.copy(NBGRADER_CONFIG, course / "nbgrader_config.py")
    one = {p.relative_to(course): p.read_bytes() for p in write_feedback(course, LESSON, jobs=1)}
    assert [str(p.parent.parent) for p in one] == ["feedback/ada", "feedback/cleo"]
    monkeypatch.setattr(grade_batch, "STUDENTS_PER_FEEDBACK_PROCESS", 1)  # one process per student
    two = {p.relative_to(course): p.read_bytes() for p in write_feedback(course, LESSON, jobs=2)}
    assert two == one


def test_a_notebook_sent_to_hand_grading_counts_no_autograded_point_until_graded_by_hand(course):
    """``invalid_unicode.send_to_hand_grading``: the autograder's verdicts wait for the
    instructor; a grade given by hand counts and survives the next regrade's flagging."""
    send_to_hand_grading(course, LESSON, "cleo")
    cleo = _results(course)["cleo"]
    assert (cleo.auto_score, [item.grade_id for item in cleo.pending]) == (0, ["t1", "w1"])
    assert sheet_row(cleo)["status"] == "5 points pending: t1, w1"
    table = lesson_table([cleo])
    line = next(line for line in table.splitlines() if line.startswith("cleo"))
    assert "0/2, 2 pending" in line and "pending (3)" in line and "1 with answers not graded yet" in table
    with Gradebook(f"sqlite:///{course / 'gradebook.db'}") as gradebook:
        _set(gradebook, "cleo", "t1", auto=2.0, manual=1.5, review=False)  # as the formgrader saves it
    send_to_hand_grading(course, LESSON, "cleo")  # as every later regrade does
    cleo = _results(course)["cleo"]
    assert (cleo.auto_score, [item.grade_id for item in cleo.pending]) == (1.5, ["w1"])
    assert _results(course)["ada"].auto_score == 2, "another student's grades never move"
