"""Unwritten exercises say "Exercise still to do" in one line and let Run All carry on (Colab's
stop-at-the-first-error included); other errors fail as a few friendly lines; grading sees
IPython's own errors."""

import os
import re
import subprocess
import sys
from types import SimpleNamespace

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

from course_build.cell_roles import is_test_cell
from course_build.paths import student_notebook
from transformer_course.exercise_errors import ExercisesToDo, short_traceback

SETUP = (
    "from transformer_course.exercise_errors import explain_exercise_errors\n"
    'explain_exercise_errors(answers=["rnn_steps_40"])'
)
STUB = "# YOUR CODE HERE\nraise NotImplementedError()"
# What a fresh student notebook does with its exercises still to do: none of it may stop Run All.
TO_DO_CELLS = {
    "setup": SETUP,
    "value_stub": STUB,
    "uses_value": "print(rnn_steps_40 + 1)",
    "function_stub": "def softmax(x, axis=-1):\n    # YOUR CODE HERE\n    raise NotImplementedError()",
    "calls_stub": "_s = softmax([1.0, 2.0])",
    "demo_binds": "import numpy as np\n\nweights = np.array(softmax([1.0, 2.0]))\nlargest = weights.max()",
    "uses_demo": "print(largest)",
    "test_wraps_stub": (
        "try:\n"
        "    softmax([1.0])\n"
        "except Exception as _error:\n"
        "    raise AssertionError(f'softmax failed: {type(_error).__name__}') from None"
    ),
    "after": "print('reached the end')",
}
# What must still fail: a written but wrong answer, a typo.
ERROR_CELLS = {
    "buggy": "import numpy as np\n\ndef attend(Q, K):\n    scores = Q @ K.T\n    return scores",
    "wrapping_test": (
        "try:\n"
        "    attend(np.ones((2, 3, 4)), np.ones((2, 5, 4)))\n"
        "except ValueError as _error:\n"
        "    raise AssertionError('attention failed on a batch: use np.swapaxes(K, -1, -2)') from _error"
    ),
    "undefined": "print(rnn_steps_41)",
    "wrong_value": (
        "rnn_steps_40 = 3.5\nassert isinstance(rnn_steps_40, int), 'rnn_steps_40 should be a whole number'"
    ),
    "full_traceback": "%tb",
}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def notebook_of(cells: dict[str, str]) -> nbformat.NotebookNode:
    return nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(source, id=cell_id) for cell_id, source in cells.items()]
    )


def run(cells: dict[str, str], env: dict[str, str] | None = None, allow_errors: bool = True) -> dict:
    """Execute ``cells`` in a fresh kernel; cell id -> {"ename", "text", "lines"} of its error, or
    {"text"} of what it printed."""
    notebook = notebook_of(cells)
    kernel_env = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"} | (env or {})
    NotebookClient(notebook, kernel_name="python3", allow_errors=allow_errors, timeout=60).execute(
        env=kernel_env
    )
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
    """A fresh notebook run the way Colab runs it: the first error stops everything."""
    return run(TO_DO_CELLS | ERROR_CELLS, allow_errors=True) | run(TO_DO_CELLS, allow_errors=False)


def test_run_all_goes_past_every_unwritten_exercise_even_stopping_at_the_first_error(student_run):
    assert student_run["after"]["text"] == "reached the end\n"
    assert not any("ename" in student_run[cell] for cell in TO_DO_CELLS if cell in student_run)


def test_an_unwritten_value_exercise_says_what_to_do(student_run):
    text = student_run["value_stub"]["text"]
    assert text.startswith("Exercise still to do: write your answer in this cell in place of")
    assert text.count("\n") == 1, "one line"


def test_calling_an_unwritten_function_names_the_exercise(student_run):
    text = student_run["calls_stub"]["text"]
    assert text.startswith("Exercise still to do: `softmax` is not written yet.") and text.count("\n") == 1


