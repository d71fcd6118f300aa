"""The strict-comparison rule of ``python -m course_build --check`` (fast, no kernel).

A test cell comparing a student's result with numpy's or torch's broadcasting comparisons passes on
an empty array; the rule finds each such use, through aliases too, and names the helper to use.
"""

import nbformat
import pytest

from course_build.__main__ import main
from course_build.authoring.source import build_source_notebook
from course_build.cell_roles import is_test_cell
from course_build.paths import lesson_names
from course_build.test_cell_comparisons import comparison_problems, forbidden_comparisons


@pytest.mark.parametrize(
    "code, used, helper",
    [
        ("import numpy as np\nassert np.allclose(f(1), 2.0)", "np.allclose", "close"),
        ("import numpy as xp\nassert xp.isclose(f(1), 2.0)", "np.isclose", "close"),
        ("import numpy\nassert numpy.array_equal(f(1), [1])", "np.array_equal", "equal"),
        ("import numpy as np\nassert np.array_equiv(f(1), [1])", "np.array_equiv", "equal"),
        ("import numpy as np\nnp.testing.assert_allclose(f(1), 2.0)", "np.testing", "close or equal"),
        (
            "from numpy.testing import assert_array_equal\nassert_array_equal(f(1), 1)",
            "np.testing.assert_array_equal",
            "close or equal",
        ),
        ("from numpy import allclose as same\nassert same(f(1), 2.0)", "np.allclose", "close"),
        ("import numpy as np\nassert np.all(f(1) > 0)", "np.all", "all_of"),
        ("import numpy as np\nassert not np.any(f(1) < 0)", "np.any", "all_of"),
        ("import torch\nassert torch.allclose(f(1), g(1))", "torch.allclose", "close"),
        ("import torch\nassert torch.equal(f(1), g(1))", "torch.equal", "equal"),
        ("import torch\ntorch.testing.assert_close(f(1), g(1))", "torch.testing", "close or equal"),
        ("assert (f(1) >= 0).all()", "the .all() method", "all_of"),
        ("assert not (f(1) < 0).any()", "the .any() method", "all_of"),
        ("assert all(w >= 0 for w in f(1))", "the builtin all() (all([]) is True)", "all_of"),
        ("import numpy as np\ncheck = np.allclose\nassert check(f(1), 2.0)", "np.allclose", "close"),
    ],
)
def test_each_broadcasting_comparison_is_found_with_its_replacement(code, used, helper):
    found = forbidden_comparisons(code)
    assert len(found) == 1, found
    _line, found_used, found_helper = found[0]
    assert (found_used, found_helper) == (used, helper)


@pytest.mark.parametrize(
    "code",
    [
        "from transformer_course.checks import close, equal, all_of\nimport numpy as np\n"
        "assert close(f(1), [1.0]) and equal(g(1), [1]) and all_of(f(1) >= 0)",
        "import numpy as np\nassert np.isfinite(f(1)).shape == (2,) and np.abs(f(1) - 1).max() < 1e-6",
        "assert any(x > 0 for x in [1])",  # any([]) is False: it fails closed
        "def all(values):\n    return True\nassert all([])",  # the cell's own all, not the builtin
        "%%capture\nimport numpy as np\nx = np.zeros(2)",
    ],
)
def test_strict_or_fail_closed_checks_pass(code):
    assert forbidden_comparisons(code) == []


def test_the_line_inside_the_cell_is_reported():
    found = forbidden_comparisons("import numpy as np\n_x = f(1)\n\nassert np.allclose(_x, 1.0)\n")
    assert found == [(4, "np.allclose", "close")]


def test_a_problem_names_the_cell_the_line_and_the_import():
    cell = nbformat.v4.new_code_cell("import numpy as np\nassert np.all(f(1) > 0), 'positive'")
    cell.metadata.nbgrader = {"grade_id": "softmax_visible", "grade": True, "solution": False, "points": 1}
    other = nbformat.v4.new_code_cell("import numpy as np\nprint(np.allclose(1, 1))")  # an ordinary cell
    problems = comparison_problems(nbformat.v4.new_notebook(cells=[other, cell]))
    assert problems == [
        "test cell 'softmax_visible', line 2: uses np.all, which passes on an empty array; use all_of "
        "(from transformer_course.checks import all_of)"
    ]


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_lessons_test_cells_compare_strictly(lesson):
    assert comparison_problems(build_source_notebook(lesson)) == []


def test_the_check_command_reports_a_forbidden_comparison(monkeypatch, capsys):
    lesson = "03_attention"
    notebook = build_source_notebook(lesson)
    test_cell = next(cell for cell in notebook.cells if is_test_cell(cell))
    test_cell.source += "\nassert np.allclose(1.0, 1.0)"
    monkeypatch.setattr("course_build.__main__.build_source_notebook", lambda name: notebook)
    monkeypatch.setattr("course_build.__main__.stale_artifacts", lambda sources: [])
    assert main(["--check", "--lesson", lesson]) == 1
    out = capsys.readouterr().out
    assert f"TEST CELL: {lesson}: test cell {test_cell.metadata.nbgrader['grade_id']!r}" in out
    assert "np.allclose" in out and "use close" in out
