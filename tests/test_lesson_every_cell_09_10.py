"""nbgrader grades lessons 9 and 10's correct variants with every cell run (tests/lesson_every_cell.py)."""

import pytest
from lesson_every_cell import *  # noqa: F403 - the shared test and fixture, run for LESSONS
from lesson_every_cell import EVERY_CELL_GROUPS

pytestmark = pytest.mark.slow

LESSONS = EVERY_CELL_GROUPS["09_10"]
