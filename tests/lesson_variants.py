"""nbgrader grades every graded lesson's realistic submissions the way a teacher would.

``tests/lesson_submissions/lessonNN.py`` lists correct variants (loops, einsum, float32, …) and
the mistakes students really make, each with the test cells that must catch it (``CAUGHT_BY``) and
a hint its feedback must contain (``FEEDBACK``). Every correct variant earns full marks; every
mistake loses exactly the points of the cells that check the property it breaks and keeps the
rest. All submissions of a lesson go through one real nbgrader run, together with the reference
solution (full marks on every autograded cell, its written answers waiting for the instructor) and
the blank release (zero everywhere). (Lesson 1, which has no variants here, is graded the same way
by tests/test_integrity_lesson_1.py.)

Grading skips the course's demonstrations that no answer needs
(``course_build.nbgrader_plugins.grading_plan``). The correct variants of every lesson are graded
once more with every cell run (tests/lesson_every_cell.py, in files of their own), and must get
full marks there too; the mistakes' verdicts are pinned cell by cell by ``CAUGHT_BY``.

The tests live here; each ``test_lesson_variants_*.py`` file imports them for its own ``LESSONS``
(``pytest_generate_tests``), so the test suite's workers can grade the lessons' batches in parallel
(a file stays on one worker).
"""

import pytest
from grading_harness import (
    GradeReport,
    autograde,
    check_blank_report,
    check_reference_report,
    make_submission,
    solution_answers,
)
from lesson_submissions import BY_LESSON

# What each tests/test_lesson_variants_<group>.py file takes (``from lesson_variants import *``).
__all__ = [
    "pytest_generate_tests",
    "reports",
    "test_correct_variant_gets_full_marks",
    "test_every_wrong_submission_names_the_cells_that_catch_it",
    "test_feedback_tells_the_student_what_is_wrong",
    "test_nbgrader_gives_the_blank_release_zero_everywhere",
    "test_nbgrader_gives_the_solution_full_marks",
    "test_wrong_submission_loses_exactly_the_points_of_its_mistake",
]

SUBMISSIONS = BY_LESSON
# Which test file grades which lessons: tests/test_lesson_variants_<group>.py. Lessons 8 and 10 have
# the biggest batches (lesson 8: about 45 notebooks of PyTorch modules and BPE); the groups are sized
# so that no file waits long on another.
GROUPS = {
    "02_to_04": ("02_dot_products", "03_attention", "04_multi_head_attention"),
    "05_to_07": ("05_positional_encoding", "06_ffn_residual_layer_norm", "07_encoder_layer"),
    "08": ("08_encoder_decoder",),
    "09": ("09_translator",),
    "10": ("10_decoder_only",),
}
# Lessons whose every mistake has a feedback hint (the rest give hints for some).
HINT_FOR_EVERY_MISTAKE = {"07_encoder_layer", "08_encoder_decoder", "09_translator"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize the tests over the lessons the importing file names in ``LESSONS``."""
    lessons = sorted(metafunc.module.LESSONS)
    if "name" in metafunc.fixturenames:
        kind = metafunc.function.variants
        pairs = [(lesson, name) for lesson in lessons for name in sorted(getattr(SUBMISSIONS[lesson], kind))]
        metafunc.parametrize("lesson, name", pairs, ids=[f"{lesson}-{name}" for lesson, name in pairs])
    elif "lesson" in metafunc.fixturenames:
        metafunc.parametrize("lesson", lessons)


def _variants(kind: str):
    """Marks a test as run once per variant of ``kind`` (CORRECT, WRONG or FEEDBACK) of each lesson."""

    def mark(test):
        test.variants = kind
        return test

    return mark


def graded_on_first_use(
    tmp_path_factory, kinds: tuple[str, ...], folder: str, *, with_release: bool = False, **options
):
    """lesson -> student -> GradeReport of the lesson's variants of ``kinds`` ("correct", "wrong"),
    and with ``with_release`` the reference solution ("solution") and the blank release ("blank"),
    one nbgrader run per lesson on first use, with ``options`` as ``autograde`` takes them."""
    cache: dict[str, dict[str, GradeReport]] = {}

    def graded(lesson: str) -> dict[str, GradeReport]:
        if lesson not in cache:
            module, reference = SUBMISSIONS[lesson], solution_answers(lesson)
            notebooks = {
                f"{kind}_{name}": make_submission(lesson, {**reference, **answers})
                for kind in kinds
                for name, answers in getattr(module, kind.upper()).items()
            }
            if with_release:
                notebooks |= {
                    "solution": make_submission(lesson, reference),
                    "blank": make_submission(lesson, {}),
                }
            workdir = tmp_path_factory.mktemp(f"{lesson}_{folder}")
            cache[lesson] = autograde(lesson, notebooks, workdir, **options)
        return cache[lesson]

    return graded


@pytest.fixture(scope="session")
def reports(tmp_path_factory):
    """lesson -> student -> GradeReport, one nbgrader run per lesson on first use."""
    return graded_on_first_use(tmp_path_factory, ("correct", "wrong"), "variants", with_release=True)


def test_every_wrong_submission_names_the_cells_that_catch_it(lesson):
    module = SUBMISSIONS[lesson]
    assert set(module.CAUGHT_BY) == set(module.WRONG)
    assert set(module.FEEDBACK) <= set(module.WRONG)
    if lesson in HINT_FOR_EVERY_MISTAKE:
        assert set(module.FEEDBACK) == set(module.WRONG)


def test_nbgrader_gives_the_solution_full_marks(reports, lesson):
    check_reference_report(lesson, reports(lesson)["solution"])


def test_nbgrader_gives_the_blank_release_zero_everywhere(reports, lesson):
    check_blank_report(lesson, reports(lesson)["blank"])


def points_lost(report: GradeReport) -> dict[str, float]:
    """grade_id -> score, for each autograded cell of ``report`` short of its points."""
    return {g: report.scores[g] for g in report.autograded if report.scores[g] != report.max_scores[g]}


@_variants("CORRECT")
def test_correct_variant_gets_full_marks(reports, lesson, name):
    lost = points_lost(reports(lesson)[f"correct_{name}"])
    assert lost == {}, f"the correct variant {name!r} lost points: {lost}"


@_variants("WRONG")
def test_wrong_submission_loses_exactly_the_points_of_its_mistake(reports, lesson, name):
    report = reports(lesson)[f"wrong_{name}"]
    expected = SUBMISSIONS[lesson].CAUGHT_BY[name]
    zero = {g for g in report.autograded if report.scores[g] == 0}
    partial = {g for g in report.autograded if report.scores[g] not in (0, report.max_scores[g])}
    assert zero == expected, f"{name}: expected zero on {sorted(expected)}, got {sorted(zero)}"
    assert partial == set()
    assert 0 < report.auto_total < report.auto_max


@_variants("FEEDBACK")
def test_feedback_tells_the_student_what_is_wrong(reports, lesson, name):
    assert SUBMISSIONS[lesson].FEEDBACK[name] in reports(lesson)[f"wrong_{name}"].feedback_html
