"""Strict comparisons for the lessons' test cells.

numpy's own comparisons broadcast, and a zero-size array broadcasts against anything:
``np.allclose(np.zeros((1, 0)), expected)`` and ``np.all(np.isfinite(np.zeros(0)))`` are True
because nothing is compared. A function returning an empty array would pass such a test. So a test
cell never compares a student's result with numpy directly (``python -m course_build --check``
reports a test cell that does): it uses these helpers, which first check the shape (zero size
included) and the kind of dtype, failing with a message that names the expected shape, and only
then compare values.

They run wherever a test cell runs: in the student's kernel (the visible tests, as feedback) and in
the trusted checker while grading. So this module imports numpy only.
"""

import copy
from collections.abc import Callable

import numpy as np

# For each kind of expected dtype, the kinds of result that may be compared with it.
_CLOSE_KINDS = {"b": "b", "i": "iuf", "u": "iuf", "f": "iuf", "c": "iufc", "U": "U"}
_EQUAL_KINDS = {"b": "b", "i": "iu", "u": "iu", "f": "iuf", "c": "iufc", "U": "U"}
_KIND_NAMES = {
    "b": "booleans",
    "i": "integers",
    "u": "integers",
    "f": "floats",
    "c": "complex numbers",
    "U": "strings",
}


def _as_array(value: object, what: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as error:  # a ragged list, an odd object
        raise AssertionError(f"{what} is not an array of numbers ({error})") from None
    if array.dtype.kind not in _KIND_NAMES:
        raise AssertionError(f"{what} is not an array of numbers (dtype {array.dtype})")
    return array


def check_shape(got: object, shape: tuple[int, ...], *, what: str = "the result") -> np.ndarray:
    """``got`` as an array, after failing with a clear message unless its shape is ``shape``."""
    array = _as_array(got, what)
    shape = tuple(shape)
    if array.shape != shape:
        raise AssertionError(f"{what} should have shape {shape}, got shape {array.shape}")
    return array


def _comparable(
    got: object, expected: object, kinds: dict[str, str], what: str
) -> tuple[np.ndarray, np.ndarray]:
    expected_array = _as_array(expected, "the expected value")
    got_array = check_shape(got, expected_array.shape, what=what)
    if got_array.dtype.kind not in kinds[expected_array.dtype.kind]:
        raise AssertionError(
            f"{what} should hold {_KIND_NAMES[expected_array.dtype.kind]}, got an array of dtype "
            f"{got_array.dtype}"
        )
    return got_array, expected_array


def close(
    got: object, expected: object, *, rtol: float = 1e-5, atol: float = 1e-8, what: str = "the result"
) -> bool:
    """Whether ``got`` has ``expected``'s shape and kind of dtype and values within tolerance.

    A wrong shape or kind fails here, with a message naming the expected one; otherwise the
    answer is ``np.allclose``'s (the same default tolerances), with NaN never equal to anything.
    Use it as ``assert close(got, expected), "what is wrong and how to fix it"``.
    """
    got_array, expected_array = _comparable(got, expected, _CLOSE_KINDS, what)
    if expected_array.dtype.kind == "U":
        return bool(np.array_equal(got_array, expected_array))
    return bool(np.allclose(got_array, expected_array, rtol=rtol, atol=atol))


def equal(got: object, expected: object, *, what: str = "the result") -> bool:
    """Whether ``got`` has ``expected``'s shape and kind of dtype and exactly its values."""
    got_array, expected_array = _comparable(got, expected, _EQUAL_KINDS, what)
    return bool(np.array_equal(got_array, expected_array))


def all_of(condition: object, *, what: str = "the condition") -> bool:
    """``np.all(condition)``, except that a condition over nothing (zero size) fails instead of passing."""
    array = _as_array(condition, what)
    if array.size == 0:
        raise AssertionError(f"{what} has nothing to check: it was applied to an empty array")
    return bool(np.all(array))


def call_many(function: Callable, calls: list[tuple[tuple, dict]]) -> list[object]:
    """``[function(*args, **kwargs) for args, kwargs in calls]``, each call on copies of its arguments.

    A frequency test calls a sampler thousands of times. While grading, ``function`` is the
    checker's stand-in for the student's function, whose ``call_many`` sends all the calls to the
    student's kernel in one message, not one message each. A ``np.random.Generator`` argument is
    not copied (it advances, as a sampler's generator should), so each call must have its own: the
    calls of a batch are sent before any of them runs, so one generator shared by two calls would
    not advance between them. The first call that raises stops the rest, as in a loop.
    """
    calls = [(tuple(args), dict(kwargs)) for args, kwargs in calls]
    generators = [
        [v for v in (*args, *kwargs.values()) if isinstance(v, np.random.Generator)] for args, kwargs in calls
    ]
    ids = [id(v) for own in generators for v in own]
    if len(ids) != len(set(ids)):
        raise ValueError("call_many: give each call its own np.random.Generator (a batch cannot share one)")
    batched = getattr(function, "call_many", None)
    if batched is not None:
        return batched(calls)
    results = []
    for (args, kwargs), own in zip(calls, generators, strict=True):
        shared = {id(v): v for v in own}  # deepcopy's memo: these are passed, not copied
        results.append(function(*copy.deepcopy(args, dict(shared)), **copy.deepcopy(kwargs, dict(shared))))
    return results


def call_repeatedly(function: Callable, times: int, *args: object, **kwargs: object) -> list[object]:
    """``[function(*args, **kwargs) for _ in range(times)]``, each call on copies of the arguments
    except their ``np.random.Generator``s, which are the same objects throughout and advance from
    call to call, as in that loop.

    A frequency test draws thousands of tokens from one distribution with one generator. While
    grading, ``function`` is the checker's stand-in for the student's function, whose
    ``call_repeatedly`` runs the whole loop in the student's kernel from one message and sends back
    only the results (``call_many`` sends and returns every call's arguments). The first call that
    raises stops the rest, as in the loop.
    """
    repeated = getattr(function, "call_repeatedly", None)
    if repeated is not None:
        return repeated(times, args, kwargs)
    shared = {id(v): v for v in _generators([args, kwargs])}  # deepcopy's memo: passed, not copied
    return [
        function(*copy.deepcopy(args, dict(shared)), **copy.deepcopy(kwargs, dict(shared)))
        for _ in range(times)
    ]


def _generators(value: object) -> list[np.random.Generator]:
    """The ``np.random.Generator`` objects in ``value``, at any depth of its tuples, lists and dicts."""
    if isinstance(value, np.random.Generator):
        return [value]
    if isinstance(value, tuple | list):
        return [g for item in value for g in _generators(item)]
    if isinstance(value, dict):
        return [g for item in value.values() for g in _generators(item)]
    return []


def inputs_after_call(function: Callable, *args: object, **kwargs: object) -> tuple[object, tuple, dict]:
    """Call ``function`` on copies of the arguments; return its result and the copies as it left them.

    Graded functions must not change their inputs, and a test never lets them change its own
    variables: this is the one way a test looks at what a call did to its arguments. While
    grading, ``function`` is the checker's stand-in for the student's function, which reports the
    arguments as the student's code left them (``call_reporting_inputs``).
    """
    args, kwargs = copy.deepcopy(args), copy.deepcopy(kwargs)
    reporting = getattr(function, "call_reporting_inputs", None)
    if reporting is not None:
        return reporting(*args, **kwargs)
    result = function(*args, **kwargs)
    return result, args, kwargs
