"""Which cells run under grading (fast, no kernel): the student's, and every course cell they may need.

The grading runs themselves are in tests/test_lesson_variants_*.py (every lesson's realistic
submissions graded with the plan, tests/lesson_variants.py) and tests/test_lesson_every_cell_*.py
(the correct ones graded again with every cell run, tests/lesson_every_cell.py).
"""

import ast

import nbformat
import pytest

from course_build.nbgrader_plugins.grading_plan import cells_to_skip, global_reads
from course_build.paths import lesson_names, nbgrader_source_notebook, student_notebook

SETUP = "import numpy as np"
ANSWER = "def double(x):\n    ### BEGIN SOLUTION\n    return np.multiply(2, x)\n    ### END SOLUTION"
TEST = "assert double(2) == 4"


def _code(source: str, role: str | None = None) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if role == "answer":
        cell.metadata.nbgrader = {"grade_id": "double", "solution": True, "grade": False, "locked": False}
    elif role == "test":
        cell.metadata.nbgrader = {"grade_id": "t", "solution": False, "grade": True, "points": 1}
    return cell


def _lesson(*demonstrations: str, answer: str = ANSWER) -> list[nbformat.NotebookNode]:
    """A source notebook: set-up, the demonstrations, one answer and its test."""
    return [_code(SETUP), *map(_code, demonstrations), _code(answer, "answer"), _code(TEST, "test")]


def _skipped_sources(source: list, submitted: list | None = None) -> list[str]:
    submitted = source if submitted is None else submitted
    return [submitted[i].source for i in sorted(cells_to_skip(source, submitted))]


def test_a_demonstration_no_answer_needs_is_skipped_and_the_set_up_is_not():
    source = _lesson("x = np.arange(3)\nprint(double(x))")
    assert _skipped_sources(source) == ["x = np.arange(3)\nprint(double(x))"]


def test_a_demonstration_whose_names_the_students_code_reads_runs_with_what_it_needs():
    source = _lesson("base = np.ones(3)", "scale = base.sum()", "plot = 1")
    uses_scale = "def double(x):\n    return scale * x / 1.5"
    submitted = _lesson("base = np.ones(3)", "scale = base.sum()", "plot = 1", answer=uses_scale)
    assert _skipped_sources(source, submitted) == ["plot = 1"]


def test_cells_the_student_added_or_edited_always_run():
    source = _lesson("demo = 1")
    submitted = _lesson("demo = 2")  # an edited course cell
    submitted.insert(1, _code("helper = 3"))  # a cell of the student's own
    assert _skipped_sources(source, submitted) == []


def test_a_demonstration_that_changes_an_object_the_answer_reads_runs():
    answer = "rows = []\ndef double(x):\n    return np.multiply(2, x) + len(rows)"
    source = _lesson("rows.append(1)", "np.flag = True", "other = 2", answer=answer)
    assert _skipped_sources(source) == ["other = 2"]


def test_a_seed_runs_when_the_students_statements_draw_after_it():
    drawing = "sample = np.random.normal()\ndef double(x):\n    return np.multiply(2, x)"
    source = _lesson("np.random.seed(0)", answer=drawing)
    assert _skipped_sources(source) == []
    # a function reads the global generator only when a test calls it: tests pass their own
    only_functions = "def double(x):\n    return 2 * x + 0 * np.random.normal()"
    assert _skipped_sources(_lesson("np.random.seed(0)", answer=only_functions)) == ["np.random.seed(0)"]


def test_a_seed_before_classes_of_a_librarys_bases_is_skipped():
    """Defining ``class Layer(nn.Module)`` draws nothing: its methods run when a test calls them."""
    answer = (
        "from collections import UserList\n"
        "class Rows(UserList):\n    def noisy(self):\n        return np.random.normal()\n"
        "def double(x):\n    return np.multiply(2, x)"
    )
    assert _skipped_sources(_lesson("np.random.seed(0)", answer=answer)) == ["np.random.seed(0)"]


