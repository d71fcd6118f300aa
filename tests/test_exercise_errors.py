"""Errors in a lesson notebook show as a few friendly lines, in a real kernel, except when graded."""

import os
import re

import nbformat
import pytest
from nbclient import NotebookClient

from transformer_course.exercise_errors import short_traceback

SETUP = "from transformer_course.exercise_errors import explain_exercise_errors\nexplain_exercise_errors()"
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
CELLS = {
    "setup": SETUP,
    "value_stub": STUB,
    "function_stub": "def softmax(x, axis=-1):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
    "calls_stub": "_s = softmax([1.0, 2.0])",
    "buggy": "import numpy as np\n\ndef attend(Q, K):\n    scores = Q @ K.T\n    return scores",
    "wrapping_test": (
        "try:\n"
        "    attend(np.ones((2, 3, 4)), np.ones((2, 5, 4)))\n"
        "except ValueError as _error:\n"
        "    raise AssertionError('attention failed on a batch: use np.swapaxes(K, -1, -2)') from _error"
    ),
    "undefined": "print(rnn_steps_40)",
    "full_traceback": "%tb",
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def run(env: dict[str, str] | None = None) -> dict[str, dict]:
    """Execute the cells above in a fresh kernel; cell id -> its error output (or stream text)."""
    notebook = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in CELLS.items()]
    )
    kernel_env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"} | (env or {})
    NotebookClient(notebook, kernel_name="python3", allow_errors=True, timeout=60).execute(env=kernel_env)
    results = {}
    for cell in notebook.cells:
        for output in cell.outputs:
            if output.output_type == "error":
                results[cell.id] = {
                    "ename": output.ename,
                    "text": ANSI.sub("", "\n".join(output.traceback)),
                    "lines": len(output.traceback),
                }
            elif output.output_type == "stream":
                results.setdefault(cell.id, {"text": ""})["text"] += ANSI.sub("", output.text)
    return results


@pytest.fixture(scope="module")
def student_run():
    return run()


def test_an_unwritten_value_exercise_says_what_to_do(student_run):
    error = student_run["value_stub"]
    assert error["ename"] == "NotImplementedError", "grading and the tests still see the stub's error"
    assert "Exercise still to do: write your answer in this cell" in error["text"]
    assert "Traceback" not in error["text"] and error["lines"] == 1


def test_calling_an_unwritten_function_names_the_exercise(student_run):
    error = student_run["calls_stub"]
    assert error["ename"] == "NotImplementedError"
    assert "`softmax` is not written yet" in error["text"] and error["lines"] == 1


def test_an_error_wrapped_by_a_test_shows_both_messages_in_a_few_lines(student_run):
    error = student_run["wrapping_test"]
    text = error["text"]
    assert error["ename"] == "AssertionError"
    assert text.startswith("AssertionError: attention failed on a batch: use np.swapaxes(K, -1, -2)")
    assert "It arose from this error:" in text and "ValueError: matmul" in text
    assert "in your function attend, line 4:  scores = Q @ K.T" in text
    assert "called at line 2 of this cell:  attend(np.ones((2, 3, 4)), np.ones((2, 5, 4)))" in text
    assert "numpy" not in text.split("ValueError", 1)[1].split("\n", 1)[1], "library frames are left out"
    assert error["lines"] <= 8, text


def test_an_undefined_name_gets_a_hint_about_exercises(student_run):
    text = student_run["undefined"]["text"]
    assert "NameError: name 'rnn_steps_40' is not defined" in text
    assert "write that exercise and run its cell first" in text


def test_the_full_traceback_is_one_magic_away(student_run):
    assert "Traceback" in student_run["full_traceback"]["text"]


def test_grading_runs_keep_ipythons_own_tracebacks():
    """nbgrader's validation and autograding see the standard report, not the short one."""
    graded = run(env={"NBGRADER_EXECUTION": "validate"})
    assert graded["value_stub"]["ename"] == "NotImplementedError"
    assert "Exercise still to do" not in graded["value_stub"]["text"]
    assert (
        "Traceback" in graded["calls_stub"]["text"] or "NotImplementedError" in graded["calls_stub"]["text"]
    )
    assert graded["value_stub"]["lines"] > 1


def test_a_stub_raised_in_plain_python_reads_the_same():
    """The formatter works on any exception object, not only inside a kernel."""

    def softmax():
        raise NotImplementedError()

    try:
        softmax()
    except NotImplementedError as error:
        lines = short_traceback(error)
    assert len(lines) == 1 and "Exercise still to do" in lines[0]
