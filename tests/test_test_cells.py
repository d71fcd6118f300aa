"""The test-cell convention check (fast): a test cell may use only its own names and the solutions'."""

import nbformat
import pytest

from course_build.authoring.source import build_source_notebook
from course_build.paths import lesson_names
from course_build.test_cells import convention_problems, defined_names, free_names, solution_names


def _cell(source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source)
    if nbgrader:
        cell.metadata.nbgrader = {"grade_id": "cell", "locked": False, **nbgrader}
    return cell


def test_solution_cells_define_their_top_level_names_but_not_their_imports():
    code = "import math\nfrom collections import Counter\nn, d = 1, 2\nx: int = 3\ny += 1\n"
    code += "def f():\n    z = 1\n"
    assert defined_names(code) == {"n", "d", "x", "y", "f"}
    assert defined_names("%%capture\nanswer = 3\n") == {"answer"}


def test_free_names_are_what_a_cell_reads_without_binding():
    code = (
        "import numpy as np\n"
        "def _oracle(Q, *rest, mask=None):\n    return [q for q in Q]\n"
        "try:\n    softmax(X)\nexcept ValueError as error:\n    print(error, len(trace))\n"
    )
    assert free_names(code) == {"softmax", "X", "trace"}


def test_a_test_cell_reading_a_worked_example_variable_is_reported():
    notebook = nbformat.v4.new_notebook(
        cells=[
            _cell("X = [1, 2]"),
            _cell("def softmax(x):\n    return x\nweight = 0.5", solution=True, grade=False),
            _cell("import numpy as np\nassert np.allclose(softmax(X), weight)", solution=False, grade=True),
        ]
    )
    assert solution_names(notebook.cells) == {"softmax", "weight"}
    problems = convention_problems(notebook)
    assert len(problems) == 1 and "uses X," in problems[0]


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_lessons_test_cells_follow_the_convention(lesson):
    assert convention_problems(build_source_notebook(lesson)) == []
