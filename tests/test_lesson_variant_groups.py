"""Every lesson's realistic submissions are graded by exactly one test file (fast)."""

from pathlib import Path

from lesson_variants import GROUPS, SUBMISSIONS


def test_every_lesson_with_submissions_is_in_one_group_with_its_own_file():
    grouped = [lesson for lessons in GROUPS.values() for lesson in lessons]
    assert sorted(grouped) == sorted(SUBMISSIONS), "a lesson is in no group, or in two"
    here = Path(__file__).parent
    for group in GROUPS:
        text = (here / f"test_lesson_variants_{group}.py").read_text(encoding="utf-8")
        assert f'LESSONS = GROUPS["{group}"]' in text, f"test_lesson_variants_{group}.py grades another group"
