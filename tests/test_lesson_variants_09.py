"""nbgrader grades the realistic submissions of lesson 9 (tests/lesson_variants.py)."""

import pytest
from lesson_variants import *  # noqa: F403 - the shared tests and fixtures, run for LESSONS
from lesson_variants import GROUPS

pytestmark = pytest.mark.slow

LESSONS = GROUPS["09"]
