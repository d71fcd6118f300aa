"""No function of ``transformer_course`` computes a graded exercise's answer (design rule).

A student may import the helper package, so a function of it that reproduces a graded function
would earn its points for a one-line import (issue 22: ``gpt.next_token_probabilities`` answered
lesson 10's ``next_token_distribution``). A leading underscore does not keep a function out of
reach (``from transformer_course.translation.schedule import _paper_rate as learning_rate`` answered lesson 9
until the package lost that function), so private functions are audited like public ones. The
audit runs every lesson's reference solutions in-process on the inputs the lesson's own test cells
give them (recorded while those cells run), then calls every function that every
``transformer_course`` module defines, private ones included, on the same inputs, by arity, as
given and with arrays as PyTorch tensors, and fails when one reproduces all of a graded function's
recorded outputs. Functions that raise on those inputs, or run past a short time limit, do not
reproduce anything.

Lesson 8's graded PyTorch classes are audited the same way: the calls its tests make through the
locked adapters (``adapters.adapted(piece, Class)``) are recorded on the reference classes, and
every ``nn.Module`` class the package defines, private ones included (an import reaches them just
as well), is run through the same adapter on the same inputs.
"""

import ast
import contextlib
import copy
import importlib
import inspect
import io
import pkgutil
import signal
import types
import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch
import torch._dynamo  # noqa: F401 - see _time_limit

import transformer_course
import transformer_course.adapters
from course_build.authoring.source import build_source_notebook
from course_build.cell_roles import grade_id, is_code_answer, is_test_cell
from course_build.paths import lesson_names

# Recorded inputs per graded function, at most CALLS_PER_CELL from each test cell so that every
# cell's case (each knob of a sampler, batch dimensions, edge cases) is among them.
CALLS_PER_FUNCTION = 16
CALLS_PER_CELL = 2
# A package function still running after this long on a test's small inputs is training or
# building data, not answering an exercise: it is not called again.
SECONDS_PER_CALL = 1
# Entry points that start a command-line program: called with a lesson's inputs they would parse
# them as arguments or train a model, and they return nothing an exercise could use.
ENTRY_POINTS = {"main"}


@dataclass
class GradedFunction:
    """A function a lesson's solution defines, with the inputs its tests gave it and its outputs."""

    lesson: str
    name: str
    function: Callable
    calls: list[tuple[tuple, dict, object]] = field(default_factory=list)


def _solution_namespace(cells: list) -> tuple[dict, list[str]]:
    """The namespace after running every solution cell, and the names of the functions they define."""
    namespace: dict = {}
    exec("import math\nimport numpy as np", namespace)  # what the lessons' first cells import
    names: list[str] = []
    for cell in cells:
        if cell.cell_type == "code" and "nbgrader" in cell.metadata and is_code_answer(cell):
            before = set(namespace)
            with contextlib.redirect_stdout(io.StringIO()):
                exec(compile(cell.source, grade_id(cell), "exec"), namespace)
            names += [
                name
                for name in set(namespace) - before
                if isinstance(namespace[name], types.FunctionType) and not name.startswith("_")
            ]
    return namespace, sorted(names)


def _recording(graded: GradedFunction, calls_this_cell: dict[str, int]) -> Callable:
    """``graded.function``, recording calls that return: (copies of the inputs, the output)."""

    def call(*args, **kwargs):
        inputs = copy.deepcopy((args, kwargs))
        result = graded.function(*args, **kwargs)
        if len(graded.calls) < CALLS_PER_FUNCTION and calls_this_cell[graded.name] < CALLS_PER_CELL:
            calls_this_cell[graded.name] += 1
            graded.calls.append((*inputs, copy.deepcopy(result)))
        return result

    call.__name__ = graded.name
    return call


