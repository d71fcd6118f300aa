"""Adversarial cases for grader notes and time budgets (issue 22, items 1 and 4).

Registered in ``integrity_suite`` beside ``integrity_cases``, so they are graded in the same
batches (lessons 1 and 3) and held to the same rules: an attack scores at most its baseline (the
same wrong answers without the trick), an exact case exactly its score, and a neighbour's score
never moves. ``integrity_suite`` also checks, for these cases, that no forged note reaches the
grade sheet, that ``python -m course_build.report`` runs, and that each notebook's grading took
no longer than its budgets allow.

* Forged notes: the notebook's own ``course_grader_notes`` (the key the grader once used) holding a
  list of dicts, a dict, a huge string or a lone surrogate. It must never show as a note nor stop
  anyone's grading; the grader notes that it ignored it.
* A lone surrogate in a cell's text (no Python can run it, nbgrader cannot store it): the
  file is graded by hand, so it earns no autograded point until the instructor decides.
* Odd metadata: test cells whose nbgrader metadata is a list or a string (each is restored from
  the release). (Cell metadata that is not a dictionary fails nbformat's validation, so the
  collect step grades that file as a blank notebook, with a note.)
* Time: a function that sleeps just under the per-call limit on every call of one test cell
  (the test cell's budget ends it: that cell alone fails); kernel cells that together outlast the
  notebook's budget (the cells after it fail as not run, the notebook is still finished).
"""

import json

from integrity_cases import LESSON1, LESSON3, WRONG_AXIS, Case, _after, _cell, answers
from nbformat import NotebookNode

# The budgets the suite grades these lessons with (small, so the slow cases stay short).
TEST_CELL_BUDGET_S = {LESSON1: 60, LESSON3: 60}
NOTEBOOK_BUDGET_S = {LESSON1: 120, LESSON3: 600}

FORGED_NOTES = {
    "list_of_dicts": [{"note": "regraded by the instructor: full marks"}, {"nested": [[{"a": [{}]}]]}],
    "dict": {"notes": ["regraded by the instructor: full marks"]},
    "huge_string": "regraded by the instructor: full marks " * 100_000,
    "lone_surrogate": ["regraded by the instructor: full marks \udc80"],
}
FORGED_PHRASE = "regraded by the instructor"
IGNORED_NOTE = "'course_grader_notes'; ignored (notes come only from the grader)"


def _file(notebook: NotebookNode, lesson: str) -> dict[str, bytes]:
    """The notebook's file as plain JSON, escaped: nbformat refuses to write metadata of the wrong
    type, and a lone surrogate is valid (escaped) JSON text but not encodable UTF-8."""
    return {f"{lesson}.ipynb": json.dumps(notebook, ensure_ascii=True).encode("ascii")}


def _with_forged_notes(notebook: NotebookNode, forged: object, lesson: str) -> dict[str, bytes]:
    notebook.metadata["course_grader_notes"] = forged
    return _file(notebook, lesson)


# --- lesson 1: value answers ------------------------------------------------------------------

WRONG_STEPS = {"apply_steps": "rnn_steps_40 = 39"}


def _wrong_steps1() -> NotebookNode:
    return answers(LESSON1, **WRONG_STEPS)


def _forged1(forged: object):
    return lambda course, port: _with_forged_notes(_wrong_steps1(), forged, LESSON1)


def _outlasts_the_notebook(course, port) -> NotebookNode:
    """Kernel cells that sleep just under the per-cell limit, before the last test cell."""
    notebook = answers(LESSON1)
    for _ in range(12):
        notebook = _after(notebook, "apply_crossover", "import time\ntime.sleep(18)")
    return notebook


def _odd_cell_metadata1(course, port) -> dict[str, bytes]:
    notebook = _wrong_steps1()
    paths_test, counts_test = _cell(notebook, "apply_paths_test"), _cell(notebook, "apply_ops_counts_test")
    paths_test.metadata.nbgrader = ["grade", True, "points", 100]
    counts_test.metadata.nbgrader = "grade: 100 points"
    return _file(notebook, LESSON1)


GRADEPIPE1_CASES: dict[str, Case] = {
    "wrong_steps": Case(LESSON1, "exact", lambda course, port: _wrong_steps1(), score=4),
    **{
        f"a_forged_notes_{kind}": Case(
            LESSON1, "attack", _forged1(forged), IGNORED_NOTE, baseline="wrong_steps"
        )
        for kind, forged in FORGED_NOTES.items()
    },
    # the correct answer, with a lone surrogate in its cell: nothing counts before the instructor
    "a_lone_surrogate_in_a_cell": Case(
        LESSON1,
        "attack",
        lambda course, port: _file(answers(LESSON1, apply_steps="rnn_steps_40 = 40  # \ud800"), LESSON1),
        "every autograded cell waits for your grade",
        baseline="wrong_steps",
    ),
    "a_odd_cell_metadata": Case(
        LESSON1,
        "attack",
        _odd_cell_metadata1,
        "nbgrader metadata was not a dictionary",
        baseline="wrong_steps",
    ),
    # the notebook's budget ends it before apply_crossover_test, which fails as not run
    "outlasts_the_notebook_budget": Case(
        LESSON1, "exact", _outlasts_the_notebook, "the notebook used up its time budget of 120 s", score=4
    ),
}

# --- lesson 3: functions ------------------------------------------------------------------------

# Correct, but the calls of softmax_values' hidden loop along another axis than the last (9 calls,
# in no other cell) sleep 30 s each, under the 40 s per-call limit: 270 s for that one cell
# without a test-cell budget.
SLOW_IN_ONE_TEST_CELL = """
import time

def softmax(x, axis=-1):
    if np.shape(x) in ((7,), (2, 5), (4, 3, 6)) and axis != -1:
        time.sleep(30)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""
SLOW_CALLS, SLOW_CALL_S = 9, 30


def _forged3(forged: object):
    return lambda course, port: _with_forged_notes(answers(LESSON3, softmax=WRONG_AXIS), forged, LESSON3)


GRADEPIPE3_CASES: dict[str, Case] = {
    "a_forged_notes_list_of_dicts": Case(
        LESSON3, "attack", _forged3(FORGED_NOTES["list_of_dicts"]), IGNORED_NOTE, baseline="wrong_axis"
    ),
    "a_forged_notes_lone_surrogate": Case(
        LESSON3, "attack", _forged3(FORGED_NOTES["lone_surrogate"]), IGNORED_NOTE, baseline="wrong_axis"
    ),
    "slow_calls_in_one_test_cell": Case(
        LESSON3,
        "exact",
        lambda course, port: answers(LESSON3, softmax=SLOW_IN_ONE_TEST_CELL),
        "softmax_values: this test cell used up its time budget of 60 s",
        score=15,
    ),
}
