"""The authoring pipeline: role tags expand to nbgrader metadata, and broken sources are refused."""

import ast

import nbformat
import pytest
from lesson_header import MYST_HEADER

from course_build.authoring import source as source_module
from course_build.authoring.exercise_cells import answer_names, names_left_undefined
from course_build.authoring.generate import student_view, student_with_outputs
from course_build.authoring.source import LessonSourceError, build_source_notebook
from course_build.nbgrader_plugins.feedback import HideHiddenTests
from course_site.citations import CitationError, roles_as_text, text_as_roles

HEADER = (
    MYST_HEADER
    + """
# 9. A test lesson
"""
)

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

*Rubric.*
- 2 points: the first thing.
- 1 point: the second.
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
    assert answer.metadata["tags"] == ["hide-input", "raises-exception"], (
        "other tags pass through, role tags do not; exercise cells may raise (a stub)"
    )
    assert test.metadata["nbgrader"]["grade"] and test.metadata["nbgrader"]["locked"]
    assert test.metadata["nbgrader"]["points"] == 2
    assert written.cell_type == "markdown" and written.metadata["nbgrader"]["solution"]
    assert "grade_id" not in answer.metadata and "points" not in test.metadata


def test_every_notebook_starts_with_provenance_how_to_and_setup_cells(lesson_dir):
    notebook = build_source_notebook(write_lesson(lesson_dir, GOOD_BODY))
    provenance, welcome, setup = notebook.cells[:3]
    assert "99_test.md" in provenance.source and "python -m course_build" in provenance.source
    assert "colab.research.google.com/github/" in welcome.source
    assert "How the exercises work" in welcome.source and "raise NotImplementedError()" in welcome.source
    assert "course_build" not in welcome.source and "regenerate" not in welcome.source, "no author notes"
    assert "%pip install" in setup.source and "git+https://github.com/" in setup.source
    assert 'explain_exercise_errors(answers=["x"])' in setup.source, "value answers are named"
    assert all("remove-cell" in cell.metadata["tags"] for cell in (provenance, welcome, setup))
    assert notebook.metadata["course_build"]["lesson"] == "99_test"


def test_the_student_notebook_leaves_out_the_authors_provenance_note(lesson_dir):
    source = build_source_notebook(write_lesson(lesson_dir, GOOD_BODY))
    student = student_view(source)
    assert [c.id for c in student.cells] == [c.id for c in source.cells[1:]]
    assert not any("python -m course_build" in cell.source for cell in student.cells)
    assert student.metadata["course_build"]["source"] == "99_test.md", "provenance stays in metadata"


DEMO_BODY = """
```{code-cell} ipython3
import numpy as np

shown = np.arange(3)
```

```{code-cell} ipython3
:tags: [solution]
:grade_id: scale

import numpy as np  # outside the region: still defined in the student notebook

def scale(x):
    ### BEGIN SOLUTION
    return 2 * x
    ### END SOLUTION
```

```{code-cell} ipython3
:tags: [tests]
:grade_id: scale_test
:points: 1

assert scale(1) == 2
```

```{code-cell} ipython3
doubled = scale(shown)
```

```{code-cell} ipython3
print(doubled.sum())
```

```{code-cell} ipython3
print(np.ones(2), shown)
```

Written as in {cite}`vaswani2017attention`.
"""


def test_cells_that_raise_while_exercises_are_stubs_are_tagged(lesson_dir):
    """Exercise, test, and the ordinary cells that use an answer (directly or through another
    cell) carry raises-exception, so Run All goes past them; cells using only other names do not."""
    notebook = build_source_notebook(write_lesson(lesson_dir, DEMO_BODY))
    tagged = [
        c.source.splitlines()[0] for c in notebook.cells if "raises-exception" in c.metadata.get("tags", [])
    ]
    assert tagged == [
        "import numpy as np  # outside the region: still defined in the student notebook",
        "assert scale(1) == 2",
        "doubled = scale(shown)",
        "print(doubled.sum())",
    ]


def test_answer_names_are_what_the_solution_region_defines():
    source = "import numpy as np\n\nx = 1\n### BEGIN SOLUTION\ny = 2\nz, w = 3, 4\n### END SOLUTION"
    assert answer_names(source) == {"y", "z", "w"}
    function = "def f(a):\n    ### BEGIN SOLUTION\n    return a\n    ### END SOLUTION\n\ng = 1"
    assert answer_names(function) == {"f"}


def test_the_names_a_stub_leaves_undefined_are_the_value_answers():
    """A function whose body is the region is still defined by its stub; a value is not."""
    source = "x = 1\n### BEGIN SOLUTION\ny = 2\nz, w = 3, 4\n### END SOLUTION"
    assert names_left_undefined(source) == {"y", "z", "w"}
    function = "def f(a):\n    ### BEGIN SOLUTION\n    return a\n    ### END SOLUTION\n\ng = 1"
    assert names_left_undefined(function) == set()
    whole = "### BEGIN SOLUTION\ndef f(a):\n    return a\n### END SOLUTION"
    assert names_left_undefined(whole) == {"f"}


def test_the_set_up_cell_names_every_value_answer_of_a_long_list(lesson_dir):
    answers = [f"answer_number_{i}" for i in range(12)]
    region = "\n".join(f"{name} = {i}" for i, name in enumerate(answers))
    body = GOOD_BODY.replace("x = 1\n### END", f"{region}\nx = 1\n### END")
    setup = build_source_notebook(write_lesson(lesson_dir, body)).cells[2].source
    call = setup[setup.index("explain_exercise_errors(") :]
    assert ast.literal_eval(ast.parse(call).body[0].value.keywords[0].value) == sorted([*answers, "x"])
    assert max(map(len, call.splitlines())) <= 96, "wrapped like the rest of the cell"


def test_citations_become_readable_text_in_notebooks(lesson_dir):
    notebook = build_source_notebook(write_lesson(lesson_dir, DEMO_BODY))
    text = notebook.cells[-1].source
    assert "{cite}" not in text
    assert "<cite data-cite=vaswani2017attention>(Vaswani et al., 2017)</cite>" in text
    assert text_as_roles(text) == "Written as in {cite:p}`vaswani2017attention`."


def test_an_unknown_citation_is_refused_by_name():
    with pytest.raises(CitationError, match="nosuch2020` is not in book/references.bib"):
        roles_as_text("see {cite}`nosuch2020`")


def test_cell_ids_change_only_for_the_cells_that_changed(lesson_dir):
    before = build_source_notebook(write_lesson(lesson_dir, DEMO_BODY))
    edited = DEMO_BODY.replace("print(doubled.sum())", "print(doubled.max())").replace(
        "```{code-cell} ipython3\nprint(np.ones(2), shown)",
        "New prose.\n\n```{code-cell} ipython3\nprint(np.ones(2), shown)",
    )
    after = build_source_notebook(write_lesson(lesson_dir, edited))
    old_ids, new_ids = [c.id for c in before.cells], [c.id for c in after.cells]
    assert len(new_ids) == len(old_ids) + 1 and len(set(new_ids)) == len(new_ids)
    assert len(set(new_ids) - set(old_ids)) == 2, "the edited cell and the inserted one get new ids, no other"


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
        (GOOD_BODY.replace("*Rubric.*", "Rubric:"), "needs a rubric"),
        (GOOD_BODY.replace("- 1 point: the second.", "- 2 points: the second."), "rubric gives 4 points"),
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
