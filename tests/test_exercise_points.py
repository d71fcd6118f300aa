"""Every graded exercise shows its points the same way, computed from its graded cells (no kernel)."""

import nbformat
import pytest

from course_build.authoring.exercise_points import (
    EXERCISE_NAME,
    HEADING,
    ExercisePointsError,
    label_exercise_points,
    points_text,
)
from course_build.authoring.source import LessonSourceError, build_source_notebook
from course_build.cell_roles import scores_points
from course_build.paths import lesson_names


def markdown(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text)


def graded(points: float) -> nbformat.NotebookNode:
    return nbformat.v4.new_code_cell("pass", metadata={"nbgrader": {"grade": True, "points": points}})


def test_points_are_written_into_each_exercise_name_from_its_graded_cells():
    cells = [
        markdown("### Apply\n\n**Apply 1.** Compute it."),
        nbformat.v4.new_code_cell("answer = 1"),
        graded(1),
        markdown("**Apply 2: softmax.** Write `softmax`."),
        graded(1),
        graded(2),
        markdown("## Quick check\n\nNot an exercise."),
        markdown("## Implement it"),
        markdown("### Splitting heads\n\nThe text builds a graded function."),
        graded(2),
        graded(3),
    ]
    label_exercise_points(cells, "99_test")
    assert cells[0].source == "### Apply\n\n**Apply 1 (1 point).** Compute it."
    assert cells[3].source == "**Apply 2: softmax (3 points).** Write `softmax`."
    assert cells[6].source == "## Quick check\n\nNot an exercise."
    assert cells[7].source == "## Implement it"
    assert cells[8].source == "### Splitting heads (5 points)\n\nThe text builds a graded function."


def test_a_name_that_states_its_points_is_kept_when_they_agree_and_refused_when_not():
    cells = [markdown("**Extend (3 points).** Discuss."), graded(3)]
    label_exercise_points(cells, "99_test")
    assert cells[0].source == "**Extend (3 points).** Discuss."
    message = r"99_test: 'Recall 1' says 2 points but its graded cells give 1 point"
    with pytest.raises(ExercisePointsError, match=message):
        label_exercise_points([markdown("**Recall 1 (2 points).** Why?"), graded(1)], "99_test")


def test_comment_lines_in_a_fenced_block_are_not_headings():
    cells = [markdown("**Apply 1.** Run\n\n```python\n# a comment\nx = 1\n```"), graded(2)]
    label_exercise_points(cells, "99_test")
    assert cells[0].source == "**Apply 1 (2 points).** Run\n\n```python\n# a comment\nx = 1\n```"


def test_an_exercise_without_graded_cells_gets_no_points():
    cells = [markdown("**Apply 1.** Try it in the widget."), nbformat.v4.new_code_cell("x = 1")]
    label_exercise_points(cells, "99_test")
    assert cells[0].source == "**Apply 1.** Try it in the widget."


def test_points_read_naturally():
    assert [points_text(p) for p in (1, 2, 0.5, 1.5)] == ["1 point", "2 points", "0.5 points", "1.5 points"]


@pytest.mark.parametrize("lesson", lesson_names())
def test_every_graded_exercise_of_every_lesson_shows_its_points(lesson):
    notebook = build_source_notebook(lesson)
    names = [
        line
        for cell in notebook.cells
        if cell.cell_type == "markdown"
        for line in cell.source.split("\n")
        if EXERCISE_NAME.match(line) or HEADING.match(line)
    ]
    stated = [(EXERCISE_NAME.match(line) or HEADING.match(line)).group("points") for line in names]
    graded = [c.metadata["nbgrader"].get("points", 0) for c in notebook.cells if scores_points(c)]
    assert all(points for line, points in zip(names, stated, strict=True) if EXERCISE_NAME.match(line)), names
    assert sum(float(points or 0) for points in stated) == sum(map(float, graded))


def test_a_lesson_whose_prose_disagrees_with_its_grades_is_a_lesson_source_error(monkeypatch):
    import course_build.authoring.source as source

    def wrong_points(cells, lesson):
        raise ExercisePointsError(f"{lesson}: **Apply 1** says 2 points but its graded cells give 1 point")

    monkeypatch.setattr(source, "label_exercise_points", wrong_points)
    with pytest.raises(LessonSourceError, match="says 2 points"):
        build_source_notebook(lesson_names()[0])