@pytest.mark.parametrize(
    "drawing",
    [
        "def double(x, noise=np.random.normal()):\n    return np.multiply(2, x) + 0 * noise",
        "@np.vectorize\ndef double(x):\n    return 2 * x",
        "class Noise:\n    level = np.random.normal()\ndef double(x):\n    return np.multiply(2, x)",
        # the notebook's own base: its __init_subclass__ runs when the subclass is defined
        "class Base:\n    def __init_subclass__(cls):\n        cls.w = np.random.normal()\n"
        "class Child(Base):\n    pass\ndef double(x):\n    return np.multiply(2, x)",
    ],
)
def test_a_seed_runs_before_definitions_that_draw_as_they_are_made(drawing):
    assert _skipped_sources(_lesson("np.random.seed(0)", answer=drawing)) == []


def test_a_demonstration_that_writes_files_or_defines_a_solution_name_runs():
    source = _lesson("open('f.txt', 'w').write('1')", "def double(x):\n    return x", "z = 1")
    assert _skipped_sources(source) == ["z = 1"]


@pytest.mark.parametrize(
    "student_cell",
    [
        "globals()['hidden'] = 1",
        "x = eval('1')",
        "import sys\nsys.modules['__main__']",
        "print(Out[3])",
        "def f(:\n  pass",
    ],
)
def test_indirect_access_or_a_cell_that_does_not_parse_runs_everything(student_cell):
    source = _lesson("demo = 1")
    submitted = _lesson("demo = 1")
    submitted.insert(1, _code(student_cell))
    assert _skipped_sources(source, submitted) == []


def test_a_name_is_local_only_where_python_makes_it_local():
    code = (
        "def f(a):\n    b = a\n    return b + c + [d for d in e]\n"
        "def g():\n    global h\n    h = 1\n    return h\n"
        "k = [m for m in n]\n"
        "total += 1\n"
    )
    assert global_reads(ast.parse(code)) == {"c", "e", "h", "n", "total"}


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_lesson_skips_its_quiz_and_most_demonstrations(lesson):
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4).cells
    student = nbformat.read(student_notebook(lesson), as_version=4).cells
    skipped = cells_to_skip(source, student)
    course_cells = [
        i for i, c in enumerate(student) if c.cell_type == "code" and "nbgrader" not in c.metadata
    ]
    assert "lesson_quiz" in student[max(course_cells)].source and max(course_cells) in skipped
    assert len(skipped) >= len(course_cells) / 2, f"{lesson}: only {len(skipped)}/{len(course_cells)} skipped"


def test_a_function_reading_its_own_cells_import_needs_only_the_cells_after_it():
    answer = "from math import sqrt\ndef double(x):\n    return np.multiply(2, x) + 0 * sqrt(4)"
    source = [_code(SETUP), _code("from math import sqrt"), _code(answer, "answer"), _code(TEST, "test")]
    source.insert(3, _code("sqrt = abs  # binds the name the function reads again"))
    assert _skipped_sources(source) == ["from math import sqrt"]


FUNCTIONAL = "import torch.nn.functional as F"
USES_F = (
    "def double(x):\n    ### BEGIN SOLUTION\n    return np.multiply(2, x) + 0 * F.relu\n    ### END SOLUTION"
)


def _answer_importing(first_line: str) -> str:
    return f"{first_line}\n{USES_F}"


def test_a_demonstration_importing_what_the_answer_imported_already_is_skipped():
    """Lesson 8's training demo imports F again after the student's cell did: same module, no rebinding."""
    source = _lesson(answer=_answer_importing(FUNCTIONAL))
    source.insert(3, _code(f"{FUNCTIONAL}\nlogits = np.zeros(3)"))
    assert _skipped_sources(source) == [f"{FUNCTIONAL}\nlogits = np.zeros(3)"]


@pytest.mark.parametrize(
    "student_line",
    [
        "import torch.nn as F",  # another module under the same name
        "F = None\nimport torch.nn.functional as F",  # the import may not run: a statement before it
        "from torch.nn import functional as F\nF = len",  # bound again by something else
    ],
)
def test_a_demonstration_rebinding_a_name_the_student_bound_otherwise_runs(student_line):
    source = _lesson(answer=_answer_importing(FUNCTIONAL))
    source.insert(3, _code(FUNCTIONAL))
    submitted = _lesson(answer=_answer_importing(student_line))
    submitted.insert(3, _code(FUNCTIONAL))
    assert FUNCTIONAL not in _skipped_sources(source, submitted)


