"""What a student's function may do to a test's arguments while grading (fast, no kernel).

The checker's stand-in for a student's function sends copies of the arguments into the kernel. In
place changes never come back into the test's variables (a test computing its expectation after
the call would otherwise check the student's rewrite), except a generator's state, which is part of
a sampling function's contract. ``call_reporting_inputs`` (behind ``inputs_after_call``) is the one
way a test sees what the function did to its copies.
"""

import numpy as np
import pytest
from kernel_stand_in import ask_through_json

from course_build.checking import wire
from course_build.checking.checker import KernelLink, StudentFunction, run_test_cell
from transformer_course.checks import inputs_after_call

STUDENT_CODE = """
import numpy as np

def scale_in_place(x, factor=2.0):
    x *= factor
    return x.sum()

def rewrite_everything(x, items, table, pair):
    x[...] = 0.0
    items.append("extra")
    items[0][0] = -1.0
    table["new"] = 1
    pair[0][:] = 7.0
    return 0.0

def zero_the_view_then_fail(x):
    x[:] = 0.0
    raise ValueError("no good")

def draw(rng, *, other=None):
    if other is not None:
        other.random()
    return float(rng.random())

def leave_alone(x, *, y=None):
    return float(np.sum(x))
"""


def _namespace() -> dict:
    namespace: dict = {}
    exec(STUDENT_CODE, namespace)  # noqa: S102 - a stand-in for the student's kernel
    return namespace


def _student(name: str) -> StudentFunction:
    return StudentFunction(name, KernelLink(ask_through_json(_namespace())))


def test_an_array_changed_in_place_stays_as_the_test_wrote_it():
    x = np.array([1.0, 2.0])
    total = _student("scale_in_place")(x)
    assert total == 6.0
    assert x.tolist() == [1.0, 2.0]


def test_views_lists_dicts_and_tuples_are_never_written_back():
    base = np.arange(4.0)
    view = base[:2]
    items, table, pair = [np.ones(2)], {"a": 1}, (np.zeros(3), "label")
    _student("rewrite_everything")(view, items, table, pair)
    assert base.tolist() == [0.0, 1.0, 2.0, 3.0]
    assert len(items) == 1 and items[0].tolist() == [1.0, 1.0]
    assert table == {"a": 1}
    assert pair[0].tolist() == [0.0, 0.0, 0.0]


def test_an_expectation_computed_after_the_call_sees_the_test_own_data():
    result = run_test_cell(
        "import numpy as np\n_x = np.array([1.0, 2.0, 3.0])\n_got = scale_in_place(_x)\n"
        "assert _got == 2 * _x.sum(), 'wrong total'\n",
        ["scale_in_place"],
        ask_through_json(_namespace()),
    )
    assert result["error"] is None


def test_a_generator_argument_still_advances_positional_or_keyword():
    rng, other = np.random.default_rng(5), np.random.default_rng(9)
    reference, reference_other = np.random.default_rng(5), np.random.default_rng(9)
    draw = _student("draw")
    first = draw(rng, other=other)
    second = draw(rng)
    assert first == reference.random() and second == reference.random()
    reference_other.random()
    assert other.random() == reference_other.random()


def test_an_exception_leaves_the_arguments_alone():
    x = np.array([3.0, 4.0])
    with pytest.raises(ValueError, match="no good"):
        _student("zero_the_view_then_fail")(x)
    assert x.tolist() == [3.0, 4.0]


def test_call_reporting_inputs_returns_the_arguments_as_the_function_left_them():
    x = np.array([1.0, 2.0])
    result, args_after, kwargs_after = _student("scale_in_place").call_reporting_inputs(x, factor=3.0)
    assert result == 9.0
    assert args_after[0].tolist() == [3.0, 6.0] and kwargs_after == {"factor": 3.0}
    assert x.tolist() == [1.0, 2.0]
    assert not np.shares_memory(args_after[0], x)


def test_call_reporting_inputs_gives_fresh_copies_when_nothing_changed():
    x, y = np.array([1.0, 2.0]), [np.zeros(1)]
    result, args_after, kwargs_after = _student("leave_alone").call_reporting_inputs(x, y=y)
    assert result == 3.0 and isinstance(args_after, tuple)
    assert args_after[0] is not x and not np.shares_memory(args_after[0], x)
    assert args_after[0].tolist() == [1.0, 2.0]
    assert kwargs_after["y"] is not y and kwargs_after["y"][0] is not y[0]


def test_inputs_after_call_uses_the_checker_report_while_grading():
    x = np.array([1.0, 2.0])
    result, (x_after,), _ = inputs_after_call(_student("scale_in_place"), x)
    assert result == 6.0 and x_after.tolist() == [2.0, 4.0] and x.tolist() == [1.0, 2.0]


def test_call_reporting_inputs_raises_what_the_function_raised():
    with pytest.raises(ValueError, match="no good"):
        _student("zero_the_view_then_fail").call_reporting_inputs(np.ones(2))


def test_arguments_that_come_back_malformed_fail_the_cell():
    def ask(request: dict) -> dict:
        return {"status": "returned", "value": wire.encode(1.0), "args_after": wire.encode([1, 2, 3])}

    link = KernelLink(ask)
    with pytest.raises(BaseException, match="cannot read"):
        StudentFunction("leave_alone", link).call_reporting_inputs(np.ones(2))
    assert link.fatal is not None
