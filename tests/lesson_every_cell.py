"""Skipping the course's demonstrations under grading changes no points: every lesson's correct
variants (``tests/lesson_submissions``) graded with every cell run get full marks, as the same
variants graded the usual way do (``test_correct_variant_gets_full_marks`` in
tests/lesson_variants.py, which also grades the mistakes, whose verdicts ``CAUGHT_BY`` pins).

Both gradings give each autograded cell its full points, so they agree cell by cell; the written
answers are the reference's in both and wait for the instructor either way. The every-cell run is
the costly one: each notebook runs every demonstration of its lesson (lesson 9's: about 40 s of
CPU), whichever answers it holds. Most correct variants change one exercise, so variants that
answer different exercises share a notebook (``every_cell_notebooks``): lessons 8 and 9's eight
variants each fit in two notebooks, and every variant's code is still run, whole, with every cell
of the lesson. A variant's own notebook is graded the usual way by tests/lesson_variants.py. The
every-cell batches are graded in files of their own, ``test_lesson_every_cell_<group>.py`` for
``EVERY_CELL_GROUPS``: pytest-xdist runs them on other workers than the lessons' usual batches
instead of after them in the same file.
"""

import pytest
from grading_harness import GradeReport, autograde, make_submission, solution_answers
from lesson_variants import SUBMISSIONS, points_lost
from nbformat import NotebookNode

# What each tests/test_lesson_every_cell_<group>.py file takes (``from lesson_every_cell import *``).
__all__ = [
    "every_cell_reports",
    "pytest_generate_tests",
    "test_every_correct_variant_is_in_exactly_one_every_cell_notebook",
    "test_skipping_the_demonstrations_changes_no_points",
]

# Sized like the lessons' every-cell batches: lesson 9's two notebooks and lesson 10's three take
# longer than lessons 2 to 8's seventeen together.
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


def every_cell_variants(lesson: str) -> dict[str, tuple[str, ...]]:
    """student -> the correct variants of ``lesson`` whose answers that notebook holds: each variant
    in the first notebook none of whose variants answers a cell it answers (in ``CORRECT``'s order)."""
    notebooks: list[tuple[set[str], list[str]]] = []
    for name, answers in SUBMISSIONS[lesson].CORRECT.items():
        fits = next((n for n in notebooks if not n[0] & answers.keys()), None)
        if fits is None:
            fits = (set(), [])
            notebooks.append(fits)
        fits[0].update(answers)
        fits[1].append(name)
    return {f"correct_variants_{i}": tuple(names) for i, (_, names) in enumerate(notebooks, 1)}


def every_cell_notebooks(lesson: str) -> dict[str, NotebookNode]:
    """student -> the reference solution with the answers of ``every_cell_variants``' variants."""
    correct, reference = SUBMISSIONS[lesson].CORRECT, solution_answers(lesson)
    notebooks = {}
    for student, names in every_cell_variants(lesson).items():
        answers = dict(reference)
        for name in names:
            answers |= correct[name]
        notebooks[student] = make_submission(lesson, answers)
    return notebooks


@pytest.fixture(scope="session")
def every_cell_reports(tmp_path_factory):
    """lesson -> student -> GradeReport of ``every_cell_notebooks``, graded with every cell run, one
    nbgrader run per lesson on first use."""
    cache: dict[str, dict[str, GradeReport]] = {}

    def graded(lesson: str) -> dict[str, GradeReport]:
        if lesson not in cache:
            workdir = tmp_path_factory.mktemp(f"{lesson}_every_cell")
            cache[lesson] = autograde(lesson, every_cell_notebooks(lesson), workdir, run_every_cell=True)
        return cache[lesson]

    return graded


def test_every_correct_variant_is_in_exactly_one_every_cell_notebook(lesson):
    variants = every_cell_variants(lesson)
    assert sorted(n for names in variants.values() for n in names) == sorted(SUBMISSIONS[lesson].CORRECT)
    correct = SUBMISSIONS[lesson].CORRECT
    for student, names in variants.items():
        answered = [cell for name in names for cell in correct[name]]
        assert len(answered) == len(set(answered)), f"{student}: two of {names} answer the same cell"
    notebooks = every_cell_notebooks(lesson)
    for student, names in variants.items():
        sources = {cell.source for cell in notebooks[student].cells}
        for name in names:
            missing = [cell for cell, source in correct[name].items() if source not in sources]
            assert missing == [], f"{student} lacks {name}'s answer to {missing}"


def test_skipping_the_demonstrations_changes_no_points(every_cell_reports, lesson):
    every_cell, variants = every_cell_reports(lesson), every_cell_variants(lesson)
    assert sorted(every_cell) == sorted(variants)
    lost = {student: points_lost(report) for student, report in every_cell.items()}
    assert {f"{student} {variants[student]}": cells for student, cells in lost.items() if cells} == {}, (
        "correct variants that lose points when every cell runs (they get full marks with the "
        f"demonstrations skipped): {lost}"
    )