def graded_functions(lesson: str) -> list[GradedFunction]:
    """Every function the lesson's tests call, with the calls they make on the reference solution.

    (Functions a lesson only has students paste from an earlier one, for its own functions to
    call, are audited with the lesson that grades them.)
    """
    cells = build_source_notebook(lesson).cells
    namespace, names = _solution_namespace(cells)
    test_cells = [c for c in cells if c.cell_type == "code" and "nbgrader" in c.metadata and is_test_cell(c)]
    named_in_tests = {
        node.id for c in test_cells for node in ast.walk(ast.parse(c.source)) if isinstance(node, ast.Name)
    }
    graded = [GradedFunction(lesson, name, namespace[name]) for name in names if name in named_in_tests]
    calls_this_cell: dict[str, int] = {}
    recorded = {g.name: _recording(g, calls_this_cell) for g in graded}
    for cell in cells:
        if cell.cell_type == "code" and "nbgrader" in cell.metadata and is_test_cell(cell):
            calls_this_cell.update(dict.fromkeys(recorded, 0))
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(cell.source, grade_id(cell), "exec"), {**namespace, **recorded})
    return graded


@dataclass
class GradedClass:
    """A class a lesson's solution defines, with the calls its tests made through its adapter."""

    lesson: str
    name: str
    cls: type
    calls: list[tuple[str, tuple, dict, object]] = field(default_factory=list)


def graded_classes(lesson: str) -> list[GradedClass]:
    """Every class of the lesson's solution that its tests run through a locked adapter, with the
    calls those tests make on the reference class: (piece, arguments, output)."""
    cells = build_source_notebook(lesson).cells
    namespace, _ = _solution_namespace(cells)
    graded = {
        id(value): GradedClass(lesson, name, value)
        for name, value in namespace.items()
        if isinstance(value, type) and issubclass(value, torch.nn.Module) and not name.startswith("_")
    }
    locked = transformer_course.adapters.adapted
    calls_this_cell: dict[int, int] = {}

    def recording_adapted(piece: str, student_class: object) -> Callable:
        run = locked(piece, student_class)
        entry = graded.get(id(student_class))
        if entry is None:
            return run

        def call(*args, **kwargs):
            inputs = copy.deepcopy((args, kwargs))
            result = run(*args, **kwargs)
            if len(entry.calls) < CALLS_PER_FUNCTION and calls_this_cell.get(id(entry), 0) < CALLS_PER_CELL:
                calls_this_cell[id(entry)] = calls_this_cell.get(id(entry), 0) + 1
                entry.calls.append((piece, *inputs, copy.deepcopy(result)))
            return result

        return call

    transformer_course.adapters.adapted = recording_adapted
    try:
        for cell in cells:
            if cell.cell_type == "code" and "nbgrader" in cell.metadata and is_test_cell(cell):
                calls_this_cell.clear()
                with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    exec(compile(cell.source, grade_id(cell), "exec"), dict(namespace))
    finally:
        transformer_course.adapters.adapted = locked
    return [entry for entry in graded.values() if entry.calls]


def package_modules() -> list[types.ModuleType]:
    return [
        importlib.import_module(info.name)
        for info in pkgutil.walk_packages(transformer_course.__path__, "transformer_course.")
    ]


def package_module_classes() -> Iterator[tuple[str, type]]:
    """``module.name`` and the class, for every ``nn.Module`` class the package defines."""
    for module in package_modules():
        for name, value in vars(module).items():
            if (
                isinstance(value, type)
                and issubclass(value, torch.nn.Module)
                and value.__module__ == module.__name__
            ):
                yield f"{module.__name__}.{name}", value


def reproduces_class(candidate: type, graded: GradedClass) -> bool:
    """Whether ``candidate``, run through the same adapter, gives every recorded output."""
    for piece, args, kwargs, expected in graded.calls:
        try:
            with _quiet_call():
                got = transformer_course.adapters.ADAPTERS[piece](candidate, *copy.deepcopy(args), **kwargs)
        except (_TooSlow, Exception):
            return False
        if not _same(got, expected):
            return False
    return bool(graded.calls)


def package_module_functions() -> Iterator[tuple[str, Callable]]:
    """``module.name`` and the function, for every function the package's modules define, private
    ones included (command-line entry points excepted)."""
    for module in package_modules():
        for name, value in vars(module).items():
            if inspect.isfunction(value) and value.__module__ == module.__name__ and name not in ENTRY_POINTS:
                yield f"{module.__name__}.{name}", value


