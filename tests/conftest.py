"""Shared fixtures: grading runs are expensive, so each lesson is graded once per session."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from course_build.grading import GradeReport, autograde  # noqa: E402
from course_build.submissions import make_submission, solution_answers  # noqa: E402


@pytest.fixture(scope="session")
def solution_and_blank_grades(tmp_path_factory):
    """lesson -> {"solution": GradeReport, "blank": GradeReport}, graded on first use."""
    cache: dict[str, dict[str, GradeReport]] = {}

    def grade(lesson: str) -> dict[str, GradeReport]:
        if lesson not in cache:
            submissions = {
                "solution": make_submission(lesson, solution_answers(lesson)),
                "blank": make_submission(lesson, {}),
            }
            cache[lesson] = autograde(lesson, submissions, tmp_path_factory.mktemp(lesson))
        return cache[lesson]

    return grade
