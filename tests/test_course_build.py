"""The authoring pipeline: role tags expand to nbgrader metadata, and broken sources are refused."""

import nbformat
import pytest

from course_build import source as source_module
from course_build.feedback import HideHiddenTests
from course_build.generate import student_with_outputs
from course_build.source import LessonSourceError, build_source_notebook

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---

# 9. A test lesson
"""

GOOD_BODY = """
```{code-cell} ipython3
:tags: [solution, hide-input]
:grade_id: answer

### BEGIN SOLUTION
x = 1
### END SOLUTION
```

```{code-cell} ipython3
:tags: [tests]
:grade_id: answer_test
:points: 2

assert x == 1
```

+++ {"tags": ["manual"], "grade_id": "written", "points": 3}

*Model answer.* Written.
"""


@pytest.fixture
def lesson_dir(tmp_path, monkeypatch):
    """Point the pipeline's lesson lookup at a temporary folder."""
    monkeypatch.setattr(source_module, "lesson_source", lambda lesson: tmp_path / f"{lesson}.md")
    monkeypatch.setattr(source_module, "REPO_ROOT", tmp_path)
    return tmp_path


def write_lesson(folder, body: str) -> str:
    (folder / "99_test.md").write_text(HEADER + body, encoding="utf-8")
    return "99_test"


def test_role_tags_become_nbgrader_metadata(lesson_dir):
    notebook = build_source_notebook(write_lesson(lesson_dir, GOOD_BODY))
    cells = {cell.id: cell for cell in notebook.cells}
    answer, test, written = cells["answer"], cells["answer_test"], cells["written"]
    assert answer.metadata["nbgrader"] == {
        "grade": False,
        "grade_id": "answer",
        "locked": False,
        "schema_version": 3,
        "solution": True,
        "task": False,
    }
    assert answer.metadata["tags"] == ["hide-input"], "other tags pass through, role tags do not"
    assert test.metadata["nbgrader"]["grade"] and test.metadata["nbgrader"]["locked"]
    assert test.metadata["nbgrader"]["points"] == 2
    assert written.cell_type == "markdown" and written.metadata["nbgrader"]["solution"]
    assert "grade_id" not in answer.metadata and "points" not in test.metadata


def test_every_notebook_starts_with_provenance_and_install_cells(lesson_dir):
    notebook = build_source_notebook(write_lesson(lesson_dir, GOOD_BODY))
    notice, install = notebook.cells[0], notebook.cells[1]
    assert "99_test.md" in notice.source and "python -m course_build" in notice.source
    assert "colab.research.google.com/github/" in notice.source
    assert "%pip install" in install.source and "git+https://github.com/" in install.source
    assert notebook.metadata["course_build"]["lesson"] == "99_test"


def test_regenerating_is_deterministic(lesson_dir):
    lesson = write_lesson(lesson_dir, GOOD_BODY)
    assert build_source_notebook(lesson) == build_source_notebook(lesson)


@pytest.mark.parametrize(
    "body, message",
    [
        (GOOD_BODY.replace(":points: 2\n", ""), "needs 'points'"),
        (GOOD_BODY.replace(":grade_id: answer_test", ":grade_id: answer"), "used twice"),
        (GOOD_BODY.replace(":grade_id: answer\n", ":grade_id: 1bad\n"), "grade_id of letters"),
        (GOOD_BODY.replace("### BEGIN SOLUTION\nx = 1\n### END SOLUTION", "x = 1"), "no ### BEGIN"),
        (GOOD_BODY.replace(":tags: [tests]", ":tags: [tests, solution]"), "several role tags"),
        (GOOD_BODY.replace(":tags: [tests]", ":tags: [manual]"), "must be markdown"),
        (GOOD_BODY.replace(":points: 2", ":points: -1"), "number > 0"),
        (GOOD_BODY.replace(":tags: [tests]\n", ""), "no role tag"),
        (GOOD_BODY.replace("*Model answer.* Written.", "Question? Answer."), "only the model answer"),
    ],
)
def test_broken_sources_are_refused_with_a_reason(lesson_dir, body, message):
    with pytest.raises(LessonSourceError, match=message):
        build_source_notebook(write_lesson(lesson_dir, body))


def test_student_notebook_gets_outputs_of_ungraded_cells_only():
    graded = {"grade": True, "solution": False, "grade_id": "t", "points": 1}
    release = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("print(1)", id="plain"),
            nbformat.v4.new_code_cell("assert x", id="t", metadata={"nbgrader": graded}),
        ]
    )
    executed = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "print(1)",
                id="plain",
                execution_count=1,
                outputs=[nbformat.v4.new_output("stream", text="1\n")],
            ),
            nbformat.v4.new_code_cell(
                "assert x",
                id="t",
                execution_count=2,
                outputs=[nbformat.v4.new_output("stream", text="secret\n")],
            ),
        ]
    )
    executed.metadata["widgets"] = {"state": "kept"}
    student = student_with_outputs(release, executed)
    assert student.cells[0].outputs[0].text == "1\n" and student.cells[0].execution_count == 1
    assert student.cells[1].outputs == [] and student.cells[1].execution_count is None
    assert student.metadata["widgets"] == {"state": "kept"}
    assert release.cells[0].outputs == [], "the release notebook itself is left untouched"


def test_feedback_shows_only_the_error_message_of_a_failed_test():
    test_cell = nbformat.v4.new_code_cell(
        "assert x == 2",
        metadata={"nbgrader": {"grade": True, "solution": False}},
        outputs=[
            nbformat.v4.new_output(
                "error",
                ename="AssertionError",
                evalue="x should be 2",
                traceback=["...", "### BEGIN HIDDEN TESTS", "assert secret"],
            )
        ],
    )
    answer_cell = nbformat.v4.new_code_cell(
        "x = 1",
        metadata={"nbgrader": {"grade": False, "solution": True}},
        outputs=[nbformat.v4.new_output("error", ename="E", evalue="v", traceback=["kept"])],
    )
    notebook = nbformat.v4.new_notebook(cells=[test_cell, answer_cell])
    HideHiddenTests().preprocess(notebook, {})
    assert test_cell.outputs[0].traceback == ["AssertionError: x should be 2"]
    assert answer_cell.outputs[0].traceback == ["kept"]