def _as_torch(value: object, dtype: torch.dtype | None = None) -> object:
    """Arrays and lists of numbers as PyTorch tensors (the package works on tensors), the rest as is."""
    if isinstance(value, np.ndarray | list):
        try:
            array = np.asarray(value)
        except ValueError:
            return value
        if array.dtype.kind in "biuf":
            return torch.from_numpy(array.copy()).to(dtype or torch.from_numpy(array).dtype)
    return value


# How a call's arguments are passed: as the test gave them, as tensors, as float tensors.
CONVERSIONS = (lambda v: v, _as_torch, lambda v: _as_torch(v, torch.float64))


def _positional_inputs(graded: GradedFunction, args: tuple, kwargs: dict) -> list:
    """The call's arguments in the graded function's parameter order, defaults filled in."""
    bound = inspect.signature(graded.function).bind(*args, **kwargs)
    bound.apply_defaults()
    return list(bound.arguments.values())


def _arities(candidate: Callable, available: int) -> list[int]:
    """How many leading positional arguments ``candidate`` accepts, of the ``available`` ones."""
    try:
        parameters = list(inspect.signature(candidate).parameters.values())
    except (TypeError, ValueError):
        return []
    positional = [p for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    required = sum(p.default is p.empty for p in positional)
    if any(p.kind is p.VAR_POSITIONAL for p in parameters):
        return [available] if available >= required else []
    return [n for n in range(required, min(len(positional), available) + 1)]


def _plain(value: object) -> object:
    """A result as NumPy arrays and numbers, so that PyTorch and NumPy results compare alike."""
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().double().numpy() if value.is_floating_point() else value.numpy()
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


def _same(got: object, expected: object) -> bool:
    """Whether ``got`` reproduces ``expected``: same structure and shapes, values within float32 rounding."""
    got, expected = _plain(got), _plain(expected)
    if isinstance(expected, list):
        return isinstance(got, list) and len(got) == len(expected) and all(map(_same, got, expected))
    try:
        got_array, expected_array = np.asarray(got), np.asarray(expected)
    except (TypeError, ValueError):
        return False
    if got_array.shape != expected_array.shape or got_array.size == 0:
        return False
    if _KINDS.get(got_array.dtype.kind) != _KINDS.get(expected_array.dtype.kind):
        return False  # True is not the token id 1, nor an integer the probability 1.0
    if expected_array.dtype.kind not in "biuf":
        return bool(got_array.dtype == expected_array.dtype and np.array_equal(got_array, expected_array))
    return bool(np.allclose(got_array, expected_array, rtol=1e-4, atol=1e-6, equal_nan=False))


_KINDS = {"b": "booleans", "i": "integers", "u": "integers", "f": "floats"}


class _TooSlow(BaseException):
    pass


@contextlib.contextmanager
def _time_limit(seconds: int) -> Iterator[None]:
    """Stop a call after ``seconds``. PyTorch imports ``torch._dynamo`` (and sympy with it) on the
    first module built on the meta device; an alarm that fired inside that import would leave a
    half-initialized sympy in ``sys.modules`` and fail every later call, so the module is imported
    up front."""

    def stop(_signum, _frame):
        raise _TooSlow

    previous = signal.signal(signal.SIGALRM, stop)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def _quiet_call() -> Iterator[None]:
    """A package call on a lesson's inputs: within the time limit, its output and warnings hidden."""
    with (
        _time_limit(SECONDS_PER_CALL),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        warnings.catch_warnings(),
    ):
        warnings.simplefilter("ignore")
        yield


_too_slow: set[Callable] = set()


def _reproduces_one_call(candidate: Callable, graded: GradedFunction, call: tuple) -> bool:
    args, kwargs, expected = call
    inputs = _positional_inputs(graded, args, kwargs)
    for convert in CONVERSIONS:
        for arity in _arities(candidate, len(inputs)):
            if candidate in _too_slow:
                return False
            arguments = [convert(v) for v in copy.deepcopy(inputs[:arity])]
            try:
                with _quiet_call():
                    got = candidate(*arguments)
            except _TooSlow:
                _too_slow.add(candidate)
                return False
            except (Exception, SystemExit):  # a command-line parser exits on arguments it rejects
                continue
            if _same(got, expected):
                return True
    return False


def reproduces(candidate: Callable, graded: GradedFunction) -> bool:
    """Whether ``candidate`` gives the graded function's output on every recorded call."""
    return bool(graded.calls) and all(_reproduces_one_call(candidate, graded, call) for call in graded.calls)


@pytest.fixture(scope="module")
def package_functions() -> list[tuple[str, Callable]]:
    return sorted(package_module_functions(), key=lambda item: item[0])


@pytest.fixture
def in_a_scratch_directory(tmp_path, monkeypatch):
    """Package functions that write files write them here."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.slow  # every package function on every lesson's inputs: minutes on a busy machine
@pytest.mark.parametrize("lesson", lesson_names())
def test_no_package_function_answers_a_graded_function(lesson, package_functions, in_a_scratch_directory):
    graded = graded_functions(lesson)
    answered = [
        f"{where} reproduces lesson {lesson}'s graded {g.name}"
        for g in graded
        for where, candidate in package_functions
        if reproduces(candidate, g)
    ]
    assert answered == [], "; ".join(answered)


@pytest.mark.slow  # builds every package module class on lesson 8's inputs
def test_no_package_class_answers_a_graded_class(in_a_scratch_directory):
    candidates = list(package_module_classes())
    answered = [
        f"{where} reproduces lesson {g.lesson}'s graded {g.name}"
        for lesson in lesson_names()
        for g in graded_classes(lesson)
        for where, candidate in candidates
        if reproduces_class(candidate, g)
    ]
    assert answered == [], "; ".join(answered)


def test_the_class_audit_runs_every_graded_class_on_its_tests_inputs_and_finds_a_copy():
    graded = {g.name: g for g in graded_classes("08_encoder_decoder")}
    assert set(graded) == {"MultiHeadAttention", "EncoderLayer", "DecoderLayer", "Embedding"}
    assert all(len(g.calls) >= 2 for g in graded.values())
    attention = graded["MultiHeadAttention"]

    class CopiedAttention(attention.cls):  # a package class with the lesson's interface
        pass

    assert reproduces_class(CopiedAttention, attention)
    assert not reproduces_class(graded["EncoderLayer"].cls, attention)


def test_every_graded_function_was_called_by_its_lesson_tests():
    """The audit compares on recorded calls: a graded function with none would be audited on nothing."""
    never_called = [
        f"{g.lesson}: {g.name}"
        for lesson in lesson_names()
        for g in graded_functions(lesson)
        if len(g.calls) < 2
    ]
    assert never_called == []


def test_the_audit_finds_a_package_function_that_reproduces_a_graded_one():
    (distribution,) = [g for g in graded_functions("10_decoder_only") if g.name == "next_token_distribution"]

    def with_tensors(logits, temperature=1.0, top_k=None, top_p=None):  # a package-style copy
        as_array = logits.numpy() if isinstance(logits, torch.Tensor) else logits
        return torch.from_numpy(distribution.function(as_array, temperature, top_k, top_p)).float()

    def softmax_only(logits, temperature=1.0):
        z = np.asarray(logits, dtype=float) / temperature
        return np.exp(z - z.max()) / np.exp(z - z.max()).sum()

    assert reproduces(with_tensors, distribution)
    assert not reproduces(softmax_only, distribution)


def test_the_audit_covers_private_functions_but_not_entry_points():
    """An underscore keeps nothing from an import, so the audit must not skip private functions."""
    names = {where for where, _ in package_module_functions()}
    assert "transformer_course.translation.schedule._check_sizes" in names
    assert "transformer_course.translation.schedule.peak_lr" in names
    assert "transformer_course.widgets.architecture.main" not in names