def test_a_value_answer_still_to_do_reads_like_a_function_still_to_do(student_run):
    text = student_run["uses_value"]["text"]
    assert text.startswith("Exercise still to do: `rnn_steps_40` is not defined yet"), text
    assert "NameError" not in text and text.count("\n") == 1


def test_a_name_that_a_stopped_demo_did_not_define_says_which_exercise_stopped_it(student_run):
    assert student_run["demo_binds"]["text"].startswith("Exercise still to do: `softmax` is not written")
    text = student_run["uses_demo"]["text"]
    assert text.startswith("Exercise still to do: `largest` is not defined yet"), text
    assert "`softmax`, which is not written yet" in text


def test_a_test_that_wraps_the_stubs_error_says_still_to_do(student_run):
    assert student_run["test_wraps_stub"]["text"].startswith("Exercise still to do: `softmax`")


def test_a_written_but_wrong_answer_still_fails_its_cell(student_run):
    error = student_run["wrong_value"]
    assert error["ename"] == "AssertionError" and "should be a whole number" in error["text"]
    assert "still to do" not in error["text"]


def test_a_wrong_answer_stops_a_run_that_stops_at_the_first_error():
    with pytest.raises(CellExecutionError, match="should be a whole number"):
        run({"setup": SETUP, "wrong_value": ERROR_CELLS["wrong_value"]}, allow_errors=False)


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


def test_a_typo_is_an_ordinary_error_not_an_exercise(student_run):
    error = student_run["undefined"]
    assert error["ename"] == "NameError"
    assert error["text"].startswith("NameError: name 'rnn_steps_41' is not defined")
    assert "still to do" not in error["text"]


def test_the_full_traceback_is_one_magic_away(student_run):
    assert "Traceback" in student_run["full_traceback"]["text"]


def test_autograding_sees_every_unwritten_exercise_fail_in_ipythons_own_format():
    graded = run(TO_DO_CELLS, env={"NBGRADER_EXECUTION": "autograde"})
    for cell in ("value_stub", "calls_stub", "test_wraps_stub", "demo_binds"):
        assert graded[cell]["ename"] in ("NotImplementedError", "AssertionError"), cell
        assert "still to do" not in graded[cell]["text"] and graded[cell]["lines"] > 1
    assert graded["uses_value"]["ename"] == "NameError"
    assert graded["uses_demo"]["ename"] == "NameError"


def test_validate_sees_every_unwritten_exercise_fail_as_one_short_line():
    """The Validate button lists every unwritten exercise, each as its "still to do" line, not a
    wall of tracebacks; a real error is listed as its short message."""
    validated = run(TO_DO_CELLS | ERROR_CELLS, env={"NBGRADER_EXECUTION": "validate"})
    for cell in ("value_stub", "calls_stub", "demo_binds", "uses_value", "uses_demo"):
        assert validated[cell]["ename"] in ("NotImplementedError", "NameError"), cell
        assert validated[cell]["text"].startswith("Exercise still to do") and validated[cell]["lines"] == 1, (
            cell
        )
    assert validated["test_wraps_stub"]["ename"] == "AssertionError"
    assert "still to do" in validated["test_wraps_stub"]["text"]
    assert (
        validated["undefined"]["ename"] == "NameError" and "Traceback" not in validated["undefined"]["text"]
    )
    assert validated["after"] == {"text": "reached the end\n"}


# --- the same rules without a kernel ---------------------------------------------------------


def _raised(code: str, names: dict | None = None) -> BaseException:
    try:
        exec(compile(code, "/tmp/ipykernel_1/cell.py", "exec"), names if names is not None else {})
    except Exception as error:
        return error
    raise AssertionError("the code raised nothing")


def test_a_stub_raised_in_plain_python_reads_the_same():
    """The formatter works on any exception object, not only inside a kernel."""

    def softmax():
        raise NotImplementedError()

    try:
        softmax()
    except NotImplementedError as error:
        lines = short_traceback(error)
    assert len(lines) == 1 and "Exercise still to do" in lines[0]


