"""Skipping the course's demonstrations under grading changes no points: every lesson's correct
variants (``tests/lesson_submissions``) graded with every cell run get full marks, as the same
variants graded the usual way do (``test_correct_variant_gets_full_marks`` in
tests/lesson_variants.py, which also grades the mistakes, whose verdicts ``CAUGHT_BY`` pins).

Both gradings give each autograded cell its full points, so they agree cell by cell; the written
answers are the reference's in both and wait for the instructor either way. The every-cell run is
the costly one (lesson 9's demonstrations: about 40 s per notebook), so it is graded in files of
its own, ``test_lesson_every_cell_<group>.py`` for ``EVERY_CELL_GROUPS``: pytest-xdist runs them
on other workers than the lessons' usual batches instead of after them in the same file.
"""

import pytest
from lesson_variants import SUBMISSIONS, graded_on_first_use, points_lost

# What each tests/test_lesson_every_cell_<group>.py file takes (``from lesson_every_cell import *``).
__all__ = [
    "every_cell_reports",
    "pytest_generate_tests",
    "test_skipping_the_demonstrations_changes_no_points",
]

# Sized like the lessons' every-cell batches in CI on the 2-core machine: lesson 9 about 330 s,
# lesson 8 about 200 s, lesson 10 about 100 s, lessons 2 to 7 less.
EVERY_CELL_GROUPS = {
    "02_to_08": (
        "02_dot_products",
        "03_attention",
        "04_multi_head_attention",
        "05_positional_encoding",
        "06_ffn_residual_layer_norm",
        "07_encoder_layer",
        "08_encoder_decoder",
    ),
    "09_10": ("09_translator", "10_decoder_only"),
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize the tests over the lessons the importing file names in ``LESSONS``."""
    if "lesson" in metafunc.fixturenames:
        metafunc.parametrize("lesson", sorted(metafunc.module.LESSONS))


@pytest.fixture(scope="session")
def every_cell_reports(tmp_path_factory):
    """lesson -> student -> GradeReport of the correct variants, graded with every cell run."""
    return graded_on_first_use(tmp_path_factory, ("correct",), "every_cell", run_every_cell=True)


def test_skipping_the_demonstrations_changes_no_points(every_cell_reports, lesson):
    every_cell = every_cell_reports(lesson)
    assert sorted(every_cell) == sorted(f"correct_{name}" for name in SUBMISSIONS[lesson].CORRECT)
    lost = {student: points_lost(report) for student, report in every_cell.items()}
    assert {student: cells for student, cells in lost.items() if cells} == {}, (
        "correct variants that lose points when every cell runs (they get full marks with the "
        f"demonstrations skipped): {lost}"
    )
