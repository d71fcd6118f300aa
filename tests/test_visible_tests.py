"""The visible tests a student runs catch every mistake the lesson warns about (fast, no kernel).

Design rule (design.md 5b): hidden tests add inputs, not new kinds of check, so a warned-about
mistake must fail a visible test before the student submits. A lesson's realistic submissions
(``tests/lesson_submissions/lessonNN.py``) name those mistakes in ``CAUGHT_BY_VISIBLE`` with the
test cells whose visible part must fail; here the student notebook's answer and test cells (hidden
tests already removed) run in-process, filled in with each submission. Correct variants pass them all.
Every mistake of a lesson is caught that way, except a wrong value in an Apply answer
(``VALUE_MISTAKES``): a visible check of that value would give the answer away.
"""

import contextlib
import io

import numpy as np
import pytest
from grading_harness import make_submission, solution_answers
from lesson_submissions import BY_LESSON

from course_build.cell_roles import grade_id, is_code_answer, is_test_cell

MODULES = BY_LESSON


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


@pytest.mark.parametrize("lesson", sorted(MODULES))
def test_every_mistake_fails_a_visible_test_unless_it_is_a_value(lesson):
    module = MODULES[lesson]
    unaccounted = set(module.WRONG) - set(module.CAUGHT_BY_VISIBLE) - module.VALUE_MISTAKES
    assert unaccounted == set(), f"{lesson}: no visible test is known to catch {sorted(unaccounted)}"
    assert all(module.CAUGHT_BY_VISIBLE.values()), f"{lesson}: a mistake that no visible test catches"
    assert not set(module.CAUGHT_BY_VISIBLE) & module.VALUE_MISTAKES


@pytest.mark.parametrize(
    "lesson, name",
    [(lesson, name) for lesson, module in MODULES.items() for name in sorted(module.VALUE_MISTAKES)],
)
def test_a_value_mistake_only_changes_value_answers_and_passes_the_visible_form_checks(lesson, name):
    """A value mistake may escape the visible tests only when every answer it changes is a value
    (its reference solution defines no function)."""
    answers = MODULES[lesson].WRONG[name]
    reference = solution_answers(lesson)
    functions = sorted(grade for grade in answers if "def " in reference[grade])
    assert functions == [], f"{name} changes function answers {functions}: a visible test must catch it"
    assert _visible_failures(lesson, answers) == set()