def test_an_import_before_any_running_cell_made_it_still_runs():
    """The answer reads F, which only a cell of the student's after it imports too: skipping the
    course's import would leave F unbound when the test calls the answer."""
    source = _lesson(FUNCTIONAL, answer=USES_F)
    submitted = _lesson(FUNCTIONAL, answer=USES_F)
    submitted.append(_code(f"{FUNCTIONAL}  # mine"))  # a cell of the student's own, at the end
    assert cells_to_skip(source, submitted) == set()


def test_an_import_before_the_students_own_is_skipped_when_every_reader_comes_after_it():
    """Lesson 8: the first ``import torch`` is in a demonstration; the student's cell imports torch
    again, and only it and later cells read it."""
    demonstration = f"{FUNCTIONAL}\nprint(F.relu)"
    source = _lesson(demonstration, answer=_answer_importing(FUNCTIONAL))
    reader = "def triple(x):\n    return 3 * F.relu(x)  # a cell of the student's own"
    submitted = _lesson(demonstration, answer=_answer_importing(FUNCTIONAL))
    submitted.insert(3, _code(reader))  # after the answer's import
    assert _skipped_sources(source, submitted) == [demonstration]
    submitted = _lesson(demonstration, answer=_answer_importing(FUNCTIONAL))
    submitted.insert(2, _code(reader))  # before it: F would be unbound when a test calls triple
    assert demonstration not in _skipped_sources(source, submitted)


def test_importing_a_submodule_is_not_importing_its_package():
    """``import torch.nn`` binds ``torch`` as ``import torch`` does, but also loads ``torch.nn``."""
    answer = "import torch\n" + USES_F.replace("F.", "torch.")
    source = _lesson(answer=answer)
    source.insert(3, _code("import torch.nn"))
    assert "import torch.nn" not in _skipped_sources(source)


LOCAL_WIDTH_TEST = "def _twice(width):\n    return 2 * width\nassert double(2) == 4 and _twice(1) == 2"
WIDTH_ANSWER = "width = 3\ndef double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n    ### END SOLUTION"


def _width_lesson(demonstration: str, test: str) -> list[nbformat.NotebookNode]:
    """A lesson whose answer cell also defines ``width``, after a demonstration binding it."""
    return [_code(SETUP), _code(demonstration), _code(WIDTH_ANSWER, "answer"), _code(test, "test")]


def test_a_literal_bound_to_a_solution_name_no_test_reads_is_skipped():
    """Lesson 8's parameter-count demo binds d and d_ff, solution names its tests use only as
    parameters of their own functions: the checker fetches them, the tests never read them."""
    assert _skipped_sources(_width_lesson("width, depth = 512, 6", LOCAL_WIDTH_TEST)) == [
        "import numpy as np",
        "width, depth = 512, 6",
    ]


@pytest.mark.parametrize(
    ("demonstration", "test"),
    [
        ("width = 512", "assert double(2) == 4 and width > 0"),  # the test reads it
        ("width = np.ones(2)", LOCAL_WIDTH_TEST),  # fetched, and its value might not be readable
        ("width = 512\nwidth = np.ones(2)", LOCAL_WIDTH_TEST),
    ],
)
def test_a_solution_name_a_test_reads_or_fetches_unreadably_is_bound_by_a_running_cell(demonstration, test):
    assert demonstration not in _skipped_sources(_width_lesson(demonstration, test))


def test_a_literal_replacing_a_value_the_student_bound_before_it_runs():
    """Skipped, it would leave the student's own ``width`` for the checker to fetch, which it may
    not be able to read; run, it replaces it with a number."""
    source = _width_lesson("width, depth = 512, 6", LOCAL_WIDTH_TEST)
    submitted = _width_lesson("width, depth = 512, 6", LOCAL_WIDTH_TEST)
    submitted.insert(1, _code("width = np.ones(2)  # a cell of the student's own"))
    assert "width, depth = 512, 6" not in _skipped_sources(source, submitted)
