"""nbgrader grades the realistic submissions of lessons 8 and 9 (tests/lesson_variants.py)."""

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

pytestmark = pytest.mark.slow

LESSONS = GROUPS["08_09"]
