"""nbgrader grades the realistic submissions of lessons 2 to 4 (tests/lesson_variants.py)."""

from pathlib import Path

import pytest
from lesson_variants import (  # noqa: F401 - the shared tests and fixtures, run for LESSONS
    GROUPS,
    every_cell_reports,
    pytest_generate_tests,
    reports,
    test_correct_variant_gets_full_marks,
    test_every_wrong_submission_names_the_cells_that_catch_it,
    test_feedback_tells_the_student_what_is_wrong,
    test_skipping_the_demonstrations_changes_no_points,
    test_wrong_submission_loses_exactly_the_points_of_its_mistake,
)

from course_build.paths import lesson_names

pytestmark = pytest.mark.slow

LESSONS = GROUPS["02_to_04"]


def test_every_lesson_with_an_exercise_to_code_has_realistic_submissions_graded_by_one_file():
    graded = [lesson for lessons in GROUPS.values() for lesson in lessons]
    assert sorted(graded) == sorted(set(lesson_names()) - {"01_sequence_problem"})  # 1: test_integrity.py
    for group in GROUPS:
        assert (Path(__file__).parent / f"test_lesson_variants_{group}.py").is_file()
