"""nbgrader grades lesson 5's realistic submissions the way a teacher would.

Every correct variant (loops, exp/log frequencies, float32) earns full marks; every typical mistake
(sine and cosine swapped, i instead of 2i, positions from 1, a crash on odd d_model, concatenated
halves, ...) loses exactly the points of the test cells that check the property it breaks, keeps
the rest, and its feedback tells the student what went wrong. All submissions go through one real
nbgrader run.
"""

import pytest
from lesson_submissions import lesson05 as submissions

from course_build.grading import GradeReport, autograde
from course_build.submissions import make_submission, solution_answers

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, GradeReport]:
    lesson = submissions.LESSON
    reference = solution_answers(lesson)
    notebooks = {
        f"correct_{name}": make_submission(lesson, {**reference, **answers})
        for name, answers in submissions.CORRECT.items()
    }
    notebooks.update(
        {
            f"wrong_{name}": make_submission(lesson, {**reference, **answers})
            for name, answers in submissions.WRONG.items()
        }
    )
    return autograde(lesson, notebooks, tmp_path_factory.mktemp("lesson05_grading"))


def test_every_wrong_submission_names_the_cells_that_catch_it():
    assert set(submissions.CAUGHT_BY) == set(submissions.WRONG)
    assert set(submissions.FEEDBACK) <= set(submissions.WRONG)


@pytest.mark.parametrize("name", sorted(submissions.CORRECT))
def test_correct_variant_gets_full_marks(reports, name):
    report = reports[f"correct_{name}"]
    lost = {g: report.scores[g] for g in report.autograded if report.scores[g] != report.max_scores[g]}
    assert lost == {}, f"the correct variant {name!r} lost points: {lost}"


@pytest.mark.parametrize("name", sorted(submissions.WRONG))
def test_wrong_submission_loses_exactly_the_points_of_its_mistake(reports, name):
    report = reports[f"wrong_{name}"]
    zero = {g for g in report.autograded if report.scores[g] == 0}
    partial = {g for g in report.autograded if report.scores[g] not in (0, report.max_scores[g])}
    assert zero == submissions.CAUGHT_BY[name], (
        f"{name}: expected zero on {sorted(submissions.CAUGHT_BY[name])}, got {sorted(zero)}"
    )
    assert partial == set()
    assert 0 < report.auto_total < report.auto_max


@pytest.mark.parametrize("name", sorted(submissions.FEEDBACK))
def test_feedback_tells_the_student_what_is_wrong(reports, name):
    assert submissions.FEEDBACK[name] in reports[f"wrong_{name}"].feedback_html
