"""Every lesson: artifacts in sync, and the student notebook hides solutions and hidden tests.

Where each lesson's notebooks are run: the solved notebook top to bottom in JupyterLab, with no
error and no stderr (``browser/test_jupyterlab.py``, every lesson has widgets); the fresh student
notebook in JupyterLab and in a Colab-like environment (``test_colab_like.py``); nbgrader's grades
of the reference solution and of the blank release in the batches of ``lesson_variants.py`` and,
for lesson 1, ``test_integrity_lesson_1.py``.
"""

import dataclasses

import nbformat
import pytest
from nbformat.v4 import new_markdown_cell

from course_build.__main__ import main as course_build_main
from course_build.authoring.generate import stale_artifacts
from course_build.authoring.source import build_source_notebook
from course_build.paths import (
    lesson_names,
    nbgrader_source_notebook,
    student_notebook,
)
from transformer_course.widgets import quiz

LESSONS = lesson_names()


def test_every_lesson_has_generated_artifacts_in_sync(capsys):
    assert course_build_main(["--check"]) == 0, capsys.readouterr().out


def test_the_check_names_each_artifact_of_a_lesson_whose_source_changed():
    changed = build_source_notebook("02_dot_products")
    changed.cells.append(new_markdown_cell("A paragraph the generated files do not have yet."))
    problems = stale_artifacts(
        {"02_dot_products": changed, "03_attention": build_source_notebook("03_attention")}
    )
    assert problems == [
        f"{folder}/02_dot_products{name} is stale: its cells differ from lessons/02_dot_products.md"
        for folder, name in (
            ("autograder/source", "/02_dot_products.ipynb"),
            ("solutions", ".ipynb"),
            ("notebooks", ".ipynb"),
        )
    ]


def test_the_check_names_the_notebooks_whose_saved_quiz_a_quiz_file_edit_left_behind(monkeypatch):
    """A quiz file is no cell: editing its options leaves every cell in sync, so only the saved
    quiz can show that the notebooks (and the book's page) still carry the old ones."""
    questions = quiz.load_questions("02_dot_products")
    first = questions[0]
    reworded = (dataclasses.replace(first.options[0], text="a reworded option"), *first.options[1:])
    edited = [dataclasses.replace(first, options=reworded), *questions[1:]]
    monkeypatch.setattr(quiz, "load_questions", lambda lesson: edited)
    problems = stale_artifacts({"02_dot_products": build_source_notebook("02_dot_products")})
    assert [problem.split(":")[0] for problem in problems] == [
        "solutions/02_dot_products.ipynb is stale",
        "notebooks/02_dot_products.ipynb is stale",
    ]
    assert all("a reworded option" in p and "quizzes/02_dot_products.yaml" in p for p in problems)


@pytest.mark.parametrize("lesson", LESSONS)
def test_student_notebook_shows_no_solution_or_hidden_test(lesson):
    student = nbformat.read(student_notebook(lesson), as_version=4)
    source = nbformat.read(nbgrader_source_notebook(lesson), as_version=4)
    text = "\n".join(cell.source for cell in student.cells)
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    for cell in source.cells:
        if cell.metadata.get("nbgrader", {}).get("solution") and cell.cell_type == "markdown":
            assert cell.source not in text, f"the model answer of {cell.id} leaked"
    graded_outputs = [
        c.id for c in student.cells if "nbgrader" in c.metadata and c.cell_type == "code" and c.outputs
    ]
    assert graded_outputs == [], "answer and test cells must not carry the solution run's outputs"
