"""The introduction's table of lessons keeps up with the lessons (fast: reads the sources)."""

import ast
import re

import nbformat

from course_build.cell_roles import is_answer
from course_build.paths import REPO_ROOT, lesson_names, lesson_source, nbgrader_source_notebook

ROW = re.compile(r"^\| (\d+) \| ([^|]+) \| ([^|]+) \|$", re.MULTILINE)


def _title(lesson: str) -> str:
    heading = next(
        line
        for line in lesson_source(lesson).read_text(encoding="utf-8").splitlines()
        if line.startswith("# ")
    )
    return heading.split(". ", 1)[1]


def _solution_lines(source: str) -> list[tuple[int, int]]:
    """The line ranges (1-based, inclusive) between ``### BEGIN SOLUTION`` and ``### END SOLUTION``."""
    regions, start = [], None
    for number, line in enumerate(source.splitlines(), start=1):
        if "### BEGIN SOLUTION" in line:
            start = number
        elif "### END SOLUTION" in line and start is not None:
            regions.append((start, number))
            start = None
    return regions


def _graded_functions(lesson: str) -> list[str]:
    """The functions and classes a student writes: those of answer cells that hold a solution
    region (a helper the cell gives above its region, such as lesson 8's ``split_words``, is not)."""
    notebook = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    names = []
    for cell in notebook.cells:
        if cell.cell_type != "code" or "nbgrader" not in cell.metadata or not is_answer(cell):
            continue
        regions = _solution_lines(cell.source)
        names += [
            node.name
            for node in ast.parse(cell.source).body
            if isinstance(node, ast.FunctionDef | ast.ClassDef)
            and any(first <= node.end_lineno and node.lineno <= last for first, last in regions)
        ]
    return names


def test_the_table_has_every_lesson_with_its_title_and_what_the_student_writes_first():
    rows = ROW.findall((REPO_ROOT / "book" / "intro.md").read_text(encoding="utf-8"))
    lessons = lesson_names()
    assert [int(number) for number, _, _ in rows] == list(range(1, len(lessons) + 1))
    seen: set[str] = set()
    for (_, topic, built), lesson in zip(rows, lessons, strict=True):
        assert topic.strip().lower() == _title(lesson).lower(), f"{lesson}: the table says {topic.strip()!r}"
        new = [name for name in _graded_functions(lesson) if name not in seen]
        assert all(f"`{name}`" in built for name in new), f"{lesson}: {new} not all in {built.strip()!r}"
        seen.update(new)
