"""Every lesson's realistic submissions are graded by exactly one test file, and its correct variants
with every cell run by exactly one other (fast)."""

from pathlib import Path

from lesson_every_cell import EVERY_CELL_GROUPS
from lesson_variants import GROUPS, SUBMISSIONS


def test_every_lesson_with_submissions_is_in_one_group_with_its_own_file():
    grouped = [lesson for lessons in GROUPS.values() for lesson in lessons]
    assert sorted(grouped) == sorted(SUBMISSIONS), "a lesson is in no group, or in two"
    here = Path(__file__).parent
    for group in GROUPS:
        text = (here / f"test_lesson_variants_{group}.py").read_text(encoding="utf-8")
        assert f'LESSONS = GROUPS["{group}"]' in text, f"test_lesson_variants_{group}.py grades another group"


def test_every_lesson_with_submissions_is_graded_with_every_cell_run_by_one_file():
    grouped = [lesson for lessons in EVERY_CELL_GROUPS.values() for lesson in lessons]
    assert sorted(grouped) == sorted(SUBMISSIONS), "a lesson is in no every-cell group, or in two"
    here = Path(__file__).parent
    for group in EVERY_CELL_GROUPS:
        text = (here / f"test_lesson_every_cell_{group}.py").read_text(encoding="utf-8")
        assert f'LESSONS = EVERY_CELL_GROUPS["{group}"]' in text, (
            f"test_lesson_every_cell_{group}.py grades another group"
        )
