"""Broken and dishonest submissions, each with the score it must get and the note it must leave.

Each ``Case`` builds one submission (a notebook, or raw files when the file itself is the
problem) for lesson 1 (values) or lesson 3 (functions). ``score`` is the exact autograded score
it must get; ``note`` a phrase the instructor's notes must contain (None: no notes at all).
All cases of a lesson are graded together in one real nbgrader batch, so a case that broke the
batch or leaked into a neighbour's grade would show up as the neighbours' wrong scores.
"""

import copy
from collections.abc import Callable
from dataclasses import dataclass

import nbformat
from nbformat import NotebookNode

from course_build.grading import Submission
from course_build.submissions import make_submission, solution_answers

LESSON1 = "01_sequence_problem"
LESSON3 = "03_attention"


@dataclass(frozen=True)
class Case:
    lesson: str
    build: Callable[[], Submission]
    score: float
    note: str | None


def _answers(lesson: str, **changed: str) -> NotebookNode:
    """The reference answers, with the named answer cells replaced."""
    return make_submission(lesson, {**solution_answers(lesson), **changed})


def _cell(notebook: NotebookNode, grade_id: str) -> NotebookNode:
    return next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _without(notebook: NotebookNode, *grade_ids: str) -> NotebookNode:
    notebook = copy.deepcopy(notebook)
    notebook.cells = [
        c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("grade_id") not in grade_ids
    ]
    return notebook


def _edited_test() -> NotebookNode:
    notebook = _answers(LESSON1, apply_steps="rnn_steps_40 = 7")
    _cell(notebook, "apply_steps_test").source = "assert True"
    return notebook


def _test_turned_into_answer() -> NotebookNode:
    """The test cell re-tagged as an answer (nbgrader would leave it for manual grading)."""
    notebook = _answers(LESSON1, apply_steps="rnn_steps_40 = 7")
    test = _cell(notebook, "apply_steps_test")
    test.metadata.nbgrader.update(solution=True, locked=False)
    test.source = "rnn_steps_40 = 40"
    return notebook


def _points_raised() -> NotebookNode:
    notebook = _answers(LESSON1, apply_paths="rnn_path_40 = 40\nattention_path_40 = 1")
    _cell(notebook, "apply_paths_test").metadata.nbgrader["points"] = 100
    return notebook


def _raw(notebook: NotebookNode, name: str) -> dict[str, bytes]:
    return {name: nbformat.writes(notebook).encode("utf-8")}


_UNINTERRUPTIBLE = """
import time
while True:
    try:
        time.sleep(0.05)
    except BaseException:
        pass
"""

_WARNING_SOFTMAX = """
import warnings

def softmax(x, axis=-1):
    warnings.warn("softmax: computing in float64")
    x = np.asarray(x, dtype=np.float64)
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)
"""

_WRONG_AXIS_SOFTMAX = """
def softmax(x, axis=-1):
    e = np.exp(x - np.max(x))
    return e / np.sum(e)
"""

_ALWAYS_EQUAL_ATTENTION = """
class Anything:
    shape = (2, 4)
    def __eq__(self, other):
        return True
    def __getitem__(self, index):
        return self

def scaled_dot_product_attention(Q, K, V, mask=None):
    return Anything(), Anything()
"""

