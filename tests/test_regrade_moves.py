"""The regrade's before/after table names every score that moved and why (fast: no nbgrader run)."""

from course_build.instructor.late_policy import Lateness
from course_build.instructor.results import GradedItem, LessonResult
from course_build.regrade import GradedCell, ScoreMove, moves_table, score_moves

ON_TIME = Lateness(late=False, submitted_at=None, days_late=None, penalty_fraction=0.0)


def _result(student, test, written, lateness=ON_TIME, notes=()):
    items = (GradedItem("t1", False, 2, test), GradedItem("w1", True, 3, written))
    return LessonResult("L01", student, student, "1", False, True, items, lateness, "no penalty", notes)


CELLS = {"t1": GradedCell("assert x == 1", 2), "w1": GradedCell("*Model answer.*", 3)}
FIXED = {**CELLS, "t1": GradedCell("assert x in (1, 2)", 2)}


def test_a_fixed_test_a_changed_answer_and_an_unmoved_student():
    before = {"ada": _result("ada", 0, 2), "bob": _result("bob", 2, 3), "cleo": _result("cleo", 2, 1)}
    after = {
        "ada": _result("ada", 2, 2),
        "bob": _result("bob", 2, 3),
        "cleo": _result("cleo", 2, None, notes=("w1: the answer changed since it was graded by hand; ...",)),
    }
    assert score_moves(before, after, CELLS, FIXED) == [
        ScoreMove("ada", "t1", "0/2", "2/2", "the test changed"),
        ScoreMove("ada", "total", "2/5", "4/5", "the scores above"),
        ScoreMove(
            "cleo",
            "w1",
            "1/3",
            "pending",
            "the answer changed since it was graded by hand: grade it again in the formgrader",
        ),
        ScoreMove("cleo", "total", "3/5", "2/5 so far", "the scores above"),
    ]


def test_points_a_new_student_and_a_penalty_are_told_apart():
    late = Lateness(late=True, submitted_at=None, days_late=1, penalty_fraction=0.2)
    before = {"ada": _result("ada", 2, 3)}
    after = {"ada": _result("ada", 2, 3, lateness=late), "dan": _result("dan", 2, 3)}
    rescored = {**CELLS, "t1": GradedCell("assert x == 1", 4)}
    moves = score_moves(before, after, CELLS, rescored)
    assert moves == [
        ScoreMove("ada", "total", "5/5", "4/5", "the late penalty changed"),
        ScoreMove("dan", "total", "not graded", "5/5", "graded for the first time"),
    ]
    before = {"ada": _result("ada", 1, 3)}
    assert (
        score_moves(before, {"ada": _result("ada", 2, 3)}, CELLS, rescored)[0].why
        == "its points changed (2 -> 4)"
    )


def test_the_table_lines_up_and_says_when_nothing_moved():
    assert moves_table([]) == "No score moved."
    table = moves_table([ScoreMove("ada", "t1", "0/2", "2/2", "the test changed")]).splitlines()
    assert table == [
        "student  score  before  after  why",
        "ada      t1     0/2     2/2    the test changed",
    ]
