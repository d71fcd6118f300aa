"""Round-off figures print as machine-independent bounds (transformer_course.roundoff), and no
lesson prints a raw one, so regenerating a lesson on any machine gives the same bytes."""

import re

import nbformat
import pytest

from course_build.paths import lesson_names, solution_notebook
from transformer_course.roundoff import below

# A printed value this small (2.2e-16, not a bound such as 1e-12) can only be rounding error.
ROUND_OFF = re.compile(r"\b\d\.\d+e-(?:1[2-9]|[2-9]\d)\b")


def test_a_round_off_value_prints_as_its_bound_whatever_its_sign_or_size():
    assert below(2.2e-16, 1e-12) == below(-2.8e-17, 1e-12) == below(0.0, 1e-12) == "below 1e-12"
    assert below(4.2e-07, 1e-6) == below(2.4e-07, 1e-6) == "below 1e-6"


def test_a_value_above_its_bound_is_printed_as_itself():
    assert below(3.1e-05, 1e-6) == "3.1e-05 (not below 1e-6)"
    assert below(-0.5, 1e-12) == "-5.0e-01 (not below 1e-12)"


@pytest.mark.parametrize("lesson", lesson_names())
def test_no_lesson_prints_a_raw_round_off_figure(lesson):
    notebook = nbformat.read(solution_notebook(lesson), as_version=4)
    printed = [
        line
        for cell in notebook.cells
        if cell.cell_type == "code"
        for output in cell.outputs
        for line in str(output.get("text", "")).splitlines()
        if ROUND_OFF.search(line)
    ]
    assert printed == [], f"{lesson} prints round-off as a value; print below(value, bound): {printed}"
