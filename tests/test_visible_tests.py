"""The visible tests a student runs catch every mistake the lesson warns about (fast, no kernel).

Design rule (design.md 5b): hidden tests add inputs, not new kinds of check, so a warned-about
mistake must fail a visible test before the student submits. A lesson's realistic submissions
(``tests/lesson_submissions/lessonNN.py``) name those mistakes in ``CAUGHT_BY_VISIBLE`` with the
test cells whose visible part must fail; here the student notebook's answer and test cells (hidden
tests already removed) run in-process, filled in with each submission. Correct variants pass them all.
"""

import contextlib
import io

import numpy as np
import pytest
from grading_harness import make_submission, solution_answers
from lesson_submissions import lesson05, lesson06

from course_build.cell_roles import grade_id, is_code_answer, is_test_cell

MODULES = {module.LESSON: module for module in (lesson05, lesson06)}


def _visible_failures(lesson: str, answers: dict[str, str]) -> set[str]:
    """The test cells whose visible part fails for these answers (the rest: the reference)."""
    notebook = make_submission(lesson, {**solution_answers(lesson), **answers})
    namespace: dict = {"__name__": "__main__", "np": np}
    failed = set()
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        for cell in notebook.cells:
            if cell.cell_type == "code" and (is_code_answer(cell) or is_test_cell(cell)):
                try:
                    exec(cell.source, namespace)  # noqa: S102 - the lesson's own cells
                except Exception:  # noqa: BLE001 - any failure of a test cell is the verdict
                    if is_test_cell(cell):
                        failed.add(grade_id(cell))
    return failed


@pytest.mark.parametrize(
    "lesson, name",
    [(lesson, name) for lesson, module in MODULES.items() for name in module.CAUGHT_BY_VISIBLE],
)
def test_a_warned_mistake_fails_a_visible_test(lesson, name):
    module = MODULES[lesson]
    assert _visible_failures(lesson, module.WRONG[name]) == module.CAUGHT_BY_VISIBLE[name]


@pytest.mark.parametrize(
    "lesson, name", [(lesson, name) for lesson, module in MODULES.items() for name in module.CORRECT]
)
def test_a_correct_variant_passes_every_visible_test(lesson, name):
    assert _visible_failures(lesson, MODULES[lesson].CORRECT[name]) == set()
