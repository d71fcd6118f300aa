"""nbgrader grades the realistic submissions of lessons 2 to 4 (tests/lesson_variants.py)."""

from pathlib import Path

import pytest
from lesson_variants import *  # noqa: F403 - the shared tests and fixtures, run for LESSONS
from lesson_variants import GROUPS

from course_build.paths import lesson_names

pytestmark = pytest.mark.slow

LESSONS = GROUPS["02_to_04"]


def test_every_lesson_with_an_exercise_to_code_has_realistic_submissions_graded_by_one_file():
    graded = [lesson for lessons in GROUPS.values() for lesson in lessons]
    assert sorted(graded) == sorted(set(lesson_names()) - {"01_sequence_problem"})  # 1: integrity suite
    for group in GROUPS:
        assert (Path(__file__).parent / f"test_lesson_variants_{group}.py").is_file()