LESSON1_CASES: dict[str, Case] = {
    "correct": Case(LESSON1, lambda: _answers(LESSON1), 5, None),
    "blank": Case(LESSON1, lambda: make_submission(LESSON1, {}), 0, None),
    "wrong_partial": Case(
        LESSON1,
        lambda: _answers(
            LESSON1,
            apply_paths="rnn_path_40 = 40\nattention_path_40 = 1",
            apply_crossover="largest_cheaper_n = 512",
        ),
        3,
        None,
    ),
    "hardcoded_visible": Case(  # values that satisfy every visible test and are all wrong
        LESSON1,
        lambda: _answers(
            LESSON1,
            apply_steps="rnn_steps_40 = 1",
            apply_paths="rnn_path_40 = 2\nattention_path_40 = 1",
            apply_ops="rnn_ops_100 = 1\nattention_ops_100 = 1\ncheaper_100 = 'rnn'",
            apply_crossover="largest_cheaper_n = 1",
        ),
        0,
        None,
    ),
    "edited_test_cell": Case(LESSON1, _edited_test, 4, "locked cell had been edited"),
    "deleted_test_cells": Case(
        LESSON1,
        lambda: _without(_answers(LESSON1), "apply_steps_test", "apply_ops_cheaper_test"),
        5,
        "restored from the release",
    ),
    "test_cell_retagged": Case(LESSON1, _test_turned_into_answer, 4, "metadata had been changed"),
    "points_raised": Case(LESSON1, _points_raised, 4, "metadata had been changed"),
    "eq_always_true": Case(
        LESSON1,
        lambda: _answers(
            LESSON1,
            apply_steps=(
                "class Always(int):\n    def __eq__(self, other):\n        return True\n"
                "    __hash__ = int.__hash__\n\nrnn_steps_40 = Always(7)"
            ),
        ),
        4,
        "defines Always.__eq__",
    ),
    "input_transformer": Case(
        LESSON1,
        lambda: make_submission(
            LESSON1, {"apply_steps": "get_ipython().input_transformers_cleanup.append(lambda lines: [])"}
        ),
        0,
        "input_transformers_cleanup",
    ),
    "infinite_loop": Case(
        LESSON1,
        lambda: _answers(LESSON1, apply_paths="while True:\n    pass\nrnn_path_40 = 39"),
        4,
        "interrupted after",
    ),
    "uninterruptible_loop": Case(
        LESSON1,
        lambda: _answers(LESSON1, apply_crossover=_UNINTERRUPTIBLE + "largest_cheaper_n = 511"),
        4,
        "ignored the interrupt",
    ),
    "os_exit": Case(
        LESSON1,
        lambda: _answers(LESSON1, apply_steps="import os\nos._exit(1)\nrnn_steps_40 = 40"),
        5,
        "imports os",
    ),
    "sys_exit": Case(
        LESSON1,
        lambda: _answers(LESSON1, apply_ops="import sys\nsys.exit()"),
        3,
        "imports sys",
    ),
    "huge_allocation": Case(
        LESSON1,
        lambda: _answers(LESSON1, apply_steps="_big = np.ones((40_000, 40_000))\nrnn_steps_40 = 40"),
        4,
        "ran out of memory",
    ),
    "invalid_json": Case(LESSON1, lambda: {f"{LESSON1}.ipynb": b'{"cells": [ oops'}, 0, "could not be read"),
    "renamed_notebook": Case(
        LESSON1,
        lambda: _raw(_answers(LESSON1), f"{LESSON1}-1.ipynb"),
        5,
        "submitted as",
    ),
    "missing_notebook": Case(
        LESSON1,
        lambda: {"answers.py": b"rnn_steps_40 = 40\n"},
        0,
        "was submitted (files found: answers.py)",
    ),
}

LESSON3_CASES: dict[str, Case] = {
    "correct": Case(LESSON3, lambda: _answers(LESSON3), 16, None),
    # softmax over the whole array: right for 1-D input only; attention (which calls it) fails too
    "wrong_axis": Case(LESSON3, lambda: _answers(LESSON3, softmax=_WRONG_AXIS_SOFTMAX), 5, None),
    "hardcoded_visible": Case(
        LESSON3,
        lambda: _answers(
            LESSON3,
            softmax=("def softmax(x, axis=-1):\n    return np.array([0.09003057, 0.24472847, 0.66524096])"),
        ),
        4,
        None,
    ),
    "patched_allclose": Case(
        LESSON3,
        lambda: _answers(LESSON3, softmax=_WRONG_AXIS_SOFTMAX + "\nnp.allclose = lambda *a, **k: True"),
        5,
        "assigns to np.allclose",
    ),
    "patched_assert_helper": Case(
        LESSON3,
        lambda: _answers(
            LESSON3, softmax=(_WRONG_AXIS_SOFTMAX + "\nnp.testing.assert_allclose = lambda *a, **k: None")
        ),
        5,
        "assigns to np.testing.assert_allclose",
    ),
    "always_equal_object": Case(
        LESSON3,
        lambda: _answers(LESSON3, scaled_dot_product_attention=_ALWAYS_EQUAL_ATTENTION),
        7,
        "defines Anything.__eq__",
    ),
    "obfuscated_transformer": Case(
        LESSON3,
        lambda: make_submission(
            LESSON3,
            {
                "softmax": (
                    "getattr(get_ipython(), 'input_' + 'transformers_cleanup').append(lambda lines: [])"
                )
            },
        ),
        0,
        "computed name",
    ),
    "warning_on_stderr": Case(
        LESSON3,
        lambda: _answers(LESSON3, softmax=_WARNING_SOFTMAX),
        16,
        "not penalized",
    ),
}
