"""The adversarial suite's lesson-1 batch: value answers (tests/integrity_suite.py)."""

from pathlib import Path

import pytest
from integrity_cases import LESSON1
from integrity_suite import *  # noqa: F403 - the shared tests and fixtures, run for LESSONS
from integrity_suite import CASES, TIMEOUT_S

from course_build.instructor.grade_batch import grade_lesson

pytestmark = pytest.mark.slow

LESSONS = (LESSON1,)


def test_every_lesson_with_cases_is_graded_by_a_file_of_its_own():
    for lesson in CASES:
        path = Path(__file__).parent / f"test_integrity_lesson_{int(lesson[:2])}.py"
        assert path.is_file(), f"{lesson} has adversarial cases but no {path.name} grades them"
        assert f"LESSONS = (LESSON{int(lesson[:2])},)" in path.read_text(encoding="utf-8"), path.name


def test_the_suite_is_big_enough():
    named = [(name, case) for cases in CASES.values() for name, case in cases.items()]
    assert sum(case.kind == "honest" for _, case in named) >= 20
    assert sum(name.startswith("a_") for name, _ in named) >= 20


def test_regrading_gives_identical_scores_and_notes(batches):
    course, first = batches(LESSON1)
    again_students = [
        "reference",
        "deleted_test_cell",
        "a_int_subclass_equal_to_anything",
        "renamed_notebook",
        "invalid_json",
        "missing_notebook",
    ]
    again = grade_lesson(course, LESSON1, again_students, timeout_s=TIMEOUT_S[LESSON1])
    for student in again_students:
        assert again[student].scores == first[student].scores, student
        assert again[student].notes == first[student].notes, student
