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


def _graded_functions(lesson: str) -> list[str]:
    notebook = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    return [
        node.name
        for cell in notebook.cells
        if cell.cell_type == "code" and "nbgrader" in cell.metadata and is_answer(cell)
        for node in ast.parse(cell.source).body
        if isinstance(node, ast.FunctionDef)
    ]


def test_the_table_has_every_lesson_with_its_title_and_the_functions_it_grades_first():
    rows = ROW.findall((REPO_ROOT / "book" / "intro.md").read_text(encoding="utf-8"))
    lessons = lesson_names()
    assert [int(number) for number, _, _ in rows] == list(range(1, len(lessons) + 1))
    seen: set[str] = set()
    for (_, topic, built), lesson in zip(rows, lessons, strict=True):
        assert topic.strip().lower() == _title(lesson).lower(), f"{lesson}: the table says {topic.strip()!r}"
        new = [name for name in _graded_functions(lesson) if name not in seen]
        assert all(f"`{name}`" in built for name in new), f"{lesson}: {new} not all in {built.strip()!r}"
        seen.update(new)