def test_an_error_with_a_message_is_no_exercise_even_when_it_is_not_implemented():
    """A library's NotImplementedError("...") is a real error, not a stub."""
    to_do = ExercisesToDo()
    assert to_do.to_do_message(_raised("raise NotImplementedError('no sparse support')")) is None
    assert to_do.to_do_message(_raised("raise ValueError()")) is None


def test_only_a_listed_answer_or_a_name_a_stopped_cell_left_out_is_still_to_do():
    to_do = ExercisesToDo(answers=["rnn_steps_40"])
    assert "`rnn_steps_40`" in to_do.to_do_message(_raised("rnn_steps_40"))
    assert to_do.to_do_message(_raised("weights")) is None

    stopped = _raised("def softmax():\n    raise NotImplementedError()\n\nweights = softmax()")
    assert to_do.show(SimpleNamespace(), type(stopped), stopped, stopped.__traceback__) == []
    result = SimpleNamespace(error_in_exec=stopped, info=SimpleNamespace(raw_cell="weights = softmax()"))
    to_do.carry_on(result)
    assert result.error_in_exec is None, "the cell counts as run"
    assert "`softmax`, which is not written yet" in to_do.to_do_message(_raised("weights"))


def test_a_cell_stopped_by_a_real_error_still_fails():
    to_do = ExercisesToDo()
    shown = []
    shell = SimpleNamespace(_showtraceback=lambda etype, value, lines: shown.append(lines))
    error = _raised("1 / 0")
    to_do.show(shell, type(error), error, error.__traceback__)
    result = SimpleNamespace(error_in_exec=error, info=SimpleNamespace(raw_cell="y = 1 / 0"))
    to_do.carry_on(result)
    assert result.error_in_exec is error and shown[0][0].endswith("division by zero")
    assert to_do.to_do_message(_raised("y")) is None


def test_a_name_is_no_longer_blamed_on_an_exercise_once_its_cell_fails_for_another_reason():
    to_do = ExercisesToDo()
    stopped = _raised("def softmax():\n    raise NotImplementedError()\n\nweights = softmax()")
    to_do.show(SimpleNamespace(), type(stopped), stopped, stopped.__traceback__)
    to_do.carry_on(SimpleNamespace(error_in_exec=stopped, info=SimpleNamespace(raw_cell="weights = 1")))
    assert to_do.to_do_message(_raised("weights")) is not None

    wrong = _raised("1 / 0")
    shell = SimpleNamespace(_showtraceback=lambda *args: None)
    to_do.show(shell, type(wrong), wrong, wrong.__traceback__)
    to_do.carry_on(SimpleNamespace(error_in_exec=wrong, info=SimpleNamespace(raw_cell="weights = 1 / 0")))
    assert to_do.to_do_message(_raised("weights")) is None, "the written code failed: a real NameError"


@pytest.mark.slow
def test_validate_reports_every_test_of_a_fresh_student_notebook(tmp_path):
    """The Validate button (``nbgrader validate``) fails each test cell (and unanswered written
    question) of a notebook whose exercises are all still to do, although Run All goes past them."""
    lesson = "02_dot_products"
    notebook = nbformat.read(student_notebook(lesson), as_version=4)
    # every test cell, and every written answer (still "YOUR ANSWER HERE")
    graded = [c for c in notebook.cells if is_test_cell(c) or c.metadata.get("nbgrader", {}).get("grade")]
    given = tmp_path / f"{lesson}.ipynb"
    nbformat.write(notebook, given)
    environment = {k: v for k, v in os.environ.items() if k != "NBGRADER_EXECUTION"}
    result = subprocess.run(
        [sys.executable, "-m", "nbgrader", "validate", str(given)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=environment,
        timeout=900,
    )
    report = result.stdout + result.stderr
    assert f"VALIDATION FAILED ON {len(graded)} CELL(S)!" in report, report[-3000:]
    assert "Exercise still to do" in report and "Traceback (most recent call last)" not in report, report[
        -3000:
    ]
