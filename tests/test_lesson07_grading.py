"""nbgrader grades the realistic submissions of lesson 7 (the encoder-layer project) the way a teacher would.

Every correct variant earns full marks; every typical mistake loses exactly the points of the test
cells that check the property it breaks, keeps the rest, and its feedback says what went wrong.
All submissions go through one real nbgrader run, next to the reference solution and the blank
release.
"""

import pytest
from grading_harness import GradeReport, autograde, make_submission, solution_answers
from lesson_submissions import lesson07 as submissions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict[str, GradeReport]:
    lesson = submissions.LESSON
    reference = solution_answers(lesson)
    notebooks = {"solution": make_submission(lesson, reference), "blank": make_submission(lesson, {})}
    for kind, variants in (("correct", submissions.CORRECT), ("wrong", submissions.WRONG)):
        for name, answers in variants.items():
            notebooks[f"{kind}_{name}"] = make_submission(lesson, {**reference, **answers})
    return autograde(lesson, notebooks, tmp_path_factory.mktemp("lesson07_grading"))


def test_every_wrong_submission_names_the_cells_that_catch_it():
    assert set(submissions.CAUGHT_BY) == set(submissions.WRONG)
    assert set(submissions.FEEDBACK) == set(submissions.WRONG)


def test_solution_gets_full_marks_and_blank_gets_zero(reports):
    solution, blank = reports["solution"], reports["blank"]
    assert solution.auto_total == solution.auto_max > 0
    assert blank.auto_total == 0


@pytest.mark.parametrize("name", sorted(submissions.CORRECT))
def test_correct_variant_gets_full_marks(reports, name):
    report = reports[f"correct_{name}"]
    lost = {g: report.scores[g] for g in report.autograded if report.scores[g] != report.max_scores[g]}
    assert lost == {}, f"the correct variant {name!r} lost points: {lost}"


@pytest.mark.parametrize("name", sorted(submissions.WRONG))
def test_wrong_submission_loses_exactly_the_points_of_its_mistake(reports, name):
    report = reports[f"wrong_{name}"]
    zero = {g for g in report.autograded if report.scores[g] == 0}
    assert zero == submissions.CAUGHT_BY[name], (
        f"{name}: expected zero on {sorted(submissions.CAUGHT_BY[name])}, got {sorted(zero)}"
    )
    assert all(report.scores[g] in (0, report.max_scores[g]) for g in report.autograded)
    assert 0 < report.auto_total < report.auto_max


@pytest.mark.parametrize("name", sorted(submissions.FEEDBACK))
def test_feedback_tells_the_student_what_is_wrong(reports, name):
    assert submissions.FEEDBACK[name] in reports[f"wrong_{name}"].feedback_html
